// Package preferences remembers which product the user chose for a shopping
// list item (the ⭐ "choose and remember" button in Telegram), so the next run
// buys it without asking.
//
// Products are kept per item key (see Key) in one JSON file in the data
// directory, preferences.json. Writes are atomic (temporary file, fsync,
// rename) under a file lock, so the service and the `gemini-supply
// preferences` command can change the file at the same time; every operation
// sees the file as it is on disk.
//
// The rule: a remembered product is used when the list entry is the same item
// (same key), and not when the entry names a brand or other qualifiers — a
// product remembered for "milk" is not used for "organic milk" or "Natrel
// milk", and one remembered for "organic milk" is not used for "milk".
package preferences

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"

	"github.com/gofrs/flock"
)

// FileName is the name of the preferences file inside the data directory.
const FileName = "preferences.json"

// fileVersion is the format version written to the file.
const fileVersion = 1

// lockTimeout bounds the wait for another process's write.
const lockTimeout = 10 * time.Second

// ErrNotRemembered is returned by Forget for a key with no remembered product.
var ErrNotRemembered = errors.New("no product is remembered for this item")

// Product is a remembered product.
type Product struct {
	Name      string `json:"name"`
	URL       string `json:"url,omitempty"`
	ProductID string `json:"product_id,omitempty"`
	// Price is the price as it was shown when the product was chosen ("$4.99"); may be empty.
	Price string `json:"price,omitempty"`
	// When the product was remembered.
	When time.Time `json:"when"`
}

// Entry is one remembered product with its key.
type Entry struct {
	Key string `json:"key"`
	Product
}

type file struct {
	Version  int                `json:"version"`
	Products map[string]Product `json:"products"`
}

// Store is the preferences file. Safe for concurrent use by several
// goroutines and several processes.
type Store struct {
	path string
	lock *flock.Flock
	log  *slog.Logger

	mu    sync.Mutex // serialises this process's access; flock serialises processes
	cache map[string]Product
	// info is the file as last read: each write renames a new file into
	// place, so a different inode (or time or size) means it changed.
	info   os.FileInfo
	loaded bool
}

// Option configures Open.
type Option func(*Store)

// WithLogger sets the logger (default: slog.Default with component=preferences).
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) {
		if l != nil {
			s.log = l
		}
	}
}

// Open opens (creating the directory when needed) the preferences file in
// dataDir. A missing file is an empty store; a file that cannot be read or
// parsed is an error that names it.
func Open(dataDir string, opts ...Option) (*Store, error) {
	if strings.TrimSpace(dataDir) == "" {
		return nil, errors.New("preferences: no data directory configured (set data_dir)")
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("preferences: create data directory %s: %w", dataDir, err)
	}
	path := filepath.Join(dataDir, FileName)
	s := &Store{
		path: path,
		lock: flock.New(path + ".lock"),
		log:  slog.Default().With("component", "preferences"),
	}
	for _, o := range opts {
		o(s)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the preferences file's path.
func (s *Store) Path() string { return s.path }

// Remember stores p for the item key (any item name is normalised with Key,
// so "2x Bananas" and "banana" are the same). A zero p.When is set to now.
func (s *Store) Remember(key string, p Product) error {
	k := Key(key)
	if k == "" {
		return fmt.Errorf("preferences: cannot remember %q: the item name is empty after removing quantity and tags", key)
	}
	if strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("preferences: cannot remember a product without a name for %q", k)
	}
	if p.When.IsZero() {
		p.When = time.Now().UTC()
	}
	return s.update(func(m map[string]Product) error {
		m[k] = p
		return nil
	})
}

// Forget removes the product remembered for key (normalised with Key). An
// unknown key is an error wrapping ErrNotRemembered.
func (s *Store) Forget(key string) error {
	k := Key(key)
	return s.update(func(m map[string]Product) error {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("preferences: forget %q (key %q): %w; 'gemini-supply preferences list' shows the keys", key, k, ErrNotRemembered)
		}
		delete(m, k)
		return nil
	})
}

// Lookup returns the product remembered for a list item, applying the rule:
// only a product remembered under exactly the item's key is used. A list
// entry that adds a brand or any other qualifier ("organic milk", "Natrel
// milk", "milk 2%") has a different key from the plain item ("milk"), so the
// product remembered for the plain item is not used for it, and the other way
// round. Quantity, #tags, case, punctuation and plural do not count as
// qualifiers ("2x Bananas #404" uses the product remembered for "banana").
//
// When the file cannot be read, Lookup logs the error and answers from the
// last good state it read.
func (s *Store) Lookup(itemName string) (Product, bool) {
	k := Key(itemName)
	if k == "" {
		return Product{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		s.log.Warn("preferences file unreadable; using the last good copy", "path", s.path, "err", err)
	}
	p, ok := s.cache[k]
	return p, ok
}

// List returns every remembered product, sorted by key.
func (s *Store) List() ([]Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(s.cache))
	for k, p := range s.cache {
		out = append(out, Entry{Key: k, Product: p})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// refreshLocked re-reads the file when it changed since the last read.
func (s *Store) refreshLocked() error {
	st, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.cache, s.loaded, s.info = map[string]Product{}, true, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("preferences: read %s: %w", s.path, err)
	}
	if s.loaded && s.info != nil && os.SameFile(s.info, st) && st.ModTime().Equal(s.info.ModTime()) && st.Size() == s.info.Size() {
		return nil
	}
	m, err := readFile(s.path)
	if err != nil {
		return err
	}
	s.cache, s.loaded, s.info = m, true, st
	return nil
}

func readFile(path string) (map[string]Product, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Product{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("preferences: read %s: %w", path, err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("preferences: %s is not valid JSON (%w); fix it or delete it to start over", path, err)
	}
	if f.Version > fileVersion {
		return nil, fmt.Errorf("preferences: %s has format version %d, newer than this program understands (%d); upgrade gemini-supply", path, f.Version, fileVersion)
	}
	if f.Products == nil {
		f.Products = map[string]Product{}
	}
	// Keys written by hand may not be normalised; normalise them so Lookup finds them.
	out := make(map[string]Product, len(f.Products))
	for k, p := range f.Products {
		out[Key(k)] = p
	}
	return out, nil
}

// update applies change to the file's current content under the process
// mutex and the file lock, then writes it atomically.
func (s *Store) update(change func(map[string]Product) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), lockTimeout)
	defer cancel()
	ok, err := s.lock.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		if err == nil {
			err = ctx.Err()
		}
		return fmt.Errorf("preferences: lock %s (another gemini-supply is writing it?): %w", s.lock.Path(), err)
	}
	defer func() {
		if err := s.lock.Unlock(); err != nil {
			s.log.Warn("unlock preferences file", "path", s.lock.Path(), "err", err)
		}
	}()
	m, err := readFile(s.path)
	if err != nil {
		return err
	}
	if err := change(m); err != nil {
		return err
	}
	if err := writeAtomic(s.path, file{Version: fileVersion, Products: m}); err != nil {
		return err
	}
	s.cache, s.loaded = m, true
	if st, err := os.Stat(s.path); err == nil {
		s.info = st
	} else {
		s.loaded = false // re-read next time
	}
	return nil
}

func writeAtomic(path string, f file) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("preferences: encode: %w", err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("preferences: %w", err)
	}
	return nil
}
