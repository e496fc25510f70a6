package shop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Result is what a run produced.
type Result struct {
	Summary report.Summary `json:"summary"`
	Review  *Review        `json:"review,omitempty"`
	// Pack is the review pack (nil for a run that could not plan).
	Pack  *reviewpack.Pack `json:"pack,omitempty"`
	State runstatus.State  `json:"state"`
	// Error says why the run failed or was cancelled.
	Error       string `json:"error,omitempty"`
	JournalPath string `json:"journal,omitempty"`
	// SkippedTagged counts open items left alone because an earlier run
	// tagged them #404/#failed.
	SkippedTagged int `json:"skipped_tagged"`
	Logins        int `json:"logins"`
	Relaunches    int `json:"browser_relaunches"`
	// NotStarted: the run could not begin shopping (the list could not be
	// read, the browser did not start). Nothing was shopped and
	// nothing is left behind: no summary for the list, no journal; the
	// error says why.
	NotStarted bool `json:"not_started,omitempty"`
}

// ErrCancelled is returned (wrapped) by Run when its context was cancelled.
var ErrCancelled = errors.New("the shopping run was stopped before it finished")

// ErrListNotWritable is returned (wrapped) by Run when the list provider
// says the list cannot be updated: nothing is shopped.
var ErrListNotWritable = errors.New("the shopping list cannot be updated, so nothing was shopped (a run that cannot mark its items would shop them again next time)")

// WritableChecker is a list provider that can tell before a run whether
// its list can be updated (the YAML file: permissions of the file and its
// directory).
type WritableChecker interface {
	CheckWritable(ctx context.Context) error
}

// Run performs one shopping run (see the package documentation).
//
// The error is nil when the run finished — whatever the items' outcomes.
// It is non-nil when the run could not run (the list could not be read, the
// browser did not start, signing in failed: Result.State is failed) or was
// stopped (ctx cancelled: State is cancelled, the error wraps ErrCancelled).
// Either way the journal and the summary are written, with a fresh bounded
// context when ctx is done.
func Run(ctx context.Context, cfg Config) (Result, error) {
	r, err := newRun(cfg)
	if err != nil {
		return Result{State: runstatus.StateFailed, Error: err.Error()}, err
	}
	return r.run(ctx)
}

// run is one shopping run in progress.
type run struct {
	cfg      Config
	log      *slog.Logger
	id       string
	now      func() time.Time
	prompts  *Prompts
	runAgent AgentFunc
	agentCfg agent.Config
	journal  *Journal
	host     Host
	started  time.Time
	// slots are the delivery slots as read after the review (readSlots);
	// nil: not read.
	slots *reviewpack.Slots

	mu sync.Mutex
	// unstarted: the run could not begin shopping (notStarted).
	unstarted bool
	// nothing says why the run had nothing to shop ("" when it had).
	nothing  string
	state    runstatus.State
	progress runstatus.Progress
	results  map[string]report.ItemResult
	usage    report.Usage
	warnings []messages.Text // for the summary: catalogue texts, said in the reader's language
	// unapplied are the list updates that could not be applied.
	unapplied []report.UnappliedUpdate
	// pending are the list updates a provider queued (ErrUpdatePending),
	// by item ID, until flushPending learns what became of them.
	pending map[string]report.UnappliedUpdate
	// fromCart are the items a killed run had put in the cart, completed
	// from the cart before this run read it (the review leaves them out).
	fromCart map[string]bool

	authMu  sync.Mutex
	authGen int
	authErr error // the last re-login's failure; later expiries fail at once
	logins  int

	startMu   sync.Mutex
	nextStart time.Time

	tabMu    sync.Mutex
	tabsGone int   // NewTab failures with ErrBrowserGone in a row
	dead     error // set when the browser is gone for good

	replayPool chan Tab // tabs finished replays left for the next (shopAll)
}

func newRun(cfg Config) (*run, error) {
	switch {
	case cfg.Provider == nil:
		return nil, errors.New("shop: no shopping list provider configured")
	case cfg.LaunchHost == nil:
		return nil, errors.New("shop: no browser configured")
	case cfg.Store.HomeURL == "" || cfg.Store.SearchURL == nil:
		return nil, errors.New("shop: the store profile has no home or search URL")
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.Stagger == 0 {
		cfg.Stagger = DefaultStagger
	}
	if cfg.ModelCalls < 1 {
		cfg.ModelCalls = cfg.Concurrency
	}
	if cfg.FinalizeTimeout <= 0 {
		cfg.FinalizeTimeout = DefaultFinalizeTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prompts, err := LoadPrompts()
	if err != nil {
		return nil, err
	}
	r := &run{
		cfg:      cfg,
		now:      cfg.Now,
		prompts:  prompts,
		runAgent: cfg.RunAgent,
		agentCfg: cfg.Agent,
		results:  make(map[string]report.ItemResult),
		state:    runstatus.StateIdle,
	}
	if r.runAgent == nil {
		r.runAgent = agent.Run
	}
	r.id = cfg.RunID
	if r.id == "" {
		r.id = newRunID(r.now())
	}
	r.log = log.With("component", "shop", "run", r.id)
	if r.agentCfg.SystemInstruction == "" {
		r.agentCfg.SystemInstruction = prompts.System()
	}
	if r.agentCfg.HomeURL == "" {
		r.agentCfg.HomeURL = cfg.Store.HomeURL
	}
	if r.agentCfg.Limiter == nil {
		r.agentCfg.Limiter = semaphore.NewWeighted(int64(cfg.ModelCalls))
	}
	if r.agentCfg.Logger == nil {
		r.agentCfg.Logger = log
	}
	return r, nil
}

// newRunID is a sortable, unique run id: UTC time plus 4 random bytes.
func newRunID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// finalCtx is the context for the writes that must happen even after ctx was
// cancelled (list updates for reported items, journal, summary).
func (r *run) finalCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), r.cfg.FinalizeTimeout)
}

func (r *run) run(ctx context.Context) (Result, error) {
	r.started = r.now()
	if r.agentCfg.PriceDay.IsZero() {
		// Every item of the run is costed with the price in force on the
		// day it started, as the review is (ModelCartReader.PriceDay).
		r.agentCfg.PriceDay = r.started
	}
	r.setState(runstatus.StateInitializing, "")

	items, err := r.cfg.Provider.Items(ctx)
	if err != nil {
		return r.notStarted(ctx, fmt.Errorf("read the shopping list: %w", err))
	}
	// A previous run killed mid-way: finish its list updates first.
	suspects, olds, changed := r.resume(ctx, items)
	if changed {
		if items, err = r.cfg.Provider.Items(ctx); err != nil {
			return r.notStarted(ctx, fmt.Errorf("read the shopping list: %w", err))
		}
	}
	pl := planItems(items, r.cfg.RetryTagged, r.cfg.OnlyTagged, r.cfg.Items)
	r.mu.Lock()
	r.progress.Total = pl.total()
	r.mu.Unlock()

	rec := JournalRecord{
		RunID: r.id, PID: os.Getpid(), Source: r.cfg.Source, StartedBy: r.cfg.StartedBy,
		Kind: r.kind(), ReshopOf: r.cfg.ReshopOf, Store: r.cfg.Store.Name, Model: r.agentCfg.Model,
		Concurrency: r.cfg.Concurrency, StartedAt: r.started, State: runstatus.StateInitializing,
		Items: []JournalItem{},
	}
	// In list order, duplicates where the list has them.
	inRun := make(map[string]JournalItem)
	for _, p := range pl.shop {
		for _, ji := range journalItems(p) {
			inRun[ji.ItemID] = ji
		}
	}
	for _, it := range pl.unnamed {
		inRun[it.ID] = JournalItem{ItemID: it.ID, Name: report.Clip(it.Name, report.MaxNameRunes), Status: ItemPending}
	}
	for _, it := range items {
		if ji, ok := inRun[it.ID]; ok {
			rec.Items = append(rec.Items, ji)
			delete(inRun, it.ID)
		}
	}
	r.journal, err = NewJournal(r.cfg.JournalDir, rec)
	if err != nil {
		// The journal is a record, not a reason to stop: keep it in memory.
		r.log.Error("cannot write the run journal; continuing without it", "err", err)
		r.addWarning(messages.Say("warning.journal_failed", "error", err.Error()))
		r.journal, _ = NewJournal("", rec)
	}
	r.pruneTraces()
	r.log.Info("run started", "items", len(pl.shop), "duplicates", pl.total()-len(pl.shop)-len(pl.unnamed), "skipped_unnamed", len(pl.unnamed),
		"skipped_tagged", pl.skippedTagged, "concurrency", r.cfg.Concurrency, "store", r.cfg.Store.Name)
	r.publish(runstatus.KindRunStarted, nil, "")
	r.skipUnnamed(pl.unnamed)

	res := Result{SkippedTagged: pl.skippedTagged, JournalPath: r.journal.Path()}
	if len(pl.shop) == 0 {
		r.markResumed(olds)
		r.log.Info("nothing to shop", "why", pl.nothing)
		r.mu.Lock()
		r.nothing = pl.nothing
		r.mu.Unlock()
		return r.finish(ctx, pl, nil, res, false)
	}
	if ctx.Err() != nil {
		return r.finish(ctx, pl, nil, res, true)
	}
	// A list that cannot be updated would be shopped again next time.
	if w, ok := r.cfg.Provider.(WritableChecker); ok {
		if err := w.CheckWritable(ctx); err != nil {
			if ctx.Err() != nil {
				return r.finish(ctx, pl, nil, res, true)
			}
			return r.fail(ctx, &pl, fmt.Errorf("%w: %w", ErrListNotWritable, err))
		}
	}

	host, err := r.cfg.LaunchHost(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return r.finish(ctx, pl, nil, res, true)
		}
		return r.notStarted(ctx, fmt.Errorf("start the browser: %w", err))
	}
	r.host = host
	defer func() {
		cctx, cancel := r.finalCtx(ctx)
		defer cancel()
		if err := host.Close(cctx); err != nil {
			r.log.Warn("closing the browser failed", "err", err)
		}
	}()

	r.setState(runstatus.StateAuthenticating, "")
	if err := r.ensureLogin(ctx); err != nil {
		if ctx.Err() != nil {
			return r.finish(ctx, pl, nil, res, true)
		}
		return r.fail(ctx, &pl, err)
	}

	var before *Cart
	if r.cfg.Cart != nil {
		c, err := r.cfg.Cart.ReadCart(ctx, host)
		if err != nil {
			r.log.Warn("reading the cart before the run failed; the review will be incomplete", "err", err)
		} else {
			r.addUsage(c.Usage)
			before = &c
			r.journal.Update(func(rec *JournalRecord) { rec.CartBefore = &c })
		}
	}
	// The killed run's in-flight items may be in the cart already.
	r.settleSuspects(ctx, suspects, before, &pl)
	r.markResumed(olds)

	r.setState(runstatus.StateShopping, "")
	known := make(map[string]bool, len(items))
	for _, it := range items {
		known[it.ID] = true
	}
	r.shopAll(ctx, pl, known)
	if ctx.Err() != nil {
		return r.finish(ctx, pl, r.stoppedReview(ctx, before), res, true)
	}
	if err := r.browserDead(); err != nil {
		return r.fail(ctx, &pl, fmt.Errorf("the browser died and could not be started again (the items not shopped were left on the list): %w", err))
	}

	r.setState(runstatus.StateReviewing, "")
	rev := r.review(ctx, before)
	r.slots = r.readSlots(ctx)
	return r.finish(ctx, pl, &rev, res, false)
}

// ensureLogin opens a tab, checks the session and signs in when needed.
func (r *run) ensureLogin(ctx context.Context) error {
	tab, err := r.host.NewTab(ctx)
	if err != nil {
		return fmt.Errorf("open a browser tab: %w", err)
	}
	defer func() { _ = tab.Close() }()
	// IsAuthenticated opens the store's home page first (unless the
	// browser has no cookie for the store: a fresh profile is signed out);
	// a signed-out page may also say so with ErrAuthExpired.
	ok, err := r.host.IsAuthenticated(ctx, tab)
	if err != nil && !errors.Is(err, browser.ErrAuthExpired) {
		return fmt.Errorf("check whether the store session is signed in: %w", err)
	}
	if ok {
		r.log.Info("store session is signed in")
		return nil
	}
	r.log.Info("store session is not signed in; signing in")
	r.authMu.Lock()
	defer r.authMu.Unlock()
	r.logins++
	if err := r.host.Login(ctx); err != nil {
		if perr := r.awaitPerson(ctx, err); perr != nil {
			return fmt.Errorf("sign in to %s: %w", r.storeName(), perr)
		}
	}
	r.authGen++
	return nil
}

// relogin signs in again after an attempt started at generation gen saw the
// session expire. Concurrent callers share one login: whoever comes after a
// login that happened since their attempt started just retries.
func (r *run) relogin(ctx context.Context, gen int) error {
	r.authMu.Lock()
	defer r.authMu.Unlock()
	if r.authGen > gen {
		return nil
	}
	if r.authErr != nil {
		return r.authErr
	}
	// A tab's check is about one page; before signing in, a fresh page of
	// the store settles it (a page that was slow to draw its header is not
	// a lost session, and a login that is not needed costs a minute).
	if r.stillSignedIn(ctx) {
		r.log.Info("a tab looked signed out, but the store session is valid: not signing in again")
		r.authGen++
		return nil
	}
	r.log.Warn("the store session expired; signing in again")
	r.logins++
	if err := r.host.Login(ctx); err != nil {
		if ctx.Err() == nil {
			r.authErr = fmt.Errorf("sign in again after the session expired: %w", err)
		}
		return fmt.Errorf("sign in again after the session expired: %w", err)
	}
	r.authGen++
	r.journal.Update(func(rec *JournalRecord) { rec.Logins = r.logins })
	return nil
}

// stillSignedIn checks the session on a fresh tab (false when it cannot tell).
func (r *run) stillSignedIn(ctx context.Context) bool {
	tab, err := r.host.NewTab(ctx)
	if err != nil {
		return false
	}
	defer func() { _ = tab.Close() }()
	ok, err := r.host.IsAuthenticated(ctx, tab)
	return err == nil && ok
}

func (r *run) authGeneration() int {
	r.authMu.Lock()
	defer r.authMu.Unlock()
	return r.authGen
}

// shopAll shops the planned items, at most Concurrency agents at once,
// starting no new item once ctx is done. Items the product memory can
// replay run in replay slots of their own (replaySlots at once, a
// replayer), without the stagger and the warm-up (both are for model
// calls; a replay is code); the agents start with the other items at the
// same time. A replay that hands over waits for an agent slot (and the
// stagger) like any agent.
func (r *run) shopAll(ctx context.Context, pl plan, known map[string]bool) {
	sem := make(chan struct{}, r.cfg.Concurrency)
	r.replayPool = make(chan Tab, replaySlots())
	defer r.closeReplayTabs()
	var wg sync.WaitGroup
	reps := &replayer{r: r, ctx: ctx, wg: &wg, sem: sem, slots: replaySlots()}
	// The first agent item goes alone (see Config.SkipWarmUp), for at most
	// WarmUpLimit, then the others fan out.
	var warm chan struct{}
	if r.cfg.Concurrency > 1 && len(pl.shop) > 1 && !r.cfg.SkipWarmUp {
		warm = make(chan struct{})
	}
	keys := make(map[string]string, len(pl.shop))
	for _, p := range pl.shop {
		keys[p.item.Key()] = p.item.Name
	}
	queue := reps.take(pl.shop) // the replays start here; the agents' items stay
	agents := 0
	for i := 0; ; i++ {
		for i == len(queue) {
			// The queue drained: items added to the list meanwhile are
			// shopped in this run (those the memory knows as replays).
			more := r.moreItems(ctx, known, keys)
			if len(more) == 0 {
				break
			}
			queue = append(queue, reps.take(more)...)
		}
		if i == len(queue) {
			break
		}
		p := queue[i]
		if agents == 1 && warm != nil {
			t := time.NewTimer(WarmUpLimit)
			select {
			case <-warm:
			case <-t.C:
				r.log.Info("the first item is taking long; starting the others")
			case <-ctx.Done():
			}
			t.Stop()
		}
		acquired := false
		select {
		case sem <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		if !acquired {
			break
		}
		if ctx.Err() != nil || r.browserDead() != nil || r.waitStagger(ctx) != nil {
			<-sem
			break
		}
		first := agents == 0
		agents++
		wg.Add(1)
		go func() {
			defer wg.Done()
			release := sync.OnceFunc(func() { <-sem })
			p.release = release
			defer release()
			r.shopItem(ctx, p)
			if first && warm != nil {
				close(warm)
			}
		}()
	}
	// The replayer's workers stop on their own: when its queue is empty,
	// ctx is done or the browser is gone for good.
	wg.Wait()
}

// replaySlots is how many replays run at once: about the machine's cores
// (a replay is the browser's work, not a model's wait).
func replaySlots() int { return max(runtime.NumCPU(), 1) }

// replayable: the item's product is remembered and the run replays it
// directly (a guess made before the item starts: an item that turns out
// not to replay goes to the agent through its toAgent).
func (r *run) replayable(p *planned) bool {
	if r.cfg.Replay != ReplayDirect || r.cfg.Recall == nil || r.cfg.Store.Product.Root == "" {
		return false
	}
	rem, ok := r.cfg.Recall.Recall(p.item.Name)
	return ok && rem.URL != ""
}

// replayer runs the items the memory can replay, in the order they were
// queued, at most slots at once and never waiting on the loop that starts
// the agents' items. Each slot is a worker goroutine of wg's that takes
// the next queued item until the queue is empty, ctx is done or the
// browser is gone for good; a worker whose item goes to the agent gives
// its slot to a new worker and ends with that item.
type replayer struct {
	r     *run
	ctx   context.Context
	wg    *sync.WaitGroup
	sem   chan struct{} // the agents' slots, for an item a replay hands over
	slots int

	mu      sync.Mutex
	queue   []*planned
	running int // workers holding a slot
}

// take queues the replayable items of items (list order kept), starting
// workers for them up to the slots, and returns the others for the agents.
func (q *replayer) take(items []*planned) []*planned {
	var reps, rest []*planned
	for _, p := range items {
		if q.r.replayable(p) { // the memory is read outside mu
			reps = append(reps, p)
		} else {
			rest = append(rest, p)
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, reps...)
	q.spawn()
	return rest
}

// spawn starts a worker per queued item while slots are free (a busy
// worker takes no item before its own is done). Callers hold mu.
func (q *replayer) spawn() {
	if !q.mayStart() {
		return
	}
	for range min(q.slots-q.running, len(q.queue)) {
		q.running++
		q.wg.Add(1)
		go q.work()
	}
}

// mayStart: new items may still start.
func (q *replayer) mayStart() bool {
	return q.ctx.Err() == nil && q.r.browserDead() == nil
}

// next takes the next queued item; with none left, or none allowed to
// start, the worker gives up its slot (false).
func (q *replayer) next() (*planned, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 || !q.mayStart() {
		q.running--
		return nil, false
	}
	p := q.queue[0]
	q.queue = q.queue[1:]
	return p, true
}

// leave gives up a worker's slot for its item gone to the agent; a new
// worker takes it when items wait.
func (q *replayer) leave() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	q.spawn()
}

// work is one replay slot: it shops queued items one after the other.
func (q *replayer) work() {
	defer q.wg.Done()
	for {
		p, ok := q.next()
		if !ok {
			return
		}
		handed := false
		p.toAgent = func(ctx context.Context) func() {
			handed = true
			q.leave()
			select {
			case q.sem <- struct{}{}:
			case <-ctx.Done():
				return func() {}
			}
			_ = q.r.waitStagger(ctx) // a cancelled wait ends the item's attempts
			return func() { <-q.sem }
		}
		q.r.shopItem(q.ctx, p)
		if handed {
			return // the slot went to another worker
		}
	}
}

// noteNewTab tracks whether tabs can still be opened: two failures in a row
// with ErrBrowserGone (the Host relaunches once between them) mean the
// browser is gone for good.
func (r *run) noteNewTab(err error) {
	r.tabMu.Lock()
	defer r.tabMu.Unlock()
	switch {
	case err == nil:
		r.tabsGone = 0
	case errors.Is(err, browser.ErrBrowserGone):
		r.tabsGone++
		if r.tabsGone >= 2 && r.dead == nil {
			r.dead = err
			r.log.Error("the browser is gone and could not be relaunched; no new items start", "err", err)
		}
	}
}

// browserDead is the error that ended the browser for good, or nil.
func (r *run) browserDead() error {
	r.tabMu.Lock()
	defer r.tabMu.Unlock()
	return r.dead
}

// waitStagger spaces agent starts by Stagger.
func (r *run) waitStagger(ctx context.Context) error {
	if r.cfg.Stagger < 0 {
		return nil
	}
	r.startMu.Lock()
	now := r.now()
	at := r.nextStart
	if at.Before(now) {
		at = now
	}
	r.nextStart = at.Add(r.cfg.Stagger)
	r.startMu.Unlock()
	d := at.Sub(now)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// review reads the cart after the run and compares it with before.
func (r *run) review(ctx context.Context, before *Cart) Review {
	var rev Review
	switch {
	case r.cfg.Cart == nil:
		rev = Unavailable("this store has no cart reader")
	case before == nil:
		rev = Unavailable("the cart could not be read before the run")
	default:
		after, err := r.cfg.Cart.ReadCart(ctx, r.host)
		if err != nil {
			r.log.Warn("reading the cart after the run failed", "err", err)
			rev = Unavailable(err.Error())
			rev.Before = before
		} else {
			r.addUsage(after.Usage)
			rev = r.compare(*before, after)
		}
	}
	rev.CartURL = r.cartLink()
	for _, w := range rev.Warnings {
		r.log.Warn("cart review", "kind", w.Kind, "item", w.Item, "warning", w.Message)
	}
	return rev
}

// compare is the review of the cart read after the run against before,
// for the items this run shopped (not those a killed run had added).
func (r *run) compare(before, after Cart) Review {
	var results []report.ItemResult
	for _, res := range r.orderedResults() {
		if !r.isFromCart(res.ItemID) {
			results = append(results, res)
		}
	}
	return Compare(before, after, results)
}

// stoppedCartWait bounds the reading of the cart after Stop.
const stoppedCartWait = 15 * time.Second

// stoppedReview reads the cart after a stopped run so that the review pack
// carries it (the panel, and Home Assistant's Cart sensor and
// gemini_supply_cart event, then show the cart as the stop left it). Only
// by code — the profile's cart page reader; no model call after Stop — with
// a fresh context bounded by stoppedCartWait. nil (no cart in the pack, as
// before) when the store has no such reader, the browser is gone, or the
// page cannot be read.
func (r *run) stoppedReview(ctx context.Context, before *Cart) *Review {
	cr := codeCartReader(r.cfg.Cart)
	if cr == nil || r.host == nil || r.browserDead() != nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stoppedCartWait)
	defer cancel()
	after, err := cr.ReadCart(rctx, r.host)
	if err != nil {
		r.log.Warn("reading the cart after Stop failed; the review pack has no cart", "err", err)
		return nil
	}
	rev := Review{After: &after, Changes: []LineChange{}, Warnings: []Warning{}}
	if before != nil {
		rev = r.compare(*before, after)
	}
	rev.CartURL = r.cartLink()
	r.log.Info("the cart was read after Stop", "lines", len(after.Lines), "units", after.Units(), "warnings", len(rev.Warnings))
	return &rev
}

// codeCartReader is the part of a cart reader that reads the cart page by
// code (no model call): a PageCartReader, or a FallbackCartReader's first
// when it is one; nil otherwise.
func codeCartReader(c CartReader) CartReader {
	switch cr := c.(type) {
	case *PageCartReader:
		if cr == nil {
			return nil
		}
		return cr
	case *FallbackCartReader:
		if cr == nil {
			return nil
		}
		return codeCartReader(cr.First)
	}
	return nil
}

// fail ends a run that could not run.
func (r *run) fail(ctx context.Context, pl *plan, cause error) (Result, error) {
	// Said by the caller (shop's last line, serve's "run failed"): once.
	r.log.Debug("the run could not run", "err", cause)
	r.addWarning(messages.Say("warning.run_failed", "error", cause.Error()))
	res := Result{}
	if r.journal != nil {
		res.JournalPath = r.journal.Path()
	}
	if pl != nil {
		res.SkippedTagged = pl.skippedTagged
	}
	res, _ = r.finishAs(ctx, pl, nil, res, runstatus.StateFailed, cause)
	return res, cause
}

// notStarted ends a run that could not begin shopping once its journal
// was written: nothing was shopped, so its journal is removed, no item is
// reported "not shopped" and the list gets no summary (the notifiers still
// hear that the run failed).
func (r *run) notStarted(ctx context.Context, cause error) (Result, error) {
	if r.journal != nil {
		r.journal.Discard()
		r.journal = nil
	}
	r.mu.Lock()
	r.unstarted = true
	r.mu.Unlock()
	return r.fail(ctx, nil, cause)
}

// finish ends a run that shopped (or was cancelled while shopping).
func (r *run) finish(ctx context.Context, pl plan, rev *Review, res Result, cancelled bool) (Result, error) {
	if cancelled {
		return r.finishAs(ctx, &pl, rev, res, runstatus.StateCancelled, fmt.Errorf("%w: %w", ErrCancelled, context.Cause(ctx)))
	}
	return r.finishAs(ctx, &pl, rev, res, runstatus.StateReviewReady, nil)
}

func (r *run) finishAs(ctx context.Context, pl *plan, rev *Review, res Result, state runstatus.State, cause error) (Result, error) {
	fctx, cancel := r.finalCtx(ctx)
	defer cancel()
	finished := r.now()

	// Who stopped it, when a person did (runstatus.StopCause).
	var stop *runstatus.StopCause
	if state == runstatus.StateCancelled && r.journal != nil && errors.As(context.Cause(ctx), &stop) && stop.By != "" {
		r.journal.Update(func(rec *JournalRecord) { rec.StoppedBy = stop.By })
	}

	// Items that never finished: the list is left alone for them, and the
	// summary says they were not shopped.
	if pl != nil && r.journal != nil {
		var unfinished []JournalItem
		r.journal.Update(func(rec *JournalRecord) {
			for i := range rec.Items {
				if s := rec.Items[i].Status; s == ItemPending || s == ItemInFlight || s == ItemInterrupted {
					rec.Items[i].Status = ItemInterrupted
					unfinished = append(unfinished, rec.Items[i])
				}
			}
		})
		var notShopped []report.ItemResult
		r.mu.Lock()
		for _, ji := range unfinished {
			if _, ok := r.results[ji.ItemID]; !ok {
				res := report.ItemResult{ItemID: ji.ItemID, ItemName: ji.Name, Quantity: ji.Quantity,
					Outcome: report.OutcomeNotShopped, Explanation: "not finished when the run ended; unchanged on the list"}
				r.results[ji.ItemID] = res
				notShopped = append(notShopped, res)
			}
		}
		r.mu.Unlock()
		// Every item ends with a final state, in the journal (History
		// counts them) and as an event (the panel's cards, HA): an item
		// never started is "not shopped", not missing.
		r.journal.Update(func(rec *JournalRecord) {
			for i := range notShopped {
				if ji := rec.item(notShopped[i].ItemID); ji != nil && ji.Result == nil {
					ji.Result = &notShopped[i]
				}
			}
		})
		for i := range notShopped {
			r.publish(runstatus.KindItemFinished, &notShopped[i], "")
		}
	}

	r.flushPending(fctx)
	sum := report.Summary{
		RunID:      r.id,
		StartedAt:  r.started,
		FinishedAt: finished,
		Items:      r.orderedResults(),
		CartURL:    r.cartLink(),
		Usage:      r.totalUsage(),
		Cancelled:  state == runstatus.StateCancelled,

		UnappliedUpdates: r.unappliedUpdates(),
		Delivery:         r.slots.Delivery(),
	}
	if rev != nil {
		rev.WarnSummary(&sum)
		rev.UnappliedUpdates = sum.UnappliedUpdates
	}
	for _, w := range r.takeWarnings() {
		sum.Warn(w)
	}
	if sum.Cancelled {
		sum.Warn(messages.Say("warning.run_stopped"))
	}

	res.Summary = sum
	res.Review = rev
	var pack *reviewpack.Pack
	if pl != nil {
		pk := r.buildPack(sum.Items, rev)
		pk.Slots = r.slots
		pack = &pk
	}
	res.Pack = pack
	res.State = state
	if cause != nil {
		res.Error = cause.Error()
	}
	res.Logins = r.loginCount()
	r.mu.Lock()
	res.NotStarted = r.unstarted
	r.mu.Unlock()
	if r.host != nil {
		res.Relaunches = r.host.Relaunches()
	}
	if r.journal != nil {
		r.journal.Update(func(rec *JournalRecord) {
			rec.State = state
			rec.FinishedAt = &finished
			rec.Error = res.Error
			rec.Usage = sum.Usage
			rec.Review = rev
			rec.Pack = pack
			rec.Logins = res.Logins
			rec.Relaunches = res.Relaunches
		})
		if err := r.journal.Err(); err != nil {
			r.log.Warn("the run journal is incomplete", "err", err)
		}
	}

	// Nothing to do is not worth a notification.
	if pl == nil || pl.total() > 0 || state == runstatus.StateFailed {
		r.sendSummary(fctx, sum)
	}
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	r.setState(state, msg)
	r.mu.Lock()
	if msg == "" && r.nothing != "" {
		msg = "Nothing to shop: " + r.nothing + "." // the terminal's last line
	}
	ev := runstatus.Event{Time: r.now(), Kind: runstatus.KindRunFinished, RunID: r.id, State: state, Progress: r.progress, Message: msg, Summary: &sum, Pack: pack}
	r.mu.Unlock()
	r.emit(ev)
	r.log.Info("run finished", "state", state, "added", ev.Progress.Added, "not_found", ev.Progress.NotFound,
		"failed", ev.Progress.Failed, "warnings", len(sum.Warnings), "cost_usd", sum.Usage.CostUSD)
	return res, cause
}

// sendSummary gives the summary to the provider and every notifier; a
// failure is logged, never fatal.
func (r *run) sendSummary(ctx context.Context, sum report.Summary) {
	r.mu.Lock()
	unstarted := r.unstarted
	r.mu.Unlock()
	if unstarted {
		// Nothing was shopped: the list gets no summary (no file).
	} else if err := r.cfg.Provider.SendSummary(ctx, sum); err != nil {
		r.log.Warn("the list provider could not take the summary", "err", err)
	}
	for _, n := range r.cfg.Notifiers {
		if n == nil {
			continue
		}
		if err := n.SendSummary(ctx, sum); err != nil {
			r.log.Warn("a notifier could not send the summary", "notifier", fmt.Sprintf("%T", n), "err", err)
		}
	}
}

// cartLink is the cart address the household is given ("" when none).
func (r *run) cartLink() string {
	return r.cfg.Store.CartLink()
}

func (r *run) storeName() string {
	if r.cfg.Store.DisplayName != "" {
		return r.cfg.Store.DisplayName
	}
	return r.cfg.Store.Name
}

func (r *run) loginCount() int {
	r.authMu.Lock()
	defer r.authMu.Unlock()
	return r.logins
}

func (r *run) addWarning(w messages.Text) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, w)
}

func (r *run) takeWarnings() []messages.Text {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.warnings
	r.warnings = nil
	return w
}

func (r *run) addUsage(u report.Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.usage = addUsage(r.usage, u)
}

func (r *run) totalUsage() report.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

func addUsage(a, b report.Usage) report.Usage { return a.Add(b) }

// orderedResults returns the finished items' results in list order.
func (r *run) orderedResults() []report.ItemResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []report.ItemResult{}
	if r.journal == nil {
		return out
	}
	for _, it := range r.journal.Record().Items {
		if res, ok := r.results[it.ItemID]; ok {
			out = append(out, res)
		}
	}
	return out
}

func (r *run) setState(s runstatus.State, msg string) {
	r.mu.Lock()
	if r.state == s {
		r.mu.Unlock()
		return
	}
	r.state = s
	ev := runstatus.Event{Time: r.now(), Kind: runstatus.KindStateChanged, RunID: r.id, State: s, Progress: r.progress, Message: msg}
	r.mu.Unlock()
	if r.journal != nil {
		r.journal.Update(func(rec *JournalRecord) { rec.State = s })
	}
	r.log.Debug("state", "state", s)
	r.emit(ev)
}

// publish sends an event about item (nil for run-level events).
// kind is what the run was asked to do.
func (r *run) kind() runstatus.RunKind {
	if r.cfg.Kind == "" {
		return runstatus.RunWeekly
	}
	return r.cfg.Kind
}

func (r *run) publish(kind runstatus.Kind, item *report.ItemResult, msg string) {
	r.mu.Lock()
	ev := runstatus.Event{Time: r.now(), Kind: kind, RunID: r.id, State: r.state, Progress: r.progress, Item: item, Message: msg}
	r.mu.Unlock()
	r.emit(ev)
}

// emit publishes ev, saying what the run was asked to do (every event: a
// subscriber may see the run first by another than run_started).
func (r *run) emit(ev runstatus.Event) {
	ev.RunKind, ev.ReshopOf = r.kind(), r.cfg.ReshopOf
	if r.cfg.Bus != nil {
		r.cfg.Bus.Publish(ev)
	}
}

// failureText is a short reason for a failed item.
func failureText(reason, detail string) string {
	detail = strings.TrimSpace(detail)
	if detail == "" || detail == reason {
		return reason
	}
	if strings.HasPrefix(detail, reason) {
		return detail
	}
	return reason + ": " + detail
}
