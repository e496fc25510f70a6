package products

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/preferences"
)

func fixedClock(t time.Time) Option { return WithClock(func() time.Time { return t }) }

func TestAddedSurvivesRestartAndCounts(t *testing.T) {
	dir := t.TempDir()
	t1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	m, err := Open(dir, "demo", fixedClock(t1))
	if err != nil {
		t.Fatal(err)
	}
	milk := Product{Name: "Natrel 2% Milk 2 L", URL: "http://s/p/12", ProductID: "12", Size: "2 L", Price: "$5.49", Quantity: 2}
	if err := m.Added("2x Milk #404", milk); err != nil {
		t.Fatal(err)
	}
	t2 := t1.Add(7 * 24 * time.Hour)
	m2, err := Open(dir, "demo", fixedClock(t2)) // a restart
	if err != nil {
		t.Fatal(err)
	}
	e, ok := m2.Lookup("milk")
	if !ok || e.Name != milk.Name || e.URL != milk.URL || e.ProductID != "12" || e.Size != "2 L" || e.Price != "$5.49" || e.Quantity != 2 || e.TimesChosen != 1 || !e.LastSeen.Equal(t1) || e.Pinned {
		t.Fatalf("after restart: %+v, %v", e, ok)
	}
	same := milk
	same.Quantity, same.Price, same.Size = 1, "$5.29", ""
	if err := m2.Added("MILK", same); err != nil {
		t.Fatal(err)
	}
	e, _ = m.Lookup("milk")
	if e.TimesChosen != 2 || e.Quantity != 1 || e.Price != "$5.29" || e.Size != "2 L" || !e.LastSeen.Equal(t2) {
		t.Fatalf("second add: %+v", e)
	}
	if _, ok := m.Pinned("milk"); ok {
		t.Fatal("an agent's add must not count as the household's pin")
	}
	// Another store has its own memory.
	other, err := Open(dir, "metro")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := other.Lookup("milk"); ok {
		t.Fatal("metro sees the demo store's product")
	}
}

func TestPinWinsOverAgentPicks(t *testing.T) {
	m, err := Open(t.TempDir(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	pinned := Product{Name: "Organic Bananas", URL: "http://s/p/3", ProductID: "3"}
	if err := m.Pin("bananas", pinned); err != nil {
		t.Fatal(err)
	}
	if err := m.Added("banana", Product{Name: "Bananas", URL: "http://s/p/4", ProductID: "4"}); err != nil {
		t.Fatal(err)
	}
	e, ok := m.Pinned("2 bananas")
	if !ok || e.ProductID != "3" || e.TimesChosen != 0 {
		t.Fatalf("pin replaced by an agent's different pick: %+v %v", e, ok)
	}
	if err := m.Added("banana", Product{Name: "Organic Bananas", URL: "http://s/p/3", ProductID: "3", Quantity: 3}); err != nil {
		t.Fatal(err)
	}
	e, _ = m.Pinned("banana")
	if !e.Pinned || e.TimesChosen != 1 || e.Quantity != 3 {
		t.Fatalf("the pinned product's own add: %+v", e)
	}
	if _, ok := m.Pinned("organic banana"); ok {
		t.Fatal("a qualified item must not use the plain item's pin")
	}
}

func TestForget(t *testing.T) {
	m, err := Open(t.TempDir(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"milk", "eggs", "bread"} {
		if err := m.Added(k, Product{Name: k + " product"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Forget("2x Eggs"); err != nil {
		t.Fatal(err)
	}
	if err := m.Forget("eggs"); !errors.Is(err, ErrNotRemembered) {
		t.Fatalf("forget twice: %v", err)
	}
	n, err := m.ForgetAll()
	if err != nil || n != 2 {
		t.Fatalf("ForgetAll = %d, %v", n, err)
	}
	list, err := m.List()
	if err != nil || len(list) != 0 {
		t.Fatalf("after ForgetAll: %v %v", list, err)
	}
}

// The preferences file of earlier versions becomes the pinned part of the
// memory, every field kept, once: a pin forgotten afterwards stays
// forgotten, and the old file is left untouched.
func TestMigratesPreferencesLosslesslyOnce(t *testing.T) {
	dir := t.TempDir()
	when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	want := map[string]preferences.Product{
		"milk":          {Name: "Natrel 2L 1% Milk", URL: "https://www.metro.ca/p/456", ProductID: "456", Price: "$5.49", When: when},
		"cherry tomato": {Name: "Cherry Tomatoes 283 g", When: when.Add(time.Hour)},
	}
	oldBytes := writePreferences(t, dir, want)

	m, err := Open(dir, "metro")
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.List()
	if err != nil || len(list) != len(want) {
		t.Fatalf("migrated %v, %v", list, err)
	}
	for _, e := range list {
		w := want[e.Key]
		if !e.Pinned || e.Name != w.Name || e.URL != w.URL || e.ProductID != w.ProductID || e.Price != w.Price || !e.PinnedAt.Equal(w.When) || !e.LastSeen.Equal(w.When) {
			t.Errorf("%s: migrated %+v, want %+v", e.Key, e.Product, w)
		}
	}
	if err := m.Forget("milk"); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(dir, "metro")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m2.Lookup("milk"); ok {
		t.Fatal("a forgotten pin came back from the old preferences file")
	}
	newBytes, err := os.ReadFile(filepath.Join(dir, preferences.FileName))
	if err != nil || !bytes.Equal(oldBytes, newBytes) {
		t.Fatalf("the preferences file changed (%v)", err)
	}
}

// Tabs of one run and other processes write at once: each Memory here has
// its own lock file descriptor, as separate processes do, and no write is
// lost.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	dir := t.TempDir()
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			m, err := Open(dir, "demo")
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if err := m.Added(fmt.Sprintf("item %d %d", w, i), Product{Name: "p"}); err != nil {
					errs <- err
				}
				if err := m.Added("shared", Product{Name: "shared product"}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	m, err := Open(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.List()
	if err != nil || len(list) != writers*each+1 {
		t.Fatalf("%d entries, want %d (%v)", len(list), writers*each+1, err)
	}
	if e, _ := m.Lookup("shared"); e.TimesChosen != writers*each {
		t.Fatalf("shared chosen %d times, want %d", e.TimesChosen, writers*each)
	}
}

func TestUnreadableFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName("demo")), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "demo"); err == nil {
		t.Fatal("a broken file opened")
	}
}

// writePreferences writes the older preferences file as earlier versions
// did, and returns its bytes.
func writePreferences(t *testing.T, dir string, products map[string]preferences.Product) []byte {
	t.Helper()
	data, err := json.MarshalIndent(map[string]any{"version": 1, "products": products}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, preferences.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}
