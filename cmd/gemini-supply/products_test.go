package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/preferences"
	"github.com/gemini-supply/gemini-supply/internal/products"
)

// The older 'preferences' command works on the product memory, into which
// the old preferences file is migrated.
func TestPreferencesCommand(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	when := time.Date(2025, 3, 2, 9, 12, 0, 0, time.Local)
	// The older preferences file, as earlier versions wrote it.
	old, err := json.Marshal(map[string]any{"version": 1, "products": map[string]preferences.Product{
		"milk":    {Name: "Natrel 2L 1% Milk", Price: "$5.49", ProductID: "456", URL: "https://www.metro.ca/p/456", When: when},
		"bananas": {Name: "Dole Bananas", When: when.Add(-time.Hour)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, preferences.FileName), old, 0o600); err != nil {
		t.Fatal(err)
	}

	cli := func(args ...string) cliResult {
		ch, _ := runCLI(t, args...)
		return waitCLI(t, ch)
	}

	r := cli("preferences", "list", "--data-dir", dir)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "KEY") ||
		!strings.HasPrefix(lines[1], "banana ") || !strings.Contains(lines[2], "Natrel 2L 1% Milk") ||
		!strings.Contains(lines[2], "2025-03-02 09:12") || !strings.Contains(lines[1], " - ") || !strings.Contains(lines[2], "⭐") {
		t.Fatalf("list: exit %d\n%s\n%s", r.code, r.out, r.err)
	}

	// Flags before the subcommand, the item spelled as on the list.
	r = cli("preferences", "--data-dir", dir, "forget", "2x", "Milk")
	if r.code != 0 || !strings.Contains(r.out, "Forgot milk (Natrel 2L 1% Milk)") {
		t.Fatalf("forget: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	mem, err := products.Open(dir, "metro")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mem.Lookup("milk"); ok {
		t.Error("still remembered after forget")
	}
	if e, ok := mem.Pinned("banana"); !ok || e.Name != "Dole Bananas" {
		t.Errorf("the migrated pin: %+v %v", e, ok)
	}

	r = cli("preferences", "forget", "--data-dir", dir, "milk")
	if r.code != 1 || !strings.Contains(r.err, "no product is remembered") || !strings.Contains(r.err, "products list") {
		t.Fatalf("forget unknown: exit %d\n%s", r.code, r.err)
	}

	t.Setenv("GEMINI_SUPPLY_DATA_DIR", t.TempDir())
	r = cli("preferences", "list")
	if r.code != 0 || !strings.Contains(r.out, "No products are remembered yet") {
		t.Fatalf("empty list: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
}

func TestProductsCommand(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	mem, err := products.Open(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range []string{"milk", "eggs"} {
		if err := mem.Added(it, products.Product{Name: it + " product", Size: "1 L", Price: "$2.00", Quantity: 2}); err != nil {
			t.Fatal(err)
		}
	}
	cli := func(args ...string) cliResult {
		ch, _ := runCLI(t, args...)
		return waitCLI(t, ch)
	}
	if r := cli("products", "list", "--data-dir", dir, "--store", "metro"); r.code != 0 || !strings.Contains(r.out, "No products are remembered yet") {
		t.Fatalf("metro's memory is not the demo store's: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	r := cli("products", "list", "--data-dir", dir, "--store", "demo")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "eggs product") || !strings.Contains(lines[2], "1 L") {
		t.Fatalf("list: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if r := cli("products", "forget", "--all", "--data-dir", dir, "--store", "demo"); r.code != 0 || !strings.Contains(r.out, "Forgot 2 ") {
		t.Fatalf("forget --all: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if list, err := mem.List(); err != nil || len(list) != 0 {
		t.Fatalf("after forget --all: %v %v", list, err)
	}
}

func TestPreferencesUsage(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{{"preferences"}, {"preferences", "forget"}, {"preferences", "drop", "x"}, {"preferences", "list", "extra"},
		{"products"}, {"products", "forget", "--all", "milk"}, {"products", "list", "--all"}} {
		ch, _ := runCLI(t, args...)
		if r := waitCLI(t, ch); r.code != 2 || r.err == "" {
			t.Errorf("%v: exit %d, stderr %q", args, r.code, r.err)
		}
	}
}
