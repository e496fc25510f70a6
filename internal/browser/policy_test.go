package browser

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/screen"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// blockedVariants are spellings of the blocked paths a page or a model
// might use.
var blockedVariants = []string{
	"/checkout", "/en/checkout", "/fr/checkout/", "/EN/CheckOut", "/en/%63heckout", "/en/%2563heckout",
	"/en/online-grocery/checkout", "/en/./checkout", "/en/aisles/../checkout", "/checkout.aspx",
	"/payment", "/en/payment/card", "/billing", "/fr/billing/",
	"/login", "/en/login", "/logout", "/signup", "/register",
	"/account/settings", "/en/account/settings/", "/Account/Edit", "/password", "/password-reset",
}

// linkAndClick puts a link to href on the page and clicks it like the
// model would.
func linkAndClick(t *testing.T, tab *Tab, href, target string) {
	t.Helper()
	eval(t, tab, `([href, target]) => {
  document.getElementById('gs-test-link')?.remove();
  const a = document.createElement('a');
  a.id = 'gs-test-link'; a.href = href; a.textContent = 'go';
  if (target) a.target = target;
  a.style.cssText = 'position:fixed;left:600px;top:600px;width:240px;height:60px;z-index:2147483646;background:#f0f;display:block';
  document.documentElement.appendChild(a);
}`, []string{href, target})
	mustDo(t, "click the link", tab.Click(testCtx(t), norm(720, 630), screen.ButtonLeft, 1))
}

// acceptConsent clicks the demo store's cookie banner away if it shows
// (its backdrop covers the page until then).
func acceptConsent(t *testing.T, tab *Tab) {
	t.Helper()
	if !eval(t, tab, `() => !!document.getElementById('onetrust-consent-sdk')`).(bool) {
		return
	}
	x, y := demostore.ConsentAcceptButton()
	mustDo(t, "accept cookies", tab.Click(testCtx(t), norm(x, y), screen.ButtonLeft, 1))
	waitFor(t, "the cookie banner to go", patience, func() bool {
		return !eval(t, tab, `() => !!document.getElementById('onetrust-consent-sdk')`).(bool)
	})
}

func wantBlocked(t *testing.T, err error, what string) *BlockedError {
	t.Helper()
	var be *BlockedError
	if !errors.As(err, &be) || !be.Rejected() {
		t.Fatalf("%s: error %v, want a rejected *BlockedError", what, err)
	}
	return be
}

func hasNotice(notices []string, sub string) bool {
	return slices.ContainsFunc(notices, func(n string) bool { return strings.Contains(n, sub) })
}

func TestPolicyOnDemoStore(t *testing.T) {
	f := sharedDemo(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	search := store.Demo().SearchURL("milk")

	mustDo(t, "open the search page", tab.Navigate(ctx, search))
	acceptConsent(t, tab)
	// The store works: the page loaded and its images came from the second host.
	waitFor(t, "product images to load", patience, func() bool {
		return eval(t, tab, `() => { const imgs = [...document.images].filter(i => i.src.includes('product-images.metro.ca'));
  return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0); }`).(bool)
	})
	// The page's own evil.example pixel was blocked.
	if n := f.host.BlockedHosts()["evil.example"]; n == 0 {
		t.Error("the evil.example pixel was not counted as blocked")
	}

	t.Run("navigate refuses foreign hosts and other schemes", func(t *testing.T) {
		for _, u := range []string{"https://evil.example/", "evil.example", "http://evil.example/x", "https://auth.moiid.ca/", "file:///etc/passwd", "javascript:alert(1)", "data:text/html,hi"} {
			wantBlocked(t, tab.Navigate(ctx, u), u)
		}
		if !strings.HasPrefix(tab.URL(), search) {
			t.Fatalf("the tab moved to %s", tab.URL())
		}
	})
	t.Run("navigate refuses every blocked-path variant", func(t *testing.T) {
		for _, v := range blockedVariants {
			be := wantBlocked(t, tab.Navigate(ctx, "https://www.metro.ca"+v), v)
			if !strings.Contains(be.Reason, "may not be opened") {
				t.Errorf("%s: reason %q", v, be.Reason)
			}
		}
	})
	t.Run("links to blocked paths and hosts are stopped in the page", func(t *testing.T) {
		tab.TakeNotices()
		for _, v := range append(slices.Clone(blockedVariants), "https://evil.example/offer", "http://www.metro.ca/en/checkout") {
			href := v
			if strings.HasPrefix(v, "/") {
				href = "https://www.metro.ca" + v
			}
			linkAndClick(t, tab, href, "")
			if !strings.HasPrefix(tab.URL(), search) {
				t.Fatalf("a link to %s took the tab to %s", v, tab.URL())
			}
			if n := tab.TakeNotices(); !hasNotice(n, "was blocked") {
				t.Fatalf("no block notice for %s: %q", v, n)
			}
		}
	})
	t.Run("new tabs are closed; allowed addresses open in the opener", func(t *testing.T) {
		mustDo(t, "back to the search page", tab.Navigate(ctx, search))
		tab.TakeNotices()
		// The nav bar's "Partner offer" opens evil.example in a new tab.
		mustDo(t, "click partner offer", tab.Click(ctx, norm(1246+85, 132), screen.ButtonLeft, 1))
		if n := tab.TakeNotices(); !hasNotice(n, "https://evil.example/offer was blocked") {
			t.Fatalf("notices %q", n)
		}
		if !strings.HasPrefix(tab.URL(), search) {
			t.Fatalf("the tab moved to %s", tab.URL())
		}
		// "Weekly flyer" opens /en/flyer in a new tab: it loads here instead.
		mustDo(t, "click weekly flyer", tab.Click(ctx, norm(1060+85, 132), screen.ButtonLeft, 1))
		if u := tab.URL(); u != "https://www.metro.ca/en/flyer" {
			t.Fatalf("after clicking the flyer link the tab is at %s", u)
		}
		waitFor(t, "the popups to be closed", patience, func() bool { return len(f.host.cur.ctx.Pages()) == f.host.openPageCount() })
	})
	if n := f.store.CheckoutHits(); n != 0 {
		t.Errorf("CheckoutHits = %d, want 0", n)
	}
	if n := f.store.EvilHits(); n != 0 {
		t.Errorf("EvilHits = %d, want 0", n)
	}
}

func TestRedirectsAndSideChannelsAreBlocked(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	evil0 := f.hostHits("evil.test")

	mustDo(t, "open a page", tab.Navigate(ctx, "http://shop.test/"))
	be := wantBlocked(t, tab.Navigate(ctx, "http://shop.test/redirect-checkout"), "redirect to /en/checkout")
	if !strings.Contains(be.URL, "/en/checkout") {
		t.Errorf("blocked URL %q", be.URL)
	}
	wantBlocked(t, tab.Navigate(ctx, "http://shop.test/redirect-evil"), "redirect to evil.test")
	if u := tab.URL(); u != "http://shop.test/" {
		t.Errorf("after blocked redirects the tab is at %s", u)
	}
	mustDo(t, "an allowed redirect", tab.Navigate(ctx, "http://shop.test/redirect-ok"))
	if u := tab.URL(); u != "http://shop.test/color?c=green" {
		t.Errorf("allowed redirect ended at %s", u)
	}
	tab.TakeNotices()
	linkAndClick(t, tab, "http://shop.test/redirect-checkout", "")
	if u := tab.URL(); u != "http://shop.test/color?c=green" {
		t.Errorf("a link to a redirecting page took the tab to %s", u)
	}
	if n := tab.TakeNotices(); !hasNotice(n, "redirect to http://shop.test/en/checkout was blocked") {
		t.Errorf("notices %q", n)
	}

	// Image redirects, WebSockets, fetch and beacons to evil.test: the
	// proxy stops them all (a no-cors fetch sees its 403 as an opaque
	// answer; the server never sees the request).
	mustDo(t, "open the side-channel page", tab.Navigate(ctx, "http://shop.test/side-channels"))
	waitFor(t, "the page's ws and fetch attempts to end", patience, func() bool {
		return eval(t, tab, `() => !!(window.results.ws && window.results.fetch)`).(bool)
	})
	// A tab's page cannot make a WebSocket at all (diet.go): it throws.
	if r := fmt.Sprint(eval(t, tab, `() => window.results.ws`)); r != "threw" {
		t.Errorf("WebSocket to evil.test: %s, want it refused (threw)", r)
	}
	if got := f.hostHits("evil.test") - evil0; got != 0 {
		t.Errorf("evil.test was reached %d times", got)
	}
	if n := f.blockedPathHits(); n != 0 {
		t.Errorf("blocked paths were reached %d times", n)
	}
	if f.host.BlockedHosts()["evil.test"] == 0 {
		t.Error("evil.test is not counted as blocked")
	}
	if !strings.Contains(f.logs.String(), "host=evil.test") {
		t.Error("the blocked host was not logged")
	}
	if c := strings.Count(f.logs.String(), "blocked a host outside the store's allowlist (logged once per host"); c != len(f.host.BlockedHosts()) {
		t.Errorf("blocked hosts logged %d times for %d hosts", c, len(f.host.BlockedHosts()))
	}
}

func TestPopupsAreClosed(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	evil0 := f.hostHits("evil.test")
	mustDo(t, "open the popups page", tab.Navigate(ctx, "http://shop.test/popups"))
	pagesSettled := func() bool { return len(f.host.cur.ctx.Pages()) == f.host.openPageCount() }

	tab.TakeNotices()
	mustDo(t, "click the evil link", tab.Click(ctx, norm(550, 150), screen.ButtonLeft, 1))
	waitFor(t, "the evil popup to be refused", patience, func() bool { return hasNotice(tab.st.peekNotices(), "evil.test/offer") })
	mustDo(t, "click the checkout link", tab.Click(ctx, norm(950, 150), screen.ButtonLeft, 1))
	waitFor(t, "the checkout popup to be refused", patience, func() bool { return hasNotice(tab.st.peekNotices(), "/checkout") })
	waitFor(t, "the popups to close", patience, pagesSettled)
	if u := tab.URL(); u != "http://shop.test/popups" {
		t.Fatalf("refused popups moved the tab to %s", u)
	}
	mustDo(t, "click the window.open button", tab.Click(ctx, norm(150, 350), screen.ButtonLeft, 1))
	waitFor(t, "the noopener popup's page to open here", patience, func() bool { return tab.URL() == "http://shop.test/color?c=purple" })
	mustDo(t, "back", tab.GoBack(ctx))
	mustDo(t, "click the allowed link", tab.Click(ctx, norm(150, 150), screen.ButtonLeft, 1))
	waitFor(t, "the allowed popup's page to open here", patience, func() bool { return tab.URL() == "http://shop.test/color?c=blue" })
	waitFor(t, "the popups to close", patience, pagesSettled)
	if n := f.count("shop.test", "/checkout"); n != 0 {
		t.Errorf("/checkout reached %d times", n)
	}
	if n := f.hostHits("evil.test") - evil0; n != 0 {
		t.Errorf("evil.test reached %d times", n)
	}

	t.Run("a new tab the popup script cannot stop is closed", func(t *testing.T) {
		// A sandboxed frame without scripts runs no init script; its
		// target=_blank link opens a real new tab.
		mustDo(t, "open the sandbox page", tab.Navigate(ctx, "http://shop.test/sandbox?href=about:blank%23popup"))
		tab.TakeNotices()
		mustDo(t, "click the framed link", tab.Click(ctx, norm(150, 150), screen.ButtonLeft, 1))
		waitFor(t, "the new tab to be reported", patience, func() bool { return hasNotice(tab.st.peekNotices(), "opened a new tab; it was closed") })
		waitFor(t, "the new tab to close", patience, pagesSettled)
		if u := tab.URL(); !strings.Contains(u, "/sandbox") {
			t.Fatalf("the tab moved to %s", u)
		}
	})
}

func TestBannerShowsEachTabsItem(t *testing.T) {
	f := sharedDemo(t)
	ctx := testCtx(t)
	banner := func(tab *Tab) (string, int) {
		v := eval(t, tab, `(id) => [document.getElementById(id)?.textContent ?? '', document.querySelectorAll('#' + CSS.escape(id)).length]`, BannerElementID).([]any)
		return v[0].(string), int(toF(v[1]))
	}
	want := func(item string) string { return store.DefaultBannerText + item }
	items := map[*Tab]string{newTab(t, f.host): "2% milk", newTab(t, f.host): `eggs "large" <12>`}
	for tab, item := range items {
		mustDo(t, "set item", tab.SetItem(ctx, item))
		mustDo(t, "open search", tab.Navigate(ctx, store.Demo().SearchURL(item)))
		acceptConsent(t, tab)
	}
	for tab, item := range items {
		if text, n := banner(tab); text != want(item) || n != 1 {
			t.Fatalf("banner %q (%d elements), want %q once", text, n, want(item))
		}
		// SPA navigation: the nav bar's aisle links use pushState.
		mustDo(t, "click an aisle", tab.Click(ctx, norm(24+92, 132), screen.ButtonLeft, 1))
		waitFor(t, "the SPA route change", patience, func() bool { return strings.Contains(tab.URL(), "/aisles/dairy-eggs") })
		if text, n := banner(tab); text != want(item) || n != 1 {
			t.Fatalf("after pushState: banner %q (%d elements)", text, n)
		}
		mustDo(t, "back (popstate)", tab.GoBack(ctx))
		waitFor(t, "the SPA back navigation", patience, func() bool { return strings.Contains(tab.URL(), "/search") })
		if text, n := banner(tab); text != want(item) || n != 1 {
			t.Fatalf("after popstate: banner %q (%d elements)", text, n)
		}
		// A full navigation is a new document: the tab's item comes along.
		mustDo(t, "open the cart page", tab.Navigate(ctx, store.Demo().CartURL))
		if text, n := banner(tab); text != want(item) || n != 1 {
			t.Fatalf("after a full navigation: banner %q (%d elements)", text, n)
		}
	}
	for tab := range items {
		mustDo(t, "set another item", tab.SetItem(ctx, "bread"))
		if text, _ := banner(tab); text != want("bread") {
			t.Fatalf("SetItem did not update the banner: %q", text)
		}
		if tab.Item() != "bread" {
			t.Fatalf("Item() = %q", tab.Item())
		}
		break
	}
	t.Run("survives the page replacing its DOM", func(t *testing.T) {
		s := sharedSite(t)
		tab := newTab(t, s.host)
		mustDo(t, "set item", tab.SetItem(ctx, "apples"))
		mustDo(t, "open the SPA page", tab.Navigate(ctx, "http://shop.test/spa"))
		eval(t, tab, `() => { go('/spa/a'); go('/spa/b'); swap('/spa/c'); document.body.replaceWith(document.createElement('body')); }`)
		waitFor(t, "the banner to come back", patience, func() bool {
			text, n := banner(tab)
			return text == want("apples") && n == 1
		})
	})
}

// openPageCount is the number of pages the Host itself keeps open: the
// keeper and the tabs.
func (h *Host) openPageCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.pages) + 1
	if h.loginPage != nil {
		n++
	}
	return n
}

func (s *pageState) peekNotices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.notices)
}
