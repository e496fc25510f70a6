package shop

import (
	"context"
	"time"
)

// openSearchWait bounds the run's own navigation to the search results.
const openSearchWait = time.Minute

// openSearch opens the search results in the agent's tab before the
// model's first call (what the model's first turn used to do) and answers
// the store's postal-code dialog when the profile names it, the page shows
// it and a postal code is configured (as a replay does). It reports
// whether the tab is on the results; on false the prompt tells the model
// to open them itself.
func (it *itemRun) openSearch(ctx context.Context, tab Tab, search string) bool {
	r := it.r
	if search == "" {
		return false
	}
	nctx, cancel := context.WithTimeout(ctx, openSearchWait)
	defer cancel()
	if err := tab.Navigate(nctx, search); err != nil {
		r.log.Debug("opening the search results failed; the model opens them", "item", it.p.item.Name, "err", err)
		return false
	}
	pp := r.cfg.Store.Product
	rt, ok := tab.(replayTab)
	if !ok || pp.PostalInput == "" || pp.PostalSubmit == "" || r.cfg.PostalCode == "" {
		return true
	}
	els, err := rt.ReadElements(nctx, map[string]string{"in": pp.PostalInput}, "")
	if err != nil || !els["in"].Visible {
		return true
	}
	if err := rt.FillElement(nctx, pp.PostalInput, r.cfg.PostalCode); err != nil {
		r.log.Debug("the postal-code dialog could not be answered; the model answers it", "item", it.p.item.Name, "err", err)
		return true
	}
	if err := rt.PressElement(nctx, pp.PostalSubmit); err != nil {
		r.log.Debug("the postal-code dialog could not be confirmed; the model confirms it", "item", it.p.item.Name, "err", err)
		return true
	}
	r.log.Debug("answered the store's postal-code dialog before the model's first call", "item", it.p.item.Name)
	return true
}
