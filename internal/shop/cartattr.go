package shop

import (
	"fmt"
	"sort"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Cart attribution: every cart-changing request the browser sends comes
// from one tab (browser.Tab records its own, CartRecorder), and every tab
// belongs to one item. So what an item's tabs did to the cart is known
// exactly, as it happens — not only at the review, where an extra unit can
// no longer be told apart from the household's own changes:
//
//   - a retry after an attempt that already added starts with a note of
//     what is in the cart from this item (EarlierAdd), so the agent reports
//     those units instead of adding them again (the cause of the extra
//     olive-oil unit: a false "session expired" after the add, then a
//     retry that started from scratch);
//   - a report is checked against the item's own cart requests: a unit of
//     another product, or more units than reported, is a warning on the
//     item at once (report.ItemResult.Warnings);
//   - an item that ends without a product but whose tabs added units says
//     so.

// CartRecorder is a tab that records its cart-changing requests
// (*browser.Tab). Tabs that do not (test fakes) are not attributed.
type CartRecorder interface {
	CartRequests() []browser.CartRequest
}

// EarlierAdd is a product an earlier attempt of the item added to the
// cart: the retry's prompt names it, so the agent does not add it again.
type EarlierAdd struct {
	ProductID string
	Units     int
}

// cartSoFar is every cart request of the item's tabs: earlier attempts and
// the current one.
func (it *itemRun) cartSoFar() []browser.CartRequest {
	it.cartMu.Lock()
	defer it.cartMu.Unlock()
	return append(append([]browser.CartRequest(nil), it.cart...), it.tabRequestsLocked()...)
}

// tabRequestsLocked are the current tab's requests since the item took it.
func (it *itemRun) tabRequestsLocked() []browser.CartRequest {
	rec, ok := it.tab.(CartRecorder)
	if !ok {
		return nil
	}
	reqs := rec.CartRequests()
	return reqs[min(it.tabBase, len(reqs)):]
}

// setTab makes t the item's current tab. A tab may come from a finished
// replay of another item (the replay pool): only the requests it sends from
// now on are this item's. The same tab again (replay's tab handed to the
// agent) keeps what the item did in it.
func (it *itemRun) setTab(t Tab) {
	it.cartMu.Lock()
	defer it.cartMu.Unlock()
	if t == it.tab {
		return
	}
	it.tab, it.tabBase = t, 0
	if rec, ok := t.(CartRecorder); ok {
		it.tabBase = len(rec.CartRequests())
	}
}

// keepTabCart keeps the tab's cart requests (this item's) with the item's
// and forgets the tab; it returns them (for the journal).
func (it *itemRun) keepTabCart(t Tab) []browser.CartRequest {
	it.cartMu.Lock()
	defer it.cartMu.Unlock()
	if it.tab != t {
		return nil
	}
	reqs := it.tabRequestsLocked()
	it.cart = append(it.cart, reqs...)
	it.tab, it.tabBase = nil, 0
	return reqs
}

// cartEffect sums the cart requests the store accepted: units added per
// product (a product-less add counts under "").
type cartEffect struct {
	added map[string]int
}

func effectOf(reqs []browser.CartRequest) cartEffect {
	e := cartEffect{added: map[string]int{}}
	for _, r := range reqs {
		if r.Done() && r.Kind == store.CartAdd {
			e.added[r.ProductID] += max(r.Quantity, 1)
		}
	}
	return e
}

// earlierAdds is what the item's finished attempts added (for the retry's
// prompt), products in a stable order.
func (it *itemRun) earlierAdds() []EarlierAdd {
	it.cartMu.Lock()
	reqs := append([]browser.CartRequest(nil), it.cart...)
	it.cartMu.Unlock()
	e := effectOf(reqs)
	var out []EarlierAdd
	for id, n := range e.added {
		if id != "" && n > 0 {
			out = append(out, EarlierAdd{ProductID: id, Units: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProductID < out[j].ProductID })
	return out
}

// cartWarnings compares what the item's tabs did to the cart with the
// item's result: units of a product it did not report, more units than it
// reported, or units added by an item that ends without a product.
func (it *itemRun) cartWarnings(res report.ItemResult) []string {
	e := effectOf(it.cartSoFar())
	var warns []string
	if res.Outcome != report.OutcomeAdded {
		for _, id := range sortedKeys(e.added) {
			warns = append(warns, fmt.Sprintf("This item's tab added %d × %s to the cart although the item ended %s: remove it from the cart if you do not want it.",
				e.added[id], cartProductLabel(id), res.Outcome))
		}
		return warns
	}
	reported := store.ProductID(res.URL)
	want := max(res.Quantity, 1)
	for _, id := range sortedKeys(e.added) {
		n := e.added[id]
		switch {
		case id == "" || reported == "":
			// A best-effort profile: the product is not known, only the units.
			if total := sumUnits(e.added); total > want && reported == "" {
				warns = append(warns, fmt.Sprintf("This item's tab added %d units to the cart but reported %d: check the cart.", total, want))
				return warns
			}
		case id != reported:
			warns = append(warns, fmt.Sprintf("This item's tab added %d × %s, which it did not report (it reported %s): remove it from the cart if you do not want it.",
				n, cartProductLabel(id), res.ProductName))
		case n > want:
			warns = append(warns, fmt.Sprintf("This item's tab added %s %d times but reported %d: the cart holds %d more than asked for.",
				res.ProductName, n, want, n-want))
		}
	}
	return warns
}

func cartProductLabel(id string) string {
	if id == "" {
		return "a product"
	}
	return "product " + id
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func sumUnits(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
