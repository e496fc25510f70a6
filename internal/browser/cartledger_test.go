package browser

import (
	"context"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/store"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// addJS posts a cart add from the page, as the store's own script does,
// and resolves to the HTTP status.
const addJS = `async ([id, qty]) => {
	const r = await fetch('/api/cart/add', {method: 'POST', headers: {'Content-Type': 'application/json'},
		body: JSON.stringify({productId: id, quantity: qty})});
	return r.status;
}`

// TestCartRequestsAttributedToTheirTab: every cart change is recorded by
// the tab that sent it — from its page or its worker — with the product,
// the units and the store's answer; another tab's changes are not in it.
// While a login runs, cart changes wait at the proxy and go out after it.
func TestCartRequestsAttributedToTheirTab(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	s, err := demostore.Start(context.Background(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := baseOptions(t, store.Demo(), t.TempDir(), s.HostResolverRules(), nil)
	user, pass := s.Credentials()
	o.Username, o.Password = user, config.Secret(pass)
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)
	if err := h.Login(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := newTab(t, h), newTab(t, h)
	for _, tab := range []*Tab{a, b} {
		mustDo(t, "open the store", tab.Navigate(ctx, "https://www.metro.ca/en"))
	}
	eval(t, a, `() => fetch('/api/postal-code', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({postalCode: 'H2X 1Y4'})}).then(r => r.status)`)
	if st := eval(t, a, addJS, []any{"milk-2pct-2l", 2}); st != 200 {
		t.Fatalf("add from tab a: %v", st)
	}
	if st := eval(t, b, addJS, []any{"bananas-bunch", 1}); st != 200 {
		t.Fatalf("add from tab b: %v", st)
	}
	// A dedicated worker of tab b adds too — or cannot run at all (a tab
	// may refuse workers): either way the store's cart and tab b's ledger
	// must agree.
	worker := eval(t, b, `() => new Promise(res => {
		const src = "fetch('https://www.metro.ca/api/cart/add', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({productId: 'sugar-white-2kg'})}).then(r => postMessage(r.status), e => postMessage('failed'))";
		try {
			const w = new Worker(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
			w.onmessage = e => res(e.data);
			w.onerror = () => res('no worker');
			setTimeout(() => res('no answer'), 20000);
		} catch (e) { res('no worker'); }
	})`)
	t.Logf("tab b's worker: %v", worker)
	sugarInCart := func() int {
		for _, l := range s.Cart() {
			if l.ProductID == "sugar-white-2kg" {
				return l.Quantity
			}
		}
		return 0
	}

	adds := func(tab *Tab) map[string]int {
		m := map[string]int{}
		for _, c := range tab.CartRequests() {
			if c.Kind == store.CartAdd && c.Done() {
				m[c.ProductID] += c.Quantity
			}
		}
		return m
	}
	// The answers reach the ledger as Playwright's events arrive.
	testwait.Until(t, "tab a's add in its ledger", patience, func() bool { return adds(a)["milk-2pct-2l"] == 2 })
	testwait.Until(t, "tab b's adds in its ledger", patience, func() bool {
		m := adds(b)
		return m["bananas-bunch"] == 1 && m["sugar-white-2kg"] == sugarInCart()
	})
	if m := adds(a); len(m) != 1 {
		t.Errorf("tab a's ledger: %v, want only its own milk", m)
	}
	if m := adds(b); m["sugar-white-2kg"] != sugarInCart() || len(m) > 2 {
		t.Errorf("tab b's ledger: %v; the cart holds %d sugar", m, sugarInCart())
	}

	// A login holds cart changes: the add waits at the proxy until it ends.
	before := s.Requests()["POST www.metro.ca /api/cart/add"]
	left, resume := h.cart.hold(ctx, time.Second)
	if left != 0 {
		resume()
		t.Fatalf("%d cart requests in flight before the hold", left)
	}
	eval(t, a, `([id]) => { window.held = fetch('/api/cart/add', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({productId: id})}).then(r => r.status); }`, []any{"carrots-2lb"})
	testwait.Until(t, "the add held at the proxy", patience, func() bool { return h.cart.held() == 1 })
	if got := s.Requests()["POST www.metro.ca /api/cart/add"]; got != before {
		t.Errorf("the store received the add while the login held it (%d → %d)", before, got)
	}
	resume()
	if st := eval(t, a, `() => window.held`); st != 200 {
		t.Fatalf("the held add after the login: %v", st)
	}
	if got := s.Requests()["POST www.metro.ca /api/cart/add"]; got != before+1 {
		t.Errorf("store adds %d → %d, want one more", before, got)
	}
}
