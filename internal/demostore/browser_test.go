package demostore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
	"github.com/gemini-supply/gemini-supply/internal/testwait"

	"github.com/playwright-community/playwright-go"
)

// chromiumFlags are the launch flags that work on this machine (DESIGN.md §5).
var chromiumFlags = []string{
	"--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run",
}

// openChromium starts a demo store and a headless Chromium that reaches it
// under the real host names; it returns the store and a 1440x900 page.
// Everything is closed by t.Cleanup.
func openChromium(t *testing.T) (*Server, playwright.Page) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	browser := testbrowser.Launch(t, append(append([]string(nil), chromiumFlags...), "--host-resolver-rules="+s.HostResolverRules())...)
	bctx, err := browser.NewContext(playwright.BrowserNewContextOptions{
		IgnoreHttpsErrors: playwright.Bool(true),
		Viewport:          &playwright.Size{Width: ViewportWidth, Height: ViewportHeight},
	})
	if err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatalf("new page: %v", err)
	}
	page.SetDefaultTimeout(90000) // bounds a hang: a loaded machine has taken over 15 s to load a page
	return s, page
}

// eventually polls cond until it holds; the generous bound (a loaded
// machine) only ends a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, what, 60*time.Second, cond)
}

func gotoURL(t *testing.T, page playwright.Page, url string) {
	t.Helper()
	if _, err := page.Goto(url, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		t.Fatalf("goto %s: %v", url, err)
	}
}

func click(t *testing.T, page playwright.Page, x, y int) {
	t.Helper()
	if err := page.Mouse().Click(float64(x), float64(y)); err != nil {
		t.Fatalf("click at (%d,%d): %v", x, y, err)
	}
}

// elementAt describes the element at a viewport point as "#id" or
// ".class" (of the element or its closest ancestor that has an id).
func elementAt(t *testing.T, page playwright.Page, x, y int) string {
	t.Helper()
	v, err := page.Evaluate(`([x,y]) => { let e = document.elementFromPoint(x,y); if (!e) return "";
		const cls = e.classList.length ? "."+e.classList[0] : "";
		while (e && !e.id) e = e.parentElement; return (e ? "#"+e.id : "") + cls; }`, []int{x, y})
	if err != nil {
		t.Fatalf("elementFromPoint(%d,%d): %v", x, y, err)
	}
	return v.(string)
}

func visible(t *testing.T, page playwright.Page, selector string) bool {
	t.Helper()
	ok, err := page.Locator(selector).First().IsVisible()
	if err != nil {
		t.Fatalf("IsVisible(%s): %v", selector, err)
	}
	return ok
}

func textOf(t *testing.T, page playwright.Page, selector string) string {
	t.Helper()
	s, err := page.Locator(selector).First().TextContent()
	if err != nil {
		t.Fatalf("TextContent(%s): %v", selector, err)
	}
	return s
}

func cartQuantities(s *Server) map[string]int {
	m := map[string]int{}
	for _, l := range s.Cart() {
		m[l.ProductID] = l.Quantity
	}
	return m
}

// TestChromiumLayoutAndFlow proves in real Chromium that the layout
// functions are exact and that the flows a scripted client and the agent
// rely on work: consent banner, login through the identity host, the
// postal-code dialog on the first add, clicks at TileAddButton(i) adding
// product i, SPA navigation, session expiry and the evil.example counter.
func TestChromiumLayoutAndFlow(t *testing.T) {
	s, page := openChromium(t)
	milk := Search("milk")
	if len(milk) != MaxTiles {
		t.Fatalf("catalogue must give %d milk tiles, got %d", MaxTiles, len(milk))
	}
	gotoURL(t, page, s.BaseURL()+"/en/online-grocery/search?filter=milk")
	shot(t, page, "consent")
	if !visible(t, page, "#onetrust-banner-sdk") {
		t.Fatal("no consent banner on the first visit")
	}

	// While the consent banner is up, a tile click hits the dark filter.
	if got := elementAt(t, page, fst(TileAddButton(0)), snd(TileAddButton(0))); !strings.Contains(got, "onetrust-pc-dark-filter") {
		t.Errorf("under the consent banner the first tile button should be covered, element %q", got)
	}
	for _, c := range []struct {
		name string
		x, y int
		want string
	}{
		{"ConsentAcceptButton", fst(ConsentAcceptButton()), snd(ConsentAcceptButton()), "#onetrust-accept-btn-handler"},
		{"ConsentRejectButton", fst(ConsentRejectButton()), snd(ConsentRejectButton()), "#onetrust-reject-all-handler"},
	} {
		if got := elementAt(t, page, c.x, c.y); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s at (%d,%d): element %q, want %s", c.name, c.x, c.y, got, c.want)
		}
	}
	click(t, page, fst(ConsentAcceptButton()), snd(ConsentAcceptButton()))
	eventually(t, "the consent to be recorded", func() bool { return s.State().ConsentAccepted })
	if visible(t, page, "#onetrust-banner-sdk") {
		t.Fatal("consent banner still visible after accepting")
	}
	// Fixed elements sit where the layout functions say.
	for _, c := range []struct {
		name string
		x, y int
		want string
	}{
		{"SearchBox", fst(SearchBox()), snd(SearchBox()), "#search-box"},
		{"SearchSubmit", fst(SearchSubmit()), snd(SearchSubmit()), "#search-submit"},
		{"CartCounter", fst(CartCounter()), snd(CartCounter()), "#cart-count"},
		{"AccountButton", fst(AccountButton()), snd(AccountButton()), "#sign-in-button"},
	} {
		if got := elementAt(t, page, c.x, c.y); got != c.want {
			t.Errorf("%s at (%d,%d): element %q, want %s", c.name, c.x, c.y, got, c.want)
		}
	}
	for i := range MaxTiles {
		x, y := TileAddButton(i)
		if got, want := elementAt(t, page, x, y), "#search-results.tile-add"; got != want {
			t.Errorf("TileAddButton(%d)=(%d,%d): element %q, want %s", i, x, y, got, want)
		}
	}

	// Logged out: adding answers "Please sign in" and changes nothing.
	click(t, page, fst(TileAddButton(0)), snd(TileAddButton(0)))
	eventually(t, "the sign-in hint on the tile", func() bool {
		return strings.Contains(textOf(t, page, `[data-status-for="`+milk[0].ID+`"]`), "Please sign in")
	})
	if n := len(s.Cart()); n != 0 {
		t.Fatalf("cart has %d lines after a logged-out add", n)
	}

	// Scripted login: panel → identity host → back on the same page.
	click(t, page, fst(AccountButton()), snd(AccountButton()))
	shot(t, page, "panel")
	if got := elementAt(t, page, fst(LoginPanelSignIn()), snd(LoginPanelSignIn())); got != "#login-panel-sign-in.btn" {
		t.Fatalf("LoginPanelSignIn: element %q", got)
	}
	click(t, page, fst(LoginPanelSignIn()), snd(LoginPanelSignIn()))
	if err := page.WaitForURL("https://auth.moiid.ca/**"); err != nil {
		t.Fatalf("waiting for the identity host: %v", err)
	}
	user, pass := s.Credentials()
	if err := page.Locator("#signInName").Fill(user); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#password").Fill(pass); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#next").Click(); err != nil {
		t.Fatal(err)
	}
	if err := page.WaitForURL("https://www.metro.ca/en/online-grocery/search?filter=milk"); err != nil {
		t.Fatalf("waiting to be back on the search page: %v (at %s)", err, page.URL())
	}
	if !visible(t, page, "#authenticatedButton.authenticatedButton") {
		t.Fatal("auth marker missing after login")
	}
	if got := elementAt(t, page, fst(AccountButton()), snd(AccountButton())); !strings.HasPrefix(got, "#authenticatedButton") {
		t.Errorf("AccountButton when logged in: element %q", got)
	}
	if visible(t, page, "#onetrust-banner-sdk") {
		t.Fatal("consent banner came back: the cookie was not remembered")
	}

	// First add: the postal-code dialog, at the advertised positions.
	click(t, page, fst(TileAddButton(0)), snd(TileAddButton(0)))
	eventually(t, "the postal-code dialog", func() bool { return visible(t, page, "#postal-form") })
	shot(t, page, "postal")
	if got := elementAt(t, page, fst(PostalCodeInput()), snd(PostalCodeInput())); got != "#postal-code-input" {
		t.Fatalf("PostalCodeInput: element %q", got)
	}
	if got := elementAt(t, page, fst(PostalCodeSubmit()), snd(PostalCodeSubmit())); got != "#postal-code-submit.btn" {
		t.Fatalf("PostalCodeSubmit: element %q", got)
	}
	click(t, page, fst(PostalCodeInput()), snd(PostalCodeInput()))
	if err := page.Keyboard().Type("h2x1y4"); err != nil {
		t.Fatal(err)
	}
	click(t, page, fst(PostalCodeSubmit()), snd(PostalCodeSubmit()))
	eventually(t, "the pending add to complete", func() bool { return cartQuantities(s)[milk[0].ID] == 1 })
	if st := s.State(); st.PostalCode != "H2X 1Y4" || !st.LoggedIn {
		t.Fatalf("state after the postal code: %+v", st)
	}
	eventually(t, "the header counter", func() bool { return textOf(t, page, "#cart-count") == "1" })

	// Each tile button adds exactly its own product.
	for i := 1; i < MaxTiles; i++ {
		click(t, page, fst(TileAddButton(i)), snd(TileAddButton(i)))
		eventually(t, fmt.Sprintf("tile %d (%s) in the cart", i, milk[i].ID), func() bool { return len(s.Cart()) == i+1 })
		if got := s.Cart()[i].ProductID; got != milk[i].ID {
			t.Fatalf("click at TileAddButton(%d) added %s, want %s", i, got, milk[i].ID)
		}
	}
	eventually(t, "the header counter at 8", func() bool { return textOf(t, page, "#cart-count") == "8" })

	// Out of stock: the button is disabled, a click adds nothing.
	gotoURL(t, page, s.BaseURL()+"/en/online-grocery/search?filter=butter")
	click(t, page, fst(TileAddButton(0)), snd(TileAddButton(0)))
	if got := textOf(t, page, ".tile-add"); got != "Out of stock" {
		t.Fatalf("butter tile button says %q", got)
	}
	if s.State().CartCount != 8 {
		t.Fatalf("out-of-stock click changed the cart: %+v", s.State())
	}

	// Product page button.
	gotoURL(t, page, s.BaseURL()+"/en/online-grocery/aisles/fruits-vegetables/bananas/p/bananas-bunch")
	shot(t, page, "product")
	if got := elementAt(t, page, fst(ProductAddButton()), snd(ProductAddButton())); got != "#product-add.btn" {
		t.Fatalf("ProductAddButton: element %q", got)
	}
	click(t, page, fst(ProductAddButton()), snd(ProductAddButton()))
	eventually(t, "bananas in the cart", func() bool { return cartQuantities(s)["bananas-bunch"] == 1 })

	// The product page's express-checkout widget reaches checkout and
	// places orders when nothing stops it: its tricks are real (the agent's
	// browser policy is tested against them in package browser). Waited
	// for here, while its page is shown: the widget asks for expressDonePath
	// once every trick has settled, which a page left earlier never does
	// (on a loaded machine the SPA navigation below came first, and the
	// wait could only time out).
	eventually(t, "the express-checkout widget's tricks to reach the store", func() bool {
		r := s.Requests()
		return s.CheckoutHits() > 0 && r["POST www.metro.ca /api/checkout/place-order"] > 0 && r["GET www.metro.ca "+expressDonePath] > 0
	})

	// SPA navigation: pushState swaps the content without a document load.
	if _, err := page.Evaluate(`() => { window.__sameDocument = true; }`); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator(`#aisles a.spa-link[href$="/dairy-eggs"]`).Click(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the aisle URL", func() bool { return strings.HasSuffix(page.URL(), "/en/online-grocery/aisles/dairy-eggs") })
	eventually(t, "the aisle content", func() bool { return visible(t, page, "#aisle-products .tile") })
	if v, err := page.Evaluate(`() => window.__sameDocument === true`); err != nil || v != true {
		t.Fatalf("SPA navigation reloaded the document (%v, %v)", v, err)
	}
	if got := elementAt(t, page, fst(TileAddButton(0)), snd(TileAddButton(0))); got != "#aisle-products.tile-add" {
		t.Fatalf("TileAddButton(0) on the aisle page: element %q", got)
	}
	if _, err := page.GoBack(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "popstate to restore the product page", func() bool { return visible(t, page, "#product-add") })

	if os.Getenv("DEMOSTORE_SHOTS") != "" {
		gotoURL(t, page, s.BaseURL()+"/en/online-grocery/cart")
		shot(t, page, "cart")
	}

	// Expiry: the next page shows Sign in, an add shows "Please sign in".
	s.ExpireSessions()
	gotoURL(t, page, s.BaseURL()+"/en/online-grocery/search?filter=eggs")
	if !visible(t, page, "#sign-in-button") || visible(t, page, "#authenticatedButton") {
		t.Fatal("after ExpireSessions the page still shows the auth marker")
	}
	click(t, page, fst(TileAddButton(0)), snd(TileAddButton(0)))
	eventually(t, "the sign-in toast", func() bool {
		return visible(t, page, "#toast") && strings.Contains(textOf(t, page, "#toast"), "Please sign in")
	})
	shot(t, page, "expired")
	if got := cartQuantities(s)[Search("eggs")[0].ID]; got != 0 {
		t.Fatalf("logged-out add changed the cart (%d)", got)
	}

	// Without a browser policy the page's third-party pixel reaches
	// evil.example, so the counter the policy tests rely on works.
	if s.EvilHits() == 0 {
		t.Fatal("evil.example pixel was never requested: the counter cannot prove a block")
	}
	if os.Getenv("DEMOSTORE_SHOTS") != "" {
		gotoURL(t, page, s.BaseURL()+"/fr/epicerie-en-ligne/recherche?filtre=pommes")
		shot(t, page, "french")
		gotoURL(t, page, "https://auth.moiid.ca"+authorizePath+"?redirect_uri=https%3A%2F%2Fwww.metro.ca%2Fen%2Fauth%2Fcallback&state=%2Fen")
		shot(t, page, "auth")
	}
}

func fst(x, _ int) int { return x }
func snd(_, y int) int { return y }

func shot(t *testing.T, page playwright.Page, name string) {
	if dir := os.Getenv("DEMOSTORE_SHOTS"); dir != "" {
		_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(dir + "/" + name + ".png")})
	}
}
