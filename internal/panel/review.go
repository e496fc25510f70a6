package panel

import (
	"context"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// The week's review stays on the page: a Wrong product's re-shop of one
// item shows on that item's line of the review it was found in (not as a
// run of its own that replaces it), the cart shown is the cart as read
// after each action, and after a restart the page shows the last run.

// Reshop is a Wrong product's run of one item while the review of the run
// it was found in stays on the page.
type Reshop struct {
	RunID string          `json:"run_id"`
	Item  string          `json:"item"`
	State runstatus.State `json:"state,omitempty"`
}

// pendingReshop is a Wrong product's action whose run has not started
// yet: the item it puts back (the run's started event names the run whose
// review it belongs to, not the item).
type pendingReshop struct {
	runID string // the run whose review shows the item
	item  string
}

// historyTimeout bounds a read of the run journals for the live view.
const historyTimeout = 10 * time.Second

// terminal says whether a run in state s is over.
func terminal(s runstatus.State) bool {
	switch s {
	case runstatus.StateReviewReady, runstatus.StateFailed, runstatus.StateCancelled, runstatus.StateIdle:
		return true
	}
	return false
}

// Restore shows the last run (from the history) when no run has been seen
// yet: after a restart the page shows the last run's review, not "No run
// yet". A Wrong product's re-shop of one item is shown on the review of
// the run it was found in.
func (p *Panel) Restore(ctx context.Context) error {
	if p.opts.History == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	runs, err := p.opts.History.Runs(ctx)
	if err != nil || len(runs) == 0 {
		return err
	}
	last, err := p.opts.History.Run(ctx, runs[0].ID)
	if err != nil {
		return err
	}
	// A re-shop is shown on the review it belongs to (and that one, if it
	// is a re-shop too, on its own), its item merged in.
	d, reshops := last, []RunDetail(nil)
	for len(reshops) < maxReshopChain && d.Pack != nil {
		parent := ""
		switch {
		case d.Kind == string(runstatus.RunReshop):
			parent = d.ReshopOf
		case d.Kind == "" && len(reshops) == 0 && len(runs) > 1 && len(d.Items) == 1:
			// A journal from before runs recorded their kind.
			if week, err := p.opts.History.Run(ctx, runs[1].ID); err == nil && reshopOf(week.Pack, d.Items[0].Name, d.StartedAt) {
				parent = week.ID
			}
		}
		if parent == "" {
			break
		}
		pd, err := p.opts.History.Run(ctx, parent)
		if err != nil {
			break
		}
		reshops, d = append(reshops, d), pd
	}
	snap := restored(d)
	for i := len(reshops) - 1; i >= 0; i-- {
		snap.mergeReshop(reshops[i].ID, reshops[i].Pack, itemResults(reshops[i]))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slots == nil {
		// The delivery slots as the last run read them after its review.
		for _, r := range []RunDetail{last, d} {
			if r.Pack != nil && r.Pack.Slots != nil {
				p.slots = r.Pack.Slots
				p.slotsSeq++
				break
			}
		}
	}
	if p.state.RunID != "" {
		return nil // a run began meanwhile
	}
	p.state = snap
	p.nudgeLocked()
	return nil
}

// maxReshopChain bounds how many re-shops of re-shops Restore follows.
const maxReshopChain = 10

// reshopOf says whether pack has a Wrong product action that put item back
// to be shopped again before a run that started at start.
func reshopOf(pack *reviewpack.Pack, item string, start time.Time) bool {
	if pack == nil {
		return false
	}
	for _, a := range pack.Actions {
		if a.Kind == reviewpack.ActWrongProduct && a.Reshop == item && !a.At.After(start) {
			return true
		}
	}
	return false
}

// itemResults are a past run's items as the live view has them; an item
// without a result was not shopped.
func itemResults(d RunDetail) []report.ItemResult {
	out := make([]report.ItemResult, 0, len(d.Items))
	for _, it := range d.Items {
		r := report.ItemResult{ItemID: it.ID, ItemName: it.Name, Quantity: it.Quantity, Outcome: report.OutcomeNotShopped}
		if it.Result != nil {
			r = *it.Result
		}
		out = append(out, r)
	}
	return out
}

// restored is the snapshot of a past run.
func restored(d RunDetail) Snapshot {
	s := emptySnapshot(d.ID)
	s.State = runstatus.State(d.State)
	if !terminal(s.State) {
		s.State = runstatus.StateCancelled // its process is gone
	}
	s.Items = itemResults(d)
	s.Progress = runstatus.Progress{Total: len(s.Items), Added: d.Added, NotFound: d.NotFound, Failed: d.Failed}
	for _, it := range s.Items {
		if it.Outcome != "" && it.Outcome != report.OutcomeNotShopped {
			s.Progress.Done++
		}
	}
	s.Pack = d.Pack
	s.Summary = &report.Summary{RunID: d.ID, StartedAt: d.StartedAt, Items: s.Items, Warnings: d.Warnings,
		WarningTexts: d.WarningTexts, CartURL: d.CartURL, Cancelled: s.State == runstatus.StateCancelled}
	s.setTotal()
	return s
}

// setTotal is the estimated total of the items added so far.
func (s *Snapshot) setTotal() {
	total, unknown := report.Summary{Items: s.Items}.EstimatedTotal()
	s.Total, s.TotalCents, s.TotalUnknown = "", int64(total), unknown
	if total > 0 {
		s.Total = money.Format(total)
	}
}

// setItem puts an item's latest result on the page (by item id, else by
// name: a re-shop's item is the review's), and reports whether it was new.
func (s *Snapshot) setItem(it report.ItemResult, byName bool) {
	for i := range s.Items {
		if s.Items[i].ItemID == it.ItemID || (byName && s.Items[i].ItemName == it.ItemName) {
			s.Items[i] = it
			return
		}
	}
	s.Items = append(s.Items, it)
}

// mergeReshop puts a finished re-shop (run runID, its pack and items) on
// the review: the item's line becomes the re-shop's, its actions go to the
// re-shop's run, and the cart is the one read after it.
func (s *Snapshot) mergeReshop(runID string, pack *reviewpack.Pack, items []report.ItemResult) {
	for _, it := range items {
		s.setItem(it, true)
	}
	s.setTotal()
	if s.Pack == nil || pack == nil {
		return
	}
	c := *s.Pack
	c.Items = append([]reviewpack.Item(nil), s.Pack.Items...)
	runs := make(map[string]string, len(s.ItemRuns)+len(pack.Items))
	for k, v := range s.ItemRuns {
		runs[k] = v
	}
	for _, it := range pack.Items {
		replaced := false
		for i := range c.Items {
			if c.Items[i].ItemID == it.ItemID || c.Items[i].ItemName == it.ItemName {
				runs[it.ItemID] = runID
				c.Items[i], replaced = it, true
			}
		}
		if !replaced {
			c.Items = append(c.Items, it)
			runs[it.ItemID] = runID
		}
	}
	if pack.Cart != nil {
		c.Cart = pack.Cart
	}
	s.Pack, s.ItemRuns = &c, runs
}

// reshopLocked folds an event of a Wrong product's re-shop into the review
// it belongs to; it reports whether the event was one.
func (p *Panel) reshopLocked(ev runstatus.Event) bool {
	if ev.RunID == "" || ev.RunID == p.state.RunID {
		return false
	}
	r := p.state.Reshop
	if r == nil || r.RunID != ev.RunID {
		pk := p.state.Pack
		if ev.ReshopOf == "" || pk == nil ||
			(ev.ReshopOf != pk.RunID && !mapHasValue(p.state.ItemRuns, ev.ReshopOf)) {
			return false
		}
		r = &Reshop{RunID: ev.RunID}
		if w := p.pending; w != nil && w.runID == pk.RunID {
			r.Item, p.pending = w.item, nil
		}
	}
	c := *r
	if ev.State != "" {
		c.State = ev.State
	}
	p.state.Reshop = &c
	if ev.Item != nil {
		p.state.setItem(*ev.Item, true)
		if ev.Item.Outcome != "" {
			delete(p.frames, ev.Item.ItemID)
		}
	}
	if ev.Kind == runstatus.KindRunFinished || ev.Summary != nil {
		var items []report.ItemResult
		if ev.Summary != nil {
			items = ev.Summary.Items
		}
		p.state.mergeReshop(ev.RunID, ev.Pack, items)
		p.state.Reshop = nil
	}
	return true
}

// cartChangedLocked folds an action on a cart into the pack shown when the
// action was on it (its run, or a re-shop of one of its items): its list
// of actions and the cart as read after it. A Wrong product's action
// awaits its re-shop.
func (p *Panel) cartChangedLocked(ev runstatus.Event) {
	pk := p.state.Pack
	if pk == nil || (ev.RunID != pk.RunID && !mapHasValue(p.state.ItemRuns, ev.RunID)) {
		return
	}
	c := *pk
	if ev.Action != nil {
		c.Actions = append(append([]reviewpack.Action(nil), pk.Actions...), *ev.Action)
		if ev.Action.Kind == reviewpack.ActWrongProduct && ev.Action.Reshop != "" {
			p.pending = &pendingReshop{runID: pk.RunID, item: ev.Action.Reshop}
		}
	}
	if ev.Cart != nil {
		c.Cart = ev.Cart
	}
	p.state.Pack = &c
}

func mapHasValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// runItems are the items of a run that just started, from its journal
// (written before the run's first event): the live view lists them all
// from the start. Nothing for another event or without a history.
func (p *Panel) runItems(ctx context.Context, ev runstatus.Event) []RunItem {
	if ev.Kind != runstatus.KindRunStarted || p.opts.History == nil || ev.RunID == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, historyTimeout)
	defer cancel()
	d, err := p.opts.History.Run(ctx, ev.RunID)
	if err != nil {
		p.log.Debug("the run's items could not be read at its start", "run", ev.RunID, "err", err)
		return nil
	}
	return d.Items
}

// answeredLocked notes on an item's card that its question was answered
// (msg: the run's words, "chose …", "search for …"): the card no longer
// says what the agent did before it asked.
func (p *Panel) answeredLocked(itemID, msg string) {
	a := p.state.Activity[itemID]
	a.Calls, a.Action, a.QuotaUntil = nil, "", time.Time{}
	a.Answered = true
	switch {
	case strings.HasPrefix(msg, "chose "):
		a.Answer = strings.TrimPrefix(msg, "chose ")
	case strings.HasPrefix(msg, "search for "):
		a.Answer = strings.TrimPrefix(msg, "search for ")
	}
	p.state.Activity[itemID] = a
}
