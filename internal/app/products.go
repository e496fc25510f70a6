package app

import (
	"errors"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

var (
	_ shop.Preferences   = memoryAdapter{}
	_ shop.ProductMemory = memoryAdapter{}
	_ shop.ProductRecall = memoryAdapter{}
	_ shop.ItemPolicies  = memoryAdapter{}

	_ shop.ProductRejections = memoryAdapter{}
)

// OpenProducts opens the product memory of the store named storeName in
// dataDir, its entries validated on load against the store's profile
// (an address outside its allowlist or on a checkout or account page is
// logged and ignored). An unknown store name only gets the form checks.
// A product unused for longer than expiry goes back to the agent (0: never).
func OpenProducts(dataDir, storeName string, expiry time.Duration, log *slog.Logger) (*products.Memory, error) {
	opts := []products.Option{products.WithLogger(log), products.WithExpiry(expiry)}
	if prof, err := store.Lookup(storeName); err == nil {
		opts = append(opts, products.WithURLCheck(func(raw string) error {
			if v := prof.CheckURL(raw); !v.Allowed {
				return errors.New(v.Reason)
			}
			return nil
		}))
	}
	return products.Open(dataDir, storeName, opts...)
}

// Memory adapts a store's product memory to the run: its pinned products
// are the ⭐ preferences (shop.Preferences), and every add is recorded
// (shop.ProductMemory).
func Memory(m *products.Memory) interface {
	shop.Preferences
	shop.ProductMemory
} {
	return memoryAdapter{m}
}

type memoryAdapter struct{ m *products.Memory }

func (a memoryAdapter) Lookup(item string) (shop.PreferredProduct, bool) {
	e, ok := a.m.Pinned(item)
	if !ok {
		return shop.PreferredProduct{}, false
	}
	return shop.PreferredProduct{Name: e.Name, URL: e.URL, ProductID: e.ProductID, Price: e.Price}, true
}

func (a memoryAdapter) Remember(item string, p shop.PreferredProduct) error {
	return a.m.Pin(item, products.Product{Name: p.Name, URL: p.URL, ProductID: p.ProductID, Price: p.Price})
}

// Recall is the product remembered for item: the pinned one, else the
// last one added.
func (a memoryAdapter) Recall(item string) (shop.Remembered, bool) {
	e, ok := a.m.Lookup(item)
	if !ok || e.URL == "" {
		return shop.Remembered{}, false
	}
	return shop.Remembered{Name: e.Name, URL: e.URL, ProductID: e.ProductID, Price: e.Price, Size: e.Size,
		HouseholdQuantity: e.HouseholdQuantity, ListQuantity: e.ListQuantity}, true
}

// Rejected are the products the household marked wrong for item.
func (a memoryAdapter) Rejected(item string) []shop.WrongProduct {
	e, _ := a.m.Entry(item)
	out := make([]shop.WrongProduct, 0, len(e.Rejected))
	for _, r := range e.Rejected {
		out = append(out, shop.WrongProduct{Name: r.Name, URL: r.URL, ProductID: r.ProductID})
	}
	return out
}

func (a memoryAdapter) Added(item string, ad shoppinglist.Added, how shop.AddedHow) error {
	return a.m.Record(item, products.Product{Name: ad.ProductName, URL: ad.URL, ProductID: store.ProductID(ad.URL), Price: ad.Price.Text, Quantity: ad.Quantity},
		products.Source{Substitute: how.Substitute, Household: how.Household})
}

// Policy is the item's policy set in the panel.
func (a memoryAdapter) Policy(item string) shoppinglist.Policy {
	e, _ := a.m.Entry(item)
	return e.Policy
}

// memory opens the configured store's product memory once (nil without a
// data directory or when it cannot be opened: the run goes on without).
func (r *Runner) memory() memoryAdapter {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if r.mem != nil || r.cfg.DataDir == "" {
		return memoryAdapter{r.mem}
	}
	m, err := OpenProducts(r.cfg.DataDir, r.cfg.Store, r.cfg.ProductExpiry(), r.base)
	if err != nil {
		r.log.Warn("remembered products are unavailable", "err", err)
		return memoryAdapter{}
	}
	r.mem = m
	return memoryAdapter{m}
}
