package browser

import (
	"fmt"
	"net/url"
	"strings"

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
		frame := req.Frame()
		var page playwright.Page
		mainFrame := nav // a navigation without a frame is a new tab's first one
		if frame != nil {
			page = frame.Page()
			mainFrame = nav && frame.ParentFrame() == nil
		}
		h.mu.Lock()
		st := h.pages[page]
		isLogin := page != nil && page == h.loginPage
		h.mu.Unlock()

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
		h.spawn(func() {
			h.onDocumentResponse(sess, mainFrameID, st, ev)
		})
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
