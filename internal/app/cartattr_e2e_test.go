package app

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// TestRetryAfterAddDoesNotAddTwice reproduces the extra olive-oil unit of
// a busy machine (issue 25): the item's first attempt adds the product,
// then its tab finds itself signed out (here the store really expires the
// session; under load a slow page was taken for it) and the item is retried
// after a re-login. A retry that starts from scratch adds the product again
// — the cart then holds 2 units for 1 reported, "a unit no list item
// reported". The retry must know what its item's first tab added (the tab's
// own cart requests) and report those units instead; the cart must hold
// exactly one, with no review warning.
func TestRetryAfterAddDoesNotAddTwice(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "olive oil")
	var expired atomic.Bool
	e.deps.Scripted = ScriptedOptions{Wrap: func(next gemini.Script) gemini.Script {
		return func(req *gemini.Request) gemini.Reply {
			demo := e.runner.DemoStore()
			// The first attempt, once its add is in the cart: the session
			// ends, and the agent opens the cart to check it (the page
			// then shows "Sign in").
			if !strings.Contains(req.Goal(), "An earlier attempt") && demo != nil && cartUnits(demo)["olive-oil-1l"] > 0 &&
				expired.CompareAndSwap(false, true) {
				demo.ExpireSessions()
				return gemini.Reply{Text: "Let me check the cart.", Calls: []*genai.FunctionCall{gemini.Call("navigate", map[string]any{"url": "https://www.metro.ca/en/online-grocery/cart"})}}
			}
			return next(req)
		}
	}}
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !expired.Load() {
		t.Fatal("the session was never expired: the test did not exercise the retry")
	}
	if c := res.Summary.Counts(); c.Added != 1 {
		t.Fatalf("%s\n%s", c, res.Summary.Markdown())
	}
	if res.Logins != 2 {
		t.Errorf("logins = %d, want 2 (the first sign-in and one after the expiry)", res.Logins)
	}
	// Verified on the store's own cart, not on what the agent said.
	if n := cartUnits(e.runner.DemoStore())["olive-oil-1l"]; n != 1 {
		t.Errorf("the cart holds %d × olive oil, want 1 (reported %d)\n%s", n, res.Summary.Items[0].Quantity, res.Summary.Markdown())
	}
	if len(res.Summary.Warnings) != 0 {
		t.Errorf("warnings: %q", res.Summary.Warnings)
	}
	it := res.Summary.Items[0]
	if it.Outcome != report.OutcomeAdded || it.Attempts != 2 || len(it.Warnings) != 0 {
		t.Errorf("item: %+v", it)
	}
	// The journal attributes the add to the first attempt's tab.
	rec, err := shop.ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	atts := rec.Items[0].Attempts
	if len(atts) != 2 {
		t.Fatalf("attempts: %+v", atts)
	}
	var adds []string
	for i, a := range atts {
		for _, c := range a.Cart {
			if c.Done() && c.Kind == "add" {
				adds = append(adds, c.ProductID+"@"+string(rune('1'+i)))
			}
		}
	}
	if strings.Join(adds, ",") != "olive-oil-1l@1" {
		t.Errorf("cart adds by attempt = %v, want exactly one, by attempt 1", adds)
	}
}
