package reviewpack

import (
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// TestAddPruning: an item probably still at home gets a warning and stays
// in the pack; the pruning section lists it and what was left out.
func TestAddPruning(t *testing.T) {
	p := Build("r1", "", []report.ItemResult{
		{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2% Milk", Quantity: 1},
		{ItemID: "2", ItemName: "bread", Outcome: report.OutcomeAdded, ProductName: "POM Bread", Quantity: 1},
	}, nil, nil, Options{})
	home := messages.Say("usual.recent_warning", "ago", 2, "days", 10)
	on := messages.Say("usual.on_list", "item", "coffee")
	p.AddPruning([]Pruned{
		{ItemID: "1", Item: "milk", Why: PrunedAtHome, Message: home.English(), Text: home},
		{Item: "Ground Coffee", Why: PrunedOnList, Message: on.English(), Text: on},
	})
	if len(p.Items) != 2 || len(p.Pruning) != 2 {
		t.Fatalf("items %d, pruning %+v", len(p.Items), p.Pruning)
	}
	milk, _ := p.Item("1")
	if len(milk.Warnings) != 1 || milk.Warnings[0].Kind != WarnRecentlyBought || milk.Warnings[0].Message != "bought 2 days ago, usually every 10 days" ||
		milk.Warnings[0].Said(messages.For("fr")) != "acheté il y a 2 jours, d'habitude tous les 10 jours" {
		t.Errorf("milk's warnings %+v", milk.Warnings)
	}
	if bread, _ := p.Item("2"); len(bread.Warnings) != 0 {
		t.Errorf("bread's warnings %+v", bread.Warnings)
	}
}
