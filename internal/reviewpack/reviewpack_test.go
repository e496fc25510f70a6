package reviewpack

import (
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

func TestBuildConfidenceAndWarnings(t *testing.T) {
	cart, added := milkCart(), addedMilk
	tests := []struct {
		name    string
		res     report.ItemResult
		issues  []ItemIssue
		pct     float64
		conf    Confidence
		matches int
		kinds   []WarningKind
	}{
		{"replayed", added(func(r *report.ItemResult) { r.Replay = "replayed" }), nil, 0, Replayed, 0, nil},
		{"the one match", added(func(r *report.ItemResult) { r.Matches = 1 }), nil, 0, AgentOneMatch, 1, nil},
		{"among several", added(func(r *report.ItemResult) { r.Matches = 6 }), nil, 0, AgentChose, 6, nil},
		{"the agent, unsaid", added(func(*report.ItemResult) {}), nil, 0, Agent, 0, nil},
		{"the household chose", added(func(r *report.ItemResult) { r.ChosenBy = report.ChosenByHousehold; r.Matches = 2 }), nil, 0, Household, 0, nil},
		{"the household typed another product", added(func(r *report.ItemResult) { r.ChosenBy = report.ChosenByHouseholdQuery }), nil, 0, Substitute, 0, []WarningKind{WarnSubstitute}},
		{"the household chose an alternative to a sold-out product", added(func(r *report.ItemResult) { r.ChosenBy = report.ChosenBySubstitute }), nil, 0, Substitute, 0, []WarningKind{WarnSubstitute}},
		{"the usual product out of stock", added(func(r *report.ItemResult) { r.Replay = "replay fell back: it is out of stock" }), nil, 0, Substitute, 0, []WarningKind{WarnSubstitute, WarnOutOfStock}},
		{"price up 22 %", added(func(r *report.ItemResult) { r.PreviousPrice = money.Parse("$4.49") }), nil, 0, Agent, 0, []WarningKind{WarnPriceChanged}},
		{"price up 2 %: under the default", added(func(r *report.ItemResult) { r.PreviousPrice = money.Parse("$5.39") }), nil, 0, Agent, 0, nil},
		{"price up 2 %: over a 1 % threshold", added(func(r *report.ItemResult) { r.PreviousPrice = money.Parse("$5.39") }), nil, 1, Agent, 0, []WarningKind{WarnPriceChanged}},
		{"price down 50 %", added(func(r *report.ItemResult) { r.PreviousPrice = money.Parse("$10.98") }), nil, 0, Agent, 0, []WarningKind{WarnPriceChanged}},
		{"an unreported unit", added(func(r *report.ItemResult) { r.Warnings = []string{"its tab also added 1 × butter"} }), nil, 0, Agent, 0, []WarningKind{WarnUnreportedUnit}},
		{"added without asking (#ask)", added(func(r *report.ItemResult) { r.NotAsked = true }), nil, 0, Agent, 0, []WarningKind{WarnNotAsked}},
		{"added without asking and an unreported unit", added(func(r *report.ItemResult) {
			r.NotAsked, r.Warnings = true, []string{"its tab also added 1 × butter"}
		}), nil, 0, Agent, 0, []WarningKind{WarnNotAsked, WarnUnreportedUnit}},
		{"missing from the cart", added(func(*report.ItemResult) {}), []ItemIssue{{Item: "milk", Kind: WarnMissing, Message: "not in the cart"}, {Item: "eggs", Kind: WarnMissing}}, 0, Agent, 0, []WarningKind{WarnMissing}},
		{"fewer units in the cart", added(func(*report.ItemResult) {}), []ItemIssue{{Item: "milk", Kind: WarnQuantityShort, Message: "reported 2, the cart gained 1"}}, 0, Agent, 0, []WarningKind{WarnQuantityShort}},
		{"another price in the cart: not a price change", added(func(*report.ItemResult) {}), []ItemIssue{{Item: "milk", Kind: WarnPriceDiffers, Message: "reported $5.49, the cart says $5.50"}}, 0, Agent, 0, []WarningKind{WarnPriceDiffers}},
		{"sold out, not found", report.ItemResult{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeNotFound, Explanation: "Every product matching \"milk\" is out of stock."}, nil, 0, "", 0, []WarningKind{WarnOutOfStock}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Build("r1", "https://www.metro.ca/cart", []report.ItemResult{tc.res}, tc.issues, cart, Options{PriceChangePercent: tc.pct})
			if len(p.Items) != 1 {
				t.Fatalf("items %+v", p.Items)
			}
			it := p.Items[0]
			if it.Confidence != tc.conf || it.Matches != tc.matches {
				t.Errorf("confidence %q among %d, want %q among %d", it.Confidence, it.Matches, tc.conf, tc.matches)
			}
			var kinds []WarningKind
			for _, w := range it.Warnings {
				kinds = append(kinds, w.Kind)
				if w.Message == "" && w.Kind != WarnMissing {
					t.Errorf("%s has no message", w.Kind)
				}
			}
			if strings.Join(kindStrings(kinds), ",") != strings.Join(kindStrings(tc.kinds), ",") {
				t.Errorf("warnings %v, want %v", kinds, tc.kinds)
			}
			if tc.res.Outcome == report.OutcomeAdded && it.ProductID != "milk-2pct-2l" {
				t.Errorf("product id %q", it.ProductID)
			}
		})
	}
}

func kindStrings(ks []WarningKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func TestBuildLeavesOutDuplicatesAndSkipped(t *testing.T) {
	p := Build("r1", "", []report.ItemResult{
		{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeDuplicate},
		{ItemID: "2", ItemName: "#404", Outcome: report.OutcomeSkipped},
		{ItemID: "3", ItemName: "eggs", Outcome: report.OutcomeNotShopped},
	}, nil, nil, Options{})
	if len(p.Items) != 1 || p.Items[0].ItemName != "eggs" || p.Cart != nil {
		t.Fatalf("pack %+v", p)
	}
}

func TestRequestCheck(t *testing.T) {
	for _, tc := range []struct {
		req Request
		ok  bool
	}{
		{Request{RunID: "r", ItemID: "i", Kind: ActRemove}, true},
		{Request{RunID: "r", ItemID: "i", Kind: ActWrongProduct}, true},
		{Request{RunID: "r", ItemID: "i", Kind: ActQuantity, Quantity: 1}, true},
		{Request{RunID: "r", ItemID: "i", Kind: ActQuantity, Quantity: MaxQuantity}, true},
		{Request{RunID: "r", ItemID: "i", Kind: ActQuantity, Quantity: 0}, false},
		{Request{RunID: "r", ItemID: "i", Kind: ActQuantity, Quantity: -3}, false},
		{Request{RunID: "r", ItemID: "i", Kind: ActQuantity, Quantity: MaxQuantity + 1}, false},
		{Request{RunID: "r", ItemID: "i", Kind: "checkout"}, false},
		{Request{RunID: "r", Kind: ActRemove}, false},
		{Request{ItemID: "i", Kind: ActRemove}, false},
	} {
		if err := tc.req.Check(); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.req, err)
		}
	}
}

func TestCartInfo(t *testing.T) {
	c := Cart{Lines: []Line{{Name: "Milk", Quantity: 2, Price: money.Parse("$5.49")}, {Name: "Bread", Quantity: 1, Price: money.Parse("see store")}}}
	for i := range MaxInfoLines + 5 {
		_ = i
		c.Lines = append(c.Lines, Line{Name: "Gum", Quantity: 1, Price: money.Parse("$1.00")})
	}
	info := c.Info("r1")
	if info.Units != MaxInfoLines+8 || info.TotalCents != 1098+int64(MaxInfoLines+5)*100 || info.UnknownPrices != 1 ||
		len(info.Lines) != MaxInfoLines || info.MoreLines != 7 || info.Lines[1].PriceCents != nil || info.Lines[0].Price != "$5.49" {
		t.Fatalf("info %+v", info)
	}
}

func TestCartFind(t *testing.T) {
	demo := Cart{Lines: []Line{{Name: "Natrel 2% Milk 2 L", ProductID: "milk-2pct-2l", Quantity: 1}, {Name: "Natrel 2% Milk 4 L", ProductID: "milk-2pct-4l", Quantity: 2}}}
	metro := Cart{Lines: []Line{{Name: "Natrel 2% Partly Skimmed Milk, 2 L", Quantity: 1}, {Name: "Natrel 2% Partly Skimmed Milk, 4 L", Quantity: 2}, {Name: "POM White Bread 675 g", Quantity: 1}}}
	for _, tc := range []struct {
		name     string
		cart     Cart
		id, prod string
		want     int // the line's quantity; -1: none
	}{
		{"by id", demo, "milk-2pct-4l", "Natrel 2% Milk 2 L", 2},
		{"an id not in the cart", demo, "milk-skim-1l", "Natrel 2% Milk 2 L", -1},
		{"by name, read without ids", metro, "", "Natrel 2% Partly Skimmed Milk 4 L", 2},
		{"by name, the cart's shorter", metro, "", "POM White Sandwich Bread 675 g", 1},
		{"by name, the product's shorter", metro, "", "White Bread", 1},
		{"two lines match: not sure", metro, "", "Natrel Milk", -1},
		{"no name", metro, "", "", -1},
	} {
		l, ok := tc.cart.Find(tc.id, tc.prod)
		if got := map[bool]int{true: l.Quantity, false: -1}[ok]; got != tc.want {
			t.Errorf("%s: %d (%+v), want %d", tc.name, got, l, tc.want)
		}
	}
}

// milkCart is a cart holding one unit of the milk addedMilk reports.
func milkCart() *Cart {
	return &Cart{Lines: []Line{{Name: "Milk", ProductID: "milk-2pct-2l", Quantity: 1}}}
}

// addedMilk is "milk" reported added as 1 × Natrel 2% Milk 2 L at $5.49,
// changed by mod.
func addedMilk(mod func(*report.ItemResult)) report.ItemResult {
	r := report.ItemResult{ItemID: "1", ItemName: "milk", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Natrel 2% Milk 2 L",
		URL: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/p/milk-2pct-2l", Price: money.Parse("$5.49")}
	mod(&r)
	return r
}
