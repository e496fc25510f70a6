package app

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestTwelveEggsIsOneBox (issues 33, 34, 37): "12 eggs" on the demo store
// — the list parser, the goal, the scripted model and real Chromium — puts
// one box of 12 in the store's cart, reported as 1, with no quantity
// warning; "3 apples" one bag of apples (sold by weight). A model that
// reads the count as boxes (as the one of issue 37 did: twelve boxes) is
// refused the second box by the item's cart limit before it reaches the
// store: the store's cart still holds one box, and the item says its tab
// was refused.
func TestTwelveEggsIsOneBox(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	for _, tc := range []struct {
		name         string
		item, query  string
		model        scripted.Misbehaviour
		idIs, idEnds string // the product id's start and end
		refused      bool
	}{
		{"a model that follows the goal", "12 eggs", "eggs", "", "eggs-", "-12", false},
		{"a model that counts boxes", "12 eggs", "eggs", scripted.CountsPackages, "eggs-", "-12", true},
		{"three apples are one bag", "3 apples", "apples", "", "apples-", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own runner, store and browser
			e := newE2E(t, tc.item)
			if tc.model != "" {
				e.deps.Scripted.Misbehave = map[string]scripted.Misbehaviour{tc.query: tc.model}
			}
			res, err := e.shop(context.Background())
			if err != nil {
				t.Fatalf("Shop: %v", err)
			}
			var units, lines int
			var id string
			for _, l := range e.runner.DemoStore().Cart() {
				lines++
				units += l.Quantity
				id = l.ProductID
			}
			if lines != 1 || units != 1 || !strings.HasPrefix(id, tc.idIs) || !strings.HasSuffix(id, tc.idEnds) {
				t.Fatalf("the demo store's cart: %d line(s), %d unit(s), last %q; want one package of %s…%s\n%s",
					lines, units, id, tc.idIs, tc.idEnds, res.Summary.Markdown())
			}
			if len(res.Summary.Items) != 1 {
				t.Fatalf("items %+v", res.Summary.Items)
			}
			it := res.Summary.Items[0]
			if it.Outcome != report.OutcomeAdded || it.Quantity != 1 {
				t.Errorf("the item ended %s × %d, want added × 1\n%s", it.Outcome, it.Quantity, res.Summary.Markdown())
			}
			refused := false
			for i := range it.Warnings {
				if it.WarningText(i).Key == "warning.tab_refused" {
					refused = true
				}
			}
			if refused != tc.refused {
				t.Errorf("the item's tab refused: %v, want %v (warnings %q)", refused, tc.refused, it.Warnings)
			}
			if res.Pack == nil || len(res.Pack.Items) != 1 {
				t.Fatalf("the review pack: %+v", res.Pack)
			}
			for _, w := range res.Pack.Items[0].Warnings {
				if w.Kind == reviewpack.WarnQuantityFar {
					t.Errorf("one package for %q is warned about: %q", tc.item, w.Message)
				}
			}
		})
	}
}

// TestTwelveEggsReplaysOneBox (issue 33): next week's run of "12 eggs"
// replays the remembered box by code and adds one box again — the packages
// that cover the item, read from the product's page — not twelve.
func TestTwelveEggsReplaysOneBox(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "12 eggs")
	calls := &agentCalls{n: map[string]int{}}
	e.deps.Scripted.Wrap = calls.wrap
	if _, err := e.shop(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls.take()
	srv := e.runner.DemoStore()
	before := cartUnits(srv)
	if err := os.WriteFile(e.listPath, []byte("items:\n  - name: 12 eggs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after := cartUnits(srv)
	it := res.Summary.Items[0]
	if it.Outcome != report.OutcomeAdded || it.Replay != "replayed" || calls.take()["12 eggs"] != 0 {
		t.Fatalf("the second run: %s, replay %q; want replayed by code\n%s", it.Outcome, it.Replay, res.Summary.Markdown())
	}
	id := store.ProductID(it.URL)
	if got := after[id] - before[id]; got != 1 || it.Quantity != 1 {
		t.Errorf("the replay added %d × %s and reported %d; want one box of 12", got, id, it.Quantity)
	}
}
