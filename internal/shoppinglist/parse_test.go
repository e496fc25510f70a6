package shoppinglist

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw     string
		name    string
		tags    []string
		qty     int
		product string
	}{
		{"milk", "milk", nil, 1, "milk"},
		{"  whole   milk  ", "whole milk", nil, 1, "whole milk"},
		{"", "", nil, 1, ""},

		// explicit multipliers
		{"2x milk", "2x milk", nil, 2, "milk"},
		{"2X Milk", "2X Milk", nil, 2, "Milk"},
		{"2 x milk", "2 x milk", nil, 2, "milk"},
		{"2 X milk", "2 X milk", nil, 2, "milk"},
		{"2× milk", "2× milk", nil, 2, "milk"},
		{"2 × milk", "2 × milk", nil, 2, "milk"},
		{"2xmilk", "2xmilk", nil, 2, "milk"},
		{"milk x2", "milk x2", nil, 2, "milk"},
		{"milk X2", "milk X2", nil, 2, "milk"},
		{"milk x 2", "milk x 2", nil, 2, "milk"},
		{"milk ×3", "milk ×3", nil, 3, "milk"},
		{"bread 2x", "bread 2x", nil, 2, "bread"},
		{"2x milk 2%", "2x milk 2%", nil, 2, "milk 2%"},
		{"2 x 500 g butter", "2 x 500 g butter", nil, 2, "500 g butter"},
		{"3x 2L milk", "3x 2L milk", nil, 3, "2L milk"},
		{"sparkling water x12", "sparkling water x12", nil, 12, "sparkling water"},

		// French lists
		{"2x œufs", "2x œufs", nil, 2, "œufs"},
		{"lait 2 %", "lait 2 %", nil, 1, "lait 2 %"},
		{"deux baguettes", "deux baguettes", nil, 2, "baguettes"},
		{"Trois pommes", "Trois pommes", nil, 3, "pommes"},
		{"deux litres de lait", "deux litres de lait", nil, 1, "deux litres de lait"},
		{"deux kg de farine", "deux kg de farine", nil, 1, "deux kg de farine"},
		{"yogourt x quatre", "yogourt x quatre", nil, 4, "yogourt"},
		{"une baguette", "une baguette", nil, 1, "une baguette"},
		{"bière Trois-Pistoles", "bière Trois-Pistoles", nil, 1, "bière Trois-Pistoles"},

		// a bare leading count
		{"3 apples", "3 apples", nil, 3, "apples"},
		{"12 eggs", "12 eggs", nil, 12, "eggs"},
		{"1 lemon", "1 lemon", nil, 1, "lemon"},
		{"6 Granny Smith apples", "6 Granny Smith apples", nil, 6, "Granny Smith apples"},

		// sizes, not quantities
		{"1.5 kg flour", "1.5 kg flour", nil, 1, "1.5 kg flour"},
		{"1,5 kg farine", "1,5 kg farine", nil, 1, "1,5 kg farine"},
		{"500 g butter", "500 g butter", nil, 1, "500 g butter"},
		{"50 g yeast", "50 g yeast", nil, 1, "50 g yeast"},
		{"2 kg rice", "2 kg rice", nil, 1, "2 kg rice"},
		{"2 lbs ground beef", "2 lbs ground beef", nil, 1, "2 lbs ground beef"},
		{"4 L milk", "4 L milk", nil, 1, "4 L milk"},
		{"2L milk", "2L milk", nil, 1, "2L milk"},
		{"500g butter", "500g butter", nil, 1, "500g butter"},
		{"2% milk", "2% milk", nil, 1, "2% milk"},
		{"milk 2%", "milk 2%", nil, 1, "milk 2%"},
		{"3 % yogurt", "3 % yogurt", nil, 1, "3 % yogurt"},
		{"750 ml olive oil", "750 ml olive oil", nil, 1, "750 ml olive oil"},
		{"milk 2 L", "milk 2 L", nil, 1, "milk 2 L"},

		// numbers that are not counts
		{"0 apples", "0 apples", nil, 1, "0 apples"},
		{"100 napkins", "100 napkins", nil, 1, "100 napkins"},
		{"7up", "7up", nil, 1, "7up"},
		{"3-4 apples", "3-4 apples", nil, 1, "3-4 apples"},
		{"2x", "2x", nil, 1, "2x"},
		{"milk x", "milk x", nil, 1, "milk x"},
		{"milk x0", "milk x0", nil, 1, "milk x0"},
		{"milk x100", "milk x100", nil, 1, "milk x100"},

		// tags
		{"butter #404", "butter", []string{"#404"}, 1, "butter"},
		{"butter #FAILED", "butter", []string{"#failed"}, 1, "butter"},
		{"#404 butter", "butter", []string{"#404"}, 1, "butter"},
		{"2x milk #404 #Failed", "2x milk", []string{"#404", "#failed"}, 2, "milk"},
		{"milk #costco #404 #COSTCO", "milk", []string{"#costco", "#404"}, 1, "milk"},
		{"milk # 404", "milk # 404", nil, 1, "milk # 404"},
		{"C# book", "C# book", nil, 1, "C# book"},
		{"milk#404", "milk#404", nil, 1, "milk#404"},
		{"#404", "", []string{"#404"}, 1, ""},
		{"12 eggs #café", "12 eggs", []string{"#café"}, 12, "eggs"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got := Parse(tt.raw)
			got.Pieces = false // pieces or packages: TestQuantitiesAsAHouseholdMeansThem
			want := Parsed{Name: tt.name, Tags: tt.tags, Quantity: tt.qty, Product: tt.product}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse(%q) =\n  %+v\nwant\n  %+v", tt.raw, got, want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	same := [][]string{
		{"milk", "Milk", " MILK ", "milk\t", "2x milk", "milk x3", "milk #404"},
		{"whole milk", "Whole  Milk", "whole\u00a0milk"},
		{"crème fraîche", "CRÈME FRAÎCHE"},
	}
	for _, group := range same {
		k := item(group[0]).Key()
		for _, raw := range group[1:] {
			if got := item(raw).Key(); got != k {
				t.Errorf("Key(%q) = %q, want %q (same as %q)", raw, got, k, group[0])
			}
		}
	}
	if item("milk").Key() == item("2% milk").Key() {
		t.Error("milk and 2% milk must not be duplicates")
	}
	if item("500 g butter").Key() == item("butter").Key() {
		t.Error("a size is part of the product")
	}
}

func item(raw string) Item {
	var it Item
	it.Status = StatusNeedsAction
	it.SetName(raw)
	return it
}

func TestHasTag(t *testing.T) {
	it := Item{Tags: []string{"#404", "#Costco"}}
	for _, tag := range []string{"#404", "404", "#costco", "COSTCO"} {
		if !it.HasTag(tag) {
			t.Errorf("HasTag(%q) = false", tag)
		}
	}
	if it.HasTag("#failed") {
		t.Error("HasTag(#failed) = true")
	}
	if !it.RunTagged() {
		t.Error("RunTagged() = false for #404")
	}
	if (Item{Tags: []string{"#costco"}}).RunTagged() {
		t.Error("a user tag is not a run tag")
	}
	if !IsRunTag("#FAILED") || IsRunTag("#costco") {
		t.Error("IsRunTag")
	}
}

func TestPlanRun(t *testing.T) {
	mk := func(id, raw string, status Status, tags ...string) Item {
		it := Item{ID: id, Status: status, Tags: tags}
		it.SetName(raw)
		return it
	}
	items := []Item{
		mk("1", "milk", StatusNeedsAction),
		mk("2", "bread", StatusNeedsAction),
		mk("3", "2x Milk", StatusNeedsAction),
		mk("4", "butter", StatusNeedsAction, "#404"),
		mk("5", "eggs", StatusCompleted),
		mk("6", "saffron #failed", StatusNeedsAction),
		mk("7", "BREAD", StatusNeedsAction),
		mk("8", "eggs", StatusNeedsAction),
		mk("9", "cheese #costco", StatusNeedsAction),
		mk("10", "butter", StatusNeedsAction),
	}
	ids := func(its []Item) []string {
		var out []string
		for _, it := range its {
			out = append(out, it.ID)
		}
		return out
	}

	t.Run("no retry", func(t *testing.T) {
		p := PlanRun(items, false)
		if got, want := ids(p.ToShop), []string{"1", "2", "8", "9", "10"}; !reflect.DeepEqual(got, want) {
			t.Errorf("ToShop = %v, want %v", got, want)
		}
		if p.ToShop[0].Quantity != 2 {
			t.Errorf("milk quantity = %d, want 2 (largest of the duplicates)", p.ToShop[0].Quantity)
		}
		if got, want := ids(p.Tagged), []string{"4", "6"}; !reflect.DeepEqual(got, want) {
			t.Errorf("Tagged = %v, want %v", got, want)
		}
		var dups [][2]string
		for _, d := range p.Duplicates {
			dups = append(dups, [2]string{d.Item.ID, d.Of.ID})
		}
		if want := [][2]string{{"3", "1"}, {"7", "2"}}; !reflect.DeepEqual(dups, want) {
			t.Errorf("Duplicates = %v, want %v", dups, want)
		}
		if p.Duplicates[0].Of.Quantity != 2 {
			t.Errorf("Duplicate.Of should be the item as shopped (quantity 2), got %d", p.Duplicates[0].Of.Quantity)
		}
		if p.Completed != 1 {
			t.Errorf("Completed = %d, want 1", p.Completed)
		}
	})

	t.Run("retry tagged", func(t *testing.T) {
		p := PlanRun(items, true)
		if got, want := ids(p.ToShop), []string{"1", "2", "4", "6", "8", "9"}; !reflect.DeepEqual(got, want) {
			t.Errorf("ToShop = %v, want %v", got, want)
		}
		if len(p.Tagged) != 0 {
			t.Errorf("Tagged = %v, want none", ids(p.Tagged))
		}
		// the second butter is now a duplicate of the retried one
		last := p.Duplicates[len(p.Duplicates)-1]
		if last.Item.ID != "10" || last.Of.ID != "4" {
			t.Errorf("last duplicate = %s of %s, want 10 of 4", last.Item.ID, last.Of.ID)
		}
	})

	t.Run("empty", func(t *testing.T) {
		p := PlanRun(nil, false)
		if len(p.ToShop)+len(p.Tagged)+len(p.Duplicates)+p.Completed != 0 {
			t.Errorf("PlanRun(nil) = %+v", p)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	raws := []string{"2x milk 2% #404", "12 eggs", "1.5 kg flour", "sparkling water x12", "bread"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Parse(raws[i%len(raws)])
	}
}

// Retry failed shops only the tagged items, and says how many open items
// it leaves out.
func TestPlanRetry(t *testing.T) {
	mk := func(id, raw string, status Status) Item {
		it := Item{ID: id, Status: status}
		it.SetName(raw)
		return it
	}
	tests := []struct {
		name      string
		items     []Item
		toShop    []string
		untagged  int
		completed int
	}{
		{"nothing tagged", []Item{mk("1", "milk", StatusNeedsAction), mk("2", "eggs", StatusNeedsAction), mk("3", "bread", StatusCompleted)}, nil, 2, 1},
		{"one tagged among open items", []Item{mk("1", "milk", StatusNeedsAction), mk("2", "saffron #404", StatusNeedsAction), mk("3", "rice #FAILED", StatusNeedsAction), mk("4", "tea #costco", StatusNeedsAction)}, []string{"2", "3"}, 2, 0},
		{"a completed tagged item is not retried", []Item{mk("1", "saffron #404", StatusCompleted)}, nil, 0, 1},
		{"empty", nil, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PlanRetry(tt.items)
			var got []string
			for _, it := range p.ToShop {
				got = append(got, it.ID)
			}
			if !reflect.DeepEqual(got, tt.toShop) || p.Untagged != tt.untagged || p.Completed != tt.completed {
				t.Errorf("to shop %v, untagged %d, completed %d; want %v, %d, %d", got, p.Untagged, p.Completed, tt.toShop, tt.untagged, tt.completed)
			}
		})
	}
}
