package demostore

import (
	"slices"
	"testing"
)

// A list written in French finds what its English twin finds: the same
// products in the same order (French names, accents, plurals, and the
// compounds whose words mean something else alone).
func TestFrenchSearchFindsTheEnglishProducts(t *testing.T) {
	ids := func(q string) []string {
		var out []string
		for _, p := range Search(q) {
			out = append(out, p.ID)
		}
		return out
	}
	for _, p := range []struct{ en, fr string }{
		{"milk", "lait"}, {"2% milk", "lait 2 %"}, {"butter", "beurre"}, {"eggs", "œufs"}, {"eggs", "OEUFS"},
		{"bread", "pain"}, {"apples", "pommes"}, {"potatoes", "pommes de terre"}, {"skim milk", "lait écrémé"},
		{"bananas", "bananes"}, {"carrots", "carottes"}, {"coffee", "café"}, {"sugar", "sucre"},
		{"olive oil", "huile d'olive"}, {"orange juice", "jus d'orange"}, {"cheddar cheese", "fromage cheddar"},
		{"greek yogurt", "yogourt grec"}, {"tomatoes", "tomates"}, {"whole wheat bread", "pain blé entier"},
		{"chocolate milk", "lait au chocolat"}, {"apple juice", "jus de pomme"},
	} {
		en, fr := ids(p.en), ids(p.fr)
		if len(en) == 0 || !slices.Equal(en, fr) {
			t.Errorf("%q finds %v, its French twin %q finds %v", p.en, en, p.fr, fr)
		}
	}
}
