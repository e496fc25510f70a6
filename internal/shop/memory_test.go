package shop

import (
	"context"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// memoryFunc adapts a products.Memory the way internal/app does.
type memoryFunc struct{ m *products.Memory }

func (f memoryFunc) Added(item string, a shoppinglist.Added, how AddedHow) error {
	return f.m.Record(item, products.Product{Name: a.ProductName, URL: a.URL, Price: a.Price.Text, Quantity: a.Quantity},
		products.Source{Substitute: how.Substitute, Household: how.Household})
}

// Every added item lands in the product memory under its item key with the
// quantity added, from several tabs at once; items not added do not.
func TestAddedItemsAreRemembered(t *testing.T) {
	mem, err := products.Open(t.TempDir(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p := newFakeProvider("2x milk", "caviar", "eggs", "bananas")
	a := newFakeAgent(map[string]behaviour{
		"milk":    added("Natrel 2% Milk 2 L", "$5.49"),
		"caviar":  notFound("No caviar in this store."),
		"eggs":    added("Large Eggs 12", "$4.29"),
		"bananas": added("Bananas", "$0.35"),
	})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.Concurrency = 3
	cfg.Memory = memoryFunc{mem}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	list, err := mem.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]products.Entry{}
	for _, e := range list {
		got[e.Key] = e
	}
	if len(got) != 3 {
		t.Fatalf("remembered %v, want milk, egg and banana", list)
	}
	if e := got["milk"]; e.Name != "Natrel 2% Milk 2 L" || e.Price != "$5.49" || e.Quantity != 1 || e.TimesChosen != 1 || e.URL != "https://shop.test/p/natrel-2-milk-2-l" {
		t.Errorf("milk: %+v", e)
	}
	if e := got["banana"]; e.Name != "Bananas" {
		t.Errorf("banana: %+v", e)
	}
}
