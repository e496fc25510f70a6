package shop

import (
	"fmt"
	"strings"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Products the household marked wrong for an item (the review pack's
// Wrong product, kept by the product memory until the household pins the
// product or clears the mark): the item never gets one of them again.
//
//   - replay never replays one (the memory forgets it too, so this is the
//     second lock);
//   - the agent's goal names them;
//   - the item's tab refuses an add of one before the request reaches the
//     store (the cart limit's hard guard, cartLimit), and the item's
//     result says so;
//   - a report_item_added of one is not accepted as added;
//   - a question never offers one.

// ProductRejections gives the products the household marked wrong for an
// item (the product memory).
type ProductRejections interface {
	Rejected(itemName string) []WrongProduct
}

// rejectedOf is every product marked wrong for the item: the memory's marks
// and the run's own (a Wrong product's re-shop names its product).
func (r *run) rejectedOf(itemName string) []WrongProduct {
	var all []WrongProduct
	if w, ok := r.cfg.WrongProducts[itemName]; ok {
		all = append(all, w)
	}
	if r.cfg.Rejections != nil {
		all = append(all, r.cfg.Rejections.Rejected(itemName)...)
	}
	return uniqueWrong(all)
}

// id is the product's store id: its own, else its address's.
func (w WrongProduct) id() string {
	if w.ProductID != "" {
		return w.ProductID
	}
	return store.ProductID(w.URL)
}

// same says whether a product (its id, address and name, any of which may
// be empty) is w: the same store id when both have one (the id decides);
// else the same product page, or the same name (an agent may report a
// search page's address with the product's name).
func (w WrongProduct) same(id, url, name string) bool {
	if id == "" {
		id = store.ProductID(url)
	}
	if a := w.id(); a != "" && id != "" {
		return strings.EqualFold(a, id)
	}
	if p := urlPath(url); p != "" && w.URL != "" && urlPath(w.URL) == p {
		return true
	}
	return strings.TrimSpace(name) != "" && strings.EqualFold(strings.TrimSpace(w.Name), strings.TrimSpace(name))
}

func (w WrongProduct) matchesAny(ws []WrongProduct) bool {
	for _, o := range ws {
		if o.same(w.id(), w.URL, w.Name) {
			return true
		}
	}
	return false
}

// rejectedAs is the mark a product carries for the item, if any.
func (it *itemRun) rejectedAs(id, url, name string) (WrongProduct, bool) {
	for _, w := range it.rejected {
		if w.same(id, url, name) {
			return w, true
		}
	}
	return WrongProduct{}, false
}

// refuseRejectedAdd is the cart limit's answer to an add of a product
// marked wrong for the item (nil for any other add). Only an add whose
// request names its product can be told apart (store.CartOps).
func (it *itemRun) refuseRejectedAdd(add store.CartChange) error {
	if add.ProductID == "" {
		return nil
	}
	w, ok := it.rejectedAs(add.ProductID, "", "")
	if !ok {
		return nil
	}
	it.refusedWrong = append(it.refusedWrong, w)
	return fmt.Errorf("the household marked %q (product %s) wrong for this item; it is never added for it again — choose another product", w.Name, add.ProductID)
}

// withoutRejected drops the options marked wrong for the item.
func (it *itemRun) withoutRejected(opts []choice.Option) (kept []choice.Option, dropped []string) {
	for _, o := range opts {
		if w, ok := it.rejectedAs(o.ProductID, o.URL, o.Name); ok {
			dropped = append(dropped, w.Name)
			continue
		}
		kept = append(kept, o)
	}
	return kept, dropped
}

// uniqueWrong is ws without repeats, in order.
func uniqueWrong(ws []WrongProduct) []WrongProduct {
	var out []WrongProduct
	for _, w := range ws {
		if !w.matchesAny(out) {
			out = append(out, w)
		}
	}
	return out
}
