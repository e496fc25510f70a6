package browser

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/screen"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// attackSite is a store imitation under metro's host names (www.metro.ca,
// product-images.metro.ca) that counts every request it receives and
// serves hostile pages: each fires every request vector a page has at a
// list of addresses (blocked paths, directly or through redirects).
type attackSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int // "METHOD host escaped-path" -> count
}

func newAttackSite(t testing.TB) *attackSite {
	a := &attackSite{hits: map[string]int{}}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *attackSite) rules() string {
	addr := a.srv.Listener.Addr().String()
	return fmt.Sprintf("MAP www.metro.ca %s, MAP product-images.metro.ca %s", addr, addr)
}

func (a *attackSite) snapshot() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int, len(a.hits))
	for k, v := range a.hits {
		out[k] = v
	}
	return out
}

func (a *attackSite) count(method, host, path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits[method+" "+host+" "+path]
}

func (a *attackSite) serve(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	a.mu.Lock()
	a.hits[r.Method+" "+host+" "+r.URL.EscapedPath()]++
	a.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/r/"):
		code, _ := strconv.Atoi(strings.TrimPrefix(p, "/r/"))
		w.Header().Set("Location", q.Get("to"))
		w.WriteHeader(code)
	case p == "/meta":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><meta http-equiv="refresh" content="0;url=%s">`, strings.ReplaceAll(q.Get("to"), `"`, ""))
	case p == "/attack":
		var targets []string
		_ = json.Unmarshal([]byte(q.Get("t")), &targets)
		w.Header().Set("Content-Type", "text/html")
		b, _ := json.Marshal(targets)
		fmt.Fprintf(w, attackPage, b)
	case p == "/sandbox-popup":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><body style="margin:0"><iframe sandbox="allow-popups" style="position:absolute;left:0;top:100px;width:400px;height:200px;border:0" srcdoc="<a target=_blank href='%s' style='display:block;width:300px;height:100px;background:#ccc'>Buy now</a>"></iframe>`,
			strings.NewReplacer(`"`, "", "'", "", "<", "", ">", "").Replace(q.Get("to")))
	case p == "/sw.js":
		w.Header().Set("Content-Type", "text/javascript")
		to, _ := json.Marshal(q.Get("to"))
		fmt.Fprintf(w, `self.addEventListener('install', (e) => e.waitUntil(Promise.allSettled([fetch(%s), fetch(%s, {method: 'POST'})])));`, to, to)
	case strings.HasSuffix(p, ".png"):
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pixelPNGForTests)
	case strings.HasPrefix(p, "/en/online-grocery/search"):
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><h1>results</h1><img id="p" src="https://product-images.metro.ca/images/milk.png">`)
	default:
		if r.Header.Get("Upgrade") != "" {
			http.Error(w, "no websockets here", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><h1>%s %s</h1>`, r.Method, r.Method, p)
	}
}

// pixelPNGForTests is a 1x1 PNG.
var pixelPNGForTests = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// attackPage fires every vector at every target (%s: a JSON list of
// URLs), waits for each to settle (each bounded, so one that never
// settles cannot hang the page) and then requests /attack-done.
const attackPage = `<!doctype html><html><head><meta charset="utf-8"></head><body><script>
const targets = %s.map(u => new URL(u, location.href).href);
const cap = (p) => Promise.race([Promise.resolve(p).catch(() => {}), new Promise(r => setTimeout(r, 10000))]);
const el = (tag, attrs, evs = ['load', 'error'], parent = document.body) => new Promise(res => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const ev of evs) e.addEventListener(ev, () => res(), {once: true});
  parent.appendChild(e);
  if (!evs.length) res();
});
const wsURL = u => u.replace(/^http/, 'ws');
const xhr = (m, u) => new Promise(res => { const x = new XMLHttpRequest(); x.open(m, u); x.onloadend = () => res(); x.send(m === 'GET' ? null : 'order=1'); });
let n = 0;
const intoFrame = (method, u) => new Promise(res => {
  const name = 'f' + (n++);
  const f = document.createElement('iframe'); f.name = name; document.body.appendChild(f);
  f.addEventListener('load', () => res(), {once: true});
  const form = document.createElement('form'); form.method = method; form.action = u; form.target = name;
  const i = document.createElement('input'); i.name = 'placeOrder'; i.value = '1'; form.appendChild(i);
  document.body.appendChild(form); form.submit();
});
const workerCode = "onmessage = async (e) => { for (const [m, u] of e.data) { try { await fetch(u, {method: m, body: m === 'GET' ? undefined : 'x'}); } catch (err) {} } postMessage('done'); };";
const sharedCode = "onconnect = (c) => { const port = c.ports[0]; port.onmessage = async (e) => { for (const [m, u] of e.data) { try { await fetch(u, {method: m, body: m === 'GET' ? undefined : 'x'}); } catch (err) {} } port.postMessage('done'); }; };";
const blobURL = code => URL.createObjectURL(new Blob([code], {type: 'text/javascript'}));
const jobs = (u) => [['GET', u], ['POST', u], ['PUT', u], ['DELETE', u]];
const vectors = {
  fetchGet: u => fetch(u),
  fetchPost: u => fetch(u, {method: 'POST', body: 'order=1'}),
  fetchPut: u => fetch(u, {method: 'PUT', body: 'order=1'}),
  fetchDelete: u => fetch(u, {method: 'DELETE'}),
  fetchKeepalive: u => fetch(u, {method: 'POST', body: 'x', keepalive: true}),
  xhrGet: u => xhr('GET', u),
  xhrPost: u => xhr('POST', u),
  beacon: u => { navigator.sendBeacon(u, 'order=1'); },
  eventSource: u => new Promise(res => { const s = new EventSource(u); s.onerror = s.onopen = () => { s.close(); res(); }; }),
  webSocket: u => new Promise(res => { const w = new WebSocket(wsURL(u)); w.onerror = w.onclose = w.onopen = () => { try { w.close(); } catch (e) {} res(); }; }),
  img: u => el('img', {src: u}),
  script: u => el('script', {src: u}),
  stylesheet: u => el('link', {rel: 'stylesheet', href: u}),
  preload: u => el('link', {rel: 'preload', as: 'fetch', href: u, crossorigin: ''}),
  prefetch: u => el('link', {rel: 'prefetch', href: u}),
  prerender: u => el('link', {rel: 'prerender', href: u}, []),
  speculationRules: u => { const s = document.createElement('script'); s.type = 'speculationrules';
    s.textContent = JSON.stringify({prefetch: [{source: 'list', urls: [u]}], prerender: [{source: 'list', urls: [u + (u.includes('?') ? '&' : '?') + 'pr=1']}]});
    document.head.appendChild(s); },
  cssBackground: u => { const d = document.createElement('div'); d.style.cssText = 'width:10px;height:10px;background-image:url("' + u + '")'; document.body.appendChild(d); },
  iframe: u => el('iframe', {src: u}, ['load']),
  nestedIframe: u => el('iframe', {srcdoc: '<iframe src="' + u + '"></iframe>'}, ['load']),
  object: u => el('object', {data: u, type: 'text/html'}),
  embed: u => el('embed', {src: u, type: 'text/html'}, ['load']),
  formPostIntoFrame: u => intoFrame('post', u),
  formGetIntoFrame: u => intoFrame('get', u),
  worker: u => new Promise(res => { const w = new Worker(blobURL(workerCode)); w.onmessage = () => { w.terminate(); res(); }; w.onerror = () => res(); w.postMessage(jobs(u)); }),
  sharedWorker: u => new Promise(res => { const w = new SharedWorker(blobURL(sharedCode)); w.port.onmessage = () => res(); w.onerror = () => res(); w.port.postMessage(jobs(u)); }),
  serviceWorker: u => navigator.serviceWorker ? navigator.serviceWorker.register(blobURL(workerCode)) : null,
  webRTC: u => { const port = new URLSearchParams(location.search).get('udp'); const h = new URL(u).hostname;
    const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:' + port}, {urls: 'stun:' + h + ':' + port},
      {urls: ['turn:127.0.0.1:' + port + '?transport=udp', 'turn:127.0.0.1:' + port + '?transport=tcp'], username: 'u', credential: 'p'}]});
    pc.createDataChannel('x');
    return pc.createOffer().then(o => pc.setLocalDescription(o)).then(() => new Promise(r => {
      const t = setTimeout(r, 5000);
      pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') { clearTimeout(t); r(); } };
    })).finally(() => pc.close()); },
};
window.attackVectors = Object.keys(vectors);
const all = [];
window.pending = new Set();
for (const u of targets) for (const [name, v] of Object.entries(vectors)) {
  const key = name + ' ' + u;
  window.pending.add(key);
  all.push(cap((async () => v(u))()).then(() => window.pending.delete(key)));
}
Promise.allSettled(all).then(() => fetch('/attack-done', {cache: 'no-store'}));
</script></body></html>`

// attackTargets are blocked paths spelled as a page might, and a path
// that is only refused for state-changing methods.
// (Every spelling the normalisation handles is in the store package's
// tests; these are a few of each kind.)
var attackTargets = []string{
	"/en/online-grocery/checkout", "/en/aisles/%2e%2e/%63heckout/step-1", "/en//Account%2Fsettings//",
	"/api/place-order", "/en/online-grocery/lists/save",
}

// redirectVariants turn a target path into the address a vector uses:
// directly, through each redirect status, a chain, another allowed host,
// and a meta refresh.
var redirectVariants = []struct {
	name string
	wrap func(target string) string
}{
	{"direct", func(p string) string { return p }},
	{"301-then-307", func(p string) string {
		return "/r/301?to=" + url.QueryEscape("/r/307?to="+url.QueryEscape(p))
	}},
	{"302", func(p string) string { return "/r/302?to=" + url.QueryEscape(p) }},
	{"303-then-308", func(p string) string {
		return "/r/303?to=" + url.QueryEscape("/r/308?to="+url.QueryEscape(p))
	}},
	{"other-host", func(p string) string {
		return "https://product-images.metro.ca/r/302?to=" + url.QueryEscape("https://www.metro.ca"+p)
	}},
	{"absolute-307", func(p string) string { return "/r/307?to=" + url.QueryEscape("https://WWW.METRO.CA:443"+p) }},
	{"meta-refresh", func(p string) string { return "/meta?to=" + url.QueryEscape(p) }},
}

// attackProfiles are the store profiles the matrix runs with: metro's
// (its certificate check relaxed for the local server) and the demo's.
func attackProfiles() []store.Profile {
	m := store.Metro()
	m.IgnoreHTTPSErrors = true // the local server's certificate is not www.metro.ca's
	return []store.Profile{m, store.Demo()}
}

// requestsSince is the request counts in now that grew since before.
func requestsSince(before, now map[string]int) map[string]int {
	d := map[string]int{}
	for k, n := range now {
		if n > before[k] {
			d[k] = n - before[k]
		}
	}
	return d
}

// refusedReached lists the requests the server received that the
// profile's policy refuses (none may reach it).
func refusedReached(p store.Profile, hits map[string]int) []string {
	var bad []string
	for k, n := range hits {
		f := strings.SplitN(k, " ", 3)
		u := &url.URL{Scheme: "https", Host: f[1], RawPath: f[2]}
		u.Path, _ = url.PathUnescape(f[2])
		if v := p.CheckRequest(f[0], u, false); !v.Allowed {
			bad = append(bad, fmt.Sprintf("%s ×%d (%s)", k, n, v.Rule))
		}
	}
	slices.Sort(bad)
	return bad
}

// TestAttackMatrix loads hostile pages that fire every request vector
// (fetch/XHR of each method, beacon, EventSource, WebSocket, img, script,
// stylesheet, preload, prefetch, prerender, speculation rules, CSS, iframe,
// nested iframe, object, embed, form POST/GET into a frame, dedicated,
// shared and service workers, WebRTC STUN/TURN) at every blocked-path
// spelling, directly and through each redirect variant, under the metro
// and demo profiles. The server counts every request it receives: none may
// be one the policy refuses, and a UDP/TCP listener the WebRTC vector aims
// at receives nothing, while search pages, images and cart operations keep
// working.
func TestAttackMatrix(t *testing.T) {
	requireBrowser(t)
	for _, prof := range attackProfiles() {
		t.Run(prof.Name, func(t *testing.T) {
			t.Parallel() // a site, sink and Host of its own per store: the stores side by side
			site := newAttackSite(t)
			dir, err := os.MkdirTemp("", "browser-attack-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			h := launch(t, baseOptions(t, prof, dir, site.rules(), &logBuffer{}))
			defer closeHost(t, h)
			tab := newTab(t, h)
			sink := newPortSink(t, 0, true)
			probes := 0
			for _, rv := range redirectVariants {
				targets := make([]string, len(attackTargets))
				for i, p := range attackTargets {
					targets[i] = rv.wrap(p)
				}
				tj, _ := json.Marshal(targets)
				done0 := site.count("GET", "www.metro.ca", "/attack-done")
				mustDo(t, "open the attack page", tab.Navigate(testCtx(t), fmt.Sprintf("https://www.metro.ca/attack?udp=%d&t=%s", sink.port, url.QueryEscape(string(tj)))))
				// Settled, or already failed (a page whose requests go
				// through may never settle).
				waitFor(t, rv.name+": every vector to settle", patience, func() bool {
					return site.count("GET", "www.metro.ca", "/attack-done") > done0 || len(refusedReached(prof, site.snapshot())) > 0
				})
				n := len(eval(t, tab, `() => window.attackVectors`).([]any))
				probes += n * len(targets)
				if bad := refusedReached(prof, site.snapshot()); len(bad) > 0 {
					t.Fatalf("%s: requests the policy refuses reached the server:\n%s", rv.name, strings.Join(bad, "\n"))
				}
				if r := sink.reached(); r != "" {
					t.Fatalf("%s: WebRTC reached a listener around the proxy: %s", rv.name, r)
				}
			}
			t.Logf("%d probes (vectors × targets × redirect variants), none reached a refused path", probes)

			// The store still works: search page, images, cart operations.
			search := prof.SearchURL("milk")
			mustDo(t, "open the search page", tab.Navigate(testCtx(t), search))
			waitFor(t, "the product image to load", patience, func() bool {
				return eval(t, tab, `() => { const i = document.getElementById('p'); return !!i && i.complete && i.naturalWidth > 0; }`).(bool)
			})
			cart := "/en/online-grocery/cart/add"
			if prof.CartPathsExact {
				cart = prof.CartPaths[0]
			}
			status := eval(t, tab, `(u) => fetch(u, {method: 'POST', body: '{}'}).then(r => r.status)`, cart)
			if status != 200 || site.count("POST", "www.metro.ca", cart) == 0 {
				t.Fatalf("cart operation POST %s: status %v, server hits %d", cart, status, site.count("POST", "www.metro.ca", cart))
			}
			if bad := refusedReached(prof, site.snapshot()); len(bad) > 0 {
				t.Fatalf("requests the policy refuses reached the server:\n%s", strings.Join(bad, "\n"))
			}
			if h.Refused()[store.RuleStateChange] == 0 || h.Refused()[store.RuleOrder] == 0 || h.Refused()[store.RuleBlockedPath] == 0 {
				t.Fatalf("refusals by rule %v: every rule should have been exercised", h.Refused())
			}
		})
	}
}

// TestPopupFromSandboxedFrameIsGuarded is the popup escape of issue 13: a
// target=_blank link in a sandboxed frame (allow-popups, no scripts, so
// the popup script cannot retarget it) opens a new tab whose first
// request is an allowed address that redirects to checkout. The redirect's
// target must never reach the server.
func TestPopupFromSandboxedFrameIsGuarded(t *testing.T) {
	requireBrowser(t)
	for _, prof := range attackProfiles() {
		t.Run(prof.Name, func(t *testing.T) {
			t.Parallel() // a site, sink and Host of its own per store: the stores side by side
			site := newAttackSite(t)
			dir := t.TempDir()
			h := launch(t, baseOptions(t, prof, dir, site.rules(), nil))
			defer closeHost(t, h)
			ctx := testCtx(t)
			for _, code := range []string{"302", "307"} {
				// A tab per code: the popup's allowed first address is
				// opened in its opener later (when the tab is next idle),
				// which would race the next code's page in a shared tab.
				tab := newTab(t, h)
				target := "/en/online-grocery/checkout/popup-" + code
				via := "https://www.metro.ca/r/" + code + "?to=" + url.QueryEscape(target)
				mustDo(t, "open the sandboxed frame page", tab.Navigate(ctx, "https://www.metro.ca/sandbox-popup?to="+url.QueryEscape(via)))
				tab.TakeNotices()
				waitFramedLink(t, tab)
				r0 := site.count("GET", "www.metro.ca", "/r/"+code)
				mustDo(t, "click the framed link", tab.Click(ctx, norm(100, 150), screen.ButtonLeft, 1))
				waitFor(t, "the popup's first request", patience, func() bool { return site.count("GET", "www.metro.ca", "/r/"+code) > r0 })
				waitFor(t, "the popup to be closed and reported", patience, func() bool {
					return hasNotice(tab.st.peekNotices(), "new tab") && len(h.cur.ctx.Pages()) == h.openPageCount()
				})
				if n := site.count("GET", "www.metro.ca", target); n != 0 {
					t.Fatalf("the popup's redirect reached %s %d times", target, n)
				}
				_ = tab.Close()
			}
			if bad := refusedReached(prof, site.snapshot()); len(bad) > 0 {
				t.Fatalf("requests the policy refuses reached the server:\n%s", strings.Join(bad, "\n"))
			}
		})
	}
}

// TestDemoExpressCheckoutWidgetIsStopped: the demo store's product pages
// carry a hostile "express checkout" widget (package demostore) that fires
// every trick at checkout and order paths and offers a "Buy now" popup
// from a sandboxed frame. Through the agent's browser none of it reaches
// the store, and the product page still works.
func TestDemoExpressCheckoutWidgetIsStopped(t *testing.T) {
	f := sharedDemo(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	// The fixture is shared: only this test's requests are judged (another
	// test's sign-in legitimately reached the identity host).
	before := f.store.Requests()
	done := func() int { return f.store.Requests()["GET www.metro.ca /en/promo/express-done"] }
	done0 := done()
	mustDo(t, "open a product page", tab.Navigate(ctx, demostore.ProductURL("bananas-bunch")))
	acceptConsent(t, tab)
	waitFor(t, "the widget's tricks to settle", patience, func() bool { return done() > done0 })
	if !eval(t, tab, `() => !!document.getElementById('product-add') && document.getElementById('product-image').naturalWidth > 0`).(bool) {
		t.Fatal("the product page does not work under the policy")
	}

	// "Buy now" sits in a sandboxed frame of the widget: the popup it opens
	// is closed and its redirect to checkout never reaches the store.
	buy := tab.page.FrameLocator("#express-checkout").FrameLocator("#buy").Locator("a")
	mustDo(t, "wait for Buy now", buy.WaitFor(playwright.LocatorWaitForOptions{
		State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(float64(patience.Milliseconds())),
	}))
	r0 := f.store.Requests()["GET www.metro.ca /en/promo/go"]
	tab.TakeNotices()
	mustDo(t, "click Buy now", tab.Click(ctx, norm(420+1+12+120, 580+1+44+30), screen.ButtonLeft, 1))
	waitFor(t, "the popup's first request", patience, func() bool { return f.store.Requests()["GET www.metro.ca /en/promo/go"] > r0 })
	waitFor(t, "the popup to be closed and reported", patience, func() bool {
		return hasNotice(tab.st.peekNotices(), "new tab") && len(f.host.cur.ctx.Pages()) == f.host.openPageCount()
	})
	if n := f.store.CheckoutHits(); n != 0 {
		t.Fatalf("checkout or order pages reached %d times", n)
	}
	if bad := refusedReached(store.Demo(), requestsSince(before, f.store.Requests())); len(bad) > 0 {
		t.Fatalf("requests the policy refuses reached the demo store:\n%s", strings.Join(bad, "\n"))
	}
}

// TestPrefetchAndPrerenderAreOff: <link rel=prefetch> (which Chromium has
// no switch for) is refused by the proxy, and speculation rules neither
// prefetch nor prerender, even for allowed addresses.
func TestPrefetchAndPrerenderAreOff(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	site := newAttackSite(t)
	h := launch(t, baseOptions(t, store.Demo(), t.TempDir(), site.rules(), nil))
	defer closeHost(t, h)
	tab := newTab(t, h)
	mustDo(t, "open a page", tab.Navigate(testCtx(t), "https://www.metro.ca/start"))
	eval(t, tab, `() => {
  const s = document.createElement('script'); s.type = 'speculationrules';
  s.textContent = JSON.stringify({prefetch: [{source: 'list', urls: ['/spec-prefetch']}], prerender: [{source: 'list', urls: ['/spec-prerender']}]});
  document.head.appendChild(s);
  window.prefetch = 'pending';
  const l = document.createElement('link'); l.rel = 'prefetch'; l.href = '/link-prefetch';
  l.onload = () => { window.prefetch = 'loaded'; }; l.onerror = () => { window.prefetch = 'failed'; };
  document.head.appendChild(l);
}`)
	waitFor(t, "the link prefetch to end", patience, func() bool { return eval(t, tab, `() => window.prefetch`) != "pending" })
	if got := eval(t, tab, `() => window.prefetch`); got != "failed" {
		t.Fatalf("link prefetch %v, want failed", got)
	}
	for _, p := range []string{"/link-prefetch", "/spec-prefetch", "/spec-prerender"} {
		if n := site.count("GET", "www.metro.ca", p); n != 0 {
			t.Errorf("%s was fetched %d times", p, n)
		}
	}
}

// TestOtherTabsGetNoLoginPermissions: while the scripted login runs, the
// login hosts, login paths and state changes outside the cart are allowed
// for the login tab. A store page in another tab (an agent's) fires every
// vector at them during that window — with a forged referrer and a guessed
// login header too — and none may reach a server, while the login itself,
// through its redirects, completes.
func TestOtherTabsGetNoLoginPermissions(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	s, err := demostore.Start(t.Context(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prof := store.Demo()
	// Hold the login on the identity site until the attack is over.
	prof.LoginSteps = holdLoginAfter(prof.LoginSteps, func(st store.LoginStep) bool {
		return st.Kind == store.StepWaitForHost && st.Host == demostore.HostAuth
	})
	o := baseOptions(t, prof, t.TempDir(), s.HostResolverRules(), nil)
	user, pass := s.Credentials()
	o.Username, o.Password = user, config.Secret(pass)
	o.UpstreamRoots = s.CertPool()
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)
	tab := newTab(t, h)
	mustDo(t, "open the store", tab.Navigate(ctx, s.BaseURL()+"/en"))

	loginDone := make(chan error, 1)
	go func() { loginDone <- h.Login(ctx) }()
	var loginPage playwright.Page
	waitFor(t, "the login tab on the identity site", 3*patience, func() bool {
		h.mu.Lock()
		loginPage = h.loginPage
		h.mu.Unlock()
		return loginPage != nil && strings.HasPrefix(loginPage.URL(), "https://"+demostore.HostAuth+"/")
	})

	got, err := tab.page.Evaluate(`async () => {
  const r = {};
  const status = async (name, p) => { try { const x = await p; r[name] = x.type === 'opaque' ? 'opaque' : x.status; } catch (e) { r[name] = 'error'; } };
  const auth = 'https://auth.moiid.ca';
  await status('auth fetch', fetch(auth + '/probe-fetch', {mode: 'no-cors', credentials: 'include'}));
  await status('auth fetch, forged referrer', fetch(auth + '/probe-referrer', {mode: 'no-cors', referrer: auth + '/'}));
  await status('auth POST', fetch(auth + '/probe-post', {method: 'POST', mode: 'no-cors', body: 'x'}));
  await status('login path', fetch('/en/login/probe'));
  await status('account path', fetch('/en/account/settings/probe'));
  await status('state change', fetch('/en/probe-post', {method: 'POST', body: 'x'}));
  await status('guessed token', fetch('/en/login/probe-token', {headers: {'X-Gemini-Supply-Login': 'guess'}}));
  navigator.sendBeacon(auth + '/probe-beacon', 'x');
  // A refused frame may stay blank without a load event (the guard answers
  // 204): the bound only ends that wait.
  const frame = (src) => new Promise((res) => {
    const f = document.createElement('iframe');
    f.onload = () => res('load'); f.onerror = () => res('error'); setTimeout(() => res('blank'), 10000);
    f.src = src; document.body.append(f);
  });
  r['auth frame'] = await frame(auth + '/probe-frame');
  r['login frame'] = await frame('/en/login/probe-frame');
  r['auth image'] = await new Promise((res) => {
    const i = new Image(); i.onload = () => res('load'); i.onerror = () => res('error');
    i.src = auth + '/probe-image.png';
  });
  r['form'] = await new Promise((res) => {
    const f = document.createElement('iframe'); f.name = 'sink'; document.body.append(f);
    f.onload = () => res('load'); setTimeout(() => res('blank'), 10000);
    const form = document.createElement('form');
    form.method = 'POST'; form.action = auth + '/probe-form'; form.target = 'sink';
    document.body.append(form); form.submit();
  });
  return r;
}`)
	mustDo(t, "run the attack", err)
	t.Logf("the other tab's attack: %v", got)
	if m, _ := got.(map[string]any); m != nil {
		for _, name := range []string{"login path", "account path", "state change", "guessed token"} {
			if code, _ := m[name].(int); code != http.StatusForbidden {
				t.Errorf("%s from another tab during the login: %v, want the proxy's 403", name, m[name])
			}
		}
	}
	// The beacon has no answer to wait for: every refused request to the
	// identity host is counted, so wait until all seven were seen.
	waitFor(t, "the identity-host probes to be refused", patience, func() bool {
		return h.BlockedHosts()[demostore.HostAuth] >= 7
	})

	_, err = loginPage.Evaluate(`() => document.body.insertAdjacentHTML('beforeend', '<div id="hold-released">go on</div>')`)
	mustDo(t, "release the login", err)
	select {
	case err := <-loginDone:
		mustDo(t, "the login", err)
	case <-ctx.Done():
		t.Fatal("the login did not finish")
	}
	if !s.State().LoggedIn {
		t.Fatal("the login finished but the store has no session")
	}
	var reached []string
	for k, n := range s.Requests() {
		if strings.Contains(k, "probe") {
			reached = append(reached, fmt.Sprintf("%s ×%d", k, n))
		}
	}
	if len(reached) > 0 {
		t.Fatalf("requests from another tab got the login's permissions:\n%s", strings.Join(reached, "\n"))
	}
}

// TestLoginRequestNeedsTheLoginTab: which requests get the login's
// permissions, by the headers the proxy sees.
func TestLoginRequestNeedsTheLoginTab(t *testing.T) {
	prof := store.Metro()
	h := &Host{profile: prof}
	const token = "tok-123"
	for _, tc := range []struct {
		name    string
		active  bool
		target  string
		headers map[string]string
		want    bool
	}{
		{"login tab, store path", true, "https://www.metro.ca/en/login", map[string]string{loginHeader: token}, true},
		{"login tab, identity host", true, "https://auth.moiid.ca/x", map[string]string{loginHeader: token}, true},
		{"login over: the token is spent", false, "https://auth.moiid.ca/x", map[string]string{loginHeader: token}, false},
		{"wrong token", true, "https://auth.moiid.ca/x", map[string]string{loginHeader: "tok-124"}, false},
		{"wrong token and an identity referrer", true, "https://auth.moiid.ca/x", map[string]string{loginHeader: "x", "Referer": "https://auth.moiid.ca/"}, false},
		{"store page, no token", true, "https://auth.moiid.ca/x", map[string]string{"Referer": "https://www.metro.ca/en"}, false},
		{"no referrer", true, "https://auth.moiid.ca/x", nil, false},
		{"challenge frame of the identity site", true, "https://challenges.cloudflare.com/turnstile", map[string]string{"Referer": "https://auth.moiid.ca/signin"}, true},
		{"challenge frame's own fetch", true, "https://challenges.cloudflare.com/api", map[string]string{"Origin": "https://challenges.cloudflare.com"}, true},
		{"identity referrer, store target", true, "https://www.metro.ca/en/login", map[string]string{"Referer": "https://auth.moiid.ca/signin"}, false},
		{"sandboxed origin, identity referrer", true, "https://auth.moiid.ca/x", map[string]string{"Origin": "null", "Referer": "https://www.metro.ca/"}, false},
		{"identity referrer, login over", false, "https://challenges.cloudflare.com/x", map[string]string{"Referer": "https://auth.moiid.ca/"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.loginToken = ""
			if tc.active {
				h.loginToken = token
			}
			u, _ := url.Parse(tc.target)
			hdr := http.Header{}
			for k, v := range tc.headers {
				hdr.Set(k, v)
			}
			if got := h.loginRequest(u, hdr); got != tc.want {
				t.Fatalf("loginRequest = %v, want %v", got, tc.want)
			}
		})
	}
}

// holdLoginAfter is steps with, after each step at says yes to, a step that
// waits for the page to show #hold-released: the login is held there until
// the test is done with its window.
func holdLoginAfter(steps []store.LoginStep, at func(store.LoginStep) bool) []store.LoginStep {
	var out []store.LoginStep
	for _, st := range steps {
		out = append(out, st)
		if at(st) {
			out = append(out, store.LoginStep{Kind: store.StepWaitForSelector, Selector: "#hold-released", Timeout: 3 * patience, What: "wait for the test"})
		}
	}
	return out
}
