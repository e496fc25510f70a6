package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// What a tab's pages may load beyond what the store policy allows (the
// policy proxy checks every request anyway): a tab pays only for what its
// user needs. The tab's guard (its own CDP session, policy.go) applies it
// before a request is made, so a refused frame, worker or socket costs the
// browser next to nothing — where the proxy's refusal comes after the
// browser built the frame, started the worker or opened the connection.
// The guard, not the proxy, because only the tab's own session knows which
// tab a request is for, and what kind of request it is.
//
// Every tab (the agent's and the replay's):
//   - a sub-frame whose document the policy refuses (another host, a
//     blocked path, through any redirect hop) is answered "204 No Content"
//     by the guard: the navigation does not commit, the frame stays blank;
//   - no dedicated or shared worker, WebSocket or EventSource can be made
//     (workerSocketGuard, in every frame of the tab): the model reads the
//     page's screenshot and needs none of them, and a hostile widget's
//     dozens of workers and sockets cost seconds of CPU.
//
// A replay tab (Tab.ReplayOnly) loads only its main document and the
// store's own scripts, styles and fetch/XHR requests (the add request is
// one): every sub-frame, image, font, media, beacon, prefetch and any
// request to a host outside the store's is refused. An add control inside
// a frame is then not found, and the replay hands the item to the agent,
// whose tab loads the page again with the agent's rules.

// workerSocketGuard is added to every document of a tab (every frame of
// the tab's process, before the page's own scripts): the constructors of
// workers and sockets (WebSocket, WebSocketStream, WebTransport,
// EventSource) throw, and a page cannot put them back.
var workerSocketGuard = socketGuardScript(nil)

// socketGuardScript is workerSocketGuard for documents whose host is not
// one of skipHosts. The context adds it with the login hosts skipped
// (socketGuardFor): Playwright installs a context's scripts in every new
// target before it runs — sandboxed and out-of-process frames, popups —
// where the tab's own session does not reach; the identity site's pages
// in the login tab keep what they use.
func socketGuardScript(skipHosts []string) string {
	skip, _ := json.Marshal(append([]string{}, skipHosts...))
	return `(() => {
  const skip = ` + string(skip) + `;
  const host = (location.hostname || '').toLowerCase();
  if (skip.some(h => h.startsWith('*.') ? host.endsWith(h.slice(1)) : host === h)) return;
  const refuse = function () { throw new DOMException('refused by the shopping agent: this tab needs no workers or sockets', 'SecurityError'); };
  for (const name of ['Worker', 'SharedWorker', 'WebSocket', 'WebSocketStream', 'WebTransport', 'EventSource']) {
    try { Object.defineProperty(window, name, {value: refuse, writable: false, configurable: false, enumerable: false}); } catch (e) {}
  }
})();`
}

// replayTypes are the request types a replay tab loads (from the store's
// hosts only): scripts and styles make the page work, fetch and XHR are the
// page's own calls (the add to cart), with their CORS preflights when the
// store calls another of its hosts.
var replayTypes = map[string]bool{"Script": true, "Stylesheet": true, "XHR": true, "Fetch": true, "Preflight": true}

// guardPatterns are the requests the tab's guard pauses: documents
// (request and response, for redirects) for every tab; every request for a
// replay tab or a reader (every); the requests an add to the cart may be for a tab with a cart
// limit (cartlimit.go).
func guardPatterns(every, cartLimit bool) map[string]any {
	p := []any{
		map[string]any{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"},
		map[string]any{"urlPattern": "*", "resourceType": "Document", "requestStage": "Response"},
	}
	switch {
	case every:
		p = append(p, map[string]any{"urlPattern": "*", "requestStage": "Request"})
	case cartLimit:
		for _, typ := range []string{"XHR", "Fetch", "Ping", "Other"} {
			p = append(p, map[string]any{"urlPattern": "*", "resourceType": typ, "requestStage": "Request"})
		}
	}
	return map[string]any{"patterns": p}
}

// ReplayOnly switches what the tab loads: on, only what a replay needs
// (its main document and the store's own scripts, styles, fetch and XHR);
// off, what the agent needs (the page as a person sees it, less refused
// frames, workers and sockets). It applies to requests from now on: the
// caller loads the page after switching.
func (t *Tab) ReplayOnly(ctx context.Context, on bool) error {
	t.st.mu.Lock()
	sess := t.st.guardSess
	t.st.replayOnly = on
	t.st.mu.Unlock()
	if sess == nil {
		return fmt.Errorf("switching what the tab loads: %w", ErrClosed)
	}
	return t.act(ctx, "switch what the tab loads", false, func(call) error {
		return t.st.updateGuard()
	})
}

// onPaused decides on one request the tab's guard paused.
func (h *Host) onPaused(sess playwright.CDPSession, mainFrameID string, st *pageState, ev map[string]any) {
	id, _ := ev["requestId"].(string)
	frameID, _ := ev["frameId"].(string)
	typ, _ := ev["resourceType"].(string)
	main := mainFrameID == "" || frameID == mainFrameID
	st.mu.Lock()
	replayOnly, readOnly := st.replayOnly, st.readOnly
	st.mu.Unlock()
	_, isResponse := ev["responseStatusCode"]
	if readOnly && !isResponse && h.refuseWrite(sess, st, id, ev) {
		return
	}
	if _, failed := ev["responseErrorReason"]; !isResponse && !failed && h.refuseAdd(sess, st, id, ev) {
		return
	}
	switch {
	case typ == "Document" && main, typ == "Document" && !replayOnly:
		h.onDocument(sess, mainFrameID, st, ev)
	case typ == "Document":
		refuseFrame(sess, id)
	case isResponse:
		// A pattern list switched under a paused response: let it go on.
		_, _ = sess.Send("Fetch.continueRequest", map[string]any{"requestId": id})
	case replayOnly && !h.replayNeeds(typ, ev):
		_, _ = sess.Send("Fetch.failRequest", map[string]any{"requestId": id, "errorReason": abortFrame})
	default:
		_, _ = sess.Send("Fetch.continueRequest", map[string]any{"requestId": id})
	}
}

// replayNeeds: a replay tab loads a request of type typ when it is one of
// replayTypes, on one of the store's hosts, over http(s).
func (h *Host) replayNeeds(typ string, ev map[string]any) bool {
	if !replayTypes[typ] {
		return false
	}
	r, _ := ev["request"].(map[string]any)
	raw, _ := r["url"].(string)
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	s := strings.ToLower(u.Scheme)
	return (s == "http" || s == "https") && h.profile.HostAllowed(u.Hostname())
}

// refuseFrame ends a sub-frame's refused document request with an empty
// "204 No Content" made by the guard (nothing reaches the store): a
// navigation answered 204 does not commit, so the frame keeps its blank
// document. Failing the request instead commits an error page, a document
// of its own for every refusal.
func refuseFrame(sess playwright.CDPSession, id string) {
	_, _ = sess.Send("Fetch.fulfillRequest", map[string]any{"requestId": id, "responseCode": 204,
		"responseHeaders": []any{map[string]any{"name": "Cache-Control", "value": "no-store"}}})
}
