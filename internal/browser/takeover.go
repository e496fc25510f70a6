package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Take over: a sign-in the scripted login cannot finish (the identity site
// asks for a "not a robot" check or a code: the profile's
// ChallengeSelector) is not a failure. Login keeps its tab open — with the
// login's permissions, under the same request policy — and returns an
// error wrapping ErrNeedsPerson; a person then drives that tab from the
// panel (TakeoverClick, TakeoverType, TakeoverKey, with TakeoverScreenshot
// to see it) and hands it back with TakeoverDone, which AwaitSignIn waits
// for. Typed text is never logged.

// SignInTab names the held sign-in tab in the take-over API.
const SignInTab = "sign-in"

// ReasonSignInChallenge is the needs-person reason of a sign-in challenge.
const ReasonSignInChallenge = runstatus.ReasonSignInChallenge

// ErrNeedsPerson means a person must finish what the browser holds open
// (NeedsPerson says which tab and why).
var ErrNeedsPerson = errors.New("a person must finish this in the panel (take over)")

// ErrNotHeld means the take-over names a tab that no person is asked for.
var ErrNotHeld = errors.New("no tab waits for a person under that name")

// NeedsPerson is a tab waiting for a person.
type NeedsPerson = runstatus.NeedsPerson

// NeedsPersonError is Login's error when a person must finish the sign-in.
type NeedsPersonError struct {
	NeedsPerson
	Step string // the login step that met the challenge
}

func (e *NeedsPersonError) Error() string {
	return fmt.Sprintf("the sign-in stopped at %q: the store asks for more than the password (%s); %v", e.Step, e.Reason, ErrNeedsPerson)
}

func (e *NeedsPersonError) Unwrap() error { return ErrNeedsPerson }

// errChallenge marks a login step that met the profile's challenge.
var errChallenge = errors.New("the identity site shows a challenge")

// heldTab is the sign-in tab a person drives.
type heldTab struct {
	NeedsPerson
	g    *generation
	page playwright.Page
	mu   sync.Mutex    // one input at a time
	done chan struct{} // closed by TakeoverDone
	ok   bool          // signed in when handed back (set before done closes)
	// refusals are the policy's refusals while the tab is held (h.mu):
	// the run waits for the person then, so they are the person's.
	refusals []store.RequestVerdict
}

// maxHeldRefusals bounds the refusals a held tab keeps.
const maxHeldRefusals = 32

// noteHeldRefusal keeps a refusal for the held tab's input to report.
func (h *Host) noteHeldRefusal(v store.RequestVerdict) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		return
	}
	if len(h.held.refusals) >= maxHeldRefusals {
		h.held.refusals = h.held.refusals[1:]
	}
	h.held.refusals = append(h.held.refusals, v)
}

// clearRefusals and lastRefusal find the refusals one input caused
// (inputs on a held tab run one at a time): the last one is reported.
func (h *Host) clearRefusals(ht *heldTab) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ht.refusals = nil
}

func (h *Host) lastRefusal(ht *heldTab) (store.RequestVerdict, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(ht.refusals) == 0 {
		return store.RequestVerdict{}, false
	}
	return ht.refusals[len(ht.refusals)-1], true
}

// NeedsPersons lists the tabs waiting for a person (none or the sign-in).
func (h *Host) NeedsPersons() []NeedsPerson {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil {
		return nil
	}
	return []NeedsPerson{h.held.NeedsPerson}
}

func (h *Host) heldTab(tab string) (*heldTab, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held == nil || h.held.Tab != tab {
		return nil, fmt.Errorf("browser: take over %q: %w", tab, ErrNotHeld)
	}
	return h.held, nil
}

// holdSignIn keeps the login tab for a person: the login's token stays so
// its requests keep the login's permissions (and the policy's refusals).
func (h *Host) holdSignIn(g *generation, page playwright.Page, reason string) *heldTab {
	ht := &heldTab{NeedsPerson: NeedsPerson{Tab: SignInTab, Reason: reason}, g: g, page: page, done: make(chan struct{})}
	h.mu.Lock()
	h.held = ht
	h.mu.Unlock()
	return ht
}

// handBackWait bounds how long TakeoverDone lets a sign-in land.
const handBackWait = 15 * time.Second

// takeoverWait bounds one take-over input.
const takeoverWait = 20 * time.Second

func (ht *heldTab) ms() *float64 { return playwright.Float(float64(takeoverWait.Milliseconds())) }

// TakeoverScreenshot returns the held tab's screen (JPEG).
func (h *Host) TakeoverScreenshot(ctx context.Context, tab string) ([]byte, error) {
	ht, err := h.heldTab(tab)
	if err != nil {
		return nil, err
	}
	ht.mu.Lock()
	defer ht.mu.Unlock()
	if ht.g.keeperSess == nil {
		h.shotMu.Lock()
		defer h.shotMu.Unlock()
		if err := h.within(ctx, takeoverWait, ht.page.BringToFront); err != nil {
			return nil, fmt.Errorf("browser: take-over screenshot: %w", err)
		}
	}
	b, err := ht.page.Screenshot(playwright.PageScreenshotOptions{Type: playwright.ScreenshotTypeJpeg, Quality: playwright.Int(70),
		Scale: playwright.ScreenshotScaleCss, Timeout: ht.ms()})
	if err != nil {
		return nil, fmt.Errorf("browser: take-over screenshot: %w", err)
	}
	return b, nil
}

// TakeoverClick clicks the held tab at x, y in 0–999 screen coordinates.
// When the click starts a navigation it returns once the new page is there
// (bounded), so the next screenshot or guide step reads it; a navigation
// the store policy refuses comes back as a *RefusedError with its reason.
func (h *Host) TakeoverClick(ctx context.Context, tab string, x, y int) error {
	if x < 0 || x > 999 || y < 0 || y > 999 {
		return &InputError{Input: fmt.Sprintf("%d,%d", x, y), Reason: "coordinates are 0–999"}
	}
	ht, err := h.heldTab(tab)
	if err != nil {
		return err
	}
	ht.mu.Lock()
	defer ht.mu.Unlock()
	w, hh := h.opts.Width, h.opts.Height
	if vs := ht.page.ViewportSize(); vs != nil && vs.Width > 0 {
		w, hh = vs.Width, vs.Height
	}
	px, py := float64(x)*float64(w)/1000, float64(y)*float64(hh)/1000
	h.log.Info("take-over: click", "tab", tab, "x", x, "y", y)
	return h.input(ctx, ht, "click", func() error { return ht.page.Mouse().Click(px, py) })
}

// TakeoverType types text into the held tab's focused field. The text is
// never logged, nor put in an error.
func (h *Host) TakeoverType(ctx context.Context, tab, text string) error {
	ht, err := h.heldTab(tab)
	if err != nil {
		return err
	}
	ht.mu.Lock()
	defer ht.mu.Unlock()
	h.log.Info("take-over: type", "tab", tab, "chars", len([]rune(text)))
	kb := ht.page.Keyboard()
	return h.input(ctx, ht, "type", func() error { return typeStrokes(kb, text) })
}

// TakeoverKey presses one key (Enter, Tab, Backspace…) in the held tab:
// one key, never a combination (no browser shortcut opens an address).
func (h *Host) TakeoverKey(ctx context.Context, tab, key string) error {
	k, err := canonicalKey(key)
	if err != nil {
		return err
	}
	ht, err := h.heldTab(tab)
	if err != nil {
		return err
	}
	ht.mu.Lock()
	defer ht.mu.Unlock()
	h.log.Info("take-over: key", "tab", tab, "key", k)
	return h.input(ctx, ht, "key", func() error { return ht.page.Keyboard().Press(k) })
}

// RefusedError is a take-over input the store policy refused: the
// navigation or request it started never reached the store.
type RefusedError struct {
	Rule   string // the policy's rule (order, blocked-path, host…)
	Reason string // the policy's words
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused by the store policy: %s", e.Reason)
}

// Rejected marks the error as one to report, not to end anything with.
func (*RefusedError) Rejected() bool { return true }

// takeoverSettleWait bounds the wait for a navigation an input started.
const takeoverSettleWait = 15 * time.Second

// navWatch marks, in the held tab's document, an input that starts a
// navigation: a form submitted or a link followed (what the page did not
// prevent), or the document about to unload. The mark lives in the
// document, so a new document has none: "pending" stays true exactly until
// the navigation commits. Installed before every input (idempotent).
const navWatch = `() => {
  if (window.__gsNav) { window.__gsNav.pending = false; return; }
  const s = {pending: false};
  Object.defineProperty(window, '__gsNav', {value: s});
  addEventListener('submit', e => { if (!e.defaultPrevented) s.pending = true; });
  addEventListener('click', e => {
    const a = !e.defaultPrevented && e.target && e.target.closest ? e.target.closest('a[href]') : null;
    if (a && !(a.getAttribute('href') || '').startsWith('#') && (!a.target || a.target === '_self')) s.pending = true;
  });
}`

const navPending = `() => !!(window.__gsNav && window.__gsNav.pending)`

// input runs one take-over input on ht (held by the caller), bounded by
// ctx and takeoverWait, then waits for a navigation it started to commit
// (bounded by takeoverSettleWait) and reports a request of it the policy
// refused. Without that wait a guide step taken right after a click on a
// submit button read the page that was still waiting for the answer — and
// told the person to press the button again, resubmitting a form the store
// had already accepted.
func (h *Host) input(ctx context.Context, ht *heldTab, kind string, act func() error) error {
	h.clearRefusals(ht)
	_, _ = h.evalWithin(ctx, ht.page, identityProbeWait, navWatch)
	if err := h.within(ctx, takeoverWait, act); err != nil {
		return fmt.Errorf("browser: take-over %s: %w", kind, err)
	}
	h.settle(ctx, ht)
	if v, ok := h.lastRefusal(ht); ok {
		h.log.Info("take-over: the store policy refused what the input asked for", "kind", kind, "rule", string(v.Rule), "matched", v.Match)
		return &RefusedError{Rule: string(v.Rule), Reason: v.Reason}
	}
	return nil
}

// settle waits until a navigation the last input started has committed and
// its document is loaded (both bounded; a page that stays is fine).
func (h *Host) settle(ctx context.Context, ht *heldTab) {
	deadline := time.Now().Add(boundedBy(ctx, takeoverSettleWait))
	for time.Now().Before(deadline) {
		v, err := h.evalWithin(ctx, ht.page, time.Until(deadline), navPending)
		if pending, _ := v.(bool); err == nil && !pending {
			break // no navigation, or the new document is there
		}
		if ctx.Err() != nil || ht.page.IsClosed() {
			return
		}
		// Pending, or the old document is being replaced: look again.
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	_ = ht.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateDomcontentloaded,
		Timeout: playwright.Float(float64(max(time.Until(deadline), time.Second).Milliseconds()))})
}

// within runs fn, a Playwright call on a page, bounded by ctx and d: a
// page that never answers (a stalled document, a busy renderer) ends the
// wait, not the take-over. The call itself ends when the tab or the
// browser closes (the goroutine is the Host's: Close waits for it).
func (h *Host) within(ctx context.Context, d time.Duration, fn func() error) error {
	ch := make(chan error, 1)
	if !h.spawn(func() { ch <- fn() }) {
		return ErrClosed
	}
	t := time.NewTimer(boundedBy(ctx, d))
	defer t.Stop()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("the tab did not answer within %v", d)
	}
}

// evalWithin is page.Evaluate bounded like within.
func (h *Host) evalWithin(ctx context.Context, page playwright.Page, d time.Duration, expr string, arg ...any) (any, error) {
	var v any
	err := h.within(ctx, d, func() error {
		var err error
		v, err = page.Evaluate(expr, arg...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// TakeoverURL is the held tab's address without its query (for the guide
// and the journal: a query may hold a code).
func (h *Host) TakeoverURL(tab string) (string, error) {
	ht, err := h.heldTab(tab)
	if err != nil {
		return "", err
	}
	return redactURL(ht.page.URL()), nil
}

// TakeoverDone hands the held tab back: for the sign-in, whether the store
// now shows the signed-in marker (reading the tab, then a fresh copy of the
// store's home page in it). The tab is closed and AwaitSignIn returns.
func (h *Host) TakeoverDone(ctx context.Context, tab string) (signedIn bool, err error) {
	ht, err := h.heldTab(tab)
	if err != nil {
		return false, err
	}
	ht.mu.Lock()
	// A submit the person just sent may still be on its way back from the
	// identity site: let it land on the store (bounded) before reading.
	h.settle(ctx, ht)
	deadline := time.Now().Add(handBackWait)
	tick := time.NewTicker(250 * time.Millisecond)
	for time.Now().Before(deadline) {
		if u, perr := url.Parse(ht.page.URL()); perr == nil && u.Hostname() != "" && !h.loginOnlyHost(u.Hostname()) {
			break
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
			continue
		}
		break
	}
	tick.Stop()
	ok := h.readSession(ht.page, time.Now().Add(handBackWait), h.opts.AuthWait) == sessionSignedIn
	if !ok {
		if _, gerr := ht.page.Goto(h.profile.HomeURL, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: ht.ms()}); gerr == nil {
			ok = h.readSession(ht.page, time.Now().Add(h.opts.LoginStepTimeout), h.opts.AuthWait) == sessionSignedIn
		}
	}
	ht.mu.Unlock()
	h.releaseHeld(ht, ok)
	h.log.Info("take-over: handed back", "tab", tab, "signed_in", ok)
	return ok, nil
}

// releaseHeld closes the held tab and ends the login's permissions.
func (h *Host) releaseHeld(ht *heldTab, ok bool) {
	h.mu.Lock()
	if h.held != ht {
		h.mu.Unlock()
		return
	}
	h.held = nil
	h.loginPage, h.loginToken = nil, ""
	ht.ok = ok
	close(ht.done)
	h.mu.Unlock()
	closePage(ht.page)
}

// AwaitSignIn waits until the person hands the held sign-in tab back (nil
// when the store is then signed in), ctx ends or the Host closes. Without a
// held sign-in it returns at once with ErrNotHeld.
func (h *Host) AwaitSignIn(ctx context.Context) error {
	ht, err := h.heldTab(SignInTab)
	if err != nil {
		return err
	}
	select {
	case <-ht.done:
	case <-ctx.Done():
		return fmt.Errorf("browser: waiting for a person to sign in: %w", ctx.Err())
	case <-h.life.Done():
		return fmt.Errorf("browser: waiting for a person to sign in: %w", ErrClosed)
	}
	if !ht.ok {
		return errors.New("browser: the sign-in was handed back without the store showing the shopper signed in")
	}
	return nil
}

// waitHostOrChallenge waits for the page to reach host want, or for the
// profile's challenge to show (errChallenge). On timeout it returns false
// and no error: the caller's usual wait tells what went wrong.
func (h *Host) waitHostOrChallenge(ctx context.Context, page playwright.Page, want string, d time.Duration) (reached bool, err error) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if u, perr := url.Parse(page.URL()); perr == nil && strings.EqualFold(u.Hostname(), want) {
			return true, nil
		}
		if h.showsChallenge(page) {
			return false, errChallenge
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-tick.C:
		}
	}
}

// showsChallenge reads whether the page shows the profile's challenge
// (bounded: a page that does not answer shows none).
func (h *Host) showsChallenge(page playwright.Page) bool {
	sel := h.profile.ChallengeSelector
	if sel == "" {
		return false
	}
	ch := make(chan bool, 1)
	go func() {
		v, err := page.Evaluate(`sel => !!document.querySelector(sel)`, sel)
		b, _ := v.(bool)
		ch <- err == nil && b
	}()
	select {
	case b := <-ch:
		return b
	case <-time.After(identityProbeWait):
		return false
	}
}

// TakeoverElement is one visible element of the held tab a person may act on, as
// the guide reads it: its box in 0–999 screen coordinates.
type TakeoverElement struct {
	Tag     string `json:"tag"`
	Type    string `json:"type,omitempty"`
	ID      string `json:"id,omitempty"`
	Label   string `json:"label"`
	Auto    string `json:"autocomplete,omitempty"`
	Checked bool   `json:"checked,omitempty"`
	Filled  bool   `json:"filled,omitempty"` // a field with a value (never the value)
	Box     [4]int `json:"box"`
}

// PageRead is what the guide reads of the held tab: its address (no
// query), whether the store shows the shopper signed in, its visible text
// (bounded) and its elements.
type PageRead struct {
	URL      string            `json:"url"`
	SignedIn bool              `json:"signed_in"`
	Text     string            `json:"text"`
	Elements []TakeoverElement `json:"elements"`
}

// readElements lists the page's visible links, buttons and fields with
// their labels (the accessible name, roughly) and boxes.
const readElements = `() => {
  const W = innerWidth, H = innerHeight, out = [];
  const n = v => Math.max(0, Math.min(999, Math.round(v)));
  for (const e of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=checkbox]')) {
    const r = e.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0 || getComputedStyle(e).visibility === 'hidden') continue;
    let label = e.getAttribute('aria-label') || '';
    if (!label && e.labels && e.labels.length) label = e.labels[0].innerText;
    if (!label && (e.tagName === 'A' || e.tagName === 'BUTTON' || e.getAttribute('role'))) label = e.innerText || '';
    if (!label) label = e.getAttribute('placeholder') || e.getAttribute('name') || '';
    out.push({tag: e.tagName.toLowerCase(), type: (e.getAttribute('type') || '').toLowerCase(), id: e.id || '',
      label: label.trim().slice(0, 80), autocomplete: e.getAttribute('autocomplete') || '',
      checked: !!e.checked, filled: 'value' in e && e.tagName !== 'BUTTON' && !!e.value && e.type !== 'checkbox',
      box: [n(r.left*1000/W), n(r.top*1000/H), n(r.right*1000/W), n(r.bottom*1000/H)]});
  }
  return JSON.stringify({text: (document.body ? document.body.innerText : '').slice(0, 2000), elements: out});
}`

// TakeoverRead reads the held tab for the guide (never a field's value).
func (h *Host) TakeoverRead(ctx context.Context, tab string) (PageRead, error) {
	ht, err := h.heldTab(tab)
	if err != nil {
		return PageRead{}, err
	}
	ht.mu.Lock()
	defer ht.mu.Unlock()
	// The person's last input may have started a navigation: a reading
	// the navigation interrupts is taken again on the new page (bounded).
	h.settle(ctx, ht)
	var v any
	for try := 0; ; try++ {
		v, err = h.evalWithin(ctx, ht.page, takeoverWait, readElements)
		if err == nil {
			break
		}
		if try >= 20 || !strings.Contains(err.Error(), "context was destroyed") {
			return PageRead{}, fmt.Errorf("browser: reading the tab for the guide: %w", err)
		}
		select {
		case <-ctx.Done():
			return PageRead{}, fmt.Errorf("browser: reading the tab for the guide: %w", ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
		h.settle(ctx, ht)
	}
	s, _ := v.(string)
	var pr PageRead
	if err := json.Unmarshal([]byte(s), &pr); err != nil {
		return PageRead{}, fmt.Errorf("browser: reading the tab for the guide: %w", err)
	}
	pr.URL = redactURL(ht.page.URL())
	pr.SignedIn = h.readSession(ht.page, time.Now().Add(identityProbeWait), 0) == sessionSignedIn
	return pr, nil
}
