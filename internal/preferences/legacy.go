// Package preferences holds the item key — the normalised form of a list
// entry under which a product is remembered (Key) — and reads the older
// preferences file, preferences.json, in which earlier versions kept the
// ⭐ choices made in Telegram. That file is only read, once per store, to
// migrate it into the product memory (package products); nothing writes it
// any more.
package preferences

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// FileName is the name of the older preferences file in the data directory.
const FileName = "preferences.json"

// fileVersion is the newest format version this reader understands.
const fileVersion = 1

// Product is a product remembered in the older file.
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

// ReadFile reads the preferences file in dataDir: every product, sorted by
// key, with keys written by hand normalised (Key). A missing file holds
// nothing; a file that cannot be read or parsed, or is of a newer format, is
// an error that names it and says what to do.
func ReadFile(dataDir string) ([]Entry, error) {
	path := filepath.Join(dataDir, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
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
	byKey := make(map[string]Product, len(f.Products))
	for k, p := range f.Products {
		byKey[Key(k)] = p
	}
	out := make([]Entry, 0, len(byKey))
	for k, p := range byKey {
		out = append(out, Entry{Key: k, Product: p})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}
