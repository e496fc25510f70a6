package shop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// Resuming after a hard kill (SIGKILL, OOM, power loss): the killed run's
// journal has no finished_at. The next run
//
//  1. updates the list for its done items whose update may not have landed
//     (list_updated false), unless the list already says so;
//  2. checks its in-flight items that are still open on the list against the
//     cart (after signing in): an item whose product gained units in the
//     cart since the killed run read it (cart_before) is marked completed
//     from that cart line instead of being shopped again;
//  3. marks the old journal resumed_by this run.
//
// Only the previous run's journal is looked at.

// unfinished is a journal of a run that did not finish.
type unfinished struct {
	path string
	rec  JournalRecord
}

// unfinishedJournals returns the journal of the previous run (the newest
// in dir other than self's) when that run never finished, was not resumed
// and its process is gone. Only the previous run is resumed: an older one
// was resumed by the run after it, or its updates are stale by now.
func unfinishedJournals(dir, self string) []unfinished {
	if dir == "" {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(paths) // run ids sort by time
	for i := len(paths) - 1; i >= 0; i-- {
		rec, err := ReadJournal(paths[i])
		if err != nil || rec.RunID == "" {
			continue // not a journal
		}
		if rec.RunID == self {
			continue
		}
		if rec.FinishedAt != nil || rec.ResumedBy != "" || running(rec.PID) {
			return nil
		}
		return []unfinished{{path: paths[i], rec: rec}}
	}
	return nil
}

// running reports whether pid is another live process (a run still going).
func running(pid int) bool {
	if pid <= 0 || pid == os.Getpid() {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, os.ErrPermission)
}

// suspect is an in-flight item of a killed run, still open on the list: it
// may be in the cart already.
type suspect struct {
	item       JournalItem
	cartBefore *Cart
	from       string // the killed run
}

// resume re-applies the list updates of killed runs (step 1) and returns
// their in-flight items still open on the list (for step 2) and the
// journals to mark resumed. items is the list as read; changed says the
// list was updated (read it again).
func (r *run) resume(ctx context.Context, items []shoppinglist.Item) (suspects []suspect, olds []unfinished, changed bool) {
	olds = unfinishedJournals(r.cfg.JournalDir, r.id)
	if len(olds) == 0 {
		return nil, nil, false
	}
	byID := make(map[string]shoppinglist.Item, len(items))
	for _, it := range items {
		byID[it.ID] = it
	}
	var mine []unfinished
	for _, u := range olds {
		ours := false
		for _, ji := range u.rec.Items {
			if _, ok := byID[ji.ItemID]; ok {
				ours = true
			}
		}
		if !ours {
			continue // another list's run (same data directory): left for it
		}
		mine = append(mine, u)
		r.log.Warn("the previous run did not finish (killed?); resuming it", "run", u.rec.RunID, "journal", u.path)
		results := map[string]*report.ItemResult{}
		for _, ji := range u.rec.Items {
			results[ji.ItemID] = ji.Result
		}
		for _, ji := range u.rec.Items {
			cur, onList := byID[ji.ItemID]
			switch {
			case !onList:
			case ji.Status == ItemDone && ji.Result != nil && !ji.ListUpdated:
				res := *ji.Result
				if res.Outcome == report.OutcomeDuplicate {
					of := results[ji.DuplicateOf]
					if of == nil {
						continue
					}
					res.Outcome, res.ProductName, res.Price, res.URL = of.Outcome, of.ProductName, of.Price, of.URL
					res.Explanation = fmt.Sprintf("same as %q: %s", of.ItemName, of.Explanation)
				}
				if r.reapply(ctx, cur, res) {
					changed = true
				}
			case (ji.Status == ItemInFlight || ji.Status == ItemInterrupted && len(ji.Attempts) > 0) && cur.Status != shoppinglist.StatusCompleted && ji.DuplicateOf == "":
				suspects = append(suspects, suspect{item: ji, cartBefore: u.rec.CartBefore, from: u.rec.RunID})
			}
		}
	}
	return suspects, mine, changed
}

// reapply makes the list say what res says, unless it already does. It
// reports whether it changed the list.
func (r *run) reapply(ctx context.Context, cur shoppinglist.Item, res report.ItemResult) bool {
	fctx, cancel := r.finalCtx(ctx)
	defer cancel()
	var err error
	var update string
	switch res.Outcome {
	case report.OutcomeAdded:
		if cur.Status == shoppinglist.StatusCompleted {
			return false
		}
		update = UpdateCompleted
		err = r.cfg.Provider.MarkCompleted(fctx, cur.ID, shoppinglist.Added{ProductName: res.ProductName, Price: res.Price, URL: res.URL, Quantity: res.Quantity})
	case report.OutcomeNotFound:
		if cur.HasTag(shoppinglist.TagNotFound) || cur.Status == shoppinglist.StatusCompleted {
			return false
		}
		update = UpdateNotFound
		err = r.cfg.Provider.MarkNotFound(fctx, cur.ID, res.Explanation)
	case report.OutcomeFailed:
		if cur.HasTag(shoppinglist.TagFailed) || cur.Status == shoppinglist.StatusCompleted {
			return false
		}
		update = UpdateFailed
		err = r.cfg.Provider.MarkFailed(fctx, cur.ID, res.Explanation)
	default:
		return false
	}
	if err != nil && !errors.Is(err, shoppinglist.ErrItemGone) {
		r.log.Warn("a list update of the previous run could not be applied", "item", cur.Name, "update", update, "err", err)
		r.mu.Lock()
		r.unapplied = append(r.unapplied, report.UnappliedUpdate{ItemID: cur.ID, ItemName: cur.Name, Update: update + " (previous run)", Reason: err.Error()})
		r.mu.Unlock()
		return false
	}
	r.log.Info("applied a list update the previous run had not", "item", cur.Name, "update", update)
	return err == nil
}

// settleSuspects checks the killed runs' in-flight items against the cart
// as read now: an item whose product gained units since the killed run
// read the cart is completed from the cart line and removed from the plan.
func (r *run) settleSuspects(ctx context.Context, suspects []suspect, now *Cart, pl *plan) {
	if len(suspects) == 0 {
		return
	}
	if now == nil {
		r.log.Warn("the cart could not be read: the previous run's unfinished items are shopped again and may be in the cart twice; check the cart")
		r.addWarning(messages.Say("warning.resume_unchecked"))
		return
	}
	gained := map[string]int{} // line key → units gained since the killed run read the cart
	lines := map[string]CartLine{}
	for _, s := range suspects {
		if s.cartBefore == nil {
			continue
		}
		before := map[string]int{}
		for _, l := range s.cartBefore.Lines {
			before[lineKey(l)] += l.Quantity
		}
		for _, l := range now.Lines {
			k := lineKey(l)
			lines[k] = l
			if g := l.Quantity - before[k]; g > 0 && gained[k] < g {
				gained[k] = g
			}
		}
	}
	settled := map[string]bool{}
	for _, s := range suspects {
		product := shoppinglist.Parse(s.item.Name).Product
		for k, g := range gained {
			if g <= 0 || !mentions(lines[k].Name, product) {
				continue
			}
			l := lines[k]
			q := min(g, max(s.item.Quantity, 1))
			gained[k] -= q
			res := report.ItemResult{ItemID: s.item.ItemID, ItemName: s.item.Name, Quantity: q, Outcome: report.OutcomeAdded,
				ProductName: l.Name, Price: l.Price, URL: l.URL,
				Explanation: fmt.Sprintf("found in the cart: run %s was killed after adding it; not added again", s.from)}
			r.log.Info("an item the killed run was shopping is in the cart; completed from the cart, not shopped again", "item", s.item.Name, "product", l.Name)
			settled[s.item.ItemID] = true
			r.settleFromCart(ctx, pl, s.item.ItemID, res)
			break
		}
	}
	if len(settled) > 0 {
		kept := pl.shop[:0]
		for _, p := range pl.shop {
			if !settled[p.item.ID] {
				kept = append(kept, p)
			}
		}
		pl.shop = kept
	}
}

// settleFromCart records res for the planned item id (and its duplicates)
// and marks the list completed.
func (r *run) settleFromCart(ctx context.Context, pl *plan, id string, res report.ItemResult) {
	var p *planned
	for _, c := range pl.shop {
		if c.item.ID == id {
			p = c
		}
	}
	if p == nil {
		return
	}
	added := shoppinglist.Added{ProductName: res.ProductName, Price: res.Price, URL: res.URL, Quantity: res.Quantity}
	r.mu.Lock()
	if r.fromCart == nil {
		r.fromCart = map[string]bool{}
	}
	r.fromCart[id] = true
	r.mu.Unlock()
	fctx, cancel := r.finalCtx(ctx)
	defer cancel()
	r.record(id, res, false)
	r.listUpdated(id, p.item.Name, UpdateCompleted, r.cfg.Provider.MarkCompleted(fctx, id, added))
	for _, d := range p.duplicates {
		r.record(d.ID, report.ItemResult{ItemID: d.ID, ItemName: d.Name, Quantity: d.Quantity, Outcome: report.OutcomeDuplicate,
			Explanation: fmt.Sprintf("same as %q (%s)", p.item.Name, res.Outcome)}, false)
		r.listUpdated(d.ID, d.Name, UpdateCompleted, r.cfg.Provider.MarkCompleted(fctx, d.ID, added))
	}
}

func (r *run) isFromCart(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fromCart[id]
}

// mentions reports whether a cart line's name names product: every word of
// the product appears in it (a plural "s" ignored).
func mentions(line, product string) bool {
	lw := map[string]bool{}
	for _, w := range words(line) {
		lw[strings.TrimSuffix(w, "s")] = true
	}
	pw := words(product)
	if len(pw) == 0 {
		return false
	}
	for _, w := range pw {
		if !lw[strings.TrimSuffix(w, "s")] {
			return false
		}
	}
	return true
}

// markResumed records in the old journals that this run took them over.
func (r *run) markResumed(olds []unfinished) {
	for _, u := range olds {
		u.rec.ResumedBy = r.id
		data, err := json.MarshalIndent(u.rec, "", "  ")
		if err == nil {
			err = atomicfile.Write(u.path, append(data, '\n'), 0o644)
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Warn("could not mark the previous run's journal as resumed", "journal", u.path, "err", err)
		}
	}
}
