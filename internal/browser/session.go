package browser

import (
	"context"
	"net/url"
	"time"

	"github.com/playwright-community/playwright-go"
)

// sessionVerdict is what a page says about the store session.
type sessionVerdict int

const (
	// sessionUnknown: the page cannot tell — still loading, not a store
	// page, navigating away, or no answer in time. Never a reason to sign in.
	sessionUnknown sessionVerdict = iota
	// sessionSignedIn: the signed-in marker is in the document.
	sessionSignedIn
	// sessionSignedOut: the store says so — a store document that finished
	// loading has no marker (and still has none after a grace), or the
	// page was sent to the identity site.
	sessionSignedOut
)

func (v sessionVerdict) String() string {
	switch v {
	case sessionSignedIn:
		return "signed in"
	case sessionSignedOut:
		return "signed out"
	}
	return "unknown"
}

// sessionProbe reads, in one evaluation, whether the document finished
// loading and whether it holds the marker: a definite answer about this
// document, not a wait that a starved renderer can time out.
const sessionProbe = `sel => [document.readyState, !!document.querySelector(sel), location.href]`

// sessionLoadWait bounds the wait for a page without the marker to finish
// loading: longer, and the page's word is unknown (the agent's turn goes on).
const sessionLoadWait = 5 * time.Second

// sessionProbeWait bounds one sessionProbe: a renderer that does not answer
// (a document that never commits) tells nothing, and must not hang the
// caller (a guide step read the store's home page forever).
const sessionProbeWait = 10 * time.Second

type sessionRead struct {
	ready   string
	present bool
	href    string
}

func (h *Host) probeSession(page playwright.Page) (sessionRead, bool) {
	v, err := h.evalWithin(context.Background(), page, sessionProbeWait, sessionProbe, h.profile.AuthMarkerSelector)
	if err != nil {
		return sessionRead{}, false // navigating, closed, or no answer
	}
	a, ok := v.([]any)
	if !ok || len(a) != 3 {
		return sessionRead{}, false
	}
	var r sessionRead
	r.ready, _ = a[0].(string)
	r.present, _ = a[1].(bool)
	r.href, _ = a[2].(string)
	return r, true
}

// readSession tells what page says about the session, by deadline. Signed
// out is concluded only from evidence that the store says so: the page is
// on a login-only host (the store sent it to sign in), or a store document
// that finished loading has no marker, looked at again after grace. A page
// still loading when the deadline comes, a navigation in between, or a
// call that does not answer is sessionUnknown — a busy machine slows a page
// down, it does not sign anybody out.
func (h *Host) readSession(page playwright.Page, deadline time.Time, grace time.Duration) sessionVerdict {
	if u, err := url.Parse(page.URL()); err == nil && h.loginOnlyHost(u.Hostname()) {
		return sessionSignedOut
	}
	if !h.onStoreSite(page.URL()) {
		return sessionUnknown
	}
	first, ok := h.probeSession(page)
	if !ok {
		return sessionUnknown
	}
	if first.present {
		return sessionSignedIn
	}
	if first.ready != "complete" {
		left := min(time.Until(deadline), sessionLoadWait)
		if left <= 0 {
			return sessionUnknown
		}
		if err := page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{
			State: playwright.LoadStateLoad, Timeout: playwright.Float(float64(left.Milliseconds()) + 1),
		}); err != nil {
			return sessionUnknown
		}
	}
	// Loaded without the marker so far: give a script-rendered header its
	// grace (a timeout here proves nothing), then ask the document again.
	// A grace the deadline leaves no time for (the load wait used it up)
	// is not given: then nothing proves the marker is not coming.
	if grace > 0 && time.Until(deadline) <= 0 {
		return sessionUnknown
	}
	if wait := min(grace, time.Until(deadline)); wait > 0 {
		err := page.Locator(h.profile.AuthMarkerSelector).First().WaitFor(playwright.LocatorWaitForOptions{
			State: playwright.WaitForSelectorStateAttached, Timeout: playwright.Float(float64(wait.Milliseconds()) + 1),
		})
		if err == nil {
			return sessionSignedIn
		}
	}
	last, ok := h.probeSession(page)
	switch {
	case !ok:
		return sessionUnknown
	case last.present:
		return sessionSignedIn
	case last.ready != "complete":
		return sessionUnknown // a new document started meanwhile
	case !h.onStoreSite(last.href):
		if u, err := url.Parse(last.href); err == nil && h.loginOnlyHost(u.Hostname()) {
			return sessionSignedOut
		}
		return sessionUnknown
	}
	return sessionSignedOut
}
