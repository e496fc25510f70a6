package shop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

func TestGoal(t *testing.T) {
	p, err := LoadPrompts()
	if err != nil {
		t.Fatal(err)
	}
	base := PromptData{StoreName: "metro.ca", Host: "www.metro.ca", SearchURL: "https://www.metro.ca/en/online-grocery/search?filter=milk",
		ItemName: "2x milk", Query: "milk", Quantity: 2, PostalCode: "H2X 1Y4"}
	tests := []struct {
		name    string
		store   string
		mod     func(*PromptData)
		want    []string
		notWant []string
	}{
		{"metro basics", "metro", nil,
			[]string{"Item: milk\n", "Quantity: 2\n", "Postal code: H2X 1Y4\n", base.SearchURL, "report_item_added", "report_item_not_found", "Stay on www.metro.ca", "cart counter", "organic", `The shopping list says "2x milk"`, "raise the quantity to 2"},
			[]string{"present_options", "<no value>", "one of them ends"}},
		{"can ask", "metro", func(d *PromptData) { d.CanAsk = true },
			[]string{"present_options", "out of stock"}, nil},
		{"preferred product", "demo", func(d *PromptData) {
			d.Preferred = &PreferredProduct{Name: "Natrel 2% 2 L", URL: "https://www.metro.ca/p/x", Price: "$5.49"}
		}, []string{"chose this product for this item before: Natrel 2% 2 L ($5.49) — https://www.metro.ca/p/x", "demo"}, nil},
		{"custom query", "metro", func(d *PromptData) { d.Query, d.QueryFromUser = "oat milk", true },
			[]string{"Item: oat milk\n", `the user asked to search for "oat milk" instead`}, nil},
		{"no postal code", "metro", func(d *PromptData) { d.PostalCode = ""; d.Quantity = 1; d.ItemName = "milk" },
			[]string{"pick home delivery"}, []string{"Postal code:", "raise the quantity", "shopping list says"}},
		{"a count of pieces", "metro", func(d *PromptData) { d.ItemName, d.Query, d.Quantity, d.Pieces = "12 eggs", "eggs", 12, true },
			[]string{`The shopping list says "12 eggs"`, "Quantity: 12 pieces (a count of pieces, not of packages", "one box of 12 for 12 eggs"},
			[]string{"raise the quantity to 12", "add it 12 times"}},
		{"an earlier attempt may have added (metro)", "metro", func(d *PromptData) { d.MaybeAdded = true },
			[]string{"An earlier attempt at this item may have added it to the cart", "check the cart count before adding"}, nil},
		{"what an earlier attempt added is known", "demo", func(d *PromptData) {
			d.MaybeAdded, d.Earlier = true, []EarlierAdd{{ProductID: "milk-2pct-2l", Units: 1}}
		}, []string{"already added to the cart: 1 × product milk-2pct-2l"}, []string{"may have added"}},
		{"unknown store uses the default template", "somewhere", nil,
			[]string{"Item: milk\n", "online grocery store metro.ca"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			if tc.mod != nil {
				tc.mod(&d)
			}
			g, err := p.Goal(tc.store, d)
			if err != nil {
				t.Fatal(err)
			}
			checkGoal(t, g, tc.want, tc.notWant)
			if strings.Contains(g, "\n\n\n") {
				t.Errorf("goal has runs of blank lines:\n%s", g)
			}
		})
	}
	if s := p.System(); !strings.Contains(s, "checkout") {
		t.Errorf("system instruction = %q", s)
	}
}

// TestGoalSaysTheListsQuantity (issues 33, 34, 37): the goal says the
// quantity as the list parser reads it — a count of pieces is covered by
// packages, a count of packages is that many, a size is one product.
func TestGoalSaysTheListsQuantity(t *testing.T) {
	p, err := LoadPrompts()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		item    string
		want    []string
		notWant []string
	}{
		{"12 eggs", []string{"Quantity: 12 pieces", "the packages that cover 12 pieces"}, []string{"raise the quantity to 12"}},
		{"a dozen eggs", []string{"Quantity: 12 pieces"}, []string{"raise the quantity to 12"}},
		{"une douzaine d'œufs", []string{"Item: œufs\n", "Quantity: 12 pieces"}, nil},
		{"3 apples", []string{"Quantity: 3 pieces", "one\n  package;", "3 units"}, []string{"raise the quantity to 3"}},
		{"three apples", []string{"Quantity: 3 pieces"}, nil},
		{"2x milk", []string{"Quantity: 2\n", "raise the quantity to 2"}, []string{"pieces"}},
		{"milk x2", []string{"Quantity: 2\n", "raise the quantity to 2"}, []string{"pieces"}},
		{"2 milk", []string{"Quantity: 2\n", "raise the quantity to 2"}, []string{"pieces"}},
		{"2 litres of milk", []string{"Item: 2 litres of milk\n", "Quantity: 1\n", "is the size of one product"}, []string{"pieces", "raise the quantity"}},
		{"500 g butter", []string{"Quantity: 1\n"}, []string{"pieces", "raise the quantity"}},
	}
	for _, tc := range tests {
		t.Run(tc.item, func(t *testing.T) {
			pp := shoppinglist.Parse(tc.item)
			g, err := p.Goal("demo", PromptData{StoreName: "the demo store", Host: "www.metro.ca", SearchURL: "https://www.metro.ca/s",
				ItemName: tc.item, Query: pp.Product, Quantity: pp.Quantity, Pieces: pp.Pieces})
			if err != nil {
				t.Fatal(err)
			}
			checkGoal(t, g, tc.want, tc.notWant)
		})
	}
}

// TestJournalAtomicAndReadable: every update leaves a complete file.
func TestJournalAtomicAndReadable(t *testing.T) {
	dir := t.TempDir()
	j, err := NewJournal(dir, JournalRecord{RunID: "r1", StartedAt: time.Now(), State: runstatus.StateInitializing,
		Items: []JournalItem{{ItemID: "a", Name: "milk", Status: ItemPending}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range []ItemStatus{ItemInFlight, ItemDone} {
		if err := j.Update(func(r *JournalRecord) { r.Items[0].Status = st }); err != nil {
			t.Fatal(err)
		}
		rec, err := ReadJournal(j.Path())
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		if rec.Items[0].Status != st {
			t.Errorf("update %d: status %s, want %s", i, rec.Items[0].Status, st)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "r1.json" {
		t.Errorf("dir holds %v, want only r1.json (no temp files left)", entries)
	}
	// A journal that cannot be written reports it and keeps going.
	ro := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(ro, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewJournal(filepath.Join(ro, "sub"), JournalRecord{RunID: "x"}); err == nil {
		t.Error("journal under a file: no error")
	}
}

// checkGoal says what the goal g lacks of want and has of notWant.
func checkGoal(t *testing.T, g string, want, notWant []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(g, w) {
			t.Errorf("goal lacks %q:\n%s", w, g)
		}
	}
	for _, w := range notWant {
		if strings.Contains(g, w) {
			t.Errorf("goal has %q:\n%s", w, g)
		}
	}
}
