package browser

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Abort reasons: a top-level navigation aborted with "aborted" leaves the
// tab on its current page (no error page); other requests fail visibly.
const (
	abortNavigation  = "aborted"
	abortSubresource = "blockedbyclient"
)

// route is the context-level request handler: it runs (on its own
// goroutine, one per request) for every request of every page, popup and
// frame of the context.
func (h *Host) route(g *generation) func(playwright.Route) {
	return func(r playwright.Route) {
		req := r.Request()
		raw := req.URL()
		u, err := url.Parse(raw)
		if err != nil {
			_ = r.Abort(abortSubresource)
			return
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https", "ws", "wss":
		default:
			_ = r.Continue() // data:, blob: and friends never reach the network
			return
		}
		nav := req.IsNavigationRequest()
		var frame playwright.Frame
		if nav {
			frame = h.navigationFrame(g, req)
		} else {
			frame = req.Frame()
		}
		var page playwright.Page
		mainFrame := nav
		if frame != nil {
			page = frame.Page()
			mainFrame = nav && frame.ParentFrame() == nil
		}
		h.mu.Lock()
		st := h.pages[page]
		isLogin := page != nil && page == h.loginPage
		h.mu.Unlock()

		if nav && mainFrame && st == nil && !isLogin && page != nil {
			if opener, _ := page.Opener(); opener != nil {
				// A new tab opened by a page: it loads nothing itself; its
				// address goes to the opener if the policy allows it.
				_ = r.Abort(abortNavigation)
				h.popupNavigation(opener, raw)
				return
			}
		}
		if nav && mainFrame && page == nil {
			// A navigation whose page never showed up (a popup that closed at
			// once): nothing to load it in.
			_ = r.Abort(abortNavigation)
			return
		}

		host := u.Hostname()
		if !h.profile.HostAllowed(host) && !(isLogin && h.profile.LoginHostAllowed(host)) {
			h.noteBlockedHost(host, "route")
			if nav && mainFrame {
				if st != nil {
					st.block(raw, fmt.Sprintf("the host %s is outside the %s store's allowlist", store.NormalizeHost(host), h.profile.Name))
				}
				_ = r.Abort(abortNavigation)
				return
			}
			_ = r.Abort(abortSubresource)
			return
		}
		if nav && mainFrame && !isLogin {
			if which, blocked := h.profile.BlockedPathMatch(u.EscapedPath()); blocked {
				h.log.Info("blocked a navigation to a forbidden path", "url", redactURL(raw), "matched", which)
				if st != nil {
					st.block(raw, fmt.Sprintf("pages under %s may not be opened by the agent", which))
				}
				_ = r.Abort(abortNavigation)
				return
			}
		}
		_ = r.Continue()
	}
}

// navigationFrame returns the frame of a navigation request. A popup's
// first navigation is routed before Playwright has created its page; then
// the frame shows up with the page event, which onPage broadcasts.
func (h *Host) navigationFrame(g *generation, req playwright.Request) playwright.Frame {
	deadline := time.NewTimer(popupFrameWait)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		evt := h.pageEvt
		h.mu.Unlock()
		if f := req.Frame(); f != nil {
			return f
		}
		select {
		case <-evt:
		case <-deadline.C:
			return nil
		case <-g.gone:
			return nil
		}
	}
}

// popupNavigation handles the address a popup wanted to open: allowed
// addresses are loaded in the opener tab, others are reported to it.
func (h *Host) popupNavigation(opener playwright.Page, raw string) {
	st := h.pageState(opener)
	pol := h.profile.CheckURL(raw)
	if !pol.Allowed {
		if u, err := url.Parse(raw); err == nil && !h.profile.HostAllowed(u.Hostname()) {
			h.noteBlockedHost(u.Hostname(), "popup")
		}
		if st != nil {
			st.notice(fmt.Sprintf("The page tried to open %s in a new tab; the new tab was closed and the address blocked: %s.", raw, pol.Reason))
		}
		return
	}
	if st == nil {
		return
	}
	st.notice(fmt.Sprintf("The page opened %s in a new tab; the new tab was closed and the address opened in this tab instead.", raw))
	st.queuePopup(raw)
	t := st.tab
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t.runQueuedPopups()
	}()
}

// redirectGuard watches a tab's document responses through a CDP session
// of its own and fails redirects that lead off the allowlist or, for the
// tab's top-level document, to a blocked path. (Playwright's route handler
// never sees redirect hops.)
func (h *Host) redirectGuard(g *generation, page playwright.Page, st *pageState) error {
	sess, err := g.ctx.NewCDPSession(page)
	if err != nil {
		return fmt.Errorf("browser: opening the redirect guard's CDP session: %w", err)
	}
	mainFrameID := ""
	if res, err := sess.Send("Page.getFrameTree", nil); err == nil {
		if m, ok := res.(map[string]any); ok {
			if ft, ok := m["frameTree"].(map[string]any); ok {
				if f, ok := ft["frame"].(map[string]any); ok {
					mainFrameID, _ = f["id"].(string)
				}
			}
		}
	}
	sess.On("Fetch.requestPaused", func(ev map[string]any) {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			h.onDocumentResponse(sess, mainFrameID, st, ev)
		}()
	})
	_, err = sess.Send("Fetch.enable", map[string]any{
		"patterns": []any{map[string]any{"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"}},
	})
	if err != nil {
		return fmt.Errorf("browser: enabling the redirect guard: %w", err)
	}
	return nil
}

func (h *Host) onDocumentResponse(sess playwright.CDPSession, mainFrameID string, st *pageState, ev map[string]any) {
	id, _ := ev["requestId"].(string)
	status, _ := ev["responseStatusCode"].(float64)
	if status >= 300 && status < 400 {
		if target, reason := h.redirectVerdict(ev, mainFrameID); reason != "" {
			st.block(target, reason)
			st.notice(fmt.Sprintf("A redirect to %s was blocked: %s.", target, reason))
			_, _ = sess.Send("Fetch.failRequest", map[string]any{"requestId": id, "errorReason": "Aborted"})
			return
		}
	}
	if _, err := sess.Send("Fetch.continueResponse", map[string]any{"requestId": id}); err != nil {
		_, _ = sess.Send("Fetch.continueRequest", map[string]any{"requestId": id})
	}
}

// redirectVerdict returns the redirect's target and, if the policy forbids
// it, why.
func (h *Host) redirectVerdict(ev map[string]any, mainFrameID string) (string, string) {
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
	if !h.profile.HostAllowed(target.Hostname()) {
		h.noteBlockedHost(target.Hostname(), "redirect")
		return target.String(), fmt.Sprintf("the host %s is outside the %s store's allowlist", store.NormalizeHost(target.Hostname()), h.profile.Name)
	}
	frameID, _ := ev["frameId"].(string)
	if mainFrameID == "" || frameID == mainFrameID {
		if which, blocked := h.profile.BlockedPathMatch(target.EscapedPath()); blocked {
			return target.String(), fmt.Sprintf("pages under %s may not be opened by the agent", which)
		}
	}
	return target.String(), ""
}
