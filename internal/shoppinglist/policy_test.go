package shoppinglist

import (
	"context"
	"testing"
)

func TestDescriptionPolicy(t *testing.T) {
	nosub, ask, any := Policy{NoSub: true}, Policy{Ask: true}, Policy{AnyBrand: true}
	tests := []struct {
		description string
		want        Policy
	}{
		{"", Policy{}},
		{"   ", Policy{}},
		{"the good one, unsalted", Policy{}},
		{"No substitute!", nosub},
		{"no-substitutes please", nosub},
		{"nosub", nosub},
		{"#nosub", nosub},
		{"(#NoSub).", nosub},
		{"Do not substitute this one", nosub},
		{"don’t substitute", nosub},
		{"Pas de substitut SVP", nosub},
		{"pas de substitution", nosub},
		{"sans remplacement", nosub},
		{"Always ask.", ask},
		{"#ask", ask},
		{"Toujours demander", ask},
		{"me demander d’abord", ask},
		{"Any brand", any},
		{"anybrand", any},
		{"N’importe quelle marque", any},
		{"n'importe quelle marque", any},
		{"peu importe la marque", any},
		{"marque indifférente", any},
		{"Any brand, but always ask", Policy{Ask: true, AnyBrand: true}},
		{"#nosub #ask #anybrand", Policy{NoSub: true, Ask: true, AnyBrand: true}},
		// Whole words only: these say nothing about substitutes or brands.
		{"ask Anne which one", Policy{}},
		{"nosubstance", Policy{}},
		{"company brand", Policy{}},
		{"the brand: any", Policy{}},
		{"#asked", Policy{}},
		{"substitute ok", Policy{}},
	}
	for _, tt := range tests {
		if got := DescriptionPolicy(tt.description); got != tt.want {
			t.Errorf("DescriptionPolicy(%q) = %+v, want %+v", tt.description, got, tt.want)
		}
	}
}

func TestItemPolicyAddsTagsAndDescription(t *testing.T) {
	it := Item{Tags: []string{"#ask"}, Description: "pas de substitut"}
	if got, want := it.Policy(), (Policy{NoSub: true, Ask: true}); got != want {
		t.Errorf("policy %+v, want %+v", got, want)
	}
}

// A YAML item's description key sets its policy, and a run's marks keep it
// as written.
func TestYAMLDescriptionSetsPolicy(t *testing.T) {
	ctx := context.Background()
	path := writeList(t, "items:\n"+
		"  - {id: b, name: butter, description: \"No substitute, please\"}\n"+
		"  - {id: c, name: cola, description: n'importe quelle marque}\n"+
		"  - {id: m, name: milk}\n")
	f, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.MarkNotFound(ctx, "b", "sold out"); err != nil {
		t.Fatal(err)
	}
	if err := f.MarkFailed(ctx, "b", "timeout"); err != nil {
		t.Fatal(err)
	}
	items, err := f.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Policy{"b": {NoSub: true}, "c": {AnyBrand: true}, "m": {}}
	for _, it := range items {
		if it.Policy() != want[it.ID] {
			t.Errorf("%s: policy %+v, want %+v", it.ID, it.Policy(), want[it.ID])
		}
	}
	if items[0].Description != "No substitute, please" || items[0].Explanation != "timeout" {
		t.Errorf("butter: description %q, explanation %q", items[0].Description, items[0].Explanation)
	}
	if raw := rawItems(t, path); raw[0]["description"] != "No substitute, please" {
		t.Errorf("the description was changed by the marks: %v", raw[0])
	}

	// A description that is not text (a person's own key from before) sets
	// nothing and does not make the list unreadable.
	other, err := OpenYAML(writeList(t, "items:\n  - {id: b, name: butter, description: [no substitute]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if items, err := other.Items(ctx); err != nil || len(items) != 1 || !items[0].Policy().IsZero() || items[0].Description != "" {
		t.Errorf("a description that is not text: %+v, %v", items, err)
	}
}
