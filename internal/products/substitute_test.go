package products

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

var (
	saltedButter = Product{Name: "Lactantia Salted Butter, 454 g", URL: "https://www.metro.ca/p/butter-salted-454g", ProductID: "butter-salted-454g", Price: "$6.99", Quantity: 1}
	margarine    = Product{Name: "Becel Original Margarine, 907 g", URL: "https://www.metro.ca/p/margarine-becel-907g", ProductID: "margarine-becel-907g", Price: "$7.49", Quantity: 1}
	yogurt       = Product{Name: "Oikos Plain Greek Yogurt 2%, 750 g", URL: "https://www.metro.ca/p/yogurt-greek-750g", ProductID: "yogurt-greek-750g", Price: "$5.99", Quantity: 1}
)

// TestWhatTheMemoryLearns: a substitute never becomes what the item
// replays; the household choosing the same product twice in a row, or a
// pin, does.
func TestWhatTheMemoryLearns(t *testing.T) {
	household := Source{Household: true}
	sub := Source{Substitute: true, Household: true}
	type step struct {
		p   Product
		src Source
		pin bool
	}
	tests := []struct {
		name     string
		steps    []step
		standing string // what Lookup gives ("" none)
		subst    string // the remembered substitute ("" none)
		inARow   int
	}{
		{"the agent's first add is the item's product", []step{{saltedButter, Source{}, false}}, saltedButter.Name, "", 0},
		{"a substitute answer with nothing remembered stays a substitute", []step{{yogurt, sub, false}}, "", yogurt.Name, 1},
		{"a substitute for a remembered product does not replace it", []step{{saltedButter, Source{}, false}, {margarine, sub, false}}, saltedButter.Name, margarine.Name, 1},
		{"the agent's different pick does not replace it", []step{{saltedButter, Source{}, false}, {margarine, Source{}, false}}, saltedButter.Name, margarine.Name, 1},
		{"the agent's same different pick twice is still a substitute", []step{{saltedButter, Source{}, false}, {margarine, Source{}, false}, {margarine, Source{}, false}}, saltedButter.Name, margarine.Name, 2},
		{"the household's same choice twice in a row replaces it", []step{{saltedButter, Source{}, false}, {margarine, sub, false}, {margarine, household, false}}, margarine.Name, "", 0},
		{"twice, with the product bought in between, is not in a row", []step{{saltedButter, Source{}, false}, {margarine, sub, false}, {saltedButter, Source{}, false}, {margarine, sub, false}}, saltedButter.Name, margarine.Name, 1},
		{"a typed substitute twice with nothing remembered becomes the product", []step{{yogurt, sub, false}, {yogurt, sub, false}}, yogurt.Name, "", 0},
		{"a pin replaces it at once", []step{{saltedButter, Source{}, false}, {margarine, sub, true}}, margarine.Name, "", 0},
		{"twice in a row does not replace a pin", []step{{saltedButter, Source{}, true}, {margarine, sub, false}, {margarine, sub, false}}, saltedButter.Name, margarine.Name, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Open(t.TempDir(), "demo")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.steps {
				if s.pin {
					err = m.Pin("butter", s.p)
				}
				if err == nil {
					err = m.Record("butter", s.p, s.src)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			e, ok := m.Lookup("butter")
			if got := map[bool]string{true: e.Name}[ok]; got != tt.standing {
				t.Errorf("the item's product = %q, want %q", got, tt.standing)
			}
			all, _ := m.Entry("butter")
			var gotSub string
			var in int
			if all.Substitute != nil {
				gotSub, in = all.Substitute.Name, all.Substitute.InARow
			}
			if gotSub != tt.subst || in != tt.inARow {
				t.Errorf("substitute = %q (%d in a row), want %q (%d)", gotSub, in, tt.subst, tt.inARow)
			}
		})
	}
}

// TestExpiry: a product unused for longer than the expiry goes back to the
// agent (a pin stays); the entry's policy stays; an entry left with
// nothing is removed.
func TestExpiry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const days = 24 * time.Hour
	tests := []struct {
		name       string
		pin        bool
		policy     bool
		substitute bool
		age        time.Duration
		kept       bool // the product is still replayed
		entry      bool // anything is still remembered for the item
	}{
		{"used yesterday", false, false, false, 1 * days, true, true},
		{"exactly the expiry", false, false, false, 180 * days, true, true},
		{"a day past the expiry", false, false, false, 181 * days, false, false},
		{"pinned, past the expiry", true, false, false, 400 * days, true, true},
		{"past the expiry, with a policy", false, true, false, 181 * days, false, true},
		{"past the expiry, with a fresh substitute", false, false, true, 181 * days, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			now := t0
			clock := WithClock(func() time.Time { return now })
			m, err := Open(dir, "demo", clock, WithExpiry(180*days))
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Added("butter", saltedButter); err != nil {
				t.Fatal(err)
			}
			if tt.pin {
				if err := m.Pin("butter", saltedButter); err != nil {
					t.Fatal(err)
				}
			}
			if tt.policy {
				if err := m.SetPolicy("butter", shoppinglist.Policy{NoSub: true}); err != nil {
					t.Fatal(err)
				}
			}
			now = t0.Add(tt.age)
			if tt.substitute {
				if err := m.Record("butter", margarine, Source{Substitute: true, Household: true}); err != nil {
					t.Fatal(err)
				}
			}
			_, kept := m.Lookup("butter")
			e, entry := m.Entry("butter")
			if kept != tt.kept || entry != tt.entry {
				t.Fatalf("replayed %v, remembered %v (%+v); want %v, %v", kept, entry, e, tt.kept, tt.entry)
			}
			if tt.policy && !e.Policy.NoSub {
				t.Error("the policy expired with the product")
			}
			// The expiry is written with the next change, and holds after a restart.
			if err := m.SetPolicy("other", shoppinglist.Policy{Ask: true}); err != nil {
				t.Fatal(err)
			}
			again, err := Open(dir, "demo", clock)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := again.Lookup("butter"); ok != tt.kept {
				t.Errorf("after a restart without expiry: replayed %v, want %v", ok, tt.kept)
			}
		})
	}
}

// TestOldFilesLoad: a memory file written before substitutes and policies
// loads as it was.
func TestOldFilesLoad(t *testing.T) {
	dir := t.TempDir()
	old := `{
  "version": 1,
  "store": "demo",
  "preferences_migrated": true,
  "products": {
    "butter": {"name": "Oikos Plain Greek Yogurt 2%, 750 g", "url": "https://www.metro.ca/p/yogurt-greek-750g", "product_id": "yogurt-greek-750g", "price": "$5.99", "quantity": 1, "last_seen": "2026-11-20T10:00:00Z", "times_chosen": 1},
    "milk": {"name": "Natrel 2% Milk", "last_seen": "2026-11-20T10:00:00Z", "pinned": true, "pinned_at": "2026-11-20T10:00:00Z"}
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, FileName("demo")), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := Open(dir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := m.Lookup("butter"); !ok || e.ProductID != "yogurt-greek-750g" || e.TimesChosen != 1 || e.Substitute != nil || !e.Policy.IsZero() {
		t.Errorf("butter = %+v, %v", e, ok)
	}
	if e, ok := m.Pinned("milk"); !ok || e.Name != "Natrel 2% Milk" {
		t.Errorf("milk = %+v, %v", e, ok)
	}
}

// TestForgetProduct: Wrong product forgets only the product that was
// wrong — the standing one or the substitute — and keeps the other and the
// household's policy.
func TestForgetProduct(t *testing.T) {
	pol := shoppinglist.Policy{AnyBrand: true}
	tests := []struct {
		name      string
		pin       bool     // saltedButter pinned (else added by the agent)
		sub       *Product // a substitute bought since
		policy    shoppinglist.Policy
		wrong     Product
		forgot    bool
		standing  string // after: Lookup's product ("" none)
		subst     string // after: the substitute ("" none)
		entryGone bool
	}{
		{"the standing product, a substitute and a policy kept", false, &margarine, pol,
			Product{Name: saltedButter.Name, URL: saltedButter.URL, ProductID: saltedButter.ProductID}, true, "", margarine.Name, false},
		{"a pinned standing product", true, nil, pol, saltedButter, true, "", "", false},
		{"the substitute, the standing product kept", true, &yogurt, pol,
			Product{Name: yogurt.Name, ProductID: yogurt.ProductID}, true, saltedButter.Name, "", false},
		{"named by its name only", false, &yogurt, shoppinglist.Policy{}, Product{Name: "oikos plain greek yogurt 2%, 750 g"}, true, saltedButter.Name, "", false},
		{"the only product, no policy: the entry goes", false, nil, shoppinglist.Policy{}, saltedButter, true, "", "", true},
		{"another product: nothing forgotten", false, &margarine, pol,
			Product{Name: yogurt.Name, ProductID: yogurt.ProductID}, false, saltedButter.Name, margarine.Name, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Open(t.TempDir(), "demo")
			if err != nil {
				t.Fatal(err)
			}
			if tt.pin {
				err = m.Pin("butter", saltedButter)
			} else {
				err = m.Added("butter", saltedButter)
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.sub != nil {
				if err := m.Record("butter", *tt.sub, Source{Substitute: true, Household: true}); err != nil {
					t.Fatal(err)
				}
			}
			if !tt.policy.IsZero() {
				if err := m.SetPolicy("butter", tt.policy); err != nil {
					t.Fatal(err)
				}
			}
			err = m.ForgetProduct("2x Butter", tt.wrong)
			if tt.forgot != (err == nil) || (!tt.forgot && !errors.Is(err, ErrNotRemembered)) {
				t.Fatalf("ForgetProduct: %v, want forgot %v", err, tt.forgot)
			}
			e, ok := m.Entry("butter")
			if tt.entryGone {
				if ok {
					t.Fatalf("entry left: %+v", e)
				}
				return
			}
			if !ok {
				t.Fatal("the entry is gone")
			}
			sub := ""
			if e.Substitute != nil {
				sub = e.Substitute.Name
			}
			if e.Name != tt.standing || sub != tt.subst || e.Policy != tt.policy {
				t.Errorf("after: standing %q, substitute %q, policy %+v; want %q, %q, %+v", e.Name, sub, e.Policy, tt.standing, tt.subst, tt.policy)
			}
			if e.Name == "" && (e.Pinned || e.URL != "" || e.TimesChosen != 0) {
				t.Errorf("the forgotten product left traces: %+v", e.Product)
			}
		})
	}
}
