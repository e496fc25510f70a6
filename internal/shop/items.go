package shop

import (
	"context"
	"strings"

	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// planned is one item to shop, with the later items that repeat it.
type planned struct {
	item       shoppinglist.Item
	duplicates []shoppinglist.Item
	// toAgent, for an item started as a replay (shopAll's replayer),
	// gives up its replay slot and waits for an agent slot when the item
	// goes to the agent; it returns the slot's release.
	toAgent func(context.Context) func()
	// release gives the item's agent slot back before the item ends
	// (while its tab waits for a person: itemtakeover.go); idempotent;
	// nil when the item holds no slot.
	release func()
}

// plan is what a run will do with a list.
type plan struct {
	shop []*planned
	// skippedTagged counts open items left alone because a previous run
	// tagged them #404 or #failed (and RetryTagged is off).
	skippedTagged int
	// unnamed are open items whose name is only tags or empty, or longer
	// than shoppinglist.MaxNameRunes: reported as skipped, never shopped or
	// changed.
	unnamed []shoppinglist.Item
	// nothing says why there is nothing to shop (when shop is empty).
	nothing string
}

// total is the number of list items the run reports on (shopped +
// duplicates + refused).
func (p plan) total() int {
	n := len(p.unnamed)
	for _, it := range p.shop {
		n += 1 + len(it.duplicates)
	}
	return n
}

// planItems selects the open items to shop with shoppinglist.PlanRun:
// completed items are left alone, items tagged #404/#failed are skipped
// unless retryTagged, and an item whose product repeats an earlier one is
// shopped once (with the largest quantity asked): the later ones are
// duplicates and share its outcome. only limits the run to the named items
// (case-insensitive, with or without quantity).
func planItems(items []shoppinglist.Item, retryTagged, onlyTagged bool, only []string) plan {
	if onlyTagged {
		items, retryTagged = shoppinglist.OnlyTagged(items), true
	}
	if len(only) > 0 {
		want := make(map[string]bool, len(only))
		for _, o := range only {
			want[shoppinglist.Key(o)] = true
			want[shoppinglist.Key(shoppinglist.Parse(o).Product)] = true
		}
		var kept []shoppinglist.Item
		for _, it := range items {
			if want[shoppinglist.Key(it.Name)] || want[it.Key()] {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	rp := shoppinglist.PlanRun(items, retryTagged)
	p := plan{skippedTagged: len(rp.Tagged), unnamed: append(rp.Unnamed, rp.TooLong...), nothing: shoppinglist.NothingToShop(rp)}
	byID := make(map[string]*planned, len(rp.ToShop))
	for _, it := range rp.ToShop {
		if strings.TrimSpace(it.Product) == "" {
			it.Product = it.Name
		}
		pl := &planned{item: it}
		byID[it.ID] = pl
		p.shop = append(p.shop, pl)
	}
	for _, d := range rp.Duplicates {
		if pl := byID[d.Of.ID]; pl != nil {
			pl.duplicates = append(pl.duplicates, d.Item)
		}
	}
	return p
}
