package app

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// agentCalls counts the agent's model requests per item (the goal's
// "Item:" line), at the fake Gemini server; the cart review's request has
// no goal and is not counted.
type agentCalls struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *agentCalls) wrap(next gemini.Script) gemini.Script {
	return func(req *gemini.Request) gemini.Reply {
		if g, err := scripted.ParseGoal(req.Goal()); err == nil {
			c.mu.Lock()
			c.n[strings.ToLower(g.Item)]++
			c.mu.Unlock()
		}
		return next(req)
	}
}

func (c *agentCalls) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// TestReplayOfRememberedProducts: the second run of a list finds every
// item in the product memory. An unchanged product is opened, checked and
// added by code with no model request for it; each way the store may have
// changed since (renamed, price jump, out of stock, page gone, add control
// moved) hands the item to the agent, which finishes it — and nothing is
// added twice.
func TestReplayOfRememberedProducts(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	items := []string{"milk", "bananas", "eggs", "apples", "sourdough bread", "spaghetti", "olive oil"}
	e := newE2E(t, items...)
	e.cfg.Concurrency = 3 // replays and agents share the cart at once
	calls := &agentCalls{n: map[string]int{}}
	e.deps.Scripted.Wrap = calls.wrap
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first := calls.take()
	ids := map[string]string{}
	for _, it := range res.Summary.Items {
		if it.Outcome != "added" || it.Replay != "" {
			t.Fatalf("first run: %s %s (replay %q)\n%s", it.ItemName, it.Outcome, it.Replay, res.Summary.Markdown())
		}
		ids[it.ItemName] = store.ProductID(it.URL)
		if first[it.ItemName] == 0 || ids[it.ItemName] == "" {
			t.Fatalf("first run: %s had %d model calls, product id %q", it.ItemName, first[it.ItemName], ids[it.ItemName])
		}
	}
	srv := e.runner.DemoStore()
	cart1 := cartUnits(srv)

	changes := map[string]demostore.ProductChange{
		"bananas":         {Name: "Plantains"},
		"eggs":            {PriceCents: 9999},
		"apples":          {OutOfStock: true},
		"sourdough bread": {Gone: true},
		"spaghetti":       {MoveAdd: true},
		"olive oil":       {AddExtra: 1},
	}
	why := map[string]string{
		"bananas": "now called", "eggs": "price moved", "apples": "out of stock",
		"sourdough bread": "shows no product", "spaghetti": "add-to-cart control was not found",
		"olive oil": "changed by 2 units, not 1",
	}
	for item, c := range changes {
		srv.ChangeProduct(ids[item], c)
	}
	res = e.shopAgain(items)
	second := calls.take()
	cart2 := cartUnits(srv)
	byName := map[string]int{}
	for i, it := range res.Summary.Items {
		byName[it.ItemName] = i
	}
	for _, item := range items {
		i, ok := byName[item]
		if !ok {
			t.Fatalf("second run has no result for %s", item)
		}
		it := res.Summary.Items[i]
		if it.Outcome != "added" {
			t.Errorf("%s: %s (%s), want added", item, it.Outcome, it.Explanation)
			continue
		}
		id := ids[item]
		switch item {
		case "milk":
			if it.Replay != "replayed" || second[item] != 0 {
				t.Errorf("milk: replay %q with %d model calls; want replayed with none", it.Replay, second[item])
			}
			if got := cart2[id] - cart1[id]; got != 1 {
				t.Errorf("milk: the replay changed its line by %d, want 1", got)
			}
		default:
			if !strings.HasPrefix(it.Replay, "replay fell back: ") || !strings.Contains(it.Replay, why[item]) || second[item] == 0 {
				t.Errorf("%s: replay %q, %d model calls; want a fall-back naming %q, finished by the agent", item, it.Replay, second[item], why[item])
			}
			if item == "apples" {
				// Out of stock: the agent takes another product; the
				// remembered one is not touched.
				if cart2[id] != cart1[id] || store.ProductID(it.URL) == id {
					t.Errorf("apples: the out-of-stock product's line went %d → %d, added %s", cart1[id], cart2[id], it.URL)
				}
			} else if item == "olive oil" {
				// The store put 2 in the cart for one click; the agent,
				// told so, adds nothing more.
				if got := cart2[id] - cart1[id]; got != 2 {
					t.Errorf("olive oil: its line changed by %d, want the store's 2 and nothing added again", got)
				}
			} else if got := cart2[id] - cart1[id]; got != 1 {
				t.Errorf("%s: its line changed by %d, want exactly 1 (nothing added twice)", item, got)
			}
		}
	}
	total := func(m map[string]int) (n int) {
		for _, q := range m {
			n += q
		}
		return n
	}
	if d := total(cart2) - total(cart1); d != len(items)+1 {
		t.Errorf("the second run added %d units in all, want %d (one per item, and the store's extra olive oil)", d, len(items)+1)
	}
	if md := res.Summary.Markdown(); !strings.Contains(md, "replayed") || !strings.Contains(md, "replay fell back") {
		t.Errorf("the summary does not say how items were replayed:\n%s", md)
	}
}

func cartUnits(s *demostore.Server) map[string]int {
	m := map[string]int{}
	for _, l := range s.Cart() {
		m[l.ProductID] += l.Quantity
	}
	return m
}

// TestReplayInANewProcess: a list shopped by one `shop` process and again
// by the next, with one data directory and no postal code configured (as
// `shop --store demo` runs). The demo store keeps its cart across
// processes but not the delivery address, so the second process's first
// add asks for the postal code again: every remembered item is still
// replayed by code, with no model call for it, one unit each.
func TestReplayInANewProcess(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	items := []string{"milk", "bananas", "eggs"}
	e := newE2E(t, items...)
	e.cfg.PostalCode = "" // as the command line leaves it
	e.cfg.Concurrency = 2
	calls := &agentCalls{n: map[string]int{}}
	e.deps.Scripted.Wrap = calls.wrap
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range res.Summary.Items {
		if it.Outcome != "added" {
			t.Fatalf("first run: %s %s\n%s", it.ItemName, it.Outcome, res.Summary.Markdown())
		}
	}
	cart1 := cartUnits(e.runner.DemoStore())
	calls.take()
	// The process ends; the next one starts a new store and browser.
	if err := e.runner.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.runner = nil
	res = e.shopAgain(items)
	second := calls.take()
	if st := e.runner.DemoStore().State(); st.PostalCode == "" || len(cart1) == 0 {
		t.Fatalf("the second store process: postal code %q, first cart %v", st.PostalCode, cart1)
	}
	cart2 := cartUnits(e.runner.DemoStore())
	if len(res.Summary.Items) != len(items) {
		t.Fatalf("second run: %d results, want %d\n%s", len(res.Summary.Items), len(items), res.Summary.Markdown())
	}
	for _, it := range res.Summary.Items {
		id := store.ProductID(it.URL)
		if it.Outcome != "added" || it.Replay != "replayed" || second[it.ItemName] != 0 {
			t.Errorf("%s: %s, replay %q, %d model calls; want replayed with none", it.ItemName, it.Outcome, it.Replay, second[it.ItemName])
		}
		if got := cart2[id] - cart1[id]; got != 1 {
			t.Errorf("%s: its cart line changed by %d, want 1", it.ItemName, got)
		}
	}
}

// shopAgain puts items on the list again, as the household does the next
// week, and shops it.
func (e *e2e) shopAgain(items []string) shop.Result {
	e.t.Helper()
	if err := os.WriteFile(e.listPath, listYAML(items...), 0o644); err != nil {
		e.t.Fatal(err)
	}
	res, err := e.shop(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}
