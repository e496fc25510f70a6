// Package products is the product memory: for each store, which product was
// added for a list item (item key → product URL, store product id, name,
// size, price, quantity, last seen, times chosen), and which of those the
// household pinned with ⭐ in Telegram.
//
// One JSON file per store lives in the data directory
// (products-<store>.json). Writes are atomic (internal/atomicfile) under a
// file lock, and every change re-reads the file first, so the tabs of one
// run, the service and the `gemini-supply products` command can all change
// it at once without losing each other's writes.
//
// The older preferences file (preferences.json, internal/preferences) is
// migrated into a store's memory the first time that store's memory is
// opened: every remembered product becomes a pinned entry with all its
// fields. The preferences file is left as it was (a backup); it is not read
// again for that store.
package products

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
	"github.com/gemini-supply/gemini-supply/internal/preferences"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"

	"github.com/gofrs/flock"
)

// fileVersion is the format version written to the file.
const fileVersion = 1

// lockTimeout bounds the wait for another writer.
const lockTimeout = 10 * time.Second

// ErrNotRemembered is returned by Forget for a key with no entry.
var ErrNotRemembered = errors.New("no product is remembered for this item")

// Product is one remembered product of an item.
type Product struct {
	Name      string `json:"name"`
	URL       string `json:"url,omitempty"`
	ProductID string `json:"product_id,omitempty"`
	// Size as the store shows it ("2 L", "12 pack"); may be empty.
	Size string `json:"size,omitempty"`
	// Price is the unit price as shown when it was added ("$4.99"); may be empty.
	Price string `json:"price,omitempty"`
	// Quantity is how many were added the last time.
	Quantity int `json:"quantity,omitempty"`
	// LastSeen is when the product was last added (or pinned).
	LastSeen time.Time `json:"last_seen"`
	// TimesChosen counts the runs that added this product for the item.
	TimesChosen int `json:"times_chosen,omitempty"`
	// Pinned marks the household's own choice (⭐ in Telegram): a pinned
	// product is bought without asking, and an agent's different pick for
	// the item does not replace it.
	Pinned bool `json:"pinned,omitempty"`
	// PinnedAt is when it was pinned.
	PinnedAt time.Time `json:"pinned_at,omitzero"`
	// Substitute is the latest product bought in place of this one (or,
	// with no name above, for an item that has no standing product yet):
	// used for that run only, never replayed. The same product chosen by
	// the household twice in a row becomes the item's product.
	Substitute *Substitute `json:"substitute,omitempty"`
	// Policy is the household's rule for the item, set in the panel (the
	// list's tags add theirs).
	Policy shoppinglist.Policy `json:"policy,omitzero"`
	// HouseholdQuantity is the quantity the household set for this
	// product in the review (Change quantity); 0: none. It is what the
	// item buys while the list still asks for ListQuantity (the list's
	// quantity when it was set): once the list's quantity changes, the
	// list wins (Quantity).
	HouseholdQuantity int `json:"household_quantity,omitempty"`
	ListQuantity      int `json:"list_quantity,omitempty"`
	// Rejected are the products the household said are wrong for the item
	// (the review pack's Wrong product): never added for it again — not
	// replayed, refused at the item's tab, never offered in a question —
	// until the household pins one (⭐) or clears the mark (Unreject).
	// They do not expire: like a pin, they are the household's word.
	Rejected []Rejected `json:"rejected,omitempty"`
}

// Rejected is a product the household said is wrong for an item.
type Rejected struct {
	Name      string    `json:"name"`
	URL       string    `json:"url,omitempty"`
	ProductID string    `json:"product_id,omitempty"`
	At        time.Time `json:"at"`
}

// product is the rejected product as a Product (for sameProduct).
func (r Rejected) product() Product { return Product{Name: r.Name, URL: r.URL, ProductID: r.ProductID} }

// MaxRejected bounds the products remembered as wrong for one item (the
// oldest mark goes first).
const MaxRejected = 20

// ErrRejected is returned by Record for a product the household rejected
// for the item.
var ErrRejected = errors.New("the household marked this product wrong for this item")

// QuantityFor is how many the item buys of its product when the list asks
// for listQuantity: the household's quantity from the review while the
// list still asks for what it asked for then, else the list's.
func (p Product) QuantityFor(listQuantity int) int {
	if p.HouseholdQuantity > 0 && p.ListQuantity == listQuantity {
		return p.HouseholdQuantity
	}
	return listQuantity
}

// IsRejected says whether the household marked q wrong for this item.
func (p Product) IsRejected(q Product) bool {
	for _, r := range p.Rejected {
		if sameProduct(r.product(), q) {
			return true
		}
	}
	return false
}

// empty: nothing is left in the entry (it is removed).
func (p Product) empty() bool {
	return !p.Standing() && p.Substitute == nil && p.Policy.IsZero() && len(p.Rejected) == 0
}

// withoutRejected is rs without the marks of q.
func withoutRejected(rs []Rejected, q Product) []Rejected {
	var out []Rejected
	for _, r := range rs {
		if !sameProduct(r.product(), q) {
			out = append(out, r)
		}
	}
	return out
}

// Substitute is a product bought for an item in place of its product: the
// household's answer for a sold-out product ("Something else", or an
// offered alternative), or the agent's different pick.
type Substitute struct {
	Name      string    `json:"name"`
	URL       string    `json:"url,omitempty"`
	ProductID string    `json:"product_id,omitempty"`
	Size      string    `json:"size,omitempty"`
	Price     string    `json:"price,omitempty"`
	Quantity  int       `json:"quantity,omitempty"`
	LastSeen  time.Time `json:"last_seen"`
	// ByHousehold: the household chose it (an answer to a question).
	ByHousehold bool `json:"by_household,omitempty"`
	// InARow counts the runs in a row that bought it.
	InARow int `json:"in_a_row,omitempty"`
}

// product is the substitute as a Product (for sameProduct).
func (s *Substitute) product() Product {
	return Product{Name: s.Name, URL: s.URL, ProductID: s.ProductID, Size: s.Size, Price: s.Price, Quantity: s.Quantity, LastSeen: s.LastSeen}
}

// Standing reports whether the entry has a product of its own (one that
// replay buys), not only a substitute or a policy.
func (p Product) Standing() bool { return strings.TrimSpace(p.Name) != "" }

// Source says how an added product was chosen (Record).
type Source struct {
	// Substitute: it replaces a product that could not be bought — the
	// household's answer to a sold-out question or its typed alternative.
	Substitute bool
	// Household: the household chose it (an answer to a question).
	Household bool
}

// Entry is one remembered product with its item key.
type Entry struct {
	Key string `json:"key"`
	Product
}

type file struct {
	Version int    `json:"version"`
	Store   string `json:"store"`
	// PreferencesMigrated is set once preferences.json was read into this file.
	PreferencesMigrated bool               `json:"preferences_migrated,omitempty"`
	Products            map[string]Product `json:"products"`
}

// Memory is one store's product memory. Safe for concurrent use by
// goroutines and processes.
type Memory struct {
	dataDir string
	store   string
	path    string
	lock    *flock.Flock
	log     *slog.Logger
	now     func() time.Time
	// checkURL says why a remembered product's address may not be used
	// (WithURLCheck); nil: only its form is checked.
	checkURL func(raw string) error
	// expiry: a product unused for longer goes back to the agent
	// (WithExpiry); 0 keeps products for ever.
	expiry time.Duration

	mu     sync.Mutex      // serialises this process; the flock serialises processes
	warned map[string]bool // invalid entries already logged (key + reason)
}

// Option configures Open.
type Option func(*Memory)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option {
	return func(m *Memory) {
		if l != nil {
			m.log = l
		}
	}
}

// WithURLCheck sets the check a remembered product's address must pass on
// load (the store profile's: an allowed host, no checkout or account
// page): check returns why the address may not be used, or nil.
func WithURLCheck(check func(raw string) error) Option {
	return func(m *Memory) { m.checkURL = check }
}

// WithExpiry makes products unused (not added) for longer than d expire:
// an expired product is dropped on the next read (the item goes back to
// the agent), a pinned one included only when it is not pinned — a pin is
// the household's and stays until forgotten. The entry's policy stays. 0
// keeps products for ever.
func WithExpiry(d time.Duration) Option {
	return func(m *Memory) { m.expiry = max(d, 0) }
}

// WithClock sets the clock used for LastSeen and PinnedAt (tests).
func WithClock(now func() time.Time) Option {
	return func(m *Memory) {
		if now != nil {
			m.now = now
		}
	}
}

var unsafeName = regexp.MustCompile(`[^a-z0-9_-]+`)

// FileName is the memory file's name for a store.
func FileName(store string) string {
	s := unsafeName.ReplaceAllString(strings.ToLower(strings.TrimSpace(store)), "-")
	if s == "" {
		s = "default"
	}
	return "products-" + s + ".json"
}

// Key is the normalised item key (the same as the preferences' key: case,
// quantity, #tags, punctuation and plurals do not count).
func Key(itemName string) string { return preferences.Key(itemName) }

// Exists reports whether dataDir holds a memory of store, or an older
// preferences.json a first Open would migrate into it.
func Exists(dataDir, store string) bool {
	if strings.TrimSpace(dataDir) == "" {
		return false
	}
	for _, name := range []string{FileName(store), "preferences.json"} {
		if _, err := os.Stat(filepath.Join(dataDir, name)); err == nil {
			return true
		}
	}
	return false
}

// Open opens the memory of store in dataDir, creating the directory when
// needed and migrating preferences.json the first time.
func Open(dataDir, store string, opts ...Option) (*Memory, error) {
	if strings.TrimSpace(dataDir) == "" {
		return nil, errors.New("products: no data directory configured (set data_dir)")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("products: create data directory %s: %w", dataDir, err)
	}
	path := filepath.Join(dataDir, FileName(store))
	m := &Memory{
		dataDir: dataDir,
		store:   store,
		path:    path,
		lock:    flock.New(path + ".lock"),
		log:     slog.Default().With("component", "products"),
		now:     func() time.Time { return time.Now().UTC() },
	}
	m.warned = map[string]bool{}
	for _, o := range opts {
		o(m)
	}
	if err := m.update(func(*file) error { return nil }); err != nil {
		return nil, err
	}
	return m, nil
}

// Path is the memory file's path.
func (m *Memory) Path() string { return m.path }

// Added records that the agent added product p for item (Record with
// the zero Source).
func (m *Memory) Added(item string, p Product) error { return m.Record(item, p, Source{}) }

// Record records that product p was added for item, chosen as src says:
//   - the item's standing product again: its fields are replaced,
//     TimesChosen grows by one, LastSeen is now, and a substitute streak
//     ends;
//   - no standing product and not a substitute: p becomes the standing
//     product;
//   - anything else (a different product, or a substitute): p is
//     remembered as the item's substitute, used this run only; the
//     household choosing the same product twice in a row makes it the
//     standing product (never over a pin: only a pin changes a pin).
func (m *Memory) Record(item string, p Product, src Source) error {
	k := Key(item)
	if k == "" || strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("products: cannot remember %q → %q: the item key or the product name is empty", item, p.Name)
	}
	p.Substitute, p.Policy, p.Rejected = nil, shoppinglist.Policy{}, nil
	p.HouseholdQuantity, p.ListQuantity = 0, 0
	if err := m.validate(k, p); err != nil {
		return fmt.Errorf("products: not remembering %q for %q: %w", report.Clip(p.Name, 80), report.Clip(k, 80), err)
	}
	return m.update(func(f *file) error {
		old := f.Products[k]
		if old.IsRejected(p) {
			return fmt.Errorf("products: not remembering %q for %q: %w", report.Clip(p.Name, 80), report.Clip(k, 80), ErrRejected)
		}
		now := m.now()
		sub := old.Substitute
		switch {
		case old.Standing() && sameProduct(old, p):
			p.Pinned, p.PinnedAt = old.Pinned, old.PinnedAt
			p.HouseholdQuantity, p.ListQuantity = old.HouseholdQuantity, old.ListQuantity
			p.TimesChosen = old.TimesChosen + 1
			if p.ProductID == "" {
				p.ProductID = old.ProductID
			}
			if p.Size == "" {
				p.Size = old.Size
			}
		case !old.Standing() && !src.Substitute,
			src.Household && !old.Pinned && sub != nil && sub.ByHousehold && sameProduct(sub.product(), p):
			if sub != nil && sameProduct(sub.product(), p) {
				m.log.Info("the household chose the same product twice in a row: it is now the item's product", "key", k, "product", p.Name)
				p.TimesChosen = sub.InARow + 1
				if p.Size == "" {
					p.Size = sub.Size
				}
			} else {
				p.TimesChosen = 1
			}
			p.Pinned, p.PinnedAt = false, time.Time{}
		default:
			in := 1
			if sub != nil && sameProduct(sub.product(), p) {
				in = sub.InARow + 1
			}
			old.Substitute = &Substitute{Name: p.Name, URL: p.URL, ProductID: p.ProductID, Size: p.Size, Price: p.Price,
				Quantity: p.Quantity, LastSeen: now, ByHousehold: src.Household, InARow: in}
			if old.Standing() {
				m.log.Info("remembered as a substitute; the item keeps its product", "key", k, "product", old.Name, "substitute", p.Name)
			}
			f.Products[k] = old
			return nil
		}
		p.LastSeen = now
		p.Policy, p.Rejected = old.Policy, old.Rejected
		f.Products[k] = p
		return nil
	})
}

// Pin records the household's choice for item (⭐): the entry becomes this
// product, pinned. TimesChosen is kept when it is the same product.
func (m *Memory) Pin(item string, p Product) error {
	k := Key(item)
	if k == "" {
		return fmt.Errorf("products: cannot pin %q: the item name is empty after removing quantity and tags", item)
	}
	if strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("products: cannot pin a product without a name for %q", k)
	}
	p.Substitute, p.Policy, p.Rejected = nil, shoppinglist.Policy{}, nil
	if err := m.validate(k, p); err != nil {
		return fmt.Errorf("products: not pinning %q for %q: %w", report.Clip(p.Name, 80), report.Clip(k, 80), err)
	}
	return m.update(func(f *file) error {
		old, ok := f.Products[k]
		if ok && old.Standing() && sameProduct(old, p) {
			p.TimesChosen = old.TimesChosen
			if p.Quantity == 0 {
				p.Quantity = old.Quantity
			}
			if p.HouseholdQuantity == 0 {
				p.HouseholdQuantity, p.ListQuantity = old.HouseholdQuantity, old.ListQuantity
			}
		}
		now := m.now()
		if p.PinnedAt.IsZero() {
			p.PinnedAt = now
		}
		if p.LastSeen.IsZero() {
			p.LastSeen = p.PinnedAt
		}
		p.Pinned = true
		p.Policy = old.Policy
		// Pinning a product the household had marked wrong takes the mark
		// back: the pin is its newer word.
		p.Rejected = withoutRejected(old.Rejected, p)
		if sub := old.Substitute; sub != nil && !sameProduct(sub.product(), p) {
			p.Substitute = sub
		}
		f.Products[k] = p
		return nil
	})
}

// sameProduct says whether a and b name the same store product: the same
// product id when both have one, else the same URL when both have one, else
// the same name.
func sameProduct(a, b Product) bool {
	switch {
	case a.ProductID != "" && b.ProductID != "":
		return a.ProductID == b.ProductID
	case a.URL != "" && b.URL != "":
		return a.URL == b.URL
	}
	return strings.EqualFold(strings.TrimSpace(a.Name), strings.TrimSpace(b.Name))
}

// Lookup returns the entry remembered for item (pinned or not).
func (m *Memory) Lookup(item string) (Entry, bool) {
	e, ok := m.Entry(item)
	return e, ok && e.Standing()
}

// Entry returns everything remembered for item: its product (which may be
// none: Standing), its substitute and its policy.
func (m *Memory) Entry(item string) (Entry, bool) {
	k := Key(item)
	if k == "" {
		return Entry{}, false
	}
	f, err := m.read()
	if err != nil {
		m.log.Warn("product memory unreadable", "path", m.path, "err", err)
		return Entry{}, false
	}
	p, ok := f.Products[k]
	return Entry{Key: k, Product: p}, ok
}

// SetPolicy sets the household's policy for item (the panel); an item with
// nothing remembered gets an entry holding only its policy, and a zero
// policy on such an entry removes it.
func (m *Memory) SetPolicy(item string, pol shoppinglist.Policy) error {
	k := Key(item)
	if k == "" || utf8.RuneCountInString(k) > shoppinglist.MaxNameRunes {
		return fmt.Errorf("products: cannot set a policy for %q: the item key is empty or too long", item)
	}
	return m.update(func(f *file) error {
		e := f.Products[k]
		e.Policy = pol
		if e.empty() {
			delete(f.Products, k)
			return nil
		}
		f.Products[k] = e
		return nil
	})
}

// PinSubstitute makes the item's substitute its pinned product (the
// panel's ⭐ on a substitute); ErrNotRemembered when it has none.
func (m *Memory) PinSubstitute(item string) error {
	e, ok := m.Entry(item)
	if !ok || e.Substitute == nil {
		return fmt.Errorf("products: pin the substitute of %q: %w", item, ErrNotRemembered)
	}
	s := e.Substitute
	return m.Pin(item, Product{Name: s.Name, URL: s.URL, ProductID: s.ProductID, Size: s.Size, Price: s.Price, Quantity: s.Quantity})
}

// Pinned returns the household's pinned product for item, if any. Like the
// preferences before it, only exactly the item's key counts: a product
// pinned for "milk" is not used for "organic milk".
func (m *Memory) Pinned(item string) (Entry, bool) {
	e, ok := m.Lookup(item)
	if !ok || !e.Pinned {
		return Entry{}, false
	}
	return e, true
}

// List returns every entry, sorted by key.
func (m *Memory) List() ([]Entry, error) {
	f, err := m.read()
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(f.Products))
	for k, p := range f.Products {
		out = append(out, Entry{Key: k, Product: p})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Forget removes the entry of key (any spelling of the item); an unknown key
// is an error wrapping ErrNotRemembered.
func (m *Memory) Forget(key string) error {
	k := Key(key)
	return m.update(func(f *file) error {
		if _, ok := f.Products[k]; !ok {
			return fmt.Errorf("products: forget %q (key %q): %w; 'gemini-supply products list' shows the keys", key, k, ErrNotRemembered)
		}
		delete(f.Products, k)
		return nil
	})
}

// ForgetProduct forgets wrong — a product the household says is wrong for
// item (the review pack's Wrong product) — wherever the item's entry holds
// it: as its standing product (pinned or not), as its substitute, or both.
// The entry's other product and its policy are kept; an entry left with
// nothing is removed. It returns an error wrapping ErrNotRemembered when
// the entry holds no such product (nothing is changed then).
func (m *Memory) ForgetProduct(item string, wrong Product) error {
	k := Key(item)
	if k == "" {
		return fmt.Errorf("products: forget a product of %q: the item name is empty after removing quantity and tags: %w", item, ErrNotRemembered)
	}
	if strings.TrimSpace(wrong.Name) == "" && wrong.URL == "" && wrong.ProductID == "" {
		return fmt.Errorf("products: forget a product of %q: no product named: %w", k, ErrNotRemembered)
	}
	return m.update(func(f *file) error {
		e, forgot := forgetIn(f.Products[k], wrong)
		if !forgot {
			return fmt.Errorf("products: forget %q for %q: %w", report.Clip(wrong.Name, 80), report.Clip(k, 80), ErrNotRemembered)
		}
		f.put(k, e)
		return nil
	})
}

// forgetIn takes wrong out of entry e — its standing product, its
// substitute, or both — and reports whether it held it.
func forgetIn(e Product, wrong Product) (Product, bool) {
	forgot := false
	if e.Standing() && sameProduct(e, wrong) {
		e = Product{Substitute: e.Substitute, Policy: e.Policy, Rejected: e.Rejected}
		forgot = true
	}
	if e.Substitute != nil && sameProduct(e.Substitute.product(), wrong) {
		e.Substitute = nil
		forgot = true
	}
	return e, forgot
}

// put stores entry e under key k, or removes it when nothing is left in it.
func (f *file) put(k string, e Product) {
	if e.empty() {
		delete(f.Products, k)
		return
	}
	f.Products[k] = e
}

// Reject records that the household says wrong — a product added for
// item — is wrong for it (the review pack's Wrong product): it is
// forgotten wherever the entry holds it (ForgetProduct) and marked
// rejected, so that it is never added for the item again (not replayed,
// refused at the item's tab, not offered in a question) until the
// household pins it or clears the mark (Unreject). It reports whether the
// entry held the product before. Marks do not expire.
func (m *Memory) Reject(item string, wrong Product) (forgot bool, err error) {
	k := Key(item)
	if k == "" {
		return false, fmt.Errorf("products: mark a product of %q wrong: the item name is empty after removing quantity and tags", item)
	}
	r := Rejected{Name: strings.TrimSpace(wrong.Name), URL: wrong.URL, ProductID: wrong.ProductID}
	if r.URL != "" && checkTexts(k, Product{URL: r.URL}) != nil {
		r.URL = "" // an address the agent reported oddly: the id and name still mark it
	}
	if err := m.validRejected(k, r); err != nil {
		return false, fmt.Errorf("products: not marking %q wrong for %q: %w", report.Clip(wrong.Name, 80), report.Clip(k, 80), err)
	}
	err = m.update(func(f *file) error {
		var e Product
		e, forgot = forgetIn(f.Products[k], wrong)
		r.At = m.now()
		e.Rejected = append(withoutRejected(e.Rejected, r.product()), r)
		if n := len(e.Rejected); n > MaxRejected {
			e.Rejected = e.Rejected[n-MaxRejected:]
		}
		f.put(k, e)
		return nil
	})
	return forgot, err
}

// Unreject clears the household's mark of p as wrong for item (the panel's
// "not wrong after all"); an error wrapping ErrNotRemembered when p is not
// marked.
func (m *Memory) Unreject(item string, p Product) error {
	k := Key(item)
	return m.update(func(f *file) error {
		e, ok := f.Products[k]
		if !ok || !e.IsRejected(p) {
			return fmt.Errorf("products: %q is not marked wrong for %q: %w", report.Clip(p.Name, 80), report.Clip(k, 80), ErrNotRemembered)
		}
		e.Rejected = withoutRejected(e.Rejected, p)
		f.put(k, e)
		return nil
	})
}

// SetQuantity records the quantity the household set in the review for
// p, the item's product (Change quantity), with the list's quantity of
// the item then: the item buys qty while the list asks for listQuantity
// (Product.QuantityFor). An error wrapping ErrNotRemembered when p is not
// the item's product (a substitute is not bought again: nothing to set).
func (m *Memory) SetQuantity(item string, p Product, qty, listQuantity int) error {
	k := Key(item)
	if qty < 1 || qty > shoppinglist.MaxQuantity || listQuantity < 1 || listQuantity > shoppinglist.MaxQuantity {
		return fmt.Errorf("products: the quantity %d (the list's %d) for %q is not between 1 and %d", qty, listQuantity, report.Clip(k, 80), shoppinglist.MaxQuantity)
	}
	return m.update(func(f *file) error {
		e, ok := f.Products[k]
		if !ok || !e.Standing() || !sameProduct(e, p) {
			return fmt.Errorf("products: set the quantity of %q for %q: %w", report.Clip(p.Name, 80), report.Clip(k, 80), ErrNotRemembered)
		}
		e.HouseholdQuantity, e.ListQuantity = qty, listQuantity
		if qty == listQuantity {
			e.HouseholdQuantity, e.ListQuantity = 0, 0 // the list's own
		}
		f.Products[k] = e
		return nil
	})
}

// ForgetAll removes every entry and returns how many there were.
func (m *Memory) ForgetAll() (int, error) {
	n := 0
	err := m.update(func(f *file) error {
		n = len(f.Products)
		f.Products = map[string]Product{}
		return nil
	})
	return n, err
}

func (m *Memory) read() (file, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.readFile()
}

// readFile reads the memory file; entries that fail validation are logged
// (once each) and left out.
func (m *Memory) readFile() (file, error) {
	f, err := readFile(m.path)
	if err != nil {
		return f, err
	}
	m.expire(&f)
	for k, p := range f.Products {
		if err := m.validate(k, p); err != nil {
			delete(f.Products, k)
			if why := k + "\x00" + err.Error(); !m.warned[why] {
				m.warned[why] = true
				m.log.Warn("a remembered product is not valid and is ignored; fix or forget it", "path", m.path, "key", report.Clip(k, 60), "err", err)
			}
		}
	}
	return f, nil
}

// expire drops the products unused for longer than the expiry (a pin
// stays), and the entries left with nothing.
func (m *Memory) expire(f *file) {
	if m.expiry <= 0 {
		return
	}
	cutoff := m.now().Add(-m.expiry)
	for k, p := range f.Products {
		changed := false
		if p.Standing() && !p.Pinned && p.LastSeen.Before(cutoff) {
			m.log.Info("a remembered product was not used for long and expired; the agent shops the item again", "key", report.Clip(k, 60), "product", report.Clip(p.Name, 80), "last_seen", p.LastSeen)
			p = Product{Substitute: p.Substitute, Policy: p.Policy, Rejected: p.Rejected}
			changed = true
		}
		if p.Substitute != nil && p.Substitute.LastSeen.Before(cutoff) {
			p.Substitute, changed = nil, true
		}
		if changed {
			f.put(k, p)
		}
	}
}

func readFile(path string) (file, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return file{Products: map[string]Product{}}, nil
	}
	if err != nil {
		return file{}, fmt.Errorf("products: read %s: %w", path, err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return file{}, fmt.Errorf("products: %s is not valid JSON (%w); fix it or delete it to start over", path, err)
	}
	if f.Version > fileVersion {
		return file{}, fmt.Errorf("products: %s has format version %d, newer than this program understands (%d); upgrade gemini-supply", path, f.Version, fileVersion)
	}
	out := make(map[string]Product, len(f.Products))
	for k, p := range f.Products {
		out[Key(k)] = p // keys written by hand may not be normalised
	}
	f.Products = out
	return f, nil
}

// update applies change to the file's current content under the process
// mutex and the file lock (migrating preferences.json first when not done
// yet), then writes it atomically when anything changed.
func (m *Memory) update(change func(*file) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), lockTimeout)
	defer cancel()
	ok, err := m.lock.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil || !ok {
		if err == nil {
			err = ctx.Err()
		}
		return fmt.Errorf("products: lock %s (another gemini-supply is writing it?): %w", m.lock.Path(), err)
	}
	defer func() {
		if err := m.lock.Unlock(); err != nil {
			m.log.Warn("unlock product memory", "path", m.lock.Path(), "err", err)
		}
	}()
	f, err := m.readFile()
	if err != nil {
		return err
	}
	before, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("products: encode: %w", err)
	}
	if !f.PreferencesMigrated {
		if err := m.migrate(&f); err != nil {
			return err
		}
	}
	if err := change(&f); err != nil {
		return err
	}
	f.Version, f.Store = fileVersion, m.store
	after, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("products: encode: %w", err)
	}
	if _, statErr := os.Stat(m.path); statErr == nil && string(before) == string(after) {
		return nil
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("products: encode: %w", err)
	}
	if err := atomicfile.Write(m.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("products: %w", err)
	}
	return nil
}

// migrate copies every product of preferences.json into f as a pinned
// entry, keeping all its fields. An entry already pinned in f wins (it is
// newer: it was pinned after the memory existed).
func (m *Memory) migrate(f *file) error {
	if _, err := os.Stat(filepath.Join(m.dataDir, preferences.FileName)); errors.Is(err, os.ErrNotExist) {
		f.PreferencesMigrated = true
		return nil
	}
	entries, err := preferences.ReadFile(m.dataDir)
	if err != nil {
		return fmt.Errorf("products: migrate the preferences: %w", err)
	}
	for _, e := range entries {
		if old, ok := f.Products[e.Key]; ok && old.Pinned {
			continue
		}
		p := Product{Name: e.Name, URL: e.URL, ProductID: e.ProductID, Price: e.Price, Pinned: true, PinnedAt: e.When, LastSeen: e.When}
		if old, ok := f.Products[e.Key]; ok && sameProduct(old, p) {
			p.TimesChosen, p.Quantity, p.Size = old.TimesChosen, old.Quantity, old.Size
		}
		f.Products[e.Key] = p
	}
	f.PreferencesMigrated = true
	m.log.Info("migrated the remembered preferences into the product memory", "from", filepath.Join(m.dataDir, preferences.FileName), "to", m.path, "products", len(entries))
	return nil
}
