package shop

import (
	"fmt"
	"sort"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/messages"
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
//     so;
//   - where the profile reads what an add asks for (store.CartOps: the demo
//     store), the item's tab refuses an add that would put more units in
//     the cart for the item than it asks for, before the request reaches
//     the store (cartLimit: the hard guard, whatever the model does), and
//     the item's result says so.

// CartRecorder is a tab that records its cart-changing requests
// (*browser.Tab). Tabs that do not (test fakes) are not attributed.
type CartRecorder interface {
	CartRequests() []browser.CartRequest
}

// CartLimiter is a tab that asks a limit before each add to the cart
// (*browser.Tab): the item sets its own when it takes the tab, and lifts it
// when it hands the tab back.
type CartLimiter interface {
	LimitCart(browser.CartLimit) error
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
	if t == it.tab {
		it.cartMu.Unlock()
		return
	}
	it.tab, it.tabBase = t, 0
	if rec, ok := t.(CartRecorder); ok {
		it.tabBase = len(rec.CartRequests())
	}
	it.cartMu.Unlock()
	if l, ok := t.(CartLimiter); ok {
		// An error means the tab's guard is gone (a closed tab): the
		// attempt fails on its own, and the warnings still see every add.
		_ = l.LimitCart(it.cartLimit)
	}
}

// cartLimit is the item's cart limit (browser.CartLimit): an add that
// would take the units the item has added — the store's accepted adds of
// its earlier tabs, for any product, and the current tab's (accepted or on
// their way) — beyond the packages the item asks for is refused. The retry
// after an add is the case it exists for: told of the earlier add, the
// model must not add again, and now it cannot.
//
// The packages the item asks for are the household's rule
// (shoppinglist.Packages): a count of packages ("2x milk") is that many; a
// count of pieces ("12 eggs") is the packages of the added product that
// cover it — one box of 12 — read from what the page shows of the product
// as the add goes out (store.CartChange.ProductText). A product whose text
// could not be read counts as sold loose: the count is the limit, and the
// review's warning (reviewpack.WarnQuantityFar) says when that was far off.
//
// The current tab's units are the browser's count (tabUnits: its accepted
// and unanswered adds); what the item's accepted quantity changes took out
// again (a wrong product removed) is subtracted.
func (it *itemRun) cartLimit(add store.CartChange, tabUnits int) error {
	it.cartMu.Lock()
	defer it.cartMu.Unlock()
	if err := it.refuseRejectedAdd(add); err != nil {
		return err
	}
	text := add.ProductText
	switch {
	case text == "":
		text = it.addedTexts[add.ProductID]
	case add.ProductID != "":
		if it.addedTexts == nil {
			it.addedTexts = map[string]string{}
		}
		it.addedTexts[add.ProductID] = text
	}
	want := it.packagesFor(text)
	all := append(append([]browser.CartRequest(nil), it.cart...), it.tabRequestsLocked()...)
	removed := rawAdds(all) - sumUnits(effectOf(all).added)
	have := max(rawAdds(it.cart)+tabUnits-removed, 0)
	units := max(add.Quantity, 1)
	if have+units <= want {
		return nil
	}
	it.refused = append(it.refused, add)
	it.refusedWant = want
	if item := it.p.item; item.Pieces && it.corrected == 0 {
		return fmt.Errorf("this item asks for %d pieces (%q), which %d package(s) of this product cover (%q), and its tabs have already added %d; adding %d more would put a package in the cart that nobody asked for (report what is already in the cart instead)",
			item.Quantity, item.Name, want, text, have, units)
	}
	return fmt.Errorf("this item asks for %d and its tabs have already added %d; adding %d more would put a unit in the cart that nobody asked for (report what is already in the cart instead)",
		want, have, units)
}

// keepTabCart keeps the tab's cart requests (this item's) with the item's
// and forgets the tab; it returns them (for the journal).
func (it *itemRun) keepTabCart(t Tab) []browser.CartRequest {
	it.cartMu.Lock()
	if it.tab != t {
		it.cartMu.Unlock()
		return nil
	}
	reqs := it.tabRequestsLocked()
	it.cart = append(it.cart, reqs...)
	it.tab, it.tabBase = nil, 0
	it.cartMu.Unlock()
	if l, ok := t.(CartLimiter); ok {
		_ = l.LimitCart(nil) // a pooled tab serves the next item under its own
	}
	return reqs
}

// cartEffect sums the cart requests the store accepted: units added per
// product (a product-less add counts under "").
type cartEffect struct {
	added map[string]int
}

// A quantity change the store accepted leaves at most that many of the
// product's units as the item's (the model removed what it added by
// mistake, or some of it).
func effectOf(reqs []browser.CartRequest) cartEffect {
	e := cartEffect{added: map[string]int{}}
	for _, r := range reqs {
		switch {
		case !r.Done():
		case r.Kind == store.CartAdd:
			e.added[r.ProductID] += max(r.Quantity, 1)
		case r.Kind == store.CartSet && r.ProductID != "":
			e.added[r.ProductID] = min(e.added[r.ProductID], r.Quantity)
		}
	}
	return e
}

// rawAdds are the units of the adds the store accepted, whatever came after.
func rawAdds(reqs []browser.CartRequest) int {
	n := 0
	for _, r := range reqs {
		if r.Done() && r.Kind == store.CartAdd {
			n += max(r.Quantity, 1)
		}
	}
	return n
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

// maybeAdded reports whether the item's finished attempts sent a cart
// change the store accepted whose effect the profile cannot read (Kind "":
// no CartOps for it, as on metro) to a cart path that is not a delivery
// choice (setup reports those): it may have added the item.
func (it *itemRun) maybeAdded(setup func(path string) bool) bool {
	it.cartMu.Lock()
	defer it.cartMu.Unlock()
	return unknownCartChange(it.cart, setup)
}

func unknownCartChange(reqs []browser.CartRequest, setup func(path string) bool) bool {
	for _, r := range reqs {
		if r.Done() && r.Kind == "" && (setup == nil || !setup(r.Path)) {
			return true
		}
	}
	return false
}

// cartWarnings compares what the item's tabs did to the cart with the
// item's result: units of a product it did not report, more units than it
// reported, or units added by an item that ends without a product. Each is
// a catalogue text (report.ItemResult.AddWarning).
func (it *itemRun) cartWarnings(res report.ItemResult) []messages.Text {
	e := effectOf(it.cartSoFar())
	var warns []messages.Text
	it.cartMu.Lock()
	refused := append([]store.CartChange(nil), it.refused...)
	refusedWant := it.refusedWant
	wrong := append([]WrongProduct(nil), it.refusedWrong...)
	it.cartMu.Unlock()
	for _, w := range uniqueWrong(wrong) {
		warns = append(warns, messages.Say("warning.tab_refused_wrong", "product", w.Name))
	}
	if len(refused) > 0 {
		units := 0
		for _, c := range refused {
			units += max(c.Quantity, 1)
		}
		warns = append(warns, messages.Say("warning.tab_refused",
			"tries", len(refused), "units", units, "want", max(refusedWant, 1)))
	}
	if res.Outcome != report.OutcomeAdded {
		outcome := "@warning.outcome_" + string(res.Outcome)
		for _, id := range sortedKeys(e.added) {
			if id == "" {
				warns = append(warns, messages.Say("warning.tab_added_ended_unknown", "n", e.added[id], "outcome", outcome))
				continue
			}
			warns = append(warns, messages.Say("warning.tab_added_ended", "n", e.added[id], "id", id, "outcome", outcome))
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
				warns = append(warns, messages.Say("warning.tab_added_units", "total", total, "want", want))
				return warns
			}
		case id != reported:
			warns = append(warns, messages.Say("warning.tab_added_other", "n", n, "id", id, "product", res.ProductName))
		case n > want:
			warns = append(warns, messages.Say("warning.tab_added_more", "product", res.ProductName, "n", n, "want", want, "extra", n-want))
		}
	}
	return warns
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
