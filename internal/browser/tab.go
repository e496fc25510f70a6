package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/playwright-community/playwright-go"
)

// pageState is what the Host knows about one tab's page. Playwright's
// event handlers (one goroutine) and the tab's callers share it under mu.
type pageState struct {
	tab *Tab

	mu          sync.Mutex
	item        string
	itemAsks    int // how many documents of this tab asked for item (tests)
	notices     []string
	inflight    map[playwright.Request]inflightReq
	navPending  bool      // a top-level navigation was requested and has not ended
	navAt       time.Time // when the last top-level navigation was requested
	committedAt time.Time // when the last top-level navigation committed
	crashed     bool
	popups      []string
	lastBlock   *BlockedError // the last top-level navigation the policy blocked
	sentToLogin bool          // the store sent the tab to its identity site (blocked) since the last navigation
	cart        cartLedger    // the tab's cart-changing requests
	guardSess   playwright.CDPSession
	mainFrame   string       // the tab's main frame's CDP id ("": unknown)
	replayOnly  bool         // the tab loads only what a replay needs (diet.go)
	readOnly    bool         // the tab is a reader: no request but GET or HEAD leaves it (reader.go)
	cartLimit   CartLimit    // asked before each add (cartlimit.go); nil: none
	grants      []*cartGrant // the adds the limit let through since it was set
	refusals    []string     // requestKeys of adds the limit refused, until the ledger sees them fail

	limitMu sync.Mutex // one cart-limit decision at a time
	guardMu sync.Mutex // one change of the guard's patterns at a time
}

// inflightReq is a tracked request: when it was sent and when its
// response's headers came (zero: not yet).
type inflightReq struct{ sent, answered time.Time }

// requestsBusyLocked says whether a tracked request keeps the page busy at
// now: one not answered yet, for staleRequestAfter after it was sent; one
// answered, for answeredGrace after its response came (its body). Chromium
// does not always say that an answered request ended — a frame's fetch
// answered 403 by the policy, for one, gets neither requestfinished nor
// requestfailed — so an answer, not an end, is what settling waits for.
// Requests past those bounds are forgotten. Called with s.mu held.
func (s *pageState) requestsBusyLocked(now time.Time) bool {
	busy := false
	for r, e := range s.inflight {
		switch {
		case !e.answered.IsZero() && now.Sub(e.answered) >= answeredGrace,
			e.answered.IsZero() && now.Sub(e.sent) >= staleRequestAfter:
			delete(s.inflight, r)
		default:
			busy = true
		}
	}
	return busy
}

// trackedTypes are the request types that must finish before a page counts
// as settled (images, fonts, media and beacons may trail).
var trackedTypes = map[string]bool{"document": true, "xhr": true, "fetch": true, "script": true, "stylesheet": true}

func (s *pageState) notice(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.notices) < 20 {
		s.notices = append(s.notices, n)
	}
}

func (s *pageState) block(rawURL, reason string) {
	s.mu.Lock()
	s.lastBlock = &BlockedError{URL: rawURL, Reason: reason}
	if u, err := url.Parse(rawURL); err == nil && s.tab != nil && s.tab.h.loginOnlyHost(u.Hostname()) {
		s.sentToLogin = true
	}
	s.mu.Unlock()
	s.notice(fmt.Sprintf("Navigation to %s was blocked: %s.", rawURL, reason))
}

func (s *pageState) queuePopup(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.popups = append(s.popups, u)
}

// Tab is one browser tab: the agent's Computer. Its methods serialise on
// the tab (one action at a time) and may be called from any goroutine;
// different tabs run in parallel.
type Tab struct {
	h    *Host
	g    *generation
	page playwright.Page
	st   *pageState

	sem     chan struct{} // held while a browser call runs on this tab
	closed  atomic.Bool
	closeMu sync.Mutex
}

// NewTab opens a new tab (about:blank) in the browser. Close it when done.
func (h *Host) NewTab(ctx context.Context) (*Tab, error) {
	g, err := h.current(ctx)
	if err != nil {
		return nil, err
	}
	p, err := h.openPage(ctx, g)
	if err != nil {
		if errors.Is(err, ErrBrowserGone) || isTargetClosed(err) || g.isGone() {
			h.probe(g)
			return nil, fmt.Errorf("opening a tab: %w (%v)", ErrBrowserGone, err)
		}
		return nil, fmt.Errorf("browser: opening a tab: %w", err)
	}
	st := &pageState{inflight: map[playwright.Request]inflightReq{}}
	t := &Tab{h: h, g: g, page: p, st: st, sem: make(chan struct{}, 1)}
	st.tab = t
	h.mu.Lock()
	h.pages[p] = st
	h.mu.Unlock()
	t.listen()
	if g.remote {
		if err := p.SetViewportSize(h.opts.Width, h.opts.Height); err != nil {
			_ = t.Close()
			return nil, fmt.Errorf("browser: setting the tab's viewport: %w", err)
		}
	}
	if err := h.guard(g, p, st); err != nil {
		_ = t.Close()
		return nil, err
	}
	return t, nil
}

// listen tracks the page's requests and navigations for settling. The
// handlers run on Playwright's event goroutine and only touch pageState.
func (t *Tab) listen() {
	st, p := t.st, t.page
	isMain := func(r playwright.Request) bool {
		if !r.IsNavigationRequest() {
			return false
		}
		f := r.Frame()
		return f == nil || f.ParentFrame() == nil
	}
	profile := t.h.profile
	p.OnRequest(func(r playwright.Request) {
		st.mu.Lock()
		c, isCart := st.cart.onRequest(profile, r)
		st.mu.Unlock()
		if isCart {
			t.h.log.Debug("cart change sent", "item", t.Item(), "method", c.Method, "path", c.Path,
				"product", c.ProductID, "units", c.Quantity)
		}
		main := isMain(r)
		tracked := trackedTypes[r.ResourceType()]
		if !main && !tracked {
			return
		}
		now := time.Now()
		st.mu.Lock()
		if tracked {
			st.inflight[r] = inflightReq{sent: now}
		}
		if main {
			st.navPending, st.navAt = true, now
		}
		st.mu.Unlock()
	})
	end := func(r playwright.Request) {
		main := isMain(r)
		st.mu.Lock()
		delete(st.inflight, r)
		if main {
			st.navPending = false
		}
		st.mu.Unlock()
	}
	p.OnRequestFinished(func(r playwright.Request) {
		end(r)
		st.mu.Lock()
		st.cart.onFinished(r)
		st.mu.Unlock()
	})
	p.OnRequestFailed(func(r playwright.Request) {
		end(r)
		st.mu.Lock()
		if len(st.grants) > 0 || len(st.refusals) > 0 {
			key := requestKey(r.Method(), r.URL())
			refused := st.takeRefusalLocked(key) // the guard's own refusal: no grant of its own
			if !refused {
				st.settleGrantLocked(key, false)
			}
			st.cart.onFailed(r, refused)
		} else {
			st.cart.onFailed(r, false)
		}
		st.mu.Unlock()
	})
	p.OnResponse(func(resp playwright.Response) {
		st.mu.Lock()
		if e, ok := st.inflight[resp.Request()]; ok {
			e.answered = time.Now()
			st.inflight[resp.Request()] = e
		}
		c, isCart := st.cart.onResponse(resp.Request(), resp.Status())
		if len(st.grants) > 0 {
			st.settleGrantLocked(requestKey(resp.Request().Method(), resp.Request().URL()), resp.Status() >= 200 && resp.Status() < 300)
		}
		st.mu.Unlock()
		if isCart {
			t.h.log.Debug("cart change answered", "item", t.Item(), "path", c.Path, "product", c.ProductID, "status", c.Status,
				"after", time.Since(c.At).Round(time.Millisecond))
		}
	})
	p.OnFrameNavigated(func(f playwright.Frame) {
		if f.ParentFrame() != nil {
			return
		}
		st.mu.Lock()
		st.committedAt = time.Now()
		st.sentToLogin = false
		st.mu.Unlock()
	})
	p.OnCrash(func(playwright.Page) {
		st.mu.Lock()
		st.crashed = true
		st.mu.Unlock()
		t.h.log.Warn("a tab's renderer crashed")
	})
	p.OnClose(func(playwright.Page) {
		t.h.mu.Lock()
		delete(t.h.pages, p)
		t.h.mu.Unlock()
	})
}

// call bounds the browser calls of one action.
type call struct {
	deadline time.Time
}

// ms returns Playwright's timeout for the next call, in milliseconds.
func (c call) ms() *float64 {
	return playwright.Float(float64(max(time.Until(c.deadline), time.Millisecond).Milliseconds()) + 1)
}

// act runs fn with the tab to itself, bounded by ctx and the action
// timeout, then (with settle) waits for the page to settle. Errors come
// back wrapped: ErrBrowserGone when the browser or the tab's renderer went
// away, ErrClosed after Close, a *BlockedError when the policy stopped it.
func (t *Tab) act(ctx context.Context, action string, settle bool, fn func(c call) error) error {
	if t.closed.Load() || t.h.isClosed() {
		return fmt.Errorf("%s: %w", action, ErrClosed)
	}
	if t.g.isGone() {
		return fmt.Errorf("%s: %w", action, ErrBrowserGone)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s: waiting for the tab's previous action: %w", action, ctx.Err())
	case <-t.g.gone:
		return fmt.Errorf("%s: %w", action, ErrBrowserGone)
	}
	deadline := time.Now().Add(t.h.opts.ActionTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	done := make(chan error, 1)
	spawned := t.h.spawn(func() {
		defer func() { <-t.sem }()
		t.st.mu.Lock()
		t.st.lastBlock = nil
		t.st.mu.Unlock()
		start := time.Now()
		err := fn(call{deadline: deadline})
		if settle && err == nil {
			sd := time.Now().Add(t.h.opts.SettleTimeout)
			if sd.After(deadline) {
				sd = deadline
			}
			err = t.settle(start, sd)
		}
		done <- err
	})
	if !spawned {
		<-t.sem
		return fmt.Errorf("%s: %w", action, ErrClosed)
	}
	// The action is bounded as a whole: a call that ignores its deadline
	// (a wheel event, a page that never answers) does not hold the agent.
	// The grace lets calls that honour the deadline report their own error.
	limit := time.NewTimer(time.Until(deadline) + actionGrace)
	defer limit.Stop()
	select {
	case err := <-done:
		return t.wrap(action, err)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", action, ctx.Err())
	case <-t.g.gone:
		return fmt.Errorf("%s: %w", action, ErrBrowserGone)
	case <-limit.C:
		return &TimeoutError{Action: action, Limit: t.h.opts.ActionTimeout, Detail: "the page did not answer in time; take a screenshot to see where it stands"}
	}
}

// wrap classifies an error of a browser call.
func (t *Tab) wrap(action string, err error) error {
	if err == nil {
		return nil
	}
	var be *BlockedError
	var ie *InputError
	var ne *NavigationError
	var te *TimeoutError
	if errors.As(err, &be) || errors.As(err, &ie) || errors.As(err, &ne) || errors.As(err, &te) || errors.Is(err, ErrAuthExpired) {
		return err
	}
	t.st.mu.Lock()
	crashed := t.st.crashed
	t.st.mu.Unlock()
	switch {
	case t.closed.Load():
		return fmt.Errorf("%s: %w", action, ErrClosed)
	case crashed:
		return fmt.Errorf("%s: the tab crashed: %w (%v)", action, ErrBrowserGone, err)
	case t.g.isGone() || isTargetClosed(err):
		t.h.probe(t.g)
		return fmt.Errorf("%s: %w (%v)", action, ErrBrowserGone, err)
	}
	return fmt.Errorf("browser %s failed: %w", action, err)
}

// probe checks, when a call failed as if the browser were gone but no
// close event came, whether the browser still answers; if not, it handles
// the loss like a crash.
func (h *Host) probe(g *generation) {
	if g.isGone() {
		return
	}
	h.spawn(func() {
		done := make(chan error, 1)
		go func() {
			_, err := g.ctx.Cookies("https://probe.invalid/")
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil && isTargetClosed(err) {
				h.onGone(g, "the browser stopped answering")
			}
		case <-time.After(closeStepTimeout):
			h.onGone(g, "the browser stopped answering")
		case <-h.life.Done():
		}
	})
}

// NavigationError is a navigation that failed on the network (the address
// does not resolve, the server refused): reported to the model.
type NavigationError struct {
	URL string
	Err error
}

func (e *NavigationError) Error() string {
	return fmt.Sprintf("opening %s failed: %v", e.URL, e.Err)
}

func (e *NavigationError) Unwrap() error { return e.Err }

// Rejected marks the error as one to report to the model.
func (*NavigationError) Rejected() bool { return true }

// settle waits, until deadline, for the page to be quiet: no top-level
// navigation pending and no tracked request in flight for quietWindow. A
// navigation the action started (the page script flags it synchronously)
// must have begun and ended, and a committed navigation must reach its
// load event. Allowed addresses of popups are opened, and a page the
// policy forbids is left.
func (t *Tab) settle(start, deadline time.Time) error {
	t.openQueuedPopups(deadline)
	navRequested := false
	v, err := t.page.Evaluate(`() => { const p = !!window.__groceryAgentNavRequested; window.__groceryAgentNavRequested = false; return p; }`)
	switch {
	case err == nil:
		navRequested = v == true
	case isTargetClosed(err):
		return err
	default:
		navRequested = true // the document is being replaced
	}
	quietSince := time.Time{}
	for time.Now().Before(deadline) {
		t.st.mu.Lock()
		busy := t.st.navPending || t.st.crashed
		if navRequested && !t.st.committedAt.After(start) && !t.st.navAt.After(start) {
			busy = true // the navigation has not reached the network yet
		}
		if t.st.requestsBusyLocked(time.Now()) {
			busy = true
		}
		popups := len(t.st.popups) > 0
		t.st.mu.Unlock()
		if popups {
			t.openQueuedPopups(deadline)
			quietSince = time.Time{}
			continue
		}
		if t.g.isGone() {
			return ErrBrowserGone
		}
		if busy {
			quietSince = time.Time{}
		} else {
			if quietSince.IsZero() {
				quietSince = time.Now()
			}
			if time.Since(quietSince) >= quietWindow {
				break
			}
		}
		time.Sleep(settlePollInterval)
	}
	t.st.mu.Lock()
	navigated := t.st.committedAt.After(start)
	t.st.mu.Unlock()
	if navigated {
		if rem := time.Until(deadline); rem > 0 {
			_ = t.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{
				State: playwright.LoadStateLoad, Timeout: playwright.Float(float64(rem.Milliseconds()) + 1),
			})
		}
		t.awaitBanner(deadline)
	}
	t.leaveForbiddenPage(deadline)
	return nil
}

// awaitBanner waits, at most until deadline and never more than a second,
// for a new document's banner to have its tab's item, so the screenshot
// after a navigation shows it. The caller holds the tab.
func (t *Tab) awaitBanner(deadline time.Time) {
	wait := min(time.Until(deadline), time.Second)
	if wait <= 0 {
		return
	}
	_, err := t.page.Evaluate(`([name, ms]) => { const r = window[name];
  if (!r) return false;
  return Promise.race([r.then(() => true), new Promise((ok) => setTimeout(() => ok(false), ms))]); }`,
		[]any{bannerReadyName, float64(wait.Milliseconds())}) // a float64: playwright-go sends an int64 as undefined (a 0 ms timeout)
	if err != nil && !isTargetClosed(err) {
		t.h.log.Debug("waiting for the banner's item failed", "err", err)
	}
}

// itemFor answers the banner binding: the item of the tab whose top-level
// document asks. Other pages and frames get "".
func (h *Host) itemFor(src *playwright.BindingSource, _ ...any) any {
	if src == nil || src.Frame == nil || src.Frame.ParentFrame() != nil {
		return ""
	}
	st := h.pageState(src.Page)
	if st == nil {
		return ""
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.itemAsks++
	return st.item
}

// openQueuedPopups opens, in this tab, the last allowed address a popup
// asked for. The caller holds the tab.
func (t *Tab) openQueuedPopups(deadline time.Time) {
	t.st.mu.Lock()
	q := t.st.popups
	t.st.popups = nil
	t.st.mu.Unlock()
	if len(q) == 0 {
		return
	}
	u := q[len(q)-1]
	_, err := t.page.Goto(u, playwright.PageGotoOptions{
		WaitUntil: playwright.WaitUntilStateDomcontentloaded,
		Timeout:   call{deadline: deadline}.ms(),
	})
	if err != nil {
		t.h.log.Debug("opening a popup's address in its opener failed", "err", err)
	}
}

// runQueuedPopups opens queued popup addresses when no action is running
// (an action in progress does it while settling).
func (t *Tab) runQueuedPopups() {
	ctx, cancel := context.WithTimeout(t.h.life, 30*time.Second)
	defer cancel()
	t.st.mu.Lock()
	pending := len(t.st.popups) > 0
	t.st.mu.Unlock()
	if !pending {
		return
	}
	_ = t.act(ctx, "open a popup's address", true, func(call) error { return nil })
}

// leaveForbiddenPage takes the tab back if it ended up on a page the
// policy forbids (a last check behind the proxy and the tab guard).
func (t *Tab) leaveForbiddenPage(deadline time.Time) {
	u := t.page.URL()
	if !strings.HasPrefix(u, "http:") && !strings.HasPrefix(u, "https:") {
		return
	}
	pol := t.h.profile.CheckURL(u)
	if pol.Allowed {
		return
	}
	t.h.log.Warn("a tab reached a page the policy forbids; leaving it", "url", redactURL(u), "reason", pol.Reason)
	t.st.notice(fmt.Sprintf("The tab reached %s, which the store policy forbids (%s); it was taken back.", u, pol.Reason))
	opts := playwright.PageGoBackOptions{Timeout: call{deadline: deadline.Add(2 * time.Second)}.ms(), WaitUntil: playwright.WaitUntilStateCommit}
	if _, err := t.page.GoBack(opts); err == nil {
		if back := t.page.URL(); back != u && (back == "about:blank" || t.h.profile.CheckURL(back).Allowed) {
			return
		}
	}
	_, _ = t.page.Goto("about:blank", playwright.PageGotoOptions{Timeout: playwright.Float(2000)})
}

// Close closes the tab. Other tabs are not affected. It is safe to call
// more than once and after the browser is gone.
func (t *Tab) Close() error {
	t.closeMu.Lock()
	defer t.closeMu.Unlock()
	if t.closed.Swap(true) {
		return nil
	}
	t.h.mu.Lock()
	delete(t.h.pages, t.page)
	t.h.mu.Unlock()
	if t.g.isGone() {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- t.page.Close() }()
	select {
	case err := <-done:
		if err != nil && !isTargetClosed(err) {
			return fmt.Errorf("browser: closing a tab: %w", err)
		}
	case <-time.After(closeStepTimeout):
		return errors.New("browser: closing a tab took too long")
	}
	return nil
}

// SetItem sets the item this tab shops for: the banner shows it, now and
// on every page the tab opens later. It may be called any number of times;
// it adds nothing to the page (new documents ask the Host for the tab's
// current item through the banner binding).
func (t *Tab) SetItem(ctx context.Context, name string) error {
	t.st.mu.Lock()
	t.st.item = name
	t.st.mu.Unlock()
	return t.act(ctx, "set the banner's item", false, func(c call) error {
		_, err := t.page.Evaluate(`(n) => { if (typeof window.setCurrentShoppingItem === 'function') window.setCurrentShoppingItem(n); }`, name)
		return err
	})
}

// Item returns the item set with SetItem.
func (t *Tab) Item() string {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.item
}

// URL is the tab's current top-level URL.
func (t *Tab) URL() string {
	if t.closed.Load() {
		return ""
	}
	return t.page.URL()
}

// TakeNotices returns, and forgets, what the tab noticed since the last
// call that the model should be told (blocked navigations, closed popups).
func (t *Tab) TakeNotices() []string {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	n := t.st.notices
	t.st.notices = nil
	return n
}

// LastBlocked is the top-level navigation the policy blocked during the
// tab's last action, as a *BlockedError (nil: none): a person's input in a
// taken-over tab is told why the page did not open.
func (t *Tab) LastBlocked() error {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	if t.st.lastBlock == nil {
		return nil
	}
	b := *t.st.lastBlock
	return &b
}
