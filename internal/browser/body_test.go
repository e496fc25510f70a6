package browser

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// bodySite is a store under metro's names that records every request it
// receives with its body.
type bodySite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits []string // "METHOD raw-request-URI body"
}

func newBodySite(t testing.TB) *bodySite {
	b := &bodySite{}
	b.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.hits = append(b.hits, r.Method+" "+r.RequestURI+" "+string(body))
		b.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>store</title><h1>store</h1>`)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *bodySite) rules() string { return "MAP www.metro.ca " + b.srv.Listener.Addr().String() }

// reached returns the recorded requests whose request URI starts with
// prefix.
func (b *bodySite) reached(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, h := range b.hits {
		if _, rest, _ := strings.Cut(h, " "); strings.HasPrefix(rest, prefix) {
			out = append(out, h)
		}
	}
	return out
}

// orderRequest is one spelling of a state-changing request that names an
// order where the path check alone does not read it (issue 24).
type orderRequest struct {
	name, method, path, ctype, body string
	headers                         map[string]string
}

func multipartBody(field, value string) (string, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.WriteField("productCode", "123")
	_ = w.WriteField(field, value)
	_ = w.Close()
	return w.FormDataContentType(), b.String()
}

func orderRequests() []orderRequest {
	mpType, mpBody := multipartBody("_eventId", "placeOrder")
	return []orderRequest{
		{name: "form body", method: "POST", path: "/en/online-grocery/cart", ctype: "application/x-www-form-urlencoded", body: "_eventId=placeOrder"},
		{name: "text body (fetch)", method: "POST", path: "/en/online-grocery/cart", ctype: "text/plain;charset=UTF-8", body: "_eventId=placeOrder"},
		{name: "JSON body", method: "POST", path: "/en/online-grocery/cart/update", ctype: "application/json", body: `{"entry":1,"next":"expressCheckout"}`},
		{name: "multipart body", method: "POST", path: "/en/online-grocery/cart", ctype: mpType, body: mpBody},
		{name: "escape hidden behind an invalid one", method: "POST", path: "/en/online-grocery/cart?_eventId=place%4Frder&x=%zz"},
		{name: "truncated escape elsewhere", method: "POST", path: "/en/online-grocery/cart?x=%E0%A4%A&_eventId=check%6Fut"},
		{name: "compound expressCheckout", method: "POST", path: "/en/online-grocery/cart/expressCheckout"},
		{name: "compound placeOrderNow", method: "POST", path: "/en/online-grocery/cart/placeOrderNow"},
		{name: "X-HTTP-Method-Override on a GET", method: "GET", path: "/en/online-grocery/lists/save", headers: map[string]string{"X-HTTP-Method-Override": "PUT"}},
		{name: "X-Method-Override on a GET", method: "GET", path: "/en/online-grocery/lists/save", headers: map[string]string{"X-Method-Override": "DELETE"}},
		{name: "X-HTTP-Method on a GET", method: "GET", path: "/en/online-grocery/lists/save", headers: map[string]string{"X-HTTP-Method": "POST"}},
		{name: "_method in the query", method: "POST", path: "/en/online-grocery/cart/add?_method=DELETE"},
		{name: "_method in the body", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/x-www-form-urlencoded", body: "productCode=1&_method=PUT"},
		// Run-together, all-caps and digit spellings (audit of issue 24).
		{name: "run-together createorder", method: "POST", path: "/en/online-grocery/cart/createorder"},
		{name: "versioned createOrderV2", method: "POST", path: "/en/online-grocery/cart/createOrderV2"},
		{name: "run-together paynow", method: "POST", path: "/en/online-grocery/cart/paynow"},
		{name: "all-caps PAYNOW", method: "POST", path: "/en/online-grocery/cart/PAYNOW"},
		{name: "order with a digit", method: "POST", path: "/en/online-grocery/cart/order2"},
		{name: "run-together flow event", method: "POST", path: "/en/online-grocery/cart?_eventId=ordernow"},
		{name: "run-together in a body", method: "POST", path: "/en/online-grocery/cart", ctype: "application/x-www-form-urlencoded", body: "productCode=1&action=paynow"},
		// The body rows at a cart operation's path: metro's cart page itself
		// takes no state change now (issue 36), so there the path is refused
		// before the body is read.
		{name: "form body at a cart operation", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/x-www-form-urlencoded", body: "_eventId=placeOrder"},
		{name: "text body (fetch) at a cart operation", method: "POST", path: "/en/online-grocery/cart/add", ctype: "text/plain;charset=UTF-8", body: "_eventId=placeOrder"},
		{name: "multipart body at a cart operation", method: "POST", path: "/en/online-grocery/cart/add", ctype: mpType, body: mpBody},
		{name: "run-together in a body at a cart operation", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/x-www-form-urlencoded", body: "productCode=1&action=paynow"},
		// Issue 36: order verbs outside the word list (metro's cart is an
		// allowlist of operations), look-alike letters, the body as the
		// server reads it, flow events in GETs.
		{name: "cart buy-now", method: "POST", path: "/en/online-grocery/cart/buy-now"},
		{name: "cart BUY-NOW", method: "POST", path: "/en/online-grocery/cart/BUY-NOW"},
		{name: "cart submit", method: "POST", path: "/en/online-grocery/cart/submit"},
		{name: "cart confirm", method: "POST", path: "/en/online-grocery/cart/confirm"},
		{name: "cart complete", method: "POST", path: "/en/online-grocery/cart/complete"},
		{name: "flow event submit", method: "POST", path: "/en/online-grocery/cart?_eventId=submit"},
		{name: "flow event buy in a body", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/x-www-form-urlencoded", body: "_eventId=buy"},
		{name: "GraphQL mutation", method: "POST", path: "/en/online-grocery/cart/graphql", ctype: "application/json", body: `{"query":"mutation { completeCart(id: 1) { id } }"}`},
		{name: "GraphQL mutation to a cart operation", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/json", body: `{"query":"mutation { completeCart(id: 1) { id } }"}`},
		{name: "French acheter", method: "POST", path: "/fr/online-grocery/cart/acheter"},
		{name: "French achat", method: "POST", path: "/fr/online-grocery/cart/achat"},
		{name: "French passer-a-la-caisse", method: "POST", path: "/fr/online-grocery/cart/passer-a-la-caisse"},
		{name: "French reglement with a grave accent", method: "POST", path: "/fr/online-grocery/cart/r%C3%A8glement"},
		{name: "French confirmer", method: "POST", path: "/fr/online-grocery/cart/confirmer"},
		{name: "Cyrillic c in checkout", method: "POST", path: "/en/online-grocery/cart/%D1%81heckout"},
		{name: "full-width checkout", method: "POST", path: "/en/online-grocery/cart/%EF%BD%83%EF%BD%88%EF%BD%85%EF%BD%83%EF%BD%8B%EF%BD%8F%EF%BD%95%EF%BD%94"},
		{name: "full-width flow event", method: "POST", path: "/en/online-grocery/cart?_eventId=%EF%BD%90%EF%BD%8C%EF%BD%81%EF%BD%83%EF%BD%85%EF%BC%AF%EF%BD%92%EF%BD%84%EF%BD%85%EF%BD%92"},
		{name: "JSON stream", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/json", body: "{\"qty\":1}\n{\"_eventId\":\"placeOrder\"}"},
		{name: "JSON duplicate key", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/json", body: `{"_eventId":"placeOrder","_eventId":"add"}`},
		{name: "form in UTF-16BE", method: "POST", path: "/en/online-grocery/cart/add", ctype: "application/x-www-form-urlencoded; charset=UTF-16BE", body: utf16BE("qty=1&_eventId=buy")},
		{name: "multipart base64 part", method: "POST", path: "/en/online-grocery/cart/add", ctype: "multipart/form-data; boundary=XX",
			body: "--XX\r\nContent-Disposition: form-data; name=\"action\"\r\nContent-Transfer-Encoding: base64\r\n\r\ncGxhY2VPcmRlcg==\r\n--XX--\r\n"},
		{name: "GET flow event", method: "GET", path: "/en/online-grocery/cart?_eventId=placeOrder&execution=e1s2"},
		{name: "GET flow event in a name", method: "GET", path: "/en/online-grocery/cart?_eventId_placeOrder=x"},
		{name: "GET expresscheckout", method: "GET", path: "/en/expresscheckout"},
		{name: "GET checkoutsummary", method: "GET", path: "/en/checkoutsummary"},
		{name: "GET reorder", method: "GET", path: "/en/reorder"},
	}
}

// utf16BE is s in UTF-16BE (ASCII only).
func utf16BE(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteByte(0)
		b.WriteByte(c)
	}
	return b.String()
}

// TestProxyReadsBodiesAndParameters sends every spelling of issue 24
// through the real policy proxy (metro's profile) to a server that records
// what it receives: each gets the proxy's 403 and none reaches the
// server; a cart operation with a form body reaches it with its body
// intact, and one with a body over store.MaxBody is refused.
func TestProxyReadsBodiesAndParameters(t *testing.T) {
	site := newBodySite(t)
	rules, err := parseResolverRules(site.rules())
	if err != nil {
		t.Fatal(err)
	}
	prof := store.Metro()
	p, err := startProxy(slog.New(slog.DiscardHandler), profilePolicy{prof}, rules, upstreamTLS{insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pu, _ := url.Parse(p.URL())
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the proxy's own certificate
	defer c.CloseIdleConnections()
	do := func(r orderRequest) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), r.method, "https://www.metro.ca"+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		if r.ctype != "" {
			req.Header.Set("Content-Type", r.ctype)
		}
		for k, v := range r.headers {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	for _, r := range orderRequests() {
		t.Run(r.name, func(t *testing.T) {
			if code, body := do(r); code != http.StatusForbidden || !strings.Contains(body, "store policy") {
				t.Errorf("status %d (%q), want the proxy's 403", code, body)
			}
		})
	}
	if got := site.reached("/en/"); len(got) > 0 {
		t.Fatalf("refused requests reached the store:\n%s", strings.Join(got, "\n"))
	}
	add := orderRequest{name: "cart add", method: "POST", path: "/en/online-grocery/cart/add?display=grid", ctype: "application/x-www-form-urlencoded", body: "productCode=0123&qty=2"}
	if code, _ := do(add); code != http.StatusOK {
		t.Fatalf("cart add: status %d", code)
	}
	if got := site.reached("/en/online-grocery/cart/add"); len(got) != 1 || got[0] != "POST /en/online-grocery/cart/add?display=grid productCode=0123&qty=2" {
		t.Fatalf("the cart add reached the store as %q, want its body intact", got)
	}
	big := add
	big.body = "productCode=0123&note=" + strings.Repeat("a", store.MaxBody)
	if code, _ := do(big); code != http.StatusForbidden {
		t.Fatalf("a cart add with a body over %d bytes: status %d, want 403", store.MaxBody, code)
	}
	if got := site.reached("/en/online-grocery/cart/add"); len(got) != 1 {
		t.Fatalf("the long body reached the store: %d requests", len(got))
	}
	// An encoded body is not read as what it encodes: any Content-Encoding
	// but identity is refused (a gzipped _eventId=placeOrder passed).
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("_eventId=placeOrder"))
	_ = zw.Close()
	for _, enc := range []string{"gzip", "br", "identity, deflate"} {
		r := orderRequest{name: "encoded body", method: "POST", path: "/en/online-grocery/cart/add?enc=" + url.QueryEscape(enc), ctype: "application/x-www-form-urlencoded", body: gz.String(), headers: map[string]string{"Content-Encoding": enc}}
		if code, body := do(r); code != http.StatusForbidden || !strings.Contains(body, "encoded body") {
			t.Errorf("a body with Content-Encoding %q: status %d (%q), want the proxy's 403", enc, code, body)
		}
	}
	if got := site.reached("/en/online-grocery/cart/add?enc="); len(got) > 0 {
		t.Fatalf("encoded bodies reached the store:\n%s", strings.Join(got, "\n"))
	}
	ident := add
	ident.path = "/en/online-grocery/cart/add?enc=identity"
	ident.headers = map[string]string{"Content-Encoding": "identity"}
	if code, _ := do(ident); code != http.StatusOK {
		t.Fatalf("a cart add with Content-Encoding identity: status %d, want 200", code)
	}
}

// TestOrderWordsInBodiesAreRefusedInChromium: a store page (metro's
// profile) sends every spelling of issue 24 with fetch, and the first ones
// as real HTML form posts (url-encoded and multipart) into a frame: the
// server receives none of them, while a cart operation's fetch still
// reaches it with its body.
func TestOrderWordsInBodiesAreRefusedInChromium(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	site := newBodySite(t)
	prof := store.Metro()
	prof.IgnoreHTTPSErrors = true // the local server's certificate is not www.metro.ca's
	h := launch(t, baseOptions(t, prof, t.TempDir(), site.rules(), nil))
	defer closeHost(t, h)
	tab := newTab(t, h)
	mustDo(t, "open a store page", tab.Navigate(testCtx(t), "https://www.metro.ca/en/start"))
	got := eval(t, tab, `async (reqs) => {
  const r = {};
  for (const q of reqs) {
    const headers = Object.assign({}, q.headers || {});
    if (q.ctype) headers['Content-Type'] = q.ctype;
    try { r[q.name] = (await fetch(q.path, {method: q.method, headers, body: q.method === 'GET' ? undefined : q.body})).status; } catch (e) { r[q.name] = 'error ' + e; }
  }
  const post = (enctype, field, value, action = '/en/online-grocery/cart') => new Promise(res => {
    const name = 'f' + Math.random(); const f = document.createElement('iframe'); f.name = name; document.body.append(f);
    f.addEventListener('load', () => res(), {once: true}); setTimeout(res, 15000); // bounds a frame left blank
    const form = document.createElement('form'); form.method = 'post'; form.enctype = enctype; form.action = action + '?form=' + encodeURIComponent(enctype); form.target = name;
    const i = document.createElement('input'); i.name = field; i.value = value; form.append(i); document.body.append(form); form.submit();
  });
  await post('application/x-www-form-urlencoded', '_eventId', 'placeOrder');
  await post('multipart/form-data', '_eventId', 'placeOrder');
  await post('text/plain', '_eventId', 'check\u006fut');
  // The same at a cart operation's path (metro's cart page itself now
  // takes no state change, issue 36): the body is what is refused.
  await post('application/x-www-form-urlencoded', '_eventId', 'placeOrder', '/en/online-grocery/cart/add');
  await post('multipart/form-data', '_eventId', 'placeOrder', '/en/online-grocery/cart/add');
  await post('text/plain', '_eventId', 'check\u006fut', '/en/online-grocery/cart/add');
  // An image naming a flow event (issue 36): a GET the store acts on.
  await new Promise(res => { const i = new Image(); i.onload = i.onerror = () => res(); setTimeout(res, 15000); i.src = '/en/online-grocery/cart?_eventId_placeOrder=x&img=1'; });
  r['cart add'] = (await fetch('/en/online-grocery/cart/add', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'productCode=0123&qty=1'})).status;
  return r;
}`, orderRequestsJS())
	t.Logf("statuses: %v", got)
	m, _ := got.(map[string]any)
	for _, r := range orderRequests() {
		if code, _ := m[r.name].(int); code != http.StatusForbidden {
			t.Errorf("%s: %v, want the proxy's 403", r.name, m[r.name])
		}
	}
	if m["cart add"] != 200 {
		t.Errorf("cart add: %v, want 200", m["cart add"])
	}
	var bad []string
	for _, hit := range site.reached("/en/") {
		if hit != "POST /en/online-grocery/cart/add productCode=0123&qty=1" && !strings.HasPrefix(hit, "GET /en/start ") {
			bad = append(bad, hit)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("requests naming an order reached the store:\n%s", strings.Join(bad, "\n"))
	}
	if len(site.reached("/en/online-grocery/cart/add")) != 1 {
		t.Fatal("the cart operation did not reach the store")
	}
	if h.Refused()[store.RuleOrder] < 10 {
		t.Fatalf("refusals %v: the order rule should have refused the spellings", h.Refused())
	}
}

// orderRequestsJS is orderRequests for the page.
func orderRequestsJS() []map[string]any {
	var out []map[string]any
	for _, r := range orderRequests() {
		hs := map[string]any{}
		for k, v := range r.headers {
			hs[k] = v
		}
		out = append(out, map[string]any{"name": r.name, "method": r.method, "path": r.path, "ctype": r.ctype, "body": r.body, "headers": hs})
	}
	return out
}

// TestDemoCartStillWorksUnderBodyChecks: signed in to the demo store, a
// product page's own cart calls (add, then remove by quantity 0) still
// work through the proxy's body checks, while the same call with an order
// word in its JSON body is refused and leaves the cart as it was.
func TestDemoCartStillWorksUnderBodyChecks(t *testing.T) {
	f := sharedDemo(t)
	ctx := testCtx(t)
	mustDo(t, "login", f.host.Login(ctx))
	tab := newTab(t, f.host)
	const id = "olive-oil-1l"
	mustDo(t, "open a product page", tab.Navigate(ctx, demostore.ProductURL(id)))
	qty := func() int {
		for _, l := range f.store.Cart() {
			if l.ProductID == id {
				return l.Quantity
			}
		}
		return 0
	}
	call := `async ([path, body]) => (await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)})).status`
	if st := eval(t, tab, call, []any{"/api/postal-code", map[string]any{"postalCode": "H2X 1Y4"}}); st != http.StatusOK {
		t.Fatalf("postal code: %v, want 200", st)
	}
	q0 := qty()
	if st := eval(t, tab, call, []any{"/api/cart/add", map[string]any{"productId": id, "quantity": 1, "then": "placeOrder"}}); st != http.StatusForbidden {
		t.Fatalf("a cart add naming placeOrder: %v, want 403", st)
	}
	if qty() != q0 {
		t.Fatal("the refused cart add changed the cart")
	}
	if st := eval(t, tab, call, []any{"/api/cart/add", map[string]any{"productId": id, "quantity": 1}}); st != http.StatusOK {
		t.Fatalf("cart add: %v, want 200", st)
	}
	if qty() != q0+1 {
		t.Fatalf("after the add the cart holds %d of %s, want %d", qty(), id, q0+1)
	}
	if st := eval(t, tab, call, []any{"/api/cart/update", map[string]any{"productId": id, "quantity": 0}}); st != http.StatusOK {
		t.Fatalf("cart remove: %v, want 200", st)
	}
	if qty() != 0 {
		t.Fatalf("after the removal the cart holds %d of %s", qty(), id)
	}
}

// TestPagehideBeaconsAreRefused: beacons and keepalive fetches a store page
// sends as it is left (pagehide) are requests like any other: those to
// order verbs outside the word list (metro's cart is an allowlist of
// operations) never reach the store, while the page's allowed beacon
// (sent last) does.
func TestPagehideBeaconsAreRefused(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	site := newBodySite(t)
	prof := store.Metro()
	prof.IgnoreHTTPSErrors = true // the local server's certificate is not www.metro.ca's
	h := launch(t, baseOptions(t, prof, t.TempDir(), site.rules(), nil))
	defer closeHost(t, h)
	tab := newTab(t, h)
	ctx := testCtx(t)
	mustDo(t, "open a store page", tab.Navigate(ctx, "https://www.metro.ca/en/start"))
	eval(t, tab, `() => addEventListener('pagehide', () => {
  for (const p of ['/en/online-grocery/cart/buy-now', '/en/online-grocery/cart/submit', '/en/online-grocery/cart/confirm']) {
    navigator.sendBeacon(p, 'qty=1');
    fetch(p + '?k=1', {method: 'POST', keepalive: true, body: 'qty=1'});
  }
  navigator.sendBeacon('/en/online-grocery/cart/add?pagehide=1', 'productCode=0123&qty=1');
})`)
	mustDo(t, "leave the page", tab.Navigate(ctx, "https://www.metro.ca/en/next"))
	waitFor(t, "the page's allowed beacon", patience, func() bool { return len(site.reached("/en/online-grocery/cart/add?pagehide=1")) > 0 })
	for _, p := range []string{"/en/online-grocery/cart/buy-now", "/en/online-grocery/cart/submit", "/en/online-grocery/cart/confirm"} {
		if got := site.reached(p); len(got) > 0 {
			t.Errorf("a pagehide beacon or keepalive fetch reached the store: %q", got)
		}
	}
}
