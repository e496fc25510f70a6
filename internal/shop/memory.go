package shop

import "github.com/gemini-supply/gemini-supply/internal/shoppinglist"

// ProductMemory remembers, per store, which product an item got
// (internal/products): every add of a run is recorded, so the next run can
// find the product again. how says whether the add was a substitute (the
// memory keeps it beside the item's product, never as it) and whether the
// household chose it.
type ProductMemory interface {
	Added(itemName string, a shoppinglist.Added, how AddedHow) error
}

// AddedHow says how an added product was chosen.
type AddedHow struct {
	// Substitute: it replaces a product that could not be bought — the
	// household's typed alternative ("Something else"), or its answer to
	// a question about a sold-out product or one with no close match.
	Substitute bool
	// Household: the household chose it (an answer to a question).
	Household bool
}

// ItemPolicies gives the household's policy for an item set outside the
// list (the panel's Products tab, kept in the product memory); the item's
// tags add theirs.
type ItemPolicies interface {
	Policy(itemName string) shoppinglist.Policy
}

// rememberAdded records an added item in the product memory. A memory that
// cannot be written costs the next run time, not this run its result, so
// the error is only logged.
func (r *run) rememberAdded(it *itemRun, a shoppinglist.Added) {
	if r.cfg.Memory == nil || a.ProductName == "" {
		return
	}
	if err := r.cfg.Memory.Added(it.p.item.Name, a, it.addedHow()); err != nil {
		r.log.Warn("the product memory was not updated", "item", it.p.item.Name, "err", err)
	}
}

// addedHow is how the item's product was chosen: the household's typed
// alternative, its answer to a question (a substitute when the question
// was about a product that cannot be bought), or the agent's own pick.
func (it *itemRun) addedHow() AddedHow {
	it.mu.Lock()
	defer it.mu.Unlock()
	switch {
	case it.fromUser:
		return AddedHow{Substitute: true, Household: true}
	case it.chosen != nil:
		return AddedHow{Substitute: it.chosen.substitute, Household: true}
	}
	return AddedHow{}
}
