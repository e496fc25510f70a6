package products

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRejectedProducts: a product marked wrong for an item is forgotten
// and kept as rejected — across a restart, past the expiry — so that the
// memory never takes it for the item again, until a pin or Unreject; a
// mark is per item, and a broken one on disk is not used.
func TestRejectedProducts(t *testing.T) {
	juice := Product{Name: "Tropicana Orange Juice, 1.54 L", URL: "https://s.test/p/orange-juice-1540ml", ProductID: "orange-juice-1540ml", Price: "$5.49"}
	navel := Product{Name: "Navel Oranges", URL: "https://s.test/p/oranges-navel", ProductID: "oranges-navel"}
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, m *Memory)
		// wrong is marked for "oranges"; then check.
		wrong Product
		check func(t *testing.T, m *Memory, forgot bool)
	}{
		{"the item's product", func(t *testing.T, m *Memory) { must(t, m.Added("oranges", juice)) }, juice,
			func(t *testing.T, m *Memory, forgot bool) {
				e, ok := m.Entry("oranges")
				if !forgot || !ok || e.Standing() || !e.IsRejected(juice) {
					t.Fatalf("entry %+v (%v), forgot %v", e, ok, forgot)
				}
				if err := m.Added("oranges", juice); !errors.Is(err, ErrRejected) {
					t.Errorf("recording it again: %v, want ErrRejected", err)
				}
				if _, ok := m.Lookup("oranges"); ok {
					t.Error("it is the item's product again")
				}
				must(t, m.Added("oranges", navel)) // another product is learnt
				if e, _ := m.Lookup("oranges"); e.ProductID != navel.ProductID || !e.IsRejected(juice) {
					t.Errorf("after another product: %+v", e)
				}
			}},
		{"a pinned product", func(t *testing.T, m *Memory) { must(t, m.Pin("oranges", juice)) }, juice,
			func(t *testing.T, m *Memory, forgot bool) {
				if _, ok := m.Pinned("oranges"); ok || !forgot {
					t.Error("the pin stayed")
				}
			}},
		{"its substitute", func(t *testing.T, m *Memory) {
			must(t, m.Added("oranges", navel))
			must(t, m.Record("oranges", juice, Source{Substitute: true}))
		}, juice, func(t *testing.T, m *Memory, forgot bool) {
			e, _ := m.Entry("oranges")
			if !forgot || e.Substitute != nil || e.ProductID != navel.ProductID || !e.IsRejected(juice) {
				t.Errorf("entry %+v, forgot %v", e, forgot)
			}
		}},
		{"nothing remembered", nil, juice, func(t *testing.T, m *Memory, forgot bool) {
			if e, ok := m.Entry("oranges"); forgot || !ok || !e.IsRejected(juice) {
				t.Errorf("entry %+v (%v), forgot %v", e, ok, forgot)
			}
			// By its id alone, or its address alone: the same product.
			if e, _ := m.Entry("orange"); !e.IsRejected(Product{ProductID: juice.ProductID}) || !e.IsRejected(Product{URL: juice.URL}) {
				t.Error("the mark is not found by id or address")
			}
			if e, _ := m.Entry("orange juice"); e.IsRejected(juice) {
				t.Error("a mark for oranges holds for orange juice")
			}
		}},
		{"a pin takes the mark back", nil, juice, func(t *testing.T, m *Memory, _ bool) {
			must(t, m.Pin("oranges", juice))
			if e, ok := m.Pinned("oranges"); !ok || e.IsRejected(juice) || len(e.Rejected) != 0 {
				t.Errorf("after the pin: %+v", e)
			}
		}},
		{"Unreject clears it", nil, juice, func(t *testing.T, m *Memory, _ bool) {
			if err := m.Unreject("oranges", navel); !errors.Is(err, ErrNotRemembered) {
				t.Errorf("clearing a product not marked: %v", err)
			}
			must(t, m.Unreject("Oranges #404", Product{ProductID: juice.ProductID}))
			if _, ok := m.Entry("oranges"); ok {
				t.Error("an entry left with nothing stays")
			}
			must(t, m.Added("oranges", juice))
		}},
		{"marks survive a restart and the expiry", nil, juice, func(t *testing.T, m *Memory, _ bool) {
			m2, err := Open(m.dataDir, "demo", WithExpiry(24*time.Hour), fixedClock(t0.Add(365*24*time.Hour)))
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := m2.Entry("oranges"); !ok || !e.IsRejected(juice) || !e.Rejected[0].At.Equal(t0) {
				t.Errorf("a year later: %+v (%v)", e, ok)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Open(t.TempDir(), "demo", fixedClock(t0))
			if err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, m)
			}
			forgot, err := m.Reject("3 oranges", tc.wrong)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, m, forgot)
		})
	}
}

func TestRejectedOnDiskIsValidated(t *testing.T) {
	dir := t.TempDir()
	m, err := Open(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Reject("oranges", Product{Name: "", ProductID: "x"}); err == nil {
		t.Error("a mark without a name was kept")
	}
	// An odd address does not lose the mark: the id and the name keep it.
	if _, err := m.Reject("oranges", Product{Name: "Juice", URL: "/p/juice", ProductID: "juice"}); err != nil {
		t.Errorf("a mark with a relative address: %v", err)
	} else if e, _ := m.Entry("oranges"); !e.IsRejected(Product{ProductID: "juice"}) || e.Rejected[0].URL != "" {
		t.Errorf("the mark: %+v", e.Rejected)
	}
	must(t, m.Added("milk", Product{Name: "Milk", URL: "https://s.test/p/milk"}))
	data, err := os.ReadFile(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	// Hand-edited: a mark with a control character in its name.
	bad := strings.Replace(string(data), `"times_chosen": 1`, `"times_chosen": 1, "rejected": [{"name": "Juice\u0007", "at": "2026-11-01T00:00:00Z"}]`, 1)
	if err := os.WriteFile(m.Path(), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Entry("milk"); ok {
		t.Error("an entry with a broken mark is used")
	}
}

// TestHouseholdQuantity: a quantity set in the review is bought while the
// list asks for what it asked for then; an edited list wins.
func TestHouseholdQuantity(t *testing.T) {
	eggs := Product{Name: "Large White Eggs, 12 eggs", URL: "https://s.test/p/eggs-large-12", ProductID: "eggs-large-12", Quantity: 12}
	m, err := Open(t.TempDir(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetQuantity("12 eggs", eggs, 1, 12); !errors.Is(err, ErrNotRemembered) {
		t.Errorf("a quantity for a product not remembered: %v", err)
	}
	must(t, m.Added("12 eggs", eggs))
	for _, bad := range [][2]int{{0, 12}, {100, 12}, {1, 0}} {
		if err := m.SetQuantity("12 eggs", eggs, bad[0], bad[1]); err == nil {
			t.Errorf("SetQuantity(%d, list %d) accepted", bad[0], bad[1])
		}
	}
	must(t, m.SetQuantity("12 eggs", Product{ProductID: "eggs-large-12"}, 1, 12))
	must(t, m.Added("12 eggs", eggs)) // the next run's add keeps it
	e, _ := m.Lookup("eggs")
	for _, tc := range []struct{ list, want int }{{12, 1}, {2, 2}, {1, 1}} {
		if got := e.QuantityFor(tc.list); got != tc.want {
			t.Errorf("the list asks for %d: buys %d, want %d (%+v)", tc.list, got, tc.want, e)
		}
	}
	must(t, m.SetQuantity("12 eggs", eggs, 12, 12)) // back to the list's own
	if e, _ := m.Lookup("eggs"); e.HouseholdQuantity != 0 || e.QuantityFor(12) != 12 {
		t.Errorf("set back to the list's quantity: %+v", e)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
