package shop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// productPage is a product page as the demo store's profile reads it, for
// replayDirect: its elements by the profile's selectors, and a cart that
// each press of the add control changes as the page's script would.
type productPage struct {
	*fakeTab
	url, id, name, brand, size, price string
	noID                              bool
	status                            func(units int) string // the product's count text
	perPress                          int                    // units one press adds (1 when 0)
	priceAfter                        string                 // the price shown once a unit was added ("": unchanged)
	onLoad                            func(p *productPage, url string)
	onPress                           func(p *productPage)
	// ledger is what the store's cart request of a press adds (the tab's
	// ledger): 0 the same as the page shows, -1 no request at all.
	ledger   int
	ledgerID string // the product the request names ("": the page's id)
	// asks: a press opens the store's postal-code dialog instead of
	// adding (the product's count text goes blank, as the demo's does);
	// the dialog's submit then adds the unit. refuses: a press shows this
	// answer of the store instead of adding.
	asks, dialog bool
	refuses      string
	filled       string // what was typed into the dialog

	units, presses int
}

func (p *productPage) el(sel string) browser.Element {
	pp := store.Demo().Product
	switch sel {
	case pp.Root:
		e := browser.Element{Found: true, Visible: true, Text: p.name + " " + p.brand + " " + p.size + " " + p.price}
		if !p.noID {
			e.Attr = p.id
		}
		return e
	case pp.Name:
		return browser.Element{Found: true, Visible: true, Text: p.name}
	case pp.Brand:
		return browser.Element{Found: p.brand != "", Visible: true, Text: p.brand}
	case pp.Size:
		return browser.Element{Found: true, Visible: true, Text: p.size}
	case pp.Price:
		if p.priceAfter != "" && p.units > 0 {
			return browser.Element{Found: true, Visible: true, Text: p.priceAfter}
		}
		return browser.Element{Found: true, Visible: true, Text: p.price}
	case pp.Add:
		return browser.Element{Found: true, Visible: true, Text: "Add to cart"}
	case pp.Root + " " + pp.InCart:
		if p.dialog {
			return browser.Element{Found: true, Visible: true}
		}
		if p.refuses != "" && p.presses > 0 {
			return browser.Element{Found: true, Visible: true, Text: p.refuses}
		}
		return browser.Element{Found: true, Visible: true, Text: p.status(p.units)}
	case pp.PostalInput:
		return browser.Element{Found: p.dialog, Visible: p.dialog}
	}
	return browser.Element{}
}

func (p *productPage) ReadElements(_ context.Context, sels map[string]string, _ string) (map[string]browser.Element, error) {
	out := map[string]browser.Element{}
	for k, sel := range sels {
		out[k] = p.el(sel)
	}
	return out, nil
}
func (p *productPage) Load(_ context.Context, url string) error {
	p.url = url
	if p.onLoad != nil {
		p.onLoad(p, url)
	}
	return nil
}
func (p *productPage) URL() string                                { return p.url }
func (p *productPage) ClickElement(context.Context, string) error { return errors.New("not used") }
func (p *productPage) FillElement(_ context.Context, sel, text string) error {
	if !p.dialog || sel != store.Demo().Product.PostalInput {
		return errors.New("no dialog")
	}
	p.filled = text
	return nil
}
func (p *productPage) FetchJSON(context.Context, string) ([]byte, error) {
	return nil, errors.New("not used")
}
func (p *productPage) ReplayOnly(context.Context, bool) error { return nil }
func (p *productPage) PressElement(_ context.Context, sel string) error {
	if p.dialog && sel == store.Demo().Product.PostalSubmit {
		p.dialog = false
		p.adds() // the store adds the unit it held back
		return nil
	}
	if sel != store.Demo().Product.Add {
		return errors.New("no such element")
	}
	if p.onPress != nil {
		p.onPress(p)
	}
	p.presses++
	switch {
	case p.asks && p.filled == "":
		p.dialog = true
	case p.refuses != "":
	default:
		p.adds()
	}
	return nil
}

// adds is what the store does for an add that goes through: the page's
// units and the tab's ledger (the store's cart request).
func (p *productPage) adds() {
	p.units += max(p.perPress, 1)
	if n := p.ledger; n >= 0 {
		if n == 0 {
			n = max(p.perPress, 1)
		}
		id := p.ledgerID
		if id == "" {
			id = p.id
		}
		p.addToCart(id, n)
	}
}

func (p *productPage) WaitChange(_ context.Context, sel, from, appears string, _ time.Duration) (bool, error) {
	return p.el(sel).Text != from || (appears != "" && p.el(appears).Visible), nil
}

// TestReplayHandsOverOnAHostilePage: every way a product page can lie
// about the remembered product hands the item to the agent — before any
// click when the page shows it, and without a second click when only the
// add shows it (the agent is told what the cart holds).
func TestReplayHandsOverOnAHostilePage(t *testing.T) {
	rem := Remembered{Name: "Natrel 2% Milk 2 L", URL: "https://www.metro.ca/en/p/milk", ProductID: "milk", Price: "$5.49", Size: "2 L"}
	honest := func() *productPage {
		return &productPage{fakeTab: &fakeTab{host: &fakeHost{}}, id: "milk", name: "2% Milk", brand: "Natrel", size: "2 L", price: "$5.49", status: inCart}
	}
	for _, tc := range []struct {
		name    string
		page    func(p *productPage)
		why     string // a substring of the hand-over reason
		presses int    // clicks made before handing over
		rem     func(r *Remembered)
	}{
		{"the price per another unit", func(p *productPage) { p.price = "$549.00/kg" }, "not per the same unit", 0, nil},
		{"an unreadable price", func(p *productPage) { p.price = "see in store" }, "price cannot be read", 0, nil},
		{"no product id on the page", func(p *productPage) { p.noID = true }, "names no product id", 0, nil},
		{"another product id", func(p *productPage) { p.id = "milk-4l" }, "another product", 0, nil},
		{"a name that is a subset of the remembered one", func(p *productPage) { p.name, p.brand = "Milk", "" }, "now called", 0, nil},
		{"a count with another number in it", func(p *productPage) {
			p.status = func(n int) string { return "Only 3 left – in cart: " + strconv.Itoa(n) }
		}, "cart could not be read", 0, nil},
		{"an absurd count", func(p *productPage) {
			p.status = func(int) string { return "In cart: 12345678901234567890" }
		}, "cart could not be read", 0, nil},
		{"a price that changes once added", func(p *productPage) { p.priceAfter = "$54.90" }, "price changed", 1, nil},
		{"a press that adds two units", func(p *productPage) { p.perPress = 2 }, "changed by 2 units, not 1", 1, nil},
		// The store's cart request (the tab's ledger) over the page's
		// count (issue 36).
		{"a press that adds two while the count shows one", func(p *productPage) { p.ledger = 2 }, "requests added 2 units of the product", 1, nil},
		{"a press that adds nothing while the count shows one", func(p *productPage) { p.ledger = -1 }, "requests added 0 units of the product", 1, nil},
		{"a press that adds another product", func(p *productPage) { p.ledgerID = "milk-4l" }, "added 0 units of the product (and 1 of others)", 1, nil},
		{"a remembered entry without an id, a page with another id", func(p *productPage) { p.id = "milk-4l" }, "another product (id milk-4l, not milk)", 0,
			func(r *Remembered) { r.ProductID = "" }},
		{"a negative count", func(p *productPage) { p.status = func(int) string { return "In cart: -1" } }, "cart could not be read", 0, nil},
		// The memory may hold no price, or one that cannot be read: the
		// page's must still be readable before any click (it used to be
		// found only after the add, as "changed from X to X").
		{"an unreadable price, nothing remembered", func(p *productPage) { p.price = "see in store" }, "price cannot be read", 0,
			func(r *Remembered) { r.Price = "" }},
		{"an unreadable price, an unreadable one remembered", func(p *productPage) { p.price = "see in store" }, "price cannot be read", 0,
			func(r *Remembered) { r.Price = "see in store" }},
		{"a readable price, an unreadable one remembered", func(*productPage) {}, "remembered price", 0,
			func(r *Remembered) { r.Price = "see in store" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := honest()
			tc.page(p)
			rem := rem
			if tc.rem != nil {
				tc.rem(&rem)
			}
			it := replayItem()
			added, why, _ := it.replayDirect(context.Background(), p, rem)
			if why == "" || !strings.Contains(why, tc.why) {
				t.Fatalf("replay: added %+v, reason %q; want a hand-over for %q", added, why, tc.why)
			}
			if added.Quantity != 0 || p.presses != tc.presses {
				t.Errorf("added %+v after %d clicks; want nothing reported after %d", added, p.presses, tc.presses)
			}
		})
	}
	t.Run("an unreadable count after a click tells the agent a unit is in the cart", func(t *testing.T) {
		p := honest()
		p.status = func(n int) string {
			if n == 0 {
				return ""
			}
			return "In cart: ?"
		}
		it := replayItem()
		var clock atomic.Int64
		t0 := time.Now()
		it.r.now = func() time.Time { return t0.Add(time.Duration(clock.Add(1)) * replayAddWait) } // every look is past the add's wait
		_, why, cart := it.replayDirect(context.Background(), p, rem)
		if !strings.Contains(why, "did not change as expected") || !strings.Contains(cart, "added 1 units of this product") || p.presses != 1 {
			t.Fatalf("after one click and an unreadable count: reason %q, cart %q, %d clicks; want a hand-over saying a unit is in the cart", why, cart, p.presses)
		}
		p = honest()
		p.status = func(n int) string {
			if n == 0 {
				return ""
			}
			return "In cart: ?"
		}
		p.ledger = -1
		p.onPress = func(p *productPage) { // a cart request whose effect the profile cannot read
			p.cart = append(p.cart, browser.CartRequest{CartChange: store.CartChange{Path: "/cart/x"}, Method: "POST", Status: 200})
		}
		_, _, cart = it.replayDirect(context.Background(), p, rem)
		if !strings.Contains(cart, "may already be in the cart") {
			t.Fatalf("with an unreadable ledger: cart %q, want the agent told a unit may be in the cart", cart)
		}
	})
	t.Run("the honest page is replayed", func(t *testing.T) {
		p := honest()
		added, why, _ := replayItem().replayDirect(context.Background(), p, rem)
		if why != "" || added.Quantity != 1 || p.presses != 1 || p.units != 1 {
			t.Fatalf("replay of the honest page: %+v, %q, %d clicks, %d units", added, why, p.presses, p.units)
		}
	})
	t.Run("the honest page is replayed with no price remembered", func(t *testing.T) {
		p := honest()
		rem := rem
		rem.Price = ""
		added, why, _ := replayItem().replayDirect(context.Background(), p, rem)
		if why != "" || added.Quantity != 1 || p.presses != 1 || added.Price.Text != "$5.49" {
			t.Fatalf("replay with no remembered price: %+v, %q, %d clicks", added, why, p.presses)
		}
	})
}

// TestReplaySaysWhyTheStoreDidNotAdd: an add the store did not take is
// handed over with the store's own reason — a postal-code dialog (answered
// with the configured code, which a store whose session forgot it asks
// again), or the store's answer — never "the cart did not change as
// expected", and never as a product that changed.
func TestReplaySaysWhyTheStoreDidNotAdd(t *testing.T) {
	rem := Remembered{Name: "Natrel 2% Milk 2 L", URL: "https://www.metro.ca/en/p/milk", ProductID: "milk", Price: "$5.49", Size: "2 L"}
	page := func() *productPage {
		return &productPage{fakeTab: &fakeTab{host: &fakeHost{}}, id: "milk", name: "2% Milk", brand: "Natrel", size: "2 L", price: "$5.49", status: inCart, units: 3}
	}
	for _, tc := range []struct {
		name, postal string
		page         func(p *productPage)
		why          string // "" : replayed
		changed      bool
	}{
		{"the dialog answered with the configured code", "H2X 1Y4", func(p *productPage) { p.asks = true }, "", false},
		{"the dialog and no postal code", "", func(p *productPage) { p.asks = true }, "asks for a delivery postal code before adding, and none is configured", false},
		{"the store's answer", "H2X 1Y4", func(p *productPage) { p.refuses = "This product is out of stock." }, `the store did not add it (the page says "This product is out of stock.")`, false},
		{"a changed product", "H2X 1Y4", func(p *productPage) { p.id = "milk-4l" }, "another product", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := page()
			tc.page(p)
			it := replayItem()
			it.r.cfg.PostalCode = tc.postal
			// The wait for an add ends at its deadline at once: each
			// reading of the clock is a minute later.
			clock := time.Now()
			it.r.now = func() time.Time { clock = clock.Add(time.Minute); return clock }
			added, why, _ := it.replayDirect(context.Background(), p, rem)
			if tc.why == "" {
				if why != "" || added.Quantity != 1 || p.units != 4 || p.filled != tc.postal {
					t.Fatalf("replay: %+v, %q, %d units, typed %q; want one unit added after typing %q", added, why, p.units, p.filled, tc.postal)
				}
				return
			}
			if !strings.Contains(why, tc.why) || strings.Contains(why, "did not change as expected") || it.replayChanged != tc.changed {
				t.Fatalf("replay handed over with %q (product changed: %v); want %q (changed: %v)", why, it.replayChanged, tc.why, tc.changed)
			}
			if p.units != 3 || added.Quantity != 0 {
				t.Errorf("%d units in the cart, %+v reported; want nothing added", p.units, added)
			}
		})
	}
}

// inCart is the demo store's count text for n units.
func inCart(n int) string {
	if n == 0 {
		return ""
	}
	return "In cart: " + strconv.Itoa(n)
}

// replayItem is one item ("milk") of a run on the demo profile.
func replayItem() *itemRun {
	r := &run{cfg: Config{Store: Store{Product: store.Demo().Product, CartJSONURL: store.Demo().CartJSONURL}, ReplayMaxPriceChange: 20}, log: slog.New(slog.DiscardHandler), now: time.Now}
	return &itemRun{r: r, p: &planned{item: shoppinglist.Item{Name: "milk", Quantity: 1}}}
}

// recallAll remembers, for every item named r…, the product at
// https://www.metro.ca/en/p/<item>.
type recallAll struct{}

func (recallAll) Recall(name string) (Remembered, bool) {
	if !strings.HasPrefix(name, "r") {
		return Remembered{}, false
	}
	return Remembered{Name: "Brand " + name, URL: "https://www.metro.ca/en/p/" + name, ProductID: name, Price: "$1.00", Size: "1 L"}, true
}

// TestReplaysGoFirstWithoutModelPacing: remembered items are replayed
// in slots of their own, at most replaySlots at once, without the
// model stagger (an hour here) and without waiting for the first agent
// item's warm-up — whose agent in turn only finishes once every replay
// has added its product: with the old order the run could not end.
func TestReplaysGoFirstWithoutModelPacing(t *testing.T) {
	names := []string{"a", "r1", "r2", "r3", "r4", "r5"}
	p := newFakeProvider(names...)
	var mu sync.Mutex
	pressed := 0
	allReplayed := make(chan struct{})
	h := &fakeHost{authed: true}
	h.tabFor = func(ft *fakeTab) Tab {
		return &productPage{fakeTab: ft, status: inCart, onPress: func(pp *productPage) {
			mu.Lock()
			defer mu.Unlock()
			if pressed++; pressed == 5 {
				close(allReplayed)
			}
		}, onLoad: func(pp *productPage, url string) {
			id := url[strings.LastIndex(url, "/")+1:]
			pp.id, pp.name, pp.brand, pp.size, pp.price = id, id, "Brand", "1 L", "$1.00"
		}}
	}
	a := newFakeAgent(map[string]behaviour{"a": func(ctx context.Context, c *fakeCall) agent.Result {
		select {
		case <-allReplayed:
		case <-ctx.Done():
			return agent.Result{Reason: agent.ReasonCancelled, Err: ctx.Err()}
		}
		return added("A", "$1")(ctx, c)
	}})
	cfg := baseConfig(t, p, h, a)
	cfg.Store.Product, cfg.Store.CartJSONURL = store.Demo().Product, store.Demo().CartJSONURL
	cfg.Replay, cfg.Recall, cfg.ReplayMaxPriceChange = ReplayDirect, recallAll{}, 20
	cfg.Concurrency, cfg.Stagger = 1, time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	replayed := 0
	for _, it := range res.Summary.Items {
		if it.Outcome != report.OutcomeAdded {
			t.Errorf("%s: %s (%s)", it.ItemName, it.Outcome, it.Explanation)
		}
		if it.Replay == ReplayedDirect {
			replayed++
		}
	}
	if replayed != 5 || a.attemptsFor("a") != 1 {
		t.Errorf("%d items replayed, the agent ran %d times for a; want 5 and 1", replayed, a.attemptsFor("a"))
	}
	if h.maxOpen > replaySlots()+1 {
		t.Errorf("%d tabs open at once, want at most %d replays and 1 agent", h.maxOpen, replaySlots())
	}
	// Replays reuse the tabs finished replays leave, and close them at
	// the end. (The sign-in check opens a tab of its own before the items.)
	if h.tabs > replaySlots()+2 || h.open != 0 {
		t.Errorf("%d tabs opened, %d left open; want at most %d opened (the sign-in check's, one per replay slot, one for the agent), none left", h.tabs, h.open, replaySlots()+2)
	}
}

// heldPage is a product page whose load waits for release (a replay busy
// in its slot), or fails when the run is stopped.
type heldPage struct {
	*productPage
	release <-chan struct{}
	loads   *atomic.Int32
}

func (p heldPage) Load(ctx context.Context, url string) error {
	p.loads.Add(1)
	select {
	case <-p.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return p.productPage.Load(ctx, url)
}

// TestAgentItemsStartWhileReplaysAreQueued: the loop that starts the
// agents' items never waits for a replay slot. Every slot is held by a
// replay that finishes only once the agent's item (last on the list) has
// started, and two more replays are queued: the agent's item starts at
// once, no more replays run than there are slots, and the queued ones
// run after. Stopped meanwhile, the queued replays never start.
func TestAgentItemsStartWhileReplaysAreQueued(t *testing.T) {
	slots := replaySlots()
	var names []string
	for i := range slots + 2 {
		names = append(names, fmt.Sprintf("r%d", i+1))
	}
	names = append(names, "a")
	setup := func(t *testing.T, release <-chan struct{}, b behaviour) (Config, *fakeHost, *atomic.Int32) {
		var loads atomic.Int32
		h := &fakeHost{authed: true}
		h.tabFor = func(ft *fakeTab) Tab {
			return heldPage{productPage: &productPage{fakeTab: ft, status: inCart, onLoad: func(pp *productPage, url string) {
				id := url[strings.LastIndex(url, "/")+1:]
				pp.id, pp.name, pp.brand, pp.size, pp.price = id, id, "Brand", "1 L", "$1.00"
			}}, release: release, loads: &loads}
		}
		cfg := baseConfig(t, newFakeProvider(names...), h, newFakeAgent(map[string]behaviour{"a": b}))
		cfg.Store.Product, cfg.Store.CartJSONURL = store.Demo().Product, store.Demo().CartJSONURL
		cfg.Replay, cfg.Recall, cfg.ReplayMaxPriceChange = ReplayDirect, recallAll{}, 20
		cfg.Concurrency, cfg.Stagger = 1, time.Hour
		return cfg, h, &loads
	}

	t.Run("the agent starts at once", func(t *testing.T) {
		release := make(chan struct{})
		startedAfter := int32(-1) // replays started when the agent's item did
		var cfg Config
		var h *fakeHost
		var loads *atomic.Int32
		cfg, h, loads = setup(t, release, func(ctx context.Context, c *fakeCall) agent.Result {
			startedAfter = loads.Load()
			close(release)
			return added("A", "$1")(ctx, c)
		})
		// Bounds a hang only: without the fix the agent never starts and
		// the replays hold their slots until this ends the run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := Run(ctx, cfg)
		if err != nil {
			t.Fatalf("the run did not finish (the agent's item waited behind the replays): %v", err)
		}
		if startedAfter < 0 || int(startedAfter) > slots {
			t.Errorf("the agent's item started after %d replays had started; want at most %d (the slots), the other %d still queued", startedAfter, slots, len(names)-1-slots)
		}
		replayed := 0
		for _, it := range res.Summary.Items {
			if it.Outcome != report.OutcomeAdded {
				t.Errorf("%s: %s (%s)", it.ItemName, it.Outcome, it.Explanation)
			}
			if it.Replay == ReplayedDirect {
				replayed++
			}
		}
		if replayed != slots+2 || int(loads.Load()) != slots+2 {
			t.Errorf("%d items replayed, %d pages loaded; want %d", replayed, loads.Load(), slots+2)
		}
		if h.maxOpen > slots+1 || h.open != 0 {
			t.Errorf("%d tabs open at once, %d left open; want at most %d replays and 1 agent, none left", h.maxOpen, h.open, slots)
		}
	})

	t.Run("stopped, the queued replays never start", func(t *testing.T) {
		never := make(chan struct{})
		agentIn := make(chan string, 1)
		cfg, h, loads := setup(t, never, blocks(agentIn))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		var res Result
		go func() {
			var err error
			res, err = Run(ctx, cfg)
			done <- err
		}()
		select {
		case <-agentIn:
		case <-time.After(30 * time.Second): // bounds a hang only
			cancel()
			<-done
			t.Fatal("the agent's item did not start while the replays held their slots")
		}
		cancel()
		if err := <-done; !errors.Is(err, ErrCancelled) {
			t.Fatalf("the stopped run ended with %v, want ErrCancelled", err)
		}
		if n := int(loads.Load()); n > slots {
			t.Errorf("%d replays started; want at most %d (the slots), none of the queued after the stop", n, slots)
		}
		notShopped := 0
		for _, it := range res.Summary.Items {
			if it.Outcome == report.OutcomeAdded {
				t.Errorf("%s was added after the stop", it.ItemName)
			}
			if it.Outcome == report.OutcomeNotShopped {
				notShopped++
			}
		}
		if notShopped < 2 || h.open != 0 {
			t.Errorf("%d items not shopped, %d tabs left open; want at least the 2 queued replays and none", notShopped, h.open)
		}
	})
}

// TestReplaysAddedDuringTheRun: items added to the list while the run
// shops are taken in too when the memory knows them — also when every
// item, old and new, is a replay (no agent's item in the queue).
func TestReplaysAddedDuringTheRun(t *testing.T) {
	p := newFakeProvider("r1", "r2")
	h := &fakeHost{authed: true}
	h.tabFor = func(ft *fakeTab) Tab {
		return &productPage{fakeTab: ft, status: inCart, onLoad: func(pp *productPage, url string) {
			id := url[strings.LastIndex(url, "/")+1:]
			pp.id, pp.name, pp.brand, pp.size, pp.price = id, id, "Brand", "1 L", "$1.00"
		}}
	}
	cfg := baseConfig(t, p, h, newFakeAgent(nil))
	cfg.Store.Product, cfg.Store.CartJSONURL = store.Demo().Product, store.Demo().CartJSONURL
	cfg.Replay, cfg.Recall, cfg.ReplayMaxPriceChange = ReplayDirect, recallAll{}, 20
	// Added after the run read the list, before it shops.
	cfg.LaunchHost = func(context.Context) (Host, error) { p.add("r3"); p.add("r4"); return h, nil }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	replayed := 0
	for _, it := range res.Summary.Items {
		if it.Replay == ReplayedDirect && it.Outcome == report.OutcomeAdded {
			replayed++
		}
	}
	if replayed != 4 {
		t.Errorf("%d of the 4 items replayed: %+v", replayed, res.Summary.Items)
	}
}
