package shop

import (
	"slices"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
)

func line(id, name string, qty int, price string) CartLine {
	return CartLine{ProductID: id, Name: name, Quantity: qty, Price: money.Parse(price)}
}

func addedResult(item, product, url, price string, qty int) report.ItemResult {
	return report.ItemResult{ItemName: item, Outcome: report.OutcomeAdded, ProductName: product, URL: url, Price: money.Parse(price), Quantity: qty}
}

func TestCompare(t *testing.T) {
	before := Cart{Lines: []CartLine{line("coffee-1", "Ground Coffee", 1, "$9.99"), line("sugar-2kg", "White Sugar", 1, "$3.79")}}
	tests := []struct {
		name    string
		after   []CartLine
		results []report.ItemResult
		want    []reviewpack.WarningKind
		changes int
	}{
		{
			name:    "all reported items arrived",
			after:   append(before.Lines[:2:2], line("milk-2pct-2l", "2% Milk", 1, "$5.49"), line("eggs-12", "Large Eggs", 2, "$4.29")),
			results: []report.ItemResult{addedResult("milk", "Natrel 2% Milk 2 L", "https://www.metro.ca/en/p/milk-2pct-2l", "$5.49", 1), addedResult("2x eggs", "Large Eggs", "", "$4.29", 2)},
			want:    nil, changes: 2,
		},
		{
			name:    "reported but never reached the cart",
			after:   append(before.Lines[:2:2], line("milk-2pct-2l", "2% Milk", 1, "$5.49")),
			results: []report.ItemResult{addedResult("milk", "2% Milk", "https://www.metro.ca/en/p/milk-2pct-2l", "$5.49", 1), addedResult("bread", "White Bread", "https://www.metro.ca/en/p/bread-white", "$3.99", 1)},
			want:    []reviewpack.WarningKind{reviewpack.WarnMissing}, changes: 1,
		},
		{
			name:    "price differs and fewer units",
			after:   append(before.Lines[:2:2], line("milk-2pct-2l", "2% Milk", 1, "$5.99")),
			results: []report.ItemResult{addedResult("milk", "2% Milk", "https://www.metro.ca/en/p/milk-2pct-2l", "$5.49", 2)},
			want:    []reviewpack.WarningKind{reviewpack.WarnQuantityShort, reviewpack.WarnPriceDiffers}, changes: 1,
		},
		{
			name:    "unexpected additions and removals",
			after:   []CartLine{line("coffee-1", "Ground Coffee", 1, "$9.99"), line("chips", "Chips", 1, "$2.99")},
			results: nil,
			want:    []reviewpack.WarningKind{reviewpack.WarnUnexpectedChange, reviewpack.WarnUnexpectedChange}, changes: 2,
		},
		{
			name:    "same product for two items",
			after:   append(before.Lines[:2:2], line("milk-2pct-2l", "2% Milk", 2, "$5.49")),
			results: []report.ItemResult{addedResult("milk", "2% Milk", "https://x/p/milk-2pct-2l", "$5.49", 1), addedResult("2% milk", "2% Milk", "https://x/p/milk-2pct-2l", "$5.49", 1)},
			want:    nil, changes: 1,
		},
		{
			name:    "matched by name when there is no url",
			after:   append(before.Lines[:2:2], CartLine{Name: "Natrel 2% Partly Skimmed Milk 2 L", Quantity: 1, Price: money.Parse("$5.49")}),
			results: []report.ItemResult{addedResult("milk", "2% Partly Skimmed Milk", "", "$5.49", 1)},
			want:    nil, changes: 1,
		},
		{
			name:    "not found and failed items are not expected in the cart",
			after:   before.Lines,
			results: []report.ItemResult{{ItemName: "caviar", Outcome: report.OutcomeNotFound}, {ItemName: "x", Outcome: report.OutcomeFailed}},
			want:    nil, changes: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rev := Compare(before, Cart{Lines: tc.after}, tc.results)
			var got []reviewpack.WarningKind
			for _, w := range rev.Warnings {
				got = append(got, w.Kind)
			}
			if strings.Join(kindsOf(got), ",") != strings.Join(kindsOf(tc.want), ",") {
				t.Errorf("warnings = %v, want %v\n%+v", got, tc.want, rev.Warnings)
			}
			if len(rev.Changes) != tc.changes {
				t.Errorf("changes = %+v, want %d", rev.Changes, tc.changes)
			}
		})
	}
}

func kindsOf(ks []reviewpack.WarningKind) []string {
	var out []string
	for _, k := range ks {
		out = append(out, string(k))
	}
	return out
}

func TestCompareMissingMessageNamesItem(t *testing.T) {
	rev := Compare(Cart{}, Cart{}, []report.ItemResult{addedResult("bread", "White Bread", "", "$3.99", 1)})
	if len(rev.Warnings) != 1 || !strings.Contains(rev.Warnings[0].Message, `"bread"`) || rev.Warnings[0].Item != "bread" {
		t.Fatalf("warnings = %+v", rev.Warnings)
	}
	if got := rev.WarningTexts(); len(got) != 1 || got[0] != rev.Warnings[0].Message {
		t.Errorf("texts = %v", got)
	}
}

// The cart review's warnings about an item keep their meaning in the review
// pack — one vocabulary, no mapping: fewer units is not "missing", and
// another price in the cart than reported is not a price change since last
// time (which has a threshold).
func TestPackKind(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []report.ItemResult
		after   []CartLine
		want    reviewpack.WarningKind
	}{
		{"missing", []report.ItemResult{addedResult("bread", "White Bread", "https://x/p/bread", "$3.99", 1)}, nil, reviewpack.WarnMissing},
		{"fewer units", []report.ItemResult{addedResult("milk", "2% Milk", "https://x/p/milk", "$5.49", 2)}, []CartLine{line("milk", "2% Milk", 1, "$5.49")}, reviewpack.WarnQuantityShort},
		{"another price", []report.ItemResult{addedResult("milk", "2% Milk", "https://x/p/milk", "$5.49", 1)}, []CartLine{line("milk", "2% Milk", 1, "$5.99")}, reviewpack.WarnPriceDiffers},
	} {
		rev := Compare(Cart{}, Cart{Lines: tc.after}, tc.results)
		r := &run{id: "r1"}
		pk := r.buildPack(tc.results, &rev)
		if len(pk.Items) != 1 || !slices.ContainsFunc(pk.Items[0].Warnings, func(w reviewpack.Warning) bool { return w.Kind == tc.want }) {
			t.Errorf("%s: the review says %+v, the pack %+v; want %s", tc.name, rev.Warnings, pk.Items, tc.want)
		}
	}
}
