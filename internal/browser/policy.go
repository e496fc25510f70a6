package browser

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// CDP error reasons for a refused request: a top-level navigation failed
// as "Aborted" leaves the tab on its current page (no error page); a
// replay tab's refused subresources fail as blocked by the client (a
// refused frame gets an empty answer instead: refuseFrame).
const (
	abortNavigation = "Aborted"
	abortFrame      = "BlockedByClient"
)

// allowHost is the proxy's check for opening a tunnel: the allowlist,
// plus the login hosts while Login runs. A tunnel only carries requests:
// each of them is checked on its own (checkRequest), and only the login
// tab's get the login's permissions.
func (h *Host) allowHost(host string) bool {
	if h.profile.HostAllowed(host) || (h.loginActive() && h.profile.LoginHostAllowed(host)) {
		return true
	}
	h.noteBlockedHost(host, "proxy")
	return false
}

// checkRequest is the proxy's check of one request (any tab, frame,
// worker or redirect hop): the store profile's CheckRequest, relaxed for
// the login only for the login tab's own requests (loginRequest).
func (h *Host) checkRequest(method string, u *url.URL, hdr http.Header) error {
	v := h.profile.CheckRequest(method, u, h.loginRequest(u, hdr))
	if v.Allowed {
		return nil
	}
	h.noteRefused(method, u, v, "proxy")
	return errors.New(v.Reason)
}

// readsBody: the policy reads the body of a state change to a store host.
func (h *Host) readsBody(method string, u *url.URL) bool {
	return h.profile.BodyChecked(method, u)
}

// checkBody is the proxy's check of such a body: refused when it names an
// order word or a method override, or is too long to read.
func (h *Host) checkBody(method string, u *url.URL, hdr http.Header, body []byte, complete bool) error {
	v := h.profile.CheckBody(method, u, hdr.Get("Content-Type"), body, complete)
	if v.Allowed {
		return nil
	}
	h.noteRefused(method, u, v, "proxy")
	return errors.New(v.Reason)
}

// loginHeader carries the running login's token on every request of the
// login tab (added by the tab's own CDP session, so no page script can
// read or set it; the proxy removes it before a request leaves).
const loginHeader = "X-Gemini-Supply-Login"

// loginRequest says whether a request gets the login's permissions (login
// hosts, login paths, state changes outside the cart). Only while Login
// runs, and only for:
//   - a request that carries the login's token: one of the login tab's
//     (its frames, in-process or not, and every redirect hop);
//   - a request to a login-only host whose Origin (or Referer) is a
//     login-only host: a cross-site frame of the identity site (a challenge
//     frame) whose own requests the tab's session does not see. A page in
//     another tab cannot produce that: it has no identity-site document to
//     send from, because loading one needs the token.
//
// Every other tab keeps the plain policy while a login runs.
func (h *Host) loginRequest(u *url.URL, hdr http.Header) bool {
	h.mu.Lock()
	token := h.loginToken
	h.mu.Unlock()
	if token == "" {
		return false
	}
	if got := hdr.Get(loginHeader); got != "" {
		return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
	}
	if !h.loginOnlyHost(u.Hostname()) {
		return false
	}
	from := hdr.Get("Origin")
	if from == "" || from == "null" {
		from = hdr.Get("Referer")
	}
	fu, err := url.Parse(from)
	if err != nil || (fu.Scheme != "https" && fu.Scheme != "http") {
		return false
	}
	return h.loginOnlyHost(fu.Hostname())
}

// loginOnlyHost: a login host that is not also a store host.
func (h *Host) loginOnlyHost(host string) bool {
	return host != "" && h.profile.LoginHostAllowed(host) && !h.profile.HostAllowed(host)
}

func (h *Host) loginActive() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.loginPage != nil
}

// noteRefused counts and logs a refused request: hosts once each (see
// noteBlockedHost); a state change outside the cart operations as a
// warning, once per method and path, so a user can report a cart
// operation the profile misses; blocked paths at debug level (the policy
// working as it should is no news in a run's output).
func (h *Host) noteRefused(method string, u *url.URL, v store.RequestVerdict, by string) {
	h.noteHeldRefusal(v)
	if v.Rule == store.RuleHost {
		h.noteBlockedHost(u.Hostname(), by)
		return
	}
	key := strings.ToUpper(method) + " " + store.NormalizeHost(u.Host) + u.EscapedPath()
	h.mu.Lock()
	h.refused[v.Rule]++
	first := !h.refusedSeen[key]
	h.refusedSeen[key] = true
	h.mu.Unlock()
	switch {
	case v.Rule == store.RuleStateChange && first:
		h.log.Warn("refused a state-changing request to a path the store profile does not name as a cart operation; if shopping needs it, report this path",
			"method", strings.ToUpper(method), "host", store.NormalizeHost(u.Host), "path", u.EscapedPath(), "store", h.profile.Name, "by", by)
	case first:
		// The policy doing its work (a page's checkout or account request,
		// the demo's hostile widget): nothing reached the store, so no
		// alarm in a run's ordinary output; Refused counts them.
		h.log.Debug("the safety policy stopped a request to a checkout or account path, as it should (nothing reached the store)",
			"method", strings.ToUpper(method), "url", redactURL(u.String()), "matched", v.Match, "by", by)
	}
}

// Refused returns how many requests the policy refused, by rule (blocked
// paths, order paths, state changes; hosts are in BlockedHosts).
func (h *Host) Refused() map[store.Rule]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.refused)
}

// verifyProxy checks, before any page is used, that the context's traffic
// goes through the policy proxy: a remote browser that cannot reach it (or
// a launch that ignored it) would not be held to the store policy, so the
// browser is not used at all.
func (h *Host) verifyProxy(g *generation) error {
	probe := "http://" + proxyProbeHost + "/"
	resp, err := g.keeper.Goto(probe, playwright.PageGotoOptions{Timeout: playwright.Float(float64(h.opts.ActionTimeout.Milliseconds())), WaitUntil: playwright.WaitUntilStateCommit})
	var body string
	if err == nil && resp != nil {
		b, _ := resp.Body()
		body = string(b)
	}
	_, _ = g.keeper.Goto("about:blank")
	if body == "policy proxy" {
		return nil
	}
	if err == nil {
		err = errors.New("an unexpected answer")
	}
	if g.remote {
		return fmt.Errorf("browser: the remote browser cannot reach the policy proxy at %s (%w): every request must pass the proxy for the store policy (blocked paths in every frame, worker and redirect) to hold, so the remote browser is not used; run it on this machine or use a local browser", h.proxy.URL(), firstLine(err))
	}
	return fmt.Errorf("browser: the browser's traffic does not go through the policy proxy (%w); refusing to run without the store policy", firstLine(err))
}

// handlePopup deals with a new tab a page opened despite the popup script
// (on its own goroutine): it learns the address the tab went to, closes
// it, and loads the address in the opener if the policy allows it.
func (h *Host) handlePopup(opener, popup playwright.Page) {
	_ = popup.WaitForURL(func(u string) bool { return u != "" && u != "about:blank" },
		playwright.PageWaitForURLOptions{Timeout: playwright.Float(float64(popupURLWait.Milliseconds())), WaitUntil: playwright.WaitUntilStateCommit})
	raw := popup.URL()
	closePage(popup)
	st := h.pageState(opener)
	if st == nil {
		return
	}
	if !strings.HasPrefix(raw, "http:") && !strings.HasPrefix(raw, "https:") {
		st.notice("The page opened a new tab; it was closed (its address was blocked or it loaded nothing).")
		return
	}
	h.popupNavigation(st, raw)
}

// popupNavigation handles the address a popup wanted to open: allowed
// addresses are loaded in the opener tab, others are reported to it.
func (h *Host) popupNavigation(st *pageState, raw string) {
	pol := h.profile.CheckURL(raw)
	if !pol.Allowed {
		st.notice(fmt.Sprintf("The page tried to open %s in a new tab; the new tab was closed and the address blocked: %s.", raw, pol.Reason))
		return
	}
	st.notice(fmt.Sprintf("The page opened %s in a new tab; the new tab was closed and the address opened in this tab instead.", raw))
	st.queuePopup(raw)
	t := st.tab
	h.spawn(func() {
		t.runQueuedPopups()
	})
}

// mainFrameOf returns the id of the main frame of the session's page ("" if
// the page does not say).
func mainFrameOf(sess playwright.CDPSession) string {
	id, _ := mainFrameField(sess, "id")
	return id
}

// mainFrameField reads one field of the main frame of the session's page
// as the browser has it now (its "url" is the committed document's, while
// a navigation of it is pending).
func mainFrameField(sess playwright.CDPSession, field string) (string, bool) {
	res, err := sess.Send("Page.getFrameTree", nil)
	if err != nil {
		return "", false
	}
	m, _ := res.(map[string]any)
	ft, _ := m["frameTree"].(map[string]any)
	f, _ := ft["frame"].(map[string]any)
	v, ok := f[field].(string)
	return v, ok
}

// tagLoginRequests makes the login tab's document navigations (its pages
// and frames, every redirect hop: each hop is paused again), the identity
// site's form post back to the store and its requests to the login hosts
// carry a new login token (loginHeader): a CDP session of the tab's own
// pauses each request and continues those with the header added
// (loginTagged). A store page shown in the login tab gets no relaxation
// for its scripts' requests nor its form posts: a fetch or a form POST to
// an account path meets the plain policy. It returns the token.
// Cross-site frames live in targets of their own; loginRequest covers what
// they fetch from the identity site.
func (h *Host) tagLoginRequests(g *generation, page playwright.Page) (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the login token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	sess, err := g.ctx.NewCDPSession(page)
	if err != nil {
		return "", fmt.Errorf("opening the login tab's CDP session: %w", err)
	}
	mainFrameID := mainFrameOf(sess)
	sess.On("Fetch.requestPaused", func(ev map[string]any) {
		h.spawn(func() {
			id, _ := ev["requestId"].(string)
			// The main frame's committed document as Playwright tracks it
			// from the browser's events: asking the renderer
			// (Page.getFrameTree) while its document POST is paused here
			// does not answer — the post never went on, and the tab hung.
			topURL := page.URL
			if !h.loginTagged(ev, mainFrameID, topURL) {
				// A script's request, an image, a frame's fetch…: the plain
				// policy, like any tab's.
				_, _ = sess.Send("Fetch.continueRequest", map[string]any{"requestId": id})
				return
			}
			headers := []any{map[string]any{"name": loginHeader, "value": token}}
			if r, ok := ev["request"].(map[string]any); ok {
				if hs, ok := r["headers"].(map[string]any); ok {
					for k, v := range hs {
						if s, ok := v.(string); ok && !strings.EqualFold(k, loginHeader) {
							headers = append(headers, map[string]any{"name": k, "value": s})
						}
					}
				}
			}
			_, _ = sess.Send("Fetch.continueRequest", map[string]any{"requestId": id, "headers": headers})
		})
	})
	if _, err := sess.Send("Fetch.enable", map[string]any{
		"patterns": []any{map[string]any{"urlPattern": "*", "requestStage": "Request"}},
	}); err != nil {
		return "", fmt.Errorf("tagging the login tab's requests: %w", err)
	}
	return token, nil
}

// loginTagged says which paused requests of the login tab get the token:
//   - any request to a login host (the sign-in form's post, its scripts);
//   - a document GET, in any frame (the login's navigations and redirects);
//   - a document POST elsewhere only in the main frame while the page shown
//     there (topURL, the document that sends it) is on a login-only host:
//     the identity site's form post back to the store (OIDC form_post to
//     metro's /signin-oidc; a 307 hop of the identity site's own post).
//
// So a store page held in the login tab cannot post a form, into a frame
// or the tab, to an account or login path or outside the cart operations
// with the login's permissions: it meets the plain policy.
// mainFrameID "" (unknown) tags no such POST.
func (h *Host) loginTagged(ev map[string]any, mainFrameID string, topURL func() string) bool {
	r, _ := ev["request"].(map[string]any)
	raw, _ := r["url"].(string)
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	if h.profile.LoginHostAllowed(u.Hostname()) {
		return true
	}
	if rt, _ := ev["resourceType"].(string); rt != "Document" {
		return false
	}
	if m, _ := r["method"].(string); m == "GET" {
		return true
	}
	if fid, _ := ev["frameId"].(string); mainFrameID == "" || fid != mainFrameID {
		return false
	}
	top, err := url.Parse(topURL())
	return err == nil && h.loginOnlyHost(top.Hostname())
}

// guard is a tab's navigation guard: a CDP session of the tab's own
// pauses its document requests and responses, so that a navigation the
// policy refuses (a link, a form, a script, a redirect hop) is stopped in
// the browser before any request is made: the tab stays on its page and
// gets a notice the model reads. The policy proxy refuses the same
// requests for every tab, frame and worker; the guard only makes the
// refusal of a tab's own navigations graceful, and spares the tab what it
// does not need (diet.go).
func (h *Host) guard(g *generation, page playwright.Page, st *pageState) error {
	sess, err := g.ctx.NewCDPSession(page)
	if err != nil {
		return fmt.Errorf("browser: opening the tab guard's CDP session: %w", err)
	}
	mainFrameID := mainFrameOf(sess)
	sess.On("Fetch.requestPaused", func(ev map[string]any) {
		h.spawn(func() {
			h.onPaused(sess, mainFrameID, st, ev)
		})
	})
	st.mu.Lock()
	st.guardSess, st.mainFrame = sess, mainFrameID
	st.mu.Unlock()
	// The session's Page domain must be on for its scripts to run.
	if _, err := sess.Send("Page.enable", nil); err != nil {
		return fmt.Errorf("browser: enabling the tab guard's page events: %w", err)
	}
	if _, err := sess.Send("Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": workerSocketGuard}); err != nil {
		return fmt.Errorf("browser: adding the tab's worker and socket guard: %w", err)
	}
	_, err = sess.Send("Fetch.enable", guardPatterns(false, false))
	if err != nil {
		return fmt.Errorf("browser: enabling the tab guard: %w", err)
	}
	return nil
}

// onDocument decides on one paused document request (or response, for a
// redirect).
func (h *Host) onDocument(sess playwright.CDPSession, mainFrameID string, st *pageState, ev map[string]any) {
	id, _ := ev["requestId"].(string)
	frameID, _ := ev["frameId"].(string)
	main := mainFrameID == "" || frameID == mainFrameID
	fail := func(target, reason string) {
		if !main {
			refuseFrame(sess, id)
			return
		}
		st.block(target, reason)
		_, _ = sess.Send("Fetch.failRequest", map[string]any{"requestId": id, "errorReason": abortNavigation})
	}
	if status, isResponse := ev["responseStatusCode"].(float64); isResponse {
		if status >= 300 && status < 400 {
			if target, reason := h.redirectVerdict(ev); reason != "" {
				if main {
					st.notice(fmt.Sprintf("A redirect to %s was blocked: %s.", target, reason))
				}
				fail(target, reason)
				return
			}
		}
		if _, err := sess.Send("Fetch.continueResponse", map[string]any{"requestId": id}); err != nil {
			_, _ = sess.Send("Fetch.continueRequest", map[string]any{"requestId": id})
		}
		return
	}
	if _, failed := ev["responseErrorReason"]; !failed {
		var raw, method string
		if r, ok := ev["request"].(map[string]any); ok {
			raw, _ = r["url"].(string)
			method, _ = r["method"].(string)
		}
		u, err := url.Parse(raw)
		if err != nil {
			fail(raw, "the address cannot be parsed")
			return
		}
		if s := strings.ToLower(u.Scheme); s == "http" || s == "https" {
			if v := h.profile.CheckRequest(method, u, false); !v.Allowed {
				h.noteRefused(method, u, v, "guard")
				fail(raw, v.Reason)
				return
			}
		}
	}
	_, _ = sess.Send("Fetch.continueRequest", map[string]any{"requestId": id})
}

// redirectVerdict returns a redirect's target and, if the policy forbids
// it, why.
func (h *Host) redirectVerdict(ev map[string]any) (string, string) {
	var from, loc string
	if r, ok := ev["request"].(map[string]any); ok {
		from, _ = r["url"].(string)
	}
	if hs, ok := ev["responseHeaders"].([]any); ok {
		for _, x := range hs {
			if m, ok := x.(map[string]any); ok {
				if n, _ := m["name"].(string); strings.EqualFold(n, "location") {
					loc, _ = m["value"].(string)
				}
			}
		}
	}
	if loc == "" {
		return "", ""
	}
	base, err := url.Parse(from)
	if err != nil {
		return loc, "the redirect's origin cannot be parsed"
	}
	target, err := base.Parse(loc)
	if err != nil {
		return loc, "the redirect's address cannot be parsed"
	}
	if s := strings.ToLower(target.Scheme); s != "http" && s != "https" {
		return target.String(), "only http and https addresses may be opened"
	}
	// 307 and 308 repeat the method; the other redirects become GETs.
	method := "GET"
	if st, _ := ev["responseStatusCode"].(float64); st == 307 || st == 308 {
		if r, ok := ev["request"].(map[string]any); ok {
			if m, _ := r["method"].(string); m != "" {
				method = m
			}
		}
	}
	if v := h.profile.CheckRequest(method, target, false); !v.Allowed {
		h.noteRefused(method, target, v, "redirect")
		return target.String(), v.Reason
	}
	return target.String(), ""
}
