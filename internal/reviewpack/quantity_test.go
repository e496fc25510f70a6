package reviewpack

import (
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/report"
)

// TestQuantityFarFromTheItemIsWarnedFirst (issue 33): units far from what
// the item names — twelve 12-packs for "12 eggs", three 3 lb bags for "3
// apples" — are the item's first warning; the packages that cover the
// count, loose pieces and counts of packages are not warned about.
func TestQuantityFarFromTheItemIsWarnedFirst(t *testing.T) {
	const eggsURL = "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/p/eggs-large-12"
	tests := []struct {
		name          string
		item, product string
		units         int
		cart          *Cart
		first         WarningKind // "": no quantity_far warning
	}{
		{"twelve boxes of 12 for 12 eggs", "12 eggs", "Burnbrae Farms Large White Eggs, 12 eggs", 12, nil, WarnQuantityFar},
		{"one box of 12 for 12 eggs", "12 eggs", "Burnbrae Farms Large White Eggs, 12 eggs", 1, nil, ""},
		{"two boxes of 12 for 12 eggs", "12 eggs", "Burnbrae Farms Large White Eggs, 12 eggs", 2, nil, WarnQuantityFar},
		{"two boxes of 12 for 24 eggs", "24 eggs", "Large White Eggs 12 eggs", 2, nil, ""},
		{"a dozen eggs, twelve boxes", "a dozen eggs", "Large White Eggs, dozen", 12, nil, WarnQuantityFar},
		{"douze œufs, douze boîtes", "douze œufs", "Gros œufs blancs, 12 œufs", 12, nil, WarnQuantityFar},
		{"three 3 lb bags for 3 apples", "3 apples", "Fresh Gala Apples, 3 lb bag", 3, nil, WarnQuantityFar},
		{"one 3 lb bag for 3 apples", "3 apples", "Fresh Gala Apples, 3 lb bag", 1, nil, ""},
		{"three loose apples", "3 apples", "Gala Apple, each", 3, nil, ""},
		{"two boxes for 2x eggs (packages)", "2x eggs", "Large White Eggs, 12 eggs", 2, nil, ""},
		{"the size read from the cart's line", "12 eggs", "Large White Eggs", 12,
			&Cart{Lines: []Line{{Name: "Large White Eggs 12 eggs", ProductID: "eggs-large-12", Quantity: 12}}}, WarnQuantityFar},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := report.ItemResult{ItemID: "1", ItemName: tc.item, Quantity: tc.units, Outcome: report.OutcomeAdded,
				ProductName: tc.product, URL: eggsURL, ChosenBy: report.ChosenByHouseholdQuery}
			p := Build("r1", "", []report.ItemResult{r}, nil, tc.cart, Options{})
			ws := p.Items[0].Warnings
			far := 0
			for _, w := range ws {
				if w.Kind == WarnQuantityFar {
					far++
				}
			}
			switch {
			case tc.first == "" && far > 0:
				t.Errorf("warnings %+v, want no %s", ws, WarnQuantityFar)
			case tc.first != "" && (len(ws) == 0 || ws[0].Kind != tc.first || far != 1):
				t.Errorf("warnings %+v, want %s first (and once)", ws, tc.first)
			}
		})
	}
}
