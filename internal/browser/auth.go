package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// IsAuthenticated reports whether the store shows the signed-in marker in
// tab t. A tab that is not on the store's site is first sent to its home
// page — unless the store keeps its session in cookies
// (store.Profile.SessionInCookies) and the browser has none to send there:
// then the answer is no at once (a fresh profile; Login still looks for a
// session before it signs in). A store page without the marker is
// reloaded once (it may predate a login) before the answer is no. The page
// is read with readSession: a page that is slow to load is not taken for a
// signed-out one (the answer is then no only because nothing proves yes;
// the login's own first check settles it).
func (h *Host) IsAuthenticated(ctx context.Context, t *Tab) (bool, error) {
	if t == nil || t.h != h {
		return false, errors.New("browser: IsAuthenticated needs a tab of this host")
	}
	if h.profile.AuthMarkerSelector == "" {
		return false, fmt.Errorf("browser: the %s store profile has no signed-in marker", h.profile.Name)
	}
	var ok bool
	err := t.act(ctx, "check the session", false, func(c call) error {
		var err error
		switch onSite := h.onStoreSite(t.page.URL()); {
		case !onSite && h.profile.SessionInCookies && !h.sendsStoreCookies(t):
			h.log.Debug("no store cookie in the browser: signed out, no page loaded")
			return nil
		case onSite:
			if h.readSession(t.page, c.deadline, 0) == sessionSignedIn {
				ok = true
				return nil
			}
			// The page may predate a login: look again at a fresh copy.
			_, err = t.page.Reload(playwright.PageReloadOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: c.ms()})
		default:
			_, err = t.page.Goto(h.profile.HomeURL, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded, Timeout: c.ms()})
		}
		if err := t.navResult(h.profile.HomeURL, err); err != nil {
			return err
		}
		v := h.readSession(t.page, c.deadline, min(h.opts.AuthWait, max(time.Until(c.deadline), time.Millisecond)))
		if v == sessionUnknown {
			h.log.Debug("the session check could not tell (page loading or slow)")
		}
		ok = v == sessionSignedIn
		return nil
	})
	if err != nil {
		return false, err // fn may still be running: ok is not read
	}
	return ok, nil
}

// sendsStoreCookies reports whether the browser would send any cookie with
// a request for the store's home page; when it cannot tell, it says yes (the
// page is then loaded and read).
func (h *Host) sendsStoreCookies(t *Tab) bool {
	cs, err := t.page.Context().Cookies(h.profile.HomeURL)
	if err != nil {
		h.log.Debug("the browser's cookies could not be read", "err", err)
		return true
	}
	return len(cs) > 0
}

// onStoreSite reports whether raw is an http(s) page on an allowed host.
func (h *Host) onStoreSite(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return h.profile.HostAllowed(u.Hostname())
}

// Login runs the store's scripted login in a tab of its own, typing the
// configured credentials (never logged, never shown to a model). The policy
// lets that tab — and only it: its requests carry the login's token — reach
// the store's login hosts and login paths while it runs; the other tabs keep
// the plain policy meanwhile. Concurrent callers share one login. A session that
// is still valid ends the login early.
func (h *Host) Login(ctx context.Context) error {
	ch := h.sf.DoChan("login", func() (any, error) {
		// The login runs on singleflight's goroutine: count it among the
		// Host's own so that Close waits for it.
		if !h.own() {
			return nil, fmt.Errorf("browser: login: %w", ErrClosed)
		}
		defer h.wg.Done()
		lctx, cancel := context.WithTimeout(h.life, h.opts.loginBudget())
		defer cancel()
		return nil, h.login(lctx)
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return fmt.Errorf("browser: waiting for the login: %w", ctx.Err())
	}
}

// loginBudget bounds one whole Login: LoginTimeout, plus the time a person
// may take to finish it by hand when that is possible (a headful, launched
// browser with ManualLoginWait), so the manual wait is not cut short.
func (o *Options) loginBudget() time.Duration {
	if o.manualLoginPossible() {
		return o.LoginTimeout + o.ManualLoginWait
	}
	return o.LoginTimeout
}

func (o *Options) manualLoginPossible() bool {
	return o.ManualLoginWait > 0 && !o.Headless && o.RemoteURL == ""
}

// ErrNoCredentials means Login has no username or password to type.
var ErrNoCredentials = errors.New("no store credentials: set metro_username and metro_password (GEMINI_SUPPLY_METRO_USERNAME / GEMINI_SUPPLY_METRO_PASSWORD)")

func (h *Host) login(ctx context.Context) error {
	p := h.profile
	if len(p.LoginSteps) == 0 {
		return fmt.Errorf("browser: the %s store profile has no login steps", p.Name)
	}
	for _, st := range p.LoginSteps {
		if st.Kind == store.StepFill && ((st.Value == store.CredentialUsername && h.opts.Username == "") ||
			(st.Value == store.CredentialPassword && !h.opts.Password.IsSet())) {
			return ErrNoCredentials
		}
	}
	h.mu.Lock()
	ht := h.held
	h.mu.Unlock()
	if ht != nil {
		return &NeedsPersonError{NeedsPerson: ht.NeedsPerson, Step: "(a person has the sign-in tab)"}
	}
	// No tab is mid-add while the session changes: cart requests already
	// sent are answered first, new ones wait until the login ends.
	left, resume := h.cart.hold(ctx, h.opts.LoginStepTimeout)
	defer resume()
	if left > 0 {
		h.log.Warn("signing in although cart requests are still unanswered after waiting", "in_flight", left, "waited", h.opts.LoginStepTimeout)
	}
	g, err := h.current(ctx)
	if err != nil {
		return err
	}
	page, err := h.openPage(ctx, g)
	if err != nil {
		if isTargetClosed(err) {
			return fmt.Errorf("browser: opening the login tab: %w (%v)", ErrBrowserGone, err)
		}
		return fmt.Errorf("browser: opening the login tab: %w", err)
	}
	held := false
	defer func() {
		if !held {
			closePage(page)
		}
	}()
	token, err := h.tagLoginRequests(g, page)
	if err != nil {
		return fmt.Errorf("browser: preparing the login tab: %w", err)
	}
	h.mu.Lock()
	h.loginPage, h.loginToken = page, token
	h.mu.Unlock()
	defer func() {
		if held {
			return // the person's tab keeps the login's permissions
		}
		h.mu.Lock()
		h.loginPage, h.loginToken = nil, ""
		h.mu.Unlock()
	}()
	if g.remote {
		_ = page.SetViewportSize(h.opts.Width, h.opts.Height)
	}
	h.log.Info("logging in to the store", "store", p.Name)
	start := time.Now()
	for i, step := range p.LoginSteps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("browser: login stopped before %q: %w", step.What, err)
		}
		h.log.Debug("login step", "n", i+1, "step", step.What, "kind", string(step.Kind))
		done, err := h.loginStep(ctx, page, step)
		if errors.Is(err, errChallenge) {
			held = true
			ht := h.holdSignIn(g, page, ReasonSignInChallenge)
			h.log.Warn("the store's sign-in asks for more than the password: waiting for a person to take over in the panel", "store", p.Name, "step", step.What)
			return &NeedsPersonError{NeedsPerson: ht.NeedsPerson, Step: step.What}
		}
		if err != nil {
			if g.isGone() || isTargetClosed(err) {
				return fmt.Errorf("browser: login step %q: %w", step.What, ErrBrowserGone)
			}
			// A step that found nothing to do may be one the session no
			// longer needs (a slow page hid the marker from the first check).
			if !errors.Is(err, ErrLoginRefused) && h.readSession(page, time.Now().Add(h.opts.LoginStepTimeout), 0) == sessionSignedIn {
				h.log.Info("the store session is signed in; the rest of the login is not needed", "store", p.Name, "step", step.What)
				return nil
			}
			if h.opts.manualLoginPossible() {
				return h.waitManualLogin(ctx, page, step, err)
			}
			return fmt.Errorf("browser: logging in to %s failed: %w", p.Name, h.stepError(i+1, step, err))
		}
		if done {
			h.log.Info("the store session is still valid; no login needed", "store", p.Name)
			return nil
		}
	}
	h.log.Info("logged in to the store", "store", p.Name, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// waitManualLogin lets a person finish the login in a headful browser.
func (h *Host) waitManualLogin(ctx context.Context, page playwright.Page, step store.LoginStep, cause error) error {
	h.log.Warn("the scripted login could not continue; finish the login in the browser window", "step", step.What, "wait", h.opts.ManualLoginWait)
	err := page.Locator(h.profile.AuthMarkerSelector).First().WaitFor(playwright.LocatorWaitForOptions{
		State:   playwright.WaitForSelectorStateAttached,
		Timeout: playwright.Float(float64(boundedBy(ctx, h.opts.ManualLoginWait).Milliseconds())),
	})
	if err != nil {
		return fmt.Errorf("browser: the login did not complete (scripted login stopped at %q: %v; no signed-in marker appeared while waiting for a manual login)", step.What, cause)
	}
	h.log.Info("logged in to the store by hand", "store", h.profile.Name)
	return nil
}

func boundedBy(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		d = min(d, time.Until(dl))
	}
	return max(d, time.Millisecond)
}

// stepError describes a failed login step: which one, and whether the page
// did not answer in time (most often on a busy machine) or the identity site
// refused the sign-in.
func (h *Host) stepError(n int, s store.LoginStep, err error) error {
	if errors.Is(err, ErrLoginRefused) {
		return &LoginStepError{N: n, What: s.What, Err: err}
	}
	if isTimeout(err) {
		return &LoginStepError{N: n, What: s.What, TimedOut: true, Limit: h.stepTimeout(s), Err: err}
	}
	return &LoginStepError{N: n, What: s.What, Err: firstLine(err)}
}

func (h *Host) stepTimeout(s store.LoginStep) time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return h.opts.LoginStepTimeout
}

// loginStep runs one step; done means the login can stop successfully.
func (h *Host) loginStep(ctx context.Context, page playwright.Page, s store.LoginStep) (done bool, err error) {
	timeout := h.stepTimeout(s)
	ms := playwright.Float(float64(boundedBy(ctx, timeout).Milliseconds()))
	switch s.Kind {
	case store.StepGoto:
		u := s.URL
		if u == "" {
			u = h.profile.HomeURL
		}
		_, err := page.Goto(u, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad, Timeout: ms})
		return false, err
	case store.StepClick:
		if s.Optional {
			return false, h.optionalClick(ctx, page, s)
		}
		return false, page.Locator(s.Selector).First().Click(playwright.LocatorClickOptions{Timeout: ms})
	case store.StepDoneIfAuthenticated:
		// A definite reading of the loaded page, with the step's timeout
		// as the grace for a script-drawn marker: a starved renderer that
		// answers late does not send a signed-in session through the login
		// form (whose "Sign in" button a signed-in page does not have).
		deadline := time.Now().Add(max(boundedBy(ctx, h.opts.LoginStepTimeout), timeout))
		return h.readSession(page, deadline, timeout) == sessionSignedIn, nil
	case store.StepWaitForHost:
		// Reaching the host is enough (commit): the next steps wait for what
		// they need on the page. Waiting for a load state here hung for the
		// whole step on a loaded machine although the page was already there
		// ("did not reach www.metro.ca (it is on https://www.metro.ca/en)").
		want := strings.ToLower(s.Host)
		if h.profile.ChallengeSelector != "" && !h.profile.LoginHostAllowed(want) {
			// Back to the store, or a challenge a person must pass.
			reached, err := h.waitHostOrChallenge(ctx, page, want, boundedBy(ctx, timeout))
			if reached || err != nil {
				return false, err
			}
			ms = playwright.Float(1) // timed out: the usual wait says why
		}
		err := page.WaitForURL(func(raw string) bool {
			u, err := url.Parse(raw)
			return err == nil && strings.EqualFold(u.Hostname(), want)
		}, playwright.PageWaitForURLOptions{Timeout: ms, WaitUntil: playwright.WaitUntilStateCommit})
		if err != nil && !isTargetClosed(err) {
			if u, perr := url.Parse(page.URL()); perr == nil && h.profile.LoginHostAllowed(u.Hostname()) && !h.profile.LoginHostAllowed(want) {
				// Submitted, and still on the identity site: refused only when
				// its page says so; a page that has not answered is slow.
				if why, refused := h.identityRefused(page); refused {
					return false, fmt.Errorf("the page did not reach %s (it is still on %s, which %s): %w", s.Host, redactURL(page.URL()), why, ErrLoginRefused)
				}
				return false, fmt.Errorf("the page did not reach %s (it is still on %s, whose page did not answer in time): %w", s.Host, redactURL(page.URL()), playwright.ErrTimeout)
			}
			return false, fmt.Errorf("the page did not reach %s (it is on %s): %w", s.Host, redactURL(page.URL()), err)
		}
		return false, err
	case store.StepWaitForSelector:
		return false, page.Locator(s.Selector).First().WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible, Timeout: ms})
	case store.StepFill:
		return false, h.fillCredential(page, s, ms)
	case store.StepPress:
		key, err := canonicalKey(s.Key)
		if err != nil {
			return false, err
		}
		return false, page.Keyboard().Press(key)
	case store.StepWaitForAuthMarker:
		deadline := time.Now().Add(boundedBy(ctx, timeout))
		switch h.readSession(page, deadline, time.Until(deadline)) {
		case sessionSignedIn:
			return false, nil
		case sessionSignedOut:
			if u, perr := url.Parse(page.URL()); perr == nil && h.loginOnlyHost(u.Hostname()) {
				return false, fmt.Errorf("the signed-in marker did not appear: %w", ErrLoginRefused)
			}
			return false, errors.New("the store's page loaded without the signed-in marker")
		}
		return false, fmt.Errorf("the signed-in marker did not appear: %w", playwright.ErrTimeout)
	}
	return false, fmt.Errorf("unknown login step kind %q", s.Kind)
}

// identityProbe reads the identity site's page in one evaluation: whether
// it finished loading, the text of a visible error message (role=alert, as
// Azure AD B2C and the demo show it), and whether the password field
// (selector pw) is shown empty — the form again: a document whose submit was
// never answered still holds the typed password.
const identityProbe = `pw => {
  const shown = e => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  let err = '';
  for (const e of document.querySelectorAll('[role=alert], .error.pageLevel, #error-message')) {
    const t = (e.innerText || '').trim();
    if (t && shown(e)) { err = t.slice(0, 200); break; }
  }
  const f = pw ? document.querySelector(pw) : null;
  return [document.readyState, err, !!f && shown(f) && f.value === ''];
}`

// identityProbeWait bounds the identity page's answer to identityProbe.
const identityProbeWait = 5 * time.Second

// identityRefused says whether the identity site's page, after the sign-in
// was submitted, refused it: the page finished loading and shows an error
// message or the form again. Anything else (a submit not answered yet, a
// page still loading, no answer to the probe) is no refusal: the page is
// slow, and the credentials are not to blame.
func (h *Host) identityRefused(page playwright.Page) (why string, refused bool) {
	pw := ""
	for _, st := range h.profile.LoginSteps {
		if st.Kind == store.StepFill && st.Value == store.CredentialPassword {
			pw = st.Selector
		}
	}
	type answer struct {
		v   any
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := page.Evaluate(identityProbe, pw)
		ch <- answer{v, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-time.After(identityProbeWait):
		return "", false
	}
	r, ok := a.v.([]any)
	if a.err != nil || !ok || len(r) != 3 {
		return "", false
	}
	ready, _ := r[0].(string)
	msg, _ := r[1].(string)
	form, _ := r[2].(bool)
	switch {
	case ready != "complete":
		return "", false
	case msg != "":
		return "shows an error message", true // not quoted: it may name the account
	case form:
		return "shows the sign-in form again", true
	}
	return "", false
}

// optionalClick clicks an element the page may or may not show (a cookie
// banner): present in the loaded page, or appearing within the step's
// timeout, it is clicked with the whole login step bound — under load a
// click takes longer than the time to decide the element is there, and a
// banner left up covers the next step's button. Absent, the step is skipped.
func (h *Host) optionalClick(ctx context.Context, page playwright.Page, s store.LoginStep) error {
	loc := page.Locator(s.Selector).First()
	present := false
	if v, err := page.Evaluate(`sel => !!document.querySelector(sel)`, s.Selector); err == nil {
		present, _ = v.(bool)
	}
	if !present {
		err := loc.WaitFor(playwright.LocatorWaitForOptions{
			State: playwright.WaitForSelectorStateAttached, Timeout: playwright.Float(float64(boundedBy(ctx, h.stepTimeout(s)).Milliseconds())),
		})
		if err != nil {
			if isTargetClosed(err) {
				return err
			}
			h.log.Debug("optional login step skipped: nothing to click", "step", s.What)
			return nil
		}
	}
	err := loc.Click(playwright.LocatorClickOptions{Timeout: playwright.Float(float64(boundedBy(ctx, h.opts.LoginStepTimeout).Milliseconds()))})
	if err != nil && !isTargetClosed(err) {
		// It went away by itself (or never became clickable): the next
		// step tells whether that matters.
		h.log.Debug("optional login step: the element could not be clicked", "step", s.What, "err", firstLine(err))
		return nil
	}
	return err
}

// fillCredential clicks the field, clears it and types the credential key
// by key. Errors never carry the typed text.
func (h *Host) fillCredential(page playwright.Page, s store.LoginStep, ms *float64) error {
	var value string
	switch s.Value {
	case store.CredentialUsername:
		value = h.opts.Username
	case store.CredentialPassword:
		value = h.opts.Password.Reveal()
	default:
		return fmt.Errorf("login step %q types an unknown credential %q", s.What, s.Value)
	}
	if value == "" {
		return ErrNoCredentials
	}
	if err := page.Locator(s.Selector).First().Click(playwright.LocatorClickOptions{Timeout: ms}); err != nil {
		return err
	}
	kb := page.Keyboard()
	if err := kb.Press("ControlOrMeta+a"); err != nil {
		return sanitizeLoginErr(err)
	}
	if err := kb.Press("Delete"); err != nil {
		return sanitizeLoginErr(err)
	}
	return typeStrokes(kb, value)
}

// typeStrokes types text key by key (strokes), its errors without the
// typed text (sanitizeLoginErr): a password, a code.
func typeStrokes(kb playwright.Keyboard, text string) error {
	for _, st := range strokes(text) {
		var err error
		if st.key != "" {
			err = kb.Press(st.key)
		} else {
			err = kb.InsertText(st.insert)
		}
		if err != nil {
			return sanitizeLoginErr(err)
		}
	}
	return nil
}

// sanitizeLoginErr keeps an error's class (the browser went away) but not
// its text, which may quote a typed key.
func sanitizeLoginErr(err error) error {
	if err == nil {
		return nil
	}
	if isTargetClosed(err) {
		return fmt.Errorf("typing a credential: %w", playwright.ErrTargetClosed)
	}
	return errors.New("typing a credential failed (details withheld: they could quote the credential)")
}
