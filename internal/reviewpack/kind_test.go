package reviewpack

import (
	"slices"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// TestOtherKind: a product that is another kind of thing than the item
// names (juice for a fruit) is found by how the name is built, both ways,
// in English and French; the item's own kind, sizes, brands and
// descriptions are not.
func TestOtherKind(t *testing.T) {
	for _, tc := range []struct {
		item, product string
		kind          string // "" : the item's kind
	}{
		// Another kind of thing.
		{"oranges", "Tropicana Orange Juice No Pulp, 1.54 L", "juice"},
		{"apples", "Apple Juice", "juice"},
		{"3 apples #404", "Allen's Apple Juice 1.89 L", "juice"},
		{"eggs", "Catelli Egg Noodles, 375 g", "noodles"},
		{"tomatoes", "Hunt's Tomato Sauce 680 mL", "sauce"},
		{"strawberries", "Smucker's Strawberry Jam (500 mL)", "jam"},
		{"bananas", "Banana Bread Loaf", "bread"},
		{"oranges", "Jus d'orange sans pulpe, Tropicana", "jus"},
		{"pommes", "Compote de pommes Mott's", "compote"},
		{"chocolat", "Lait au chocolat 1 % Natrel", "lait"},
		// The item's kind.
		{"orange juice", "Tropicana Orange Juice No Pulp, 1.54 L", ""},
		{"milk", "Natrel 2% Partly Skimmed Milk, 2 L", ""},
		{"milk", "2% milk", ""},
		{"2% milk", "Natrel 2% Partly Skimmed Milk 4 L", ""},
		{"oranges", "Navel Oranges, 3 lb bag", ""},
		{"apples", "Gala Apple", ""},
		{"apples", "Apple, McIntosh - each", ""},
		{"12 eggs", "Burnbrae Farms Large White Eggs, 12 eggs", ""},
		{"eggs", "Organic Free Run Brown Eggs", ""},
		{"bananas", "Bananas, organic", ""},
		{"lait", "Lait au chocolat 1 % Natrel", ""},
		{"lait", "Lait partiellement écrémé 2 %", ""},
		{"oeufs", "Œufs bruns biologiques de poules en liberté", ""},
		{"pommes", "Pommes Gala, sac de 3 lb", ""},
		{"jus d'orange", "Jus d'orange sans pulpe", ""},
		{"apple juice", "Allen's Apple Juice 1.89 L", ""},
		{"#404", "Apple Juice", ""},
	} {
		kind, ok := OtherKind(tc.item, tc.product)
		if ok != (tc.kind != "") || kind != tc.kind {
			t.Errorf("OtherKind(%q, %q) = %q, %v; want %q", tc.item, tc.product, kind, ok, tc.kind)
		}
	}
}

// TestPackPutsWhatNeedsALookFirst: juice for oranges and a line missing
// from the cart need a look before checking out: those items come first
// in the pack (each marked Attention), and within an item the warnings
// that need a look come before a price change or a substitute.
func TestPackPutsWhatNeedsALookFirst(t *testing.T) {
	added := func(item, product, url string) report.ItemResult {
		return report.ItemResult{ItemID: item, ItemName: item, Outcome: report.OutcomeAdded, ProductName: product, URL: url,
			Quantity: 1, Price: money.Parse("$5.49"), Matches: 1}
	}
	bread := added("bread", "White Bread", "https://x/p/bread")
	bread.PreviousPrice = money.Parse("$3.99")
	bread.ChosenBy = report.ChosenByHouseholdQuery
	results := []report.ItemResult{
		added("milk", "Natrel 2% Milk, 2 L", "https://x/p/milk"),
		bread,
		added("oranges", "Tropicana Orange Juice No Pulp, 1.54 L", "https://x/p/orange-juice"),
		added("apples", "Gala Apples, 3 lb", "https://x/p/apples"),
	}
	issues := []ItemIssue{{Item: "bread", Kind: WarnMissing, Message: "not in the cart"}}
	p := Build("r1", "", results, issues, nil, Options{})
	var order []string
	for _, it := range p.Items {
		order = append(order, it.ItemName)
	}
	if got := strings.Join(order, ","); got != "bread,oranges,milk,apples" {
		t.Errorf("items in the order %s, want bread,oranges,milk,apples", got)
	}
	for _, it := range p.Items {
		want := it.ItemName == "bread" || it.ItemName == "oranges"
		if it.Attention != want {
			t.Errorf("%s: attention %v, want %v (%+v)", it.ItemName, it.Attention, want, it.Warnings)
		}
	}
	var kinds []WarningKind
	for _, w := range p.Items[0].Warnings {
		kinds = append(kinds, w.Kind)
	}
	if want := []WarningKind{WarnMissing, WarnSubstitute, WarnPriceChanged}; !slices.Equal(kinds, want) {
		t.Errorf("bread's warnings in the order %v, want %v", kinds, want)
	}
	if w := p.Items[1].Warnings; len(w) != 1 || w[0].Kind != WarnDifferentKind || !strings.Contains(w[0].Message, "juice") {
		t.Errorf("oranges' warnings: %+v", w)
	}
}
