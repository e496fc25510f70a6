package app

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/products"
)

// TestOpenProductsChecksAddressesAgainstTheStore: the memory the app opens
// validates remembered addresses with the store profile: another host, a
// checkout or account page, a login-only host are ignored on load; a
// product page of the store is kept.
func TestOpenProductsChecksAddressesAgainstTheStore(t *testing.T) {
	dir := t.TempDir()
	entries := map[string]map[string]any{
		"milk":     {"name": "Milk", "url": "https://www.metro.ca/en/online-grocery/aisles/dairy/p/123"},
		"foreign":  {"name": "X", "url": "https://evil.example/p/1"},
		"checkout": {"name": "X", "url": "https://www.metro.ca/en/online-grocery/checkout"},
		"account":  {"name": "X", "url": "https://www.metro.ca/en/account/settings"},
		"identity": {"name": "X", "url": "https://auth.moiid.ca/signin"},
	}
	b, _ := json.Marshal(map[string]any{"version": 1, "store": "metro", "preferences_migrated": true, "products": entries})
	if err := os.WriteFile(filepath.Join(dir, products.FileName("metro")), b, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := OpenProducts(dir, "metro", 0, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Key != "milk" {
		t.Fatalf("entries kept: %+v", list)
	}
}
