package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/report"
)

// TestFrenchListShopsLikeItsEnglishTwin: a list written in French, as a
// Québec household writes it, fills the same demo cart as its English twin
// — the same products, the same quantities, the same outcomes item by
// item — through the goal prompt, the scripted model, the store's search
// and real Chromium.
func TestFrenchListShopsLikeItsEnglishTwin(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	english := []string{"2% milk", "2x eggs", "butter", "apples", "skim milk", "3 bananas"}
	french := []string{"lait 2 %", "2x œufs", "beurre", "pommes", "lait écrémé", "trois bananes"}
	type run struct {
		outcomes []string
		cart     map[string]int
	}
	shop := func(t *testing.T, items []string) run {
		e := newE2E(t, items...)
		res, err := e.shop(context.Background())
		if err != nil {
			t.Fatalf("Shop %v: %v", items, err)
		}
		byName := map[string]report.ItemResult{}
		for _, it := range res.Summary.Items {
			byName[it.ItemName] = it
		}
		var r run
		for _, name := range items {
			it := byName[name]
			r.outcomes = append(r.outcomes, fmt.Sprintf("%s×%d", it.Outcome, max(it.Quantity, 1)))
		}
		r.cart = map[string]int{}
		for _, l := range e.runner.DemoStore().Cart() {
			r.cart[l.ProductID] = l.Quantity
		}
		return r
	}
	// The two lists shop at the same time, each with its own runner,
	// store and browser (a slot of go test's -parallel each); the
	// comparison waits for both.
	var en, fr run
	t.Run("runs", func(t *testing.T) {
		t.Run("english", func(t *testing.T) { t.Parallel(); en = shop(t, english) })
		t.Run("french", func(t *testing.T) { t.Parallel(); fr = shop(t, french) })
	})
	if en.cart == nil || fr.cart == nil {
		return // a shop stopped the test (its subtest said why)
	}
	if len(en.cart) < 4 {
		t.Fatalf("the English list filled too little to compare: %v (%v)", en.cart, en.outcomes)
	}
	for i := range english {
		if en.outcomes[i] != fr.outcomes[i] {
			t.Errorf("%q ended %s, its French twin %q %s", english[i], en.outcomes[i], french[i], fr.outcomes[i])
		}
	}
	if fmt.Sprint(en.cart) != fmt.Sprint(fr.cart) {
		t.Errorf("the French list's cart %v differs from the English one's %v", fr.cart, en.cart)
	}
}
