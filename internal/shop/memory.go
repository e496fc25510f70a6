package shop

import "github.com/gemini-supply/gemini-supply/internal/shoppinglist"

// ProductMemory remembers, per store, which product an item got
// (internal/products): every add of a run is recorded, so the next run can
// find the product again.
type ProductMemory interface {
	Added(itemName string, a shoppinglist.Added) error
}

// rememberAdded records an added item in the product memory. A memory that
// cannot be written costs the next run time, not this run its result, so
// the error is only logged.
func (r *run) rememberAdded(it *itemRun, a shoppinglist.Added) {
	if r.cfg.Memory == nil || a.ProductName == "" {
		return
	}
	if err := r.cfg.Memory.Added(it.p.item.Name, a); err != nil {
		r.log.Warn("the product memory was not updated", "item", it.p.item.Name, "err", err)
	}
}
