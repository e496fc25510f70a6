package browser

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/gemini-supply/gemini-supply/internal/screen"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// socketSite is a store under metro's names (and cdn.cookielaw.org, an
// allowed third-party host of metro's) that accepts WebSockets on /ws/…
// and records every upgrade and message it receives: what a page's
// socket would deliver to the store, unread by the policy (issue 36).
type socketSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	ws   []string // "path: message" or "path: (opened)"
	hits map[string]int
	// popup is what the popup's constructors did (its report's query).
	popup string
}

func newSocketSite(t testing.TB) *socketSite {
	s := &socketSite{hits: map[string]int{}}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.Host+r.URL.Path]++
		if r.URL.Path == "/ws-popup-done" {
			s.popup = r.URL.Query().Get("r")
		}
		s.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		if strings.HasPrefix(r.URL.Path, "/ws/") {
			c, err := up.Upgrade(w, r, nil)
			s.record(r.URL.Path + ": (opened)")
			if err != nil {
				return
			}
			defer c.Close()
			for {
				_, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				s.record(r.URL.Path + ": " + string(msg))
			}
		}
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/ws-page":
			third := ""
			if r.URL.Query().Get("third") != "" {
				third = `<iframe src="https://cdn.cookielaw.org/consent-frame"></iframe>`
			}
			fmt.Fprintf(w, `<!doctype html><body><script>%s
window.wsResults = {};
addEventListener('message', (e) => { if (e.data && e.data.k) window.wsResults[e.data.k] = e.data.v; });
window.wsResults.main = tryAll('main');
</script>
<iframe sandbox="allow-scripts" srcdoc="<script>%s; parent.postMessage({k: 'srcdoc', v: tryAll('srcdoc')}, '*');</script>"></iframe>
%s</body>`, socketTries, strings.ReplaceAll(socketTries, `"`, "&quot;"), third)
		case "/consent-frame":
			fmt.Fprintf(w, `<!doctype html><script>%s; parent.postMessage({k: 'third', v: tryAll('third')}, '*');</script>`, socketTries)
		case "/ws-popup-page":
			fmt.Fprint(w, `<!doctype html><body style="margin:0"><iframe sandbox="allow-popups allow-popups-to-escape-sandbox" style="position:absolute;left:0;top:100px;width:400px;height:200px;border:0" srcdoc="<a target=_blank href='https://www.metro.ca/ws-popup' style='display:block;width:300px;height:100px;background:#ccc'>Buy now</a>"></iframe>`)
		case "/ws-popup":
			fmt.Fprintf(w, `<!doctype html><script>%s; const r = tryAll('popup'); fetch('/ws-popup-done?r=' + encodeURIComponent(JSON.stringify(r)));</script>`, socketTries)
		default:
			fmt.Fprint(w, `<!doctype html><h1>store</h1>`)
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// socketTries is the page script: tryAll(where) opens a WebSocket, a
// WebSocketStream and a WebTransport to the store, sends an order on
// each that opens, and says which constructors were refused.
const socketTries = `function tryAll(where) {
  const out = {};
  const msg = JSON.stringify({_eventId: 'placeOrder', from: where});
  try { const ws = new WebSocket('wss://www.metro.ca/ws/plain-' + where); ws.onopen = () => ws.send(msg); out.WebSocket = 'made'; } catch (e) { out.WebSocket = 'refused'; }
  try {
    const s = new WebSocketStream('wss://www.metro.ca/ws/stream-' + where);
    s.opened.then(({writable}) => writable.getWriter().write(msg)).catch(() => {});
    out.WebSocketStream = 'made';
  } catch (e) { out.WebSocketStream = typeof WebSocketStream === 'undefined' ? 'absent' : 'refused'; }
  try { const wt = new WebTransport('https://www.metro.ca/ws/transport-' + where); wt.ready.catch(() => {}); out.WebTransport = 'made'; } catch (e) { out.WebTransport = 'refused'; }
  return out;
}`

func (s *socketSite) record(what string) {
	s.mu.Lock()
	s.ws = append(s.ws, what)
	s.mu.Unlock()
}

func (s *socketSite) reached() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ws...)
}

func (s *socketSite) count(hostPath string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[hostPath]
}

func (s *socketSite) rules() string {
	addr := s.srv.Listener.Addr().String()
	return fmt.Sprintf("MAP www.metro.ca %s, MAP cdn.cookielaw.org %s", addr, addr)
}

// TestProxyRefusesWebSocketsToTheStore: a WebSocket's messages are never
// read, so the proxy refuses the upgrade to a store host (ws:// and
// wss://), whatever the tab did; nothing reaches the server.
func TestProxyRefusesWebSocketsToTheStore(t *testing.T) {
	site := newSocketSite(t)
	rules, err := parseResolverRules(site.rules())
	if err != nil {
		t.Fatal(err)
	}
	for _, prof := range []store.Profile{store.Metro(), store.Demo()} {
		p, err := startProxy(slog.New(slog.DiscardHandler), profilePolicy{prof}, rules, upstreamTLS{insecure: true})
		if err != nil {
			t.Fatal(err)
		}
		pu, _ := url.Parse(p.URL())
		d := websocket.Dialer{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the proxy's own certificate
		for _, scheme := range []string{"wss", "ws"} {
			c, resp, err := d.DialContext(context.Background(), scheme+"://www.metro.ca/ws/direct-"+prof.Name+"-"+scheme, nil)
			if err == nil {
				_ = c.WriteMessage(websocket.TextMessage, []byte(`{"_eventId":"placeOrder"}`))
				_ = c.Close()
				t.Errorf("%s: a %s WebSocket to the store was opened through the proxy", prof.Name, scheme)
				continue
			}
			if scheme == "wss" && (resp == nil || resp.StatusCode != http.StatusForbidden) {
				t.Errorf("%s: the wss upgrade ended with %v (%v), want the proxy's 403", prof.Name, err, resp)
			}
		}
		_ = p.Close()
	}
	if got := site.reached(); len(got) > 0 {
		t.Fatalf("WebSockets reached the store: %q", got)
	}
}

// TestNoWebSocketReachesTheStore: from a store page's main frame
// (WebSocket, WebSocketStream, WebTransport), a sandboxed srcdoc frame,
// an allowed third-party host's frame (metro) and a popup opened from a
// sandboxed frame, no socket reaches the store; the constructors are
// refused in each frame before its first script (the context's socket
// guard), and the proxy refuses the upgrade behind them.
func TestNoWebSocketReachesTheStore(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	for _, prof := range attackProfiles() {
		t.Run(prof.Name, func(t *testing.T) {
			site := newSocketSite(t)
			h := launch(t, baseOptions(t, prof, t.TempDir(), site.rules(), nil))
			defer closeHost(t, h)
			ctx := testCtx(t)
			tab := newTab(t, h)
			page := "https://www.metro.ca/ws-page"
			frames := []string{"main", "srcdoc"}
			if prof.HostAllowed("cdn.cookielaw.org") {
				page += "?third=1"
				frames = append(frames, "third")
			}
			mustDo(t, "open the socket page", tab.Navigate(ctx, page))
			waitFor(t, "every frame's socket attempts", patience, func() bool {
				m, _ := eval(t, tab, `() => window.wsResults`).(map[string]any)
				return len(m) >= len(frames)
			})
			res, _ := eval(t, tab, `() => window.wsResults`).(map[string]any)
			t.Logf("constructors: %v", res)
			for _, f := range frames {
				m, _ := res[f].(map[string]any)
				for _, ctor := range []string{"WebSocket", "WebSocketStream", "WebTransport"} {
					if v := m[ctor]; v != "refused" && v != "absent" {
						t.Errorf("%s frame: %s was %v, want refused before the page's script", f, ctor, v)
					}
				}
			}
			// A popup from a sandboxed frame (allowed to escape the
			// sandbox, so its page runs scripts) tries at once.
			popupTab := newTab(t, h)
			mustDo(t, "open the sandboxed popup page", popupTab.Navigate(ctx, "https://www.metro.ca/ws-popup-page"))
			waitFramedLink(t, popupTab)
			mustDo(t, "click the framed link", popupTab.Click(ctx, norm(100, 150), screen.ButtonLeft, 1))
			waitFor(t, "the popup's attempt", patience, func() bool { return site.count("www.metro.ca/ws-popup-done") > 0 })
			site.mu.Lock()
			popup := site.popup
			site.mu.Unlock()
			t.Logf("popup constructors: %s", popup)
			if strings.Contains(popup, `"made"`) {
				t.Errorf("the popup made a socket before the guard: %s", popup)
			}
			if got := site.reached(); len(got) > 0 {
				t.Fatalf("WebSockets reached the store: %q", got)
			}
		})
	}
}
