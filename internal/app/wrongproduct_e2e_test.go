package app

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// orangeJuice is the demo store's one product for "oranges" (it sells no
// fruit of that name): Tropicana orange juice.
const orangeJuice = "orange-juice-1540ml"

// TestWrongProductNeverReturns: "oranges" got the store's orange juice; the
// household marks it Wrong product. The re-shop, Retry failed and next
// week's run never add it again (the demo store's cart proves it), and
// neither does a model that does not heed the goal's "Wrong product" line:
// the item's tab refuses the add before it reaches the store, and the
// item's result says so. Pinning the juice (⭐) takes the mark back.
func TestWrongProductNeverReturns(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "oranges")
	var ignore atomic.Bool
	e.deps.Scripted.Wrap = ignoringWrong(&ignore)
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := e.runner.DemoStore()
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeAdded || cartUnits(srv)[orangeJuice] != 1 {
		t.Fatalf("the first run: %s, cart %v", res.Summary.Markdown(), cartUnits(srv))
	}
	pk := res.Pack
	oranges := pk.Items[0]
	// Juice for a fruit: a warning that needs a look.
	if !hasWarning(oranges, reviewpack.WarnDifferentKind) || !oranges.Attention {
		t.Errorf("the pack does not flag juice for oranges: %+v", oranges)
	}

	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	var reshop shop.Result
	start := func(ctx context.Context, req runstatus.Request) error {
		var err error
		reshop, err = e.runner.Shop(ctx, req)
		return err
	}
	a, err := CartActions(e.runner, start)(ctx, reviewpack.Request{RunID: res.Summary.RunID, ItemID: oranges.ItemID, Kind: reviewpack.ActWrongProduct, Source: "test"})
	if err != nil || a.Reshop != "oranges" || a.After != 0 {
		t.Fatalf("wrong product: %+v, %v", a, err)
	}
	noJuice := func(when string, r shop.Result) {
		t.Helper()
		if n := cartUnits(srv)[orangeJuice]; n != 0 {
			t.Fatalf("%s: the store's cart holds %d × orange juice, marked wrong for oranges\n%s", when, n, r.Summary.Markdown())
		}
		for _, it := range r.Summary.Items {
			if it.ItemName == "oranges" && it.Outcome == report.OutcomeAdded {
				t.Fatalf("%s: oranges added %s (%s)", when, it.ProductName, it.URL)
			}
		}
	}
	noJuice("the re-shop", reshop)
	if got := e.list()["oranges"]; got != "#404" {
		t.Fatalf("oranges on the list after the re-shop: %s, want #404 (nothing else is sold)", got)
	}
	mem, err := OpenProducts(e.dataDir, "demo", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if en, ok := mem.Entry("oranges"); !ok || !en.IsRejected(products.Product{ProductID: orangeJuice}) || en.Standing() {
		t.Fatalf("the memory's entry for oranges: %+v (%v), want the juice marked wrong and no product", en, ok)
	}

	// Retry failed: a run of its own, told nothing by the review.
	retry, err := e.runner.Shop(ctx, runstatus.Request{Source: "test", RetryFailed: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(retry.Summary.Items) != 1 {
		t.Fatalf("Retry failed shopped: %s", retry.Summary.Markdown())
	}
	noJuice("Retry failed", retry)

	// Next week: the household puts oranges on the list again.
	week := func() shop.Result {
		t.Helper()
		if err := os.WriteFile(e.listPath, []byte("items:\n  - name: oranges\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := e.runner.Shop(ctx, runstatus.Request{Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	noJuice("the next week's run", week())

	// A model that adds it anyway: the tab refuses the add before the
	// store sees it, and the item's result says so.
	ignore.Store(true)
	r := week()
	noJuice("a model that ignores the mark", r)
	if w := strings.Join(r.Summary.Items[0].Warnings, " "); !strings.Contains(w, "marked wrong") {
		t.Errorf("the result does not say the add was refused: %q\n%s", w, r.Summary.Markdown())
	}
	ignore.Store(false)

	// ⭐ on the juice: the household says otherwise, and it is bought again.
	if err := mem.Pin("oranges", products.Product{Name: oranges.ProductName, URL: oranges.URL}); err != nil {
		t.Fatal(err)
	}
	r = week()
	if it := r.Summary.Items[0]; it.Outcome != report.OutcomeAdded || cartUnits(srv)[orangeJuice] != 1 {
		t.Errorf("after pinning it: %s, cart %v", r.Summary.Markdown(), cartUnits(srv))
	}
}

// TestChangedQuantityIsBoughtNextTime: "3x eggs" put three boxes in the
// cart; the household changes the line to 1 in the review. The next run
// (a replay) buys 1 while the list still says 3x; once the list says
// another quantity, the list wins. (A count of packages: "12 eggs", a
// count of pieces, is one box of 12 by the quantity rule.)
func TestChangedQuantityIsBoughtNextTime(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "3x eggs")
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := e.runner.DemoStore()
	it := res.Pack.Items[0]
	if it.Outcome != report.OutcomeAdded || cartUnits(srv)[it.ProductID] != 3 {
		t.Fatalf("the first run: %s, cart %v", res.Summary.Markdown(), cartUnits(srv))
	}
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	before := 0
	if a, err := e.runner.CartAction(ctx, reviewpack.Request{RunID: res.Summary.RunID, ItemID: it.ItemID, Kind: reviewpack.ActQuantity, Quantity: 1, Source: "test"}); err != nil || a.After != 1 {
		t.Fatalf("change quantity to 1: %+v, %v", a, err)
	}
	next := func(list string) shop.Result {
		t.Helper()
		before = cartUnits(srv)[it.ProductID]
		if err := os.WriteFile(e.listPath, []byte("items:\n  - name: "+list+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := e.runner.Shop(ctx, runstatus.Request{Source: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := next("3x eggs")
	if got := r.Summary.Items[0]; got.Outcome != report.OutcomeAdded || got.Replay != shop.ReplayedDirect || cartUnits(srv)[it.ProductID]-before != 1 {
		t.Fatalf("the next run: %+v, cart %d → %d, want 1 more, replayed\n%s", got, before, cartUnits(srv)[it.ProductID], r.Summary.Markdown())
	}
	r = next("2x eggs")
	if n := cartUnits(srv)[it.ProductID] - before; n != 2 {
		t.Fatalf("the list now says 2: the cart gained %d\n%s", n, r.Summary.Markdown())
	}
}

// ignoringWrong makes the model a careless one while on is set: it never
// reads the goal's "Wrong product" lines (they are taken out of its goal),
// so only the run's own guards keep a rejected product out.
func ignoringWrong(on *atomic.Bool) func(gemini.Script) gemini.Script {
	return func(next gemini.Script) gemini.Script {
		return func(req *gemini.Request) gemini.Reply {
			if on.Load() {
				for _, c := range req.Contents {
					if c == nil || c.Role == "model" {
						continue
					}
					for _, p := range c.Parts {
						if p != nil && p.Text != "" {
							var keep []string
							for _, l := range strings.Split(p.Text, "\n") {
								if !strings.HasPrefix(strings.TrimSpace(l), "Wrong product:") {
									keep = append(keep, l)
								}
							}
							p.Text = strings.Join(keep, "\n")
						}
					}
					break
				}
			}
			return next(req)
		}
	}
}
