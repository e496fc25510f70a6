package shop

import (
	"context"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// TestRunPackHasPruning: the run asks Pruning about its own items (with
// its own id) and its review pack warns about the one probably still at
// home, which is shopped all the same.
func TestRunPackHasPruning(t *testing.T) {
	a := newFakeAgent(map[string]behaviour{"milk": added("Milk", "$1"), "bread": added("Bread", "$2")})
	cfg := baseConfig(t, newFakeProvider("milk", "bread"), &fakeHost{authed: true}, a)
	cfg.Cart = &fakeCartReader{}
	var askedID string
	var asked []string
	cfg.Pruning = func(runID string, items []shoppinglist.Item) []reviewpack.Pruned {
		askedID = runID
		var out []reviewpack.Pruned
		for _, it := range items {
			asked = append(asked, it.Name)
			if it.Name == "milk" {
				t := messages.Say("usual.recent_warning", "ago", 2, "days", 10)
				out = append(out, reviewpack.Pruned{ItemID: it.ID, Item: it.Name, Why: reviewpack.PrunedAtHome, Message: t.English(), Text: t})
			}
		}
		return out
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Pack == nil || askedID != res.Summary.RunID || len(asked) != 2 {
		t.Fatalf("pack %+v; pruning asked for run %q about %v", res.Pack, askedID, asked)
	}
	if c := res.Summary.Counts(); c.Added != 2 {
		t.Errorf("counts %s: the item at home must be shopped all the same", c)
	}
	var warned []string
	for _, it := range res.Pack.Items {
		for _, w := range it.Warnings {
			if w.Kind == reviewpack.WarnRecentlyBought {
				warned = append(warned, it.ItemName+": "+w.Message)
			}
		}
	}
	if len(warned) != 1 || warned[0] != "milk: bought 2 days ago, usually every 10 days" || len(res.Pack.Pruning) != 1 {
		t.Errorf("warned %v, pruning %+v", warned, res.Pack.Pruning)
	}
}
