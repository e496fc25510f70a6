package products

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvalidEntriesAreSkippedOnLoad (issue 24): a products file written
// by hand (or by anything that can write the data directory) with
// dangerous or absurd entries: each is logged once and ignored — not
// listed, not looked up — while the valid entry is used.
func TestInvalidEntriesAreSkippedOnLoad(t *testing.T) {
	dir := t.TempDir()
	good := Product{Name: "Natrel 2% Milk 2 L", URL: "https://www.metro.ca/en/online-grocery/aisles/dairy/milk/p/123", Quantity: 1, TimesChosen: 2}
	bad := map[string]Product{
		"javascript":               {Name: "X", URL: "javascript:alert(1)"},
		"data url":                 {Name: "X", URL: "data:text/html,<script>1</script>"},
		"credentials":              {Name: "X", URL: "https://user:pw@www.metro.ca/p"},
		"refused":                  {Name: "X", URL: "https://evil.example/p"}, // the URL check below refuses it
		"negative":                 {Name: "X", Quantity: -3},
		"too many":                 {Name: "X", Quantity: 1000},
		"chosen":                   {Name: "X", TimesChosen: -1},
		"no name":                  {Name: "  "},
		"control":                  {Name: "Milk\x1b[31m"},
		"long name":                {Name: strings.Repeat("n", 301)},
		"long price":               {Name: "X", Price: strings.Repeat("9", 51)},
		"relative url":             {Name: "X", URL: "/en/p/1"},
		strings.Repeat("k", 1<<20): {Name: "X"},
	}
	f := file{Version: fileVersion, Store: "metro", PreferencesMigrated: true, Products: map[string]Product{"milk": good}}
	for k, p := range bad {
		f.Products[k] = p
	}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(filepath.Join(dir, FileName("metro")), b, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	m, err := Open(dir, "metro", WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithURLCheck(func(raw string) error {
		if strings.Contains(raw, "evil.example") {
			return errors.New("outside the allowlist")
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Key != "milk" || list[0].URL != good.URL {
		t.Fatalf("listed %d entries: %+v", len(list), list[:min(len(list), 3)])
	}
	for k := range bad {
		if _, ok := m.Lookup(k); ok {
			t.Errorf("the invalid entry %.20q is looked up", k)
		}
	}
	if _, ok := m.Lookup("milk"); !ok {
		t.Error("the valid entry is not looked up")
	}
	// Logged once each, however often the file is read.
	if n := strings.Count(logs.String(), "is not valid and is ignored"); n != len(bad) {
		t.Errorf("%d warnings, want %d (one per invalid entry):\n%.2000s", n, len(bad), logs.String())
	}
	if len(logs.String()) > 64<<10 {
		t.Errorf("the warnings are %d bytes: the 1 MB key was logged whole", len(logs.String()))
	}
	// Writing an invalid product is refused too.
	if err := m.Added("bread", Product{Name: "Bread", URL: "javascript:alert(1)"}); err == nil {
		t.Error("an entry with a javascript: address was remembered")
	}
	if err := m.Pin("bread", Product{Name: "Bread", Quantity: -1}); err == nil {
		t.Error("an entry with a negative quantity was pinned")
	}
}
