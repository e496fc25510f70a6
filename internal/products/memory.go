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

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
	"github.com/gemini-supply/gemini-supply/internal/preferences"

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

	mu sync.Mutex // serialises this process; the flock serialises processes
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

// Added records that product p was added for item: the entry's product
// fields are replaced, TimesChosen grows by one and LastSeen is now. A
// pinned entry keeps the household's product: an add of a different
// product (other URL or name) only leaves it as it is.
func (m *Memory) Added(item string, p Product) error {
	k := Key(item)
	if k == "" || strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("products: cannot remember %q → %q: the item key or the product name is empty", item, p.Name)
	}
	return m.update(func(f *file) error {
		old, ok := f.Products[k]
		if ok && old.Pinned && !sameProduct(old, p) {
			m.log.Info("a pinned product stays the item's choice", "key", k, "pinned", old.Name, "added", p.Name)
			return nil
		}
		p.Pinned, p.PinnedAt = old.Pinned, old.PinnedAt
		p.TimesChosen = old.TimesChosen + 1
		p.LastSeen = m.now()
		if p.ProductID == "" && sameProduct(old, p) {
			p.ProductID = old.ProductID
		}
		if p.Size == "" && sameProduct(old, p) {
			p.Size = old.Size
		}
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
	return m.update(func(f *file) error {
		old, ok := f.Products[k]
		if ok && sameProduct(old, p) {
			p.TimesChosen = old.TimesChosen
			if p.Quantity == 0 {
				p.Quantity = old.Quantity
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
	return readFile(m.path)
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
	f, err := readFile(m.path)
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
