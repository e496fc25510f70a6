package app

import (
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// The run's adds fill the memory (with the store's product id from the
// URL), but only the household's ⭐ pins are the run's preferences.
func TestMemoryAdapter(t *testing.T) {
	m, err := products.Open(t.TempDir(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	a := Memory(m)
	url := "https://127.0.0.1:8443/en/online-grocery/aisles/dairy-eggs/natrel-2-milk-2-l/p/12"
	if err := a.Added("2x milk", shoppinglist.Added{ProductName: "Natrel 2% Milk 2 L", URL: url, Price: money.Parse("$5.49"), Quantity: 2}, shop.AddedHow{}); err != nil {
		t.Fatal(err)
	}
	e, ok := m.Lookup("milk")
	if !ok || e.ProductID != "12" || e.Quantity != 2 || e.Price != "$5.49" || e.URL != url {
		t.Fatalf("recorded %+v %v", e, ok)
	}
	if _, ok := a.Lookup("milk"); ok {
		t.Fatal("an agent's add became a preference")
	}
	if err := a.Remember("milk", shop.PreferredProduct{Name: "Natrel 2% Milk 2 L", URL: url, ProductID: "12", Price: "$5.49"}); err != nil {
		t.Fatal(err)
	}
	p, ok := a.Lookup("Milk")
	if !ok || p.ProductID != "12" || p.Name != "Natrel 2% Milk 2 L" {
		t.Fatalf("pinned %+v %v", p, ok)
	}
	if e, _ := m.Lookup("milk"); e.TimesChosen != 1 || e.Quantity != 2 {
		t.Fatalf("pinning the same product lost its history: %+v", e)
	}
}
