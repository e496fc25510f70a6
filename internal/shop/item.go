package shop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Reasons the run itself gives failed items (the agent's reasons are kept
// as they are: model_error, browser_error, max_turns_exceeded…).
const (
	// ReasonAuthRecoveryFailed: the session expired and signing in again
	// did not help.
	ReasonAuthRecoveryFailed = "auth_recovery_failed"
	// ReasonTooManyRestarts: the household's custom answers restarted the
	// item more than MaxRestarts times.
	ReasonTooManyRestarts = "too_many_restarts"
)

// itemRun is one planned item being shopped.
type itemRun struct {
	r       *run
	p       *planned
	started time.Time

	// Owned by the item's goroutine.
	query    string
	fromUser bool
	attempts int
	turns    int
	usage    report.Usage

	// policy is the household's rule for the item (its tags and the panel).
	policy shoppinglist.Policy

	mu        sync.Mutex
	questions int
	// chosen is the household's last product answer (nil: none).
	chosen   *chosenOption
	chosenBy string // report.ChosenBy…, set by the household's answer

	// remembered is the item's product in the memory when it started.
	remembered *Remembered

	// Set by replay when the item goes to the agent: the tab it leaves on
	// the remembered product (the first attempt takes it), what it found,
	// and what the summary says about it.
	handTab    Tab
	note       *ReplayNote
	replayInfo string
	// replayChanged: the replay handed over because the product is not
	// the remembered one as it was (renamed, repriced, gone, out of stock).
	replayChanged bool

	// What the item's tabs did to the cart (cartattr.go): the requests of
	// its finished attempts' tabs, and the current attempt's tab.
	cartMu  sync.Mutex
	cart    []browser.CartRequest
	tab     Tab
	tabBase int // the tab's requests before the item took it (another item's)
	// refused are the adds the item's cart limit stopped (cartLimit), and
	// the packages the item asked for at the last one; refusedWrong, the
	// adds of a product marked wrong.
	refused      []store.CartChange
	refusedWant  int
	refusedWrong []WrongProduct
	// addedTexts are what the tabs' pages showed of the products they
	// added (store.CartChange.ProductText), by product id: how each is
	// sold, for the cart limit of an add whose text was not read.
	addedTexts map[string]string

	// rejected are the products marked wrong for the item (rejected.go);
	// corrected is the quantity the household set in a review that still
	// applies (Remembered.corrected; 0: none). Both set when it starts.
	rejected  []WrongProduct
	corrected int

	// Take over (itemtakeover.go): the tab kept for a person after its
	// attempt, and why; requested, a person asked for the running item's
	// tab (its agent was stopped); takenOver, the household added the
	// product in it.
	held       Tab
	heldReason string
	requested  atomic.Bool
	unregister func() // the running tab's registration on the Desk
	takenOver  bool   // under mu
}

// attemptOut is what one attempt produced.
type attemptOut struct {
	end    *ending
	res    agent.Result
	tabErr error // the tab could not be opened
	gen    int   // auth generation when the attempt started
}

// failKind says how to recover from a failed attempt.
type failKind int

const (
	failFinal failKind = iota
	failTransient
	failCrash
	failAuth
)

func (o attemptOut) err() error {
	if o.tabErr != nil {
		return o.tabErr
	}
	return o.res.Err
}

func (o attemptOut) kind() failKind {
	err := o.err()
	switch {
	case errors.Is(err, browser.ErrAuthExpired):
		return failAuth
	case errors.Is(err, browser.ErrBrowserGone):
		return failCrash
	case o.tabErr != nil:
		return failTransient
	}
	switch string(o.res.Reason) {
	case "model_error", "browser_error":
		return failTransient
	}
	return failFinal
}

// reason is the failure reason of the attempt, for the list and the summary.
func (o attemptOut) reason() string {
	if o.tabErr != nil {
		return failureText("browser_error", "could not open a tab: "+o.tabErr.Error())
	}
	if t := o.res.FailureText(); t != "" {
		return t
	}
	if o.res.Reason != "" {
		return string(o.res.Reason)
	}
	return "the agent stopped without a result"
}

// shopItem shops one planned item to its final outcome (or until ctx ends).
func (r *run) shopItem(ctx context.Context, p *planned) {
	if !r.recheck(ctx, p) {
		return
	}
	it := &itemRun{r: r, p: p, query: p.item.Product, started: r.now(), policy: r.policyOf(p.item)}
	if r.cfg.Recall != nil {
		// Before the run records anything for the item: the review pack
		// compares the price with the last time's.
		if rem, ok := r.cfg.Recall.Recall(p.item.Name); ok {
			it.remembered = &rem
		}
	}
	it.rejected = r.rejectedOf(p.item.Name)
	if rem := it.remembered; rem != nil {
		it.corrected = rem.corrected(max(p.item.Quantity, 1))
	}
	started := it.started
	// The duplicates share the item's fate: they are in flight with it.
	r.journal.Update(func(rec *JournalRecord) {
		for _, id := range it.ids() {
			if ji := rec.item(id); ji != nil {
				ji.Status = ItemInFlight
				ji.StartedAt = &started
			}
		}
	})
	r.publish(runstatus.KindItemStarted, it.pendingResult(), "")
	r.log.Info("item started", "item", p.item.Name, "policy", it.policy.String())
	if it.policy.Ask && r.cfg.Resolver == nil {
		// Nobody can be asked: the household's "always ask" is kept by not
		// shopping the item (left on the list as it is).
		it.finish(ctx, it.resultFrom(ending{kind: endSkipped, explanation: askNobody}))
		return
	}
	if it.replay(ctx) {
		return
	}
	if p.toAgent != nil {
		release := sync.OnceFunc(p.toAgent(ctx))
		p.release = release
		defer release()
	}
	defer func() {
		if it.unregister != nil {
			it.unregister()
		}
	}()
	defer func() {
		if it.handTab != nil { // the item ended before an attempt took it
			_ = it.handTab.Close()
		}
	}()

	retries := map[failKind]int{} // retries used, per cause
	restarts := 0
	for {
		if ctx.Err() != nil {
			it.interrupted()
			return
		}
		out := it.attempt(ctx)
		if it.held != nil {
			// The agent gave up (or a person asked for its tab): the tab
			// waits for the household, then the item ends as it decided.
			it.finish(ctx, it.handOver(ctx, it.agentResult(out)))
			return
		}
		if e := out.end; e != nil {
			switch e.kind {
			case endAdded, endNotFound:
				it.finish(ctx, it.resultFrom(*e))
				return
			case endFailed:
				it.finish(ctx, it.failed(e.explanation))
				return
			case endSkipped:
				it.finish(ctx, it.resultFrom(*e))
				return
			case endRestart:
				if restarts >= MaxRestarts {
					it.finish(ctx, it.failed(ReasonTooManyRestarts+": the household asked to search again too many times; last query "+e.query))
					return
				}
				restarts++
				it.mu.Lock()
				it.query, it.fromUser = e.query, true
				it.mu.Unlock()
				it.setChosenBy(report.ChosenByHouseholdQuery)
				r.log.Info("item restarted with the household's query", "item", p.item.Name, "query", e.query)
				continue
			}
		}
		if ctx.Err() != nil || r.browserDead() != nil {
			it.interrupted()
			return
		}
		kind := out.kind()
		retry := kind != failFinal && retries[kind] < MaxAttempts-1
		r.log.Warn("item attempt failed", "item", p.item.Name, "attempt", it.attempts, "reason", out.reason(), "retry", retry)
		if !retry {
			if kind == failAuth {
				it.finish(ctx, it.failed(failureText(ReasonAuthRecoveryFailed, "the session expired again after signing in: "+out.reason())))
			} else {
				it.finish(ctx, it.failed(out.reason()))
			}
			return
		}
		retries[kind]++
		if kind == failAuth {
			if err := r.relogin(ctx, out.gen); err != nil {
				if ctx.Err() != nil {
					it.interrupted()
					return
				}
				it.finish(ctx, it.failed(failureText(ReasonAuthRecoveryFailed, err.Error())))
				return
			}
		}
	}
}

// attempt runs one agent on a fresh tab.
func (it *itemRun) attempt(ctx context.Context) attemptOut {
	r := it.r
	out := attemptOut{gen: r.authGeneration()}
	it.attempts++
	a := Attempt{Query: it.query, StartedAt: r.now()}
	defer func() {
		a.Duration = r.now().Sub(a.StartedAt)
		id := it.p.item.ID
		r.journal.Update(func(rec *JournalRecord) {
			if ji := rec.item(id); ji != nil {
				ji.Attempts = append(ji.Attempts, a)
			}
		})
	}()

	tab, onPage := it.handTab, it.handTab != nil
	it.handTab = nil
	if tab == nil {
		var err error
		tab, err = r.host.NewTab(ctx)
		r.noteNewTab(err)
		if err != nil {
			out.tabErr = fmt.Errorf("open a browser tab: %w", err)
			a.Reason, a.Error = "browser_error", out.tabErr.Error()
			return out
		}
	}
	it.setTab(tab)
	defer func() {
		a.Cart = it.keepTabCart(tab)
		if reason := it.offerReason(ctx, out); reason != "" {
			it.held, it.heldReason = tab, reason // shopItem offers it, then closes it
			return
		}
		if err := tab.Close(); err != nil {
			r.log.Debug("closing a tab failed", "item", it.p.item.Name, "err", err)
		}
	}()
	if err := tab.SetItem(ctx, it.p.item.Name); err != nil {
		r.log.Debug("setting the banner failed", "item", it.p.item.Name, "err", err)
	}

	// Code opens the search results (and answers a postal-code dialog the
	// profile can answer) before the model's first call: the model's first
	// screenshot is the results, not a blank tab to navigate from. A
	// replay's hand-over keeps its product page; an item with a replay
	// note and no tab on the page opens that page by its own first call.
	replay := it.replayNoteFor(onPage)
	search := r.cfg.Store.SearchURL(it.query)
	onSearch := !onPage && replay == nil && it.openSearch(ctx, tab, search)
	data := PromptData{
		StoreName:     r.storeName(),
		Host:          hostOf(r.cfg.Store.HomeURL),
		SearchURL:     search,
		OnSearch:      onSearch,
		ItemName:      it.p.item.Name,
		Query:         it.query,
		QueryFromUser: it.fromUser,
		Quantity:      it.packagesFor(""),
		Pieces:        it.p.item.Pieces && it.corrected == 0,
		PostalCode:    r.cfg.PostalCode,
		CanAsk:        r.cfg.Resolver != nil,
		NoSubstitute:  it.policy.NoSub,
		AlwaysAsk:     it.policy.Ask,
		AnyBrand:      it.policy.AnyBrand,
		StoreHint:     r.cfg.Store.Hint,
		Replay:        replay,
		Earlier:       it.earlierAdds(),
		MaybeAdded:    it.maybeAdded(r.cfg.Store.CartSetup),
	}
	data.Wrong = it.rejected
	if r.cfg.Preferences != nil && !it.fromUser {
		if pref, ok := r.cfg.Preferences.Lookup(it.p.item.Name); ok {
			data.Preferred = &pref
		}
	}
	goal, err := r.prompts.Goal(r.cfg.Store.Name, data)
	if err != nil {
		// A template bug: no agent can run; fail the item rather than guess.
		out.res = agent.Result{Err: err}
		a.Reason, a.Error = "prompt_error", err.Error()
		return out
	}

	att := &attempt{}
	ts := &toolSet{item: it, att: att, resolver: r.cfg.Resolver, onEnd: it.onReport}
	cfg := r.agentCfg
	if cfg.TraceDir != "" {
		// Each agent run gets its own trace directory; the journal names it.
		a.Trace = filepath.Join(r.id, fmt.Sprintf("%s-%s-%d", it.p.item.ID, slug(it.p.item.Name), it.attempts))
		cfg.TraceDir = filepath.Join(cfg.TraceDir, a.Trace)
	}
	if w := r.cfg.Watcher; w != nil {
		item := it.p.item
		cfg.Observe = func(o agent.Observation) { w.Watch(item.ID, item.Name, o) }
	}
	if cfg.Confirmer != nil {
		cfg.Confirmer = itemConfirmer{inner: cfg.Confirmer, it: it}
	}
	res := r.runAgent(it.requestable(ctx), cfg, goal, tab, ts.tools())
	out.res = res
	out.end = att.ending()

	u := usageOf(res.Usage)
	it.turns += res.Turns
	it.usage = addUsage(it.usage, u)
	r.addUsage(u)
	a.Turns, a.Usage, a.Tool = res.Turns, u, res.Tool
	if out.end != nil {
		a.Tool = out.end.tool
	}
	a.Reason = string(res.Reason)
	if res.Err != nil {
		a.Error = res.Err.Error()
	}
	return out
}

// onReport records a terminal report in the journal and updates the list
// the moment it arrives (with a context that survives the run's
// cancellation: the report is true). The journal says done first, so a run
// killed at any moment leaves no item the list marked but the journal calls
// unfinished; an item whose list update had not landed (list_updated false)
// is updated by the next run.
func (it *itemRun) onReport(ctx context.Context, e ending) {
	r := it.r
	res := it.resultFrom(e)
	now := r.now()
	r.journal.Update(func(rec *JournalRecord) {
		if ji := rec.item(it.p.item.ID); ji != nil {
			ji.Status = ItemDone
			ji.Result = &res
		}
		for _, d := range it.p.duplicates {
			if ji := rec.item(d.ID); ji != nil {
				dr := it.duplicateResult(d, res.Outcome)
				ji.Status = ItemDone
				ji.Result = &dr
				ji.FinishedAt = &now
			}
		}
	})
	fctx, cancel := r.finalCtx(ctx)
	defer cancel()
	for i, id := range it.ids() {
		name := it.p.item.Name
		if i > 0 {
			name = it.p.duplicates[i-1].Name
		}
		switch e.kind {
		case endAdded:
			r.listUpdated(id, name, UpdateCompleted, r.cfg.Provider.MarkCompleted(fctx, id, e.added))
		case endNotFound:
			expl := e.explanation
			if i > 0 {
				expl = fmt.Sprintf("same as %q: %s", it.p.item.Name, expl)
			}
			r.listUpdated(id, name, UpdateNotFound, r.cfg.Provider.MarkNotFound(fctx, id, expl))
		}
	}
	if e.kind == endAdded {
		r.rememberAdded(it, e.added)
	}
}

// ids are the list item IDs this run updates: the item and its duplicates.
func (it *itemRun) ids() []string {
	ids := []string{it.p.item.ID}
	for _, d := range it.p.duplicates {
		ids = append(ids, d.ID)
	}
	return ids
}

// duplicateResult is the result of duplicate d when the item it repeats
// ended with outcome.
func (it *itemRun) duplicateResult(d shoppinglist.Item, outcome report.Outcome) report.ItemResult {
	return report.ItemResult{
		ItemID: d.ID, ItemName: d.Name, Quantity: d.Quantity, Outcome: report.OutcomeDuplicate,
		Explanation: fmt.Sprintf("same as %q (%s)", it.p.item.Name, outcome),
	}
}

// finish records the item's final result: list (for failures; reports
// updated it already), results, progress, journal, event; then its
// duplicates.
func (it *itemRun) finish(ctx context.Context, res report.ItemResult) {
	r := it.r
	if res.Outcome == report.OutcomeAdded {
		it.mu.Lock()
		res.ChosenBy = it.chosenBy
		it.mu.Unlock()
		if how := it.addedHow(); how.Substitute && res.ChosenBy == report.ChosenByHousehold {
			res.ChosenBy = report.ChosenBySubstitute
		}
		if rem := it.remembered; rem != nil && sameProduct(*rem, res) {
			res.PreviousPrice = money.Parse(rem.Price)
		}
	}
	// A skipped item is left on the list as it is: no update to make.
	r.record(it.p.item.ID, res, res.Outcome == report.OutcomeSkipped)
	for i, w := range res.Warnings {
		r.log.Warn("the item's cart changes differ from its result", "item", res.ItemName, "warning", w)
		t := res.WarningText(i)
		if t.Key == "" {
			t = messages.Say("warning.plain", "text", w)
		}
		t.About = res.ItemName
		r.addWarning(t)
	}
	if res.NotAsked {
		r.log.Warn("the item was added without asking, although it says always ask", "item", res.ItemName)
		t := messages.Say(report.NotAskedKey)
		t.About = res.ItemName
		r.addWarning(t)
	}
	r.log.Info("item finished", "item", res.ItemName, "outcome", res.Outcome, "product", res.ProductName,
		"price", res.Price.Text, "turns", res.Turns, "attempts", res.Attempts, "duration", res.Duration.Round(time.Millisecond), "explanation", res.Explanation)
	for _, d := range it.p.duplicates {
		r.record(d.ID, it.duplicateResult(d, res.Outcome), res.Outcome == report.OutcomeSkipped)
	}
	if res.Outcome == report.OutcomeFailed {
		fctx, cancel := r.finalCtx(ctx)
		defer cancel()
		for i, id := range it.ids() {
			reason, name := res.Explanation, it.p.item.Name
			if i > 0 {
				reason = fmt.Sprintf("same as %q: %s", it.p.item.Name, reason)
				name = it.p.duplicates[i-1].Name
			}
			r.listUpdated(id, name, UpdateFailed, r.cfg.Provider.MarkFailed(fctx, id, reason))
		}
	}
}

// The list updates a run makes, as UnappliedUpdate.Update names them.
const (
	UpdateCompleted = "mark completed"
	UpdateNotFound  = "tag #404"
	UpdateFailed    = "tag #failed"
)

// record stores a final result, counts it and publishes item_finished. The
// journal says done; listDone says the list needs no update for it.
func (r *run) record(id string, res report.ItemResult, listDone bool) {
	res = res.Bounded() // the summary, journal and events carry bounded texts
	now := r.now()
	r.mu.Lock()
	r.results[id] = res
	r.progress.Done++
	switch res.Outcome {
	case report.OutcomeAdded:
		r.progress.Added++
	case report.OutcomeNotFound:
		r.progress.NotFound++
	case report.OutcomeFailed:
		r.progress.Failed++
	}
	r.mu.Unlock()
	r.journal.Update(func(rec *JournalRecord) {
		if ji := rec.item(id); ji != nil {
			ji.Status = ItemDone
			ji.Result = &res
			ji.FinishedAt = &now
			ji.ListUpdated = ji.ListUpdated || listDone
		}
	})
	out := res
	r.publish(runstatus.KindItemFinished, &out, "")
}

// interrupted leaves an unfinished item alone on the list.
func (it *itemRun) interrupted() {
	r := it.r
	r.log.Info("item interrupted; left unchanged on the list", "item", it.p.item.Name)
	ids := it.ids()
	r.journal.Update(func(rec *JournalRecord) {
		for _, id := range ids {
			if ji := rec.item(id); ji != nil && ji.Status != ItemDone {
				ji.Status = ItemInterrupted
			}
		}
	})
}

// confirmerBy is a Confirmer that also says who answered (ask.Asker, the
// panel, the phone).
type confirmerBy interface {
	ConfirmBy(ctx context.Context, explanation, action string) (bool, string, error)
}

// itemConfirmer asks the run's Confirmer and journals the item's answer:
// the action, allowed or not, and who answered when known.
type itemConfirmer struct {
	inner agent.Confirmer
	it    *itemRun
}

func (c itemConfirmer) Confirm(ctx context.Context, explanation, action string) (bool, error) {
	var yes bool
	var by string
	var err error
	if cb, ok := c.inner.(confirmerBy); ok {
		yes, by, err = cb.ConfirmBy(ctx, explanation, action)
	} else {
		yes, err = c.inner.Confirm(ctx, explanation, action)
	}
	if err == nil {
		c.it.confirmed(Confirmation{Action: report.Clip(action, report.MaxTextRunes), Allowed: yes, By: by, At: c.it.r.now()})
	}
	return yes, err
}

// confirmed journals an answer to one of the item's safety confirmations.
func (it *itemRun) confirmed(c Confirmation) {
	if it.r.journal == nil {
		return
	}
	ids := it.ids()
	it.r.journal.Update(func(rec *JournalRecord) {
		for _, id := range ids {
			if ji := rec.item(id); ji != nil {
				ji.Confirmations = append(ji.Confirmations, c)
			}
		}
	})
}

// answeredBy journals who answered the item's question, when known.
func (it *itemRun) answeredBy(by string) {
	if by == "" || it.r.journal == nil {
		return
	}
	ids := it.ids()
	it.r.journal.Update(func(rec *JournalRecord) {
		for _, id := range ids {
			if ji := rec.item(id); ji != nil {
				ji.AnsweredBy = append(ji.AnsweredBy, by)
			}
		}
	})
}

// setChosenBy notes how the household chose the item's product.
func (it *itemRun) setChosenBy(how string) {
	it.mu.Lock()
	defer it.mu.Unlock()
	it.chosenBy = how
}

// sameProduct: the result's product is the remembered one (the same page,
// or the same name when either has no address).
func sameProduct(rem Remembered, res report.ItemResult) bool {
	if p := urlPath(rem.URL); p != "" && urlPath(res.URL) != "" {
		return p == urlPath(res.URL)
	}
	return strings.EqualFold(strings.TrimSpace(rem.Name), strings.TrimSpace(res.ProductName))
}

func (it *itemRun) askAllowed() bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.questions >= MaxQuestions {
		return false
	}
	it.questions++
	return true
}

// pendingResult describes the item before it has an outcome (for events).
func (it *itemRun) pendingResult() *report.ItemResult {
	res := &report.ItemResult{ItemID: it.p.item.ID, ItemName: it.p.item.Name, Quantity: it.p.item.Quantity}
	if it.remembered != nil && it.remembered.URL != "" && it.r.cfg.Replay != "" && it.r.cfg.Replay != ReplayOff && !it.policy.Ask {
		res.Replay = ReplayPending
	}
	return res
}

func (it *itemRun) base() report.ItemResult {
	return report.ItemResult{
		ItemID: it.p.item.ID, ItemName: it.p.item.Name, Quantity: it.p.item.Quantity,
		Turns: it.turns, Attempts: it.attempts, Duration: it.r.now().Sub(it.started), StartedAt: it.started,
		Replay: it.replayInfo, ReplayChanged: it.replayChanged,
	}
}

func (it *itemRun) resultFrom(e ending) report.ItemResult {
	res := it.base()
	switch e.kind {
	case endAdded:
		res.Outcome = report.OutcomeAdded
		res.Matches = e.matches
		res.ProductName = e.added.ProductName
		res.Price = e.added.Price
		res.URL = e.added.URL
		if e.added.Quantity > 0 {
			res.Quantity = e.added.Quantity
		}
	case endFailed:
		res.Outcome = report.OutcomeFailed
		res.Explanation = e.explanation
	case endSkipped:
		res.Outcome = report.OutcomeSkipped
		res.Explanation = e.explanation
	default:
		res.Outcome = report.OutcomeNotFound
		res.Explanation = e.explanation
	}
	for _, w := range it.cartWarnings(res) {
		res.AddWarning(w)
	}
	if e.kind == endAdded && it.policy.Ask && !it.answered() {
		res.NotAsked = true
	}
	return res
}

// askNobody explains an "always ask" item no channel could ask about.
const askNobody = "the item says always ask (#ask), but no channel can ask the household (Telegram, the phone, the panel): left on the list"

// policyOf is the item's policy: its tags and the panel's.
func (r *run) policyOf(item shoppinglist.Item) shoppinglist.Policy {
	pol := item.Policy()
	if r.cfg.Policies != nil {
		pol = pol.Or(r.cfg.Policies.Policy(item.Name))
	}
	return pol
}

// answered reports whether the household chose a product for the item.
func (it *itemRun) answered() bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.chosen != nil
}

func (it *itemRun) failed(reason string) report.ItemResult {
	res := it.base()
	res.Outcome = report.OutcomeFailed
	res.Explanation = reason
	for _, w := range it.cartWarnings(res) {
		res.AddWarning(w)
	}
	return res
}

// usageOf converts the agent's usage.
func usageOf(u agent.Usage) report.Usage {
	return report.Usage{
		PromptTokens: int64(u.PromptTokens),
		OutputTokens: int64(u.OutputTokens),
		TotalTokens:  int64(u.TotalTokens),
		CostUSD:      float64(u.CostUSD),
		CostUnknown:  u.CostUnknown,
	}
}

// hostOf is the host name of a URL ("" when it has none).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// slug is a file-name-safe short form of s.
func slug(s string) string {
	w := words(s)
	out := strings.Join(w, "-")
	if len(out) > 40 {
		out = out[:40]
	}
	if out == "" {
		out = "item"
	}
	return out
}
