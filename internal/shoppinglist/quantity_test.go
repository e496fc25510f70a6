package shoppinglist

import "testing"

// TestQuantitiesAsAHouseholdMeansThem (issues 33, 34, 37): every phrasing
// of a count, in English and French, reads as the count it means and says
// whether it counts pieces or packages; a size is not a count.
func TestQuantitiesAsAHouseholdMeansThem(t *testing.T) {
	tests := []struct {
		raw     string
		qty     int
		pieces  bool
		product string
	}{
		// pieces: a count of a plural noun
		{"12 eggs", 12, true, "eggs"},
		{"6 bagels", 6, true, "bagels"},
		{"3 apples", 3, true, "apples"},
		{"6 Granny Smith apples", 6, true, "Granny Smith apples"},
		{"two apples", 2, true, "apples"},
		{"Three apples", 3, true, "apples"},
		{"twelve eggs", 12, true, "eggs"},
		{"a couple of avocados", 2, true, "avocados"},
		{"a couple avocados", 2, true, "avocados"},
		{"a dozen eggs", 12, true, "eggs"},
		{"A dozen eggs", 12, true, "eggs"},
		{"one dozen eggs", 12, true, "eggs"},
		{"half a dozen bagels", 6, true, "bagels"},
		{"a half dozen bagels", 6, true, "bagels"},
		{"a half-dozen bagels", 6, true, "bagels"},
		{"2 dozen eggs", 24, true, "eggs"},
		{"two dozen eggs", 24, true, "eggs"},
		{"douze œufs", 12, true, "œufs"},
		{"trois pommes", 3, true, "pommes"},
		{"deux baguettes", 2, true, "baguettes"},
		{"3 pommes de terre", 3, true, "pommes de terre"},
		{"une douzaine d'œufs", 12, true, "œufs"},
		{"une douzaine de bagels", 6 * 2, true, "bagels"},
		{"une demi-douzaine de bagels", 6, true, "bagels"},
		{"deux douzaines d'œufs", 24, true, "œufs"},
		{"1 lemon", 1, false, "lemon"},

		// packages: an explicit multiplier, a singular noun, a container
		{"2x milk", 2, false, "milk"},
		{"milk x2", 2, false, "milk"},
		{"2 × eggs", 2, false, "eggs"},
		{"eggs x2", 2, false, "eggs"},
		{"2 milk", 2, false, "milk"},
		{"two milk", 2, false, "milk"},
		{"3 yogurt", 3, false, "yogurt"},
		{"a couple of milk", 2, false, "milk"},
		{"2 bags of apples", 2, false, "bags of apples"},
		{"3 cans of tomatoes", 3, false, "cans of tomatoes"},
		{"deux boîtes de thon", 2, false, "boîtes de thon"},
		{"2 hummus", 2, false, "hummus"},

		// sizes, not counts
		{"2 litres of milk", 1, false, "2 litres of milk"},
		{"two litres of milk", 1, false, "two litres of milk"},
		{"deux litres de lait", 1, false, "deux litres de lait"},
		{"500 g butter", 1, false, "500 g butter"},
		{"1 kg flour", 1, false, "1 kg flour"},
		{"2L milk", 1, false, "2L milk"},

		// words that are part of a name
		{"three cheese pizza", 1, false, "three cheese pizza"},
		{"Five Alive", 1, false, "Five Alive"},
		{"one apple", 1, false, "one apple"},
		{"dozen", 1, false, "dozen"},
		{"a dozen", 1, false, "a dozen"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got := Parse(tt.raw)
			if got.Quantity != tt.qty || got.Pieces != tt.pieces || got.Product != tt.product {
				t.Errorf("Parse(%q) = quantity %d, pieces %v, product %q; want %d, %v, %q",
					tt.raw, got.Quantity, got.Pieces, got.Product, tt.qty, tt.pieces, tt.product)
			}
		})
	}
}

// TestReadPack reads how a product is sold from what the store shows.
func TestReadPack(t *testing.T) {
	tests := []struct {
		text string
		want Pack
	}{
		{"Large White Eggs Burnbrae Farms 12 eggs", Pack{Count: 12}},
		{"Gros œufs blancs, 30 œufs", Pack{Count: 30}},
		{"Plain Bagels 6 bagels", Pack{Count: 6}},
		{"Eggs, Large, Dozen", Pack{Count: 12}},
		{"Œufs gros, la douzaine", Pack{Count: 12}},
		{"Bagels, half dozen", Pack{Count: 6}},
		{"Sparkling Water 12 x 355 mL", Pack{Count: 12, Measured: true}},
		{"Yogurt cups, pack of 8", Pack{Count: 8}},
		{"Hot dog buns 8 pk", Pack{Count: 8}},
		{"Gala Apples 3 lb bag", Pack{Measured: true, Bag: true}},
		{"Pommes Gala sac de 3 lb", Pack{Measured: true, Bag: true}},
		{"Pommes, sac de 6", Pack{Count: 6}},
		{"Honeycrisp Apples 1.36 kg bag", Pack{Measured: true, Bag: true}},
		{"Baguette 300 g", Pack{Measured: true}},
		{"2% Partly Skimmed Milk 2 L", Pack{Measured: true}},
		{"Salted Butter 454 g", Pack{Measured: true}},
		{"Bananas $0.35/lb", Pack{}},
		{"Bananas bunch of 6, approx. 1.2 kg", Pack{Count: 6, Measured: true, Bag: true}},
		{"Lemon, each", Pack{}},
		{"Selection 12 grain bread 675 g", Pack{Measured: true}},
		{"Lait 2 %", Pack{}},
	}
	for _, tt := range tests {
		if got := ReadPack(tt.text); got != tt.want {
			t.Errorf("ReadPack(%q) = %+v, want %+v", tt.text, got, tt.want)
		}
	}
}

// TestPackagesCoverTheCount is the rule's table: a count of pieces buys
// the packages that cover it; a count of packages buys that many.
func TestPackagesCoverTheCount(t *testing.T) {
	tests := []struct {
		item, product string
		want          int
	}{
		{"12 eggs", "Large White Eggs 12 eggs", 1},
		{"12 eggs", "Large White Eggs 30 eggs", 1},
		{"24 eggs", "Large White Eggs 12 eggs", 2},
		{"18 eggs", "Large White Eggs 12 eggs", 2},
		{"a dozen eggs", "Large White Eggs 12 eggs", 1},
		{"une douzaine d'œufs", "Gros œufs blancs 12 œufs", 1},
		{"6 bagels", "Plain Bagels 6 bagels", 1},
		{"3 apples", "Gala Apples 3 lb bag", 1},
		{"trois pommes", "Pommes Gala sac de 3 lb", 1},
		{"3 apples", "Apple, Gala, each", 3},
		{"3 apples", "Gala Apples 3 lb", 1},
		{"trois pommes", "Pommes Gala 1,36 kg", 1},
		{"deux baguettes", "Baguette 300 g", 2},
		{"2 pineapples", "Pineapple 1.5 kg", 2},
		{"3 yogurts", "Plain Greek Yogurt 750 g", 3},
		{"3 bananas", "Bananas $0.35/lb", 3},
		{"12 eggs", "Eggs", 12},
		{"2x milk", "2% Milk 2 L", 2},
		{"2 milk", "2% Milk 2 L", 2},
		{"2x eggs", "Large White Eggs 12 eggs", 2},
		{"2 litres of milk", "2% Milk 2 L", 1},
		{"milk", "2% Milk 2 L", 1},
	}
	for _, tt := range tests {
		var it Item
		it.SetName(tt.item)
		if got := it.PackagesFor(tt.product); got != tt.want {
			t.Errorf("%q as %q: %d packages, want %d", tt.item, tt.product, got, tt.want)
		}
	}
	var eggs Item
	eggs.SetName("12 eggs")
	if !eggs.FarFrom(12, "Large White Eggs 12 eggs") {
		t.Error("twelve 12-packs for 12 eggs is not far from what the item names")
	}
	if eggs.FarFrom(1, "Large White Eggs 12 eggs") {
		t.Error("one 12-pack for 12 eggs is far from what the item names")
	}
	var apples Item
	apples.SetName("3 apples")
	if apples.FarFrom(3, "Apple, Gala, each") || !apples.FarFrom(3, "Gala Apples 3 lb bag") {
		t.Error("three loose apples are what 3 apples names; three 3-lb bags are not")
	}
}
