package shop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// People edit the list while a run goes: an item is re-read right before its
// agent starts (deleted or checked off → skipped; renamed → the new name is
// shopped), the list is read again when the queue drains (items added
// meanwhile are shopped in the same run), and an item deleted while its
// agent ran keeps its cart result without a list update.

// recheck reads the item again right before its agent starts. It returns
// false when the item is not to be shopped (its result is recorded).
func (r *run) recheck(ctx context.Context, p *planned) bool {
	fresh, err := r.cfg.Provider.Item(ctx, p.item.ID)
	switch {
	case errors.Is(err, shoppinglist.ErrItemGone):
		r.log.Info("item removed from the list during the run; not shopped", "item", p.item.Name)
		r.skip(p, report.SkippedRemoved)
		return false
	case err != nil:
		if ctx.Err() == nil {
			r.log.Warn("could not read the item again before shopping it; shopping it as planned", "item", p.item.Name, "err", err)
		}
		return true
	case fresh.Status == shoppinglist.StatusCompleted:
		r.log.Info("item checked off during the run; not shopped", "item", p.item.Name)
		r.skip(p, report.SkippedCheckedOff)
		return false
	case fresh.Name == "":
		r.skip(p, report.SkippedNoName)
		return false
	case shoppinglist.NameTooLong(fresh.Name):
		r.skip(p, report.SkippedTooLong(utf8.RuneCountInString(strings.TrimSpace(fresh.Name))))
		return false
	case fresh.Name != p.item.Name:
		r.log.Info("item renamed during the run; shopping the new name", "item", p.item.Name, "now", fresh.Name)
		p.item.Name = fresh.Name
		p.item.Product = shoppinglist.Parse(fresh.Name).Product
		if fresh.Product != "" {
			p.item.Product = fresh.Product
		}
		p.item.Quantity = max(fresh.Quantity, 1)
		name, q := p.item.Name, p.item.Quantity
		r.journal.Update(func(rec *JournalRecord) {
			if ji := rec.item(p.item.ID); ji != nil {
				ji.Name, ji.Quantity = name, q
			}
		})
	}
	if err == nil {
		// The household's rules as the list says now (#nosub written, or
		// "no substitute" put in the description, before the item's turn).
		p.item.Tags, p.item.Description = fresh.Tags, fresh.Description
	}
	return true
}

// skip records a planned item (and its duplicates) as skipped; the list is
// not changed.
func (r *run) skip(p *planned, why string) {
	r.record(p.item.ID, report.ItemResult{ItemID: p.item.ID, ItemName: p.item.Name, Quantity: p.item.Quantity,
		Outcome: report.OutcomeSkipped, Explanation: why}, true)
	for _, d := range p.duplicates {
		r.record(d.ID, report.ItemResult{ItemID: d.ID, ItemName: d.Name, Quantity: d.Quantity, Outcome: report.OutcomeSkipped,
			Explanation: fmt.Sprintf("same as %q, which was skipped: %s", p.item.Name, why)}, true)
	}
}

// skipUnnamed records the items whose name is only tags or empty, or too
// long to shop (the name reported clipped).
func (r *run) skipUnnamed(items []shoppinglist.Item) {
	for _, it := range items {
		why := report.SkippedNoName
		if shoppinglist.NameTooLong(it.Name) {
			n := utf8.RuneCountInString(strings.TrimSpace(it.Name))
			why = report.SkippedTooLong(n)
			r.log.Warn("an item's name is too long; it is left as written and not shopped", "item", it.ID, "characters", n, "max", shoppinglist.MaxNameRunes)
		} else {
			r.log.Warn("an item's name is only tags or empty; it is left as written and not shopped", "item", it.ID, "tags", it.Tags)
		}
		r.record(it.ID, report.ItemResult{ItemID: it.ID, ItemName: it.Name, Quantity: it.Quantity,
			Outcome: report.OutcomeSkipped, Explanation: why}, true)
	}
}

// listUpdated handles the outcome of one list update (update is "mark
// completed"…): an item deleted meanwhile is the person's decision (info);
// any other failure is kept for the summary and the review.
func (r *run) listUpdated(id, name, update string, err error) {
	switch {
	case err == nil:
	case errors.Is(err, shoppinglist.ErrItemGone):
		r.log.Info("item removed from the list during the run; its result is reported, the list is not updated", "item", name, "update", update)
	case errors.Is(err, shoppinglist.ErrUpdatePending):
		// Queued by the provider: it lands when the list is reachable again;
		// flushPending asks what became of it before the summary.
		r.log.Warn("a list update is queued until the list is reachable again", "item", name, "update", update, "err", err)
		r.mu.Lock()
		if r.pending == nil {
			r.pending = make(map[string]report.UnappliedUpdate)
		}
		r.pending[id] = report.UnappliedUpdate{ItemID: id, ItemName: name, Update: update}
		r.mu.Unlock()
		return
	default:
		r.log.Warn("a list update could not be applied", "item", name, "update", update, "err", err)
		r.mu.Lock()
		r.unapplied = append(r.unapplied, report.UnappliedUpdate{ItemID: id, ItemName: name, Update: update, Reason: err.Error()})
		r.mu.Unlock()
		return
	}
	r.journal.Update(func(rec *JournalRecord) {
		if ji := rec.item(id); ji != nil {
			ji.ListUpdated = true
		}
	})
}

// flushPending asks a provider that queues updates (shoppinglist.Flusher) to
// apply them now, before the summary: a queued update that landed counts as
// applied, one that did not is an unapplied update with the provider's
// reason, and one whose item a person deleted meanwhile is their decision.
func (r *run) flushPending(ctx context.Context) {
	f, ok := r.cfg.Provider.(shoppinglist.Flusher)
	if !ok {
		return
	}
	r.mu.Lock()
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	failed := f.Flush(ctx)
	for id, u := range pending {
		err, bad := failed[id]
		switch {
		case !bad:
			r.listUpdated(id, u.ItemName, u.Update, nil)
		case errors.Is(err, shoppinglist.ErrItemGone):
			r.listUpdated(id, u.ItemName, u.Update, err)
		default:
			r.log.Warn("a queued list update could not be applied before the run ended", "item", u.ItemName, "update", u.Update, "err", err)
			u.Reason = err.Error()
			r.mu.Lock()
			r.unapplied = append(r.unapplied, u)
			r.mu.Unlock()
		}
	}
	for id, err := range failed {
		if _, ours := pending[id]; !ours && !errors.Is(err, shoppinglist.ErrItemGone) {
			r.log.Warn("a queued list update could not be applied", "item", id, "err", err)
		}
	}
}

func (r *run) unappliedUpdates() []report.UnappliedUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]report.UnappliedUpdate(nil), r.unapplied...)
}

// moreItems reads the list again when the queue has drained and plans the
// open items added since the run read it (known holds every id seen, and
// keys the products in the run). Items that repeat a product of the run
// are skipped (left on the list), items without a name reported.
func (r *run) moreItems(ctx context.Context, known map[string]bool, keys map[string]string) []*planned {
	if len(r.cfg.Items) > 0 || ctx.Err() != nil {
		return nil // a run limited to named items takes no others
	}
	items, err := r.cfg.Provider.Items(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("could not read the list again for items added during the run", "err", err)
		}
		return nil
	}
	var fresh []shoppinglist.Item
	for _, it := range items {
		if !known[it.ID] {
			known[it.ID] = true
			fresh = append(fresh, it)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	np := planItems(fresh, r.cfg.RetryTagged, r.cfg.OnlyTagged, nil)
	var out []*planned
	var add []JournalItem
	for _, p := range np.shop {
		if of, ok := keys[p.item.Key()]; ok {
			r.addToJournal(journalItems(p)...)
			r.skip(p, fmt.Sprintf("added during the run while %q was already being shopped; left on the list", of))
			continue
		}
		keys[p.item.Key()] = p.item.Name
		add = append(add, journalItems(p)...)
		out = append(out, p)
	}
	r.addToJournal(add...)
	for _, it := range np.unnamed {
		r.addToJournal(JournalItem{ItemID: it.ID, Name: report.Clip(it.Name, report.MaxNameRunes), Status: ItemPending})
	}
	r.skipUnnamed(np.unnamed)
	if len(out) > 0 {
		r.log.Info("items added to the list during the run are shopped too", "count", len(out))
	}
	return out
}

// journalItems are the journal entries of a planned item and its duplicates.
func journalItems(p *planned) []JournalItem {
	out := []JournalItem{{ItemID: p.item.ID, Name: p.item.Name, Quantity: p.item.Quantity, Status: ItemPending}}
	for _, d := range p.duplicates {
		out = append(out, JournalItem{ItemID: d.ID, Name: d.Name, Quantity: d.Quantity, Status: ItemPending, DuplicateOf: p.item.ID})
	}
	return out
}

// addToJournal appends items to the journal and the run's total.
func (r *run) addToJournal(items ...JournalItem) {
	if len(items) == 0 {
		return
	}
	r.mu.Lock()
	r.progress.Total += len(items)
	r.mu.Unlock()
	r.journal.Update(func(rec *JournalRecord) { rec.Items = append(rec.Items, items...) })
}
