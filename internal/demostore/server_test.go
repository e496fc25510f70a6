package demostore

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
)

func startStore(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

type resp struct {
	status int
	body   string
	url    *url.URL
}

func do(t testing.TB, c *http.Client, method, u string, body io.Reader, hdr map[string]string) resp {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	r, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatalf("reading %s: %v", u, err)
	}
	return resp{r.StatusCode, string(b), r.Request.URL}
}

func get(t testing.TB, c *http.Client, u string) resp { return do(t, c, http.MethodGet, u, nil, nil) }

func postJSON(t testing.TB, c *http.Client, u string, v any) (resp, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(v)
	r := do(t, c, http.MethodPost, u, bytes.NewReader(b), map[string]string{"Content-Type": "application/json"})
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("POST %s: answer is not JSON (%d): %q", u, r.status, r.body)
	}
	return r, m
}

var signInHref = regexp.MustCompile(`id="login-panel-sign-in" class="btn" href="([^"]+)"`)

// login signs c in the way a browser does: the login panel's link to the
// identity host, then the form. It returns the final page.
func login(t testing.TB, s *Server, c *http.Client, from, user, pass string) resp {
	t.Helper()
	page := get(t, c, s.BaseURL()+from)
	m := signInHref.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no sign-in link on %s", from)
	}
	authURL := html.UnescapeString(m[1])
	if !strings.HasPrefix(authURL, "https://auth.moiid.ca/") {
		t.Fatalf("sign-in link goes to %s", authURL)
	}
	form := get(t, c, authURL)
	for _, id := range []string{`id="signInName"`, `id="password"`, `id="next"`} {
		if !strings.Contains(form.body, id) {
			t.Fatalf("sign-in form lacks %s", id)
		}
	}
	return do(t, c, http.MethodPost, authURL, strings.NewReader(url.Values{"signInName": {user}, "password": {pass}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

var tileIDs = regexp.MustCompile(`<article class="tile" data-product-id="([^"]+)"`)

func ids(ps []Product) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func TestSearch(t *testing.T) {
	milk := []string{"milk-2pct-2l", "milk-2pct-4l", "milk-1pct-2l", "milk-skim-1l", "milk-homo-2l", "milk-organic-2l", "milk-lactosefree-2l", "milk-chocolate-1l"}
	tests := []struct {
		query string
		want  []string
	}{
		{"milk", milk},
		{"  MILK ", milk},
		{"lait", milk},
		{"organic milk", []string{"milk-organic-2l"}},
		{"butter", []string{"butter-salted-454g", "butter-unsalted-454g"}},
		{"eggs", []string{"eggs-large-12", "eggs-large-30", "eggs-organic-12"}},
		{"œufs", []string{"eggs-large-12", "eggs-large-30", "eggs-organic-12"}},
		{"bread", []string{"bread-white-675g", "bread-wholewheat-675g", "bread-sourdough-600g"}},
		{"bananas", []string{"bananas-bunch", "bananas-organic-bunch"}},
		{"banana", []string{"bananas-bunch", "bananas-organic-bunch"}},
		{"organic bananas", []string{"bananas-organic-bunch"}},
		{"apples", []string{"apples-gala-3lb", "apples-honeycrisp-1kg", "apples-organic-mcintosh", "apple-juice-1890ml"}},
		{"tomato", []string{"tomatoes-vine"}},
		{"saffron", nil},
		{"unicorn", nil},
		{"", nil},
		{"  ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := ids(Search(tc.query))
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Fatalf("Search(%q) = %v, want %v", tc.query, got, tc.want)
			}
		})
	}
	for _, p := range Search("butter") {
		if p.InStock {
			t.Errorf("butter %s is in stock; every butter match must be out of stock", p.ID)
		}
	}
	if n := len(Catalogue()); n < 30 {
		t.Errorf("catalogue has %d products, want about 30", n)
	}
}

func TestSearchPagesRenderSearch(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	for _, q := range []string{"milk", "eggs", "apples", "butter", "organic bananas", "saffron"} {
		for _, base := range []string{"/en/online-grocery/search?filter=", "/fr/epicerie-en-ligne/recherche?filtre="} {
			r := get(t, c, s.BaseURL()+base+url.QueryEscape(q))
			if r.status != http.StatusOK {
				t.Fatalf("%s%s: status %d", base, q, r.status)
			}
			var got []string
			for _, m := range tileIDs.FindAllStringSubmatch(r.body, -1) {
				got = append(got, m[1])
			}
			if want := ids(Search(q)); !slices.Equal(got, want) && len(want)+len(got) > 0 {
				t.Errorf("%s%q shows %v, Search gives %v", base, q, got, want)
			}
			if len(got) == 0 && !strings.Contains(r.body, `id="no-results"`) {
				t.Errorf("%s%q: no tiles and no #no-results message", base, q)
			}
		}
	}
}

func TestPricesPerLanguage(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	en := get(t, c, s.BaseURL()+"/en/online-grocery/search?filter=milk").body
	fr := get(t, c, s.BaseURL()+"/fr/epicerie-en-ligne/recherche?filtre=lait").body
	for _, want := range []string{`<div class="tile-price">$5.49</div>`, `<div class="tile-price">$7.99</div>`, "2% Partly Skimmed Milk", ">Add to cart<"} {
		if !strings.Contains(en, want) {
			t.Errorf("English page lacks %q", want)
		}
	}
	for _, want := range []string{`<div class="tile-price">5,49 $</div>`, `<div class="tile-price">7,99 $</div>`, "Lait partiellement écrémé 2 %", ">Ajouter au panier<", `<html lang="fr">`} {
		if !strings.Contains(fr, want) {
			t.Errorf("French page lacks %q", want)
		}
	}
	if strings.Contains(fr, "$5.49") {
		t.Error("French page shows an English price")
	}
	butter := get(t, c, s.BaseURL()+"/en/online-grocery/search?filter=butter").body
	if !strings.Contains(butter, `disabled>Out of stock</button>`) || strings.Contains(butter, `data-add=`) {
		t.Error("butter tiles must show a disabled Out of stock button and no add button")
	}
}

func TestAddToCartFlow(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	add := func(id string) (int, map[string]any) {
		r, m := postJSON(t, c, s.BaseURL()+"/api/cart/add", map[string]any{"productId": id})
		return r.status, m
	}
	if st, m := add("milk-2pct-2l"); st != http.StatusUnauthorized || m["error"] != "not_signed_in" {
		t.Fatalf("signed-out add: %d %v", st, m)
	}
	user, pass := s.Credentials()
	login(t, s, c, "/en", user, pass)
	if st, m := add("milk-2pct-2l"); st != http.StatusPreconditionRequired || m["error"] != "postal_code_required" {
		t.Fatalf("first add without postal code: %d %v", st, m)
	}
	if len(s.Cart()) != 0 {
		t.Fatal("an add waiting for the postal code changed the cart")
	}
	for _, bad := range []string{"", "12345", "H2X", "D2X 1Y4", "H2X-1Y4"} {
		if r, _ := postJSON(t, c, s.BaseURL()+"/api/postal-code", map[string]string{"postalCode": bad}); r.status != http.StatusBadRequest {
			t.Errorf("postal code %q accepted (%d)", bad, r.status)
		}
	}
	if r, m := postJSON(t, c, s.BaseURL()+"/api/postal-code", map[string]string{"postalCode": " h2x1y4 "}); r.status != http.StatusOK || m["postalCode"] != "H2X 1Y4" {
		t.Fatalf("valid postal code: %d %v", r.status, m)
	}
	for i, want := range []float64{1, 2} {
		st, m := add("milk-2pct-2l")
		if st != http.StatusOK || m["quantity"] != want || m["cartCount"] != want {
			t.Fatalf("add %d: %d %v", i, st, m)
		}
	}
	if st, m := add("eggs-large-12"); st != http.StatusOK || m["cartCount"] != 3.0 {
		t.Fatalf("add eggs: %d %v", st, m)
	}
	if st, m := add("butter-salted-454g"); st != http.StatusConflict || m["error"] != "out_of_stock" {
		t.Fatalf("out-of-stock add: %d %v", st, m)
	}
	if st, _ := add("no-such-product"); st != http.StatusNotFound {
		t.Fatalf("unknown product: %d", st)
	}
	want := []CartLine{
		{ProductID: "milk-2pct-2l", Name: "2% Partly Skimmed Milk", Quantity: 2, UnitCents: 549},
		{ProductID: "eggs-large-12", Name: "Large White Eggs", Quantity: 1, UnitCents: 429},
	}
	if got := s.Cart(); !slices.Equal(got, want) {
		t.Fatalf("Cart() = %+v, want %+v", got, want)
	}
	if st := s.State(); st != (State{PostalCode: "H2X 1Y4", LoggedIn: true, CartCount: 3}) {
		t.Fatalf("State() = %+v", st)
	}

	// The JSON endpoint the review reads.
	r := get(t, c, s.BaseURL()+"/api/cart")
	var cart struct {
		Lines []struct {
			ProductID string `json:"productId"`
			Name      string `json:"name"`
			Quantity  int    `json:"quantity"`
			UnitCents int64  `json:"unitCents"`
			LineCents int64  `json:"lineCents"`
			Size      string `json:"size"`
			URL       string `json:"url"`
		} `json:"lines"`
		Count      int   `json:"count"`
		TotalCents int64 `json:"totalCents"`
	}
	if err := json.Unmarshal([]byte(r.body), &cart); err != nil || r.status != http.StatusOK {
		t.Fatalf("/api/cart: %d %v %q", r.status, err, r.body)
	}
	if cart.Count != 3 || cart.TotalCents != 2*549+429 || len(cart.Lines) != 2 ||
		cart.Lines[0].ProductID != "milk-2pct-2l" || cart.Lines[0].Quantity != 2 || cart.Lines[0].UnitCents != 549 ||
		cart.Lines[0].LineCents != 1098 || cart.Lines[0].Size != "2 L" ||
		cart.Lines[0].URL != "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/2-partly-skimmed-milk/p/milk-2pct-2l" {
		t.Fatalf("/api/cart = %+v", cart)
	}
	if p := get(t, c, cart.Lines[0].URL); p.status != http.StatusOK || !strings.Contains(p.body, `id="product-add"`) {
		t.Fatalf("product page from the cart URL: %d", p.status)
	}

	// Cart page and header counter.
	page := get(t, c, s.BaseURL()+"/en/online-grocery/cart").body
	for _, w := range []string{`<span id="cart-count">3</span>`, "Total: $15.27", `id="checkout-link"`, "2% Partly Skimmed Milk, 2 L"} {
		if !strings.Contains(page, w) {
			t.Errorf("cart page lacks %q", w)
		}
	}

	// Quantity changes and removal.
	if r, m := postJSON(t, c, s.BaseURL()+"/api/cart/update", map[string]any{"productId": "milk-2pct-2l", "quantity": 5}); r.status != 200 || m["cartCount"] != 6.0 {
		t.Fatalf("update: %d %v", r.status, m)
	}
	if r, _ := postJSON(t, c, s.BaseURL()+"/api/cart/update", map[string]any{"productId": "eggs-large-12", "quantity": 0}); r.status != 200 {
		t.Fatalf("remove: %d", r.status)
	}
	if got := s.Cart(); len(got) != 1 || got[0].Quantity != 5 {
		t.Fatalf("after update/remove: %+v", got)
	}
	if s.CheckoutHits() != 0 {
		t.Fatal("the flow touched a checkout page")
	}
}

func TestLogin(t *testing.T) {
	s := startStore(t, Options{Username: "Alice@Example.com", Password: "s3cret-pass"})
	if u, p := s.Credentials(); u != "Alice@Example.com" || p != "s3cret-pass" {
		t.Fatalf("Credentials() = %q, %q", u, p)
	}
	c := s.Client()
	home := get(t, c, s.BaseURL()+"/en").body
	if !strings.Contains(home, `id="sign-in-button"`) || strings.Contains(home, `id="authenticatedButton"`) {
		t.Fatal("signed-out home page must show Sign in and no auth marker")
	}
	bad := login(t, s, c, "/en/online-grocery/search?filter=milk", "alice@example.com", "wrong")
	if bad.url.Host != HostAuth || !strings.Contains(bad.body, `id="error-message"`) || s.State().LoggedIn {
		t.Fatalf("wrong password: at %s, logged in %v", bad.url, s.State().LoggedIn)
	}
	ok := login(t, s, c, "/en/online-grocery/search?filter=milk", "alice@example.com", "s3cret-pass")
	if ok.url.String() != "https://www.metro.ca/en/online-grocery/search?filter=milk" {
		t.Fatalf("after sign-in at %s, want back on the search page", ok.url)
	}
	if !strings.Contains(ok.body, `<button id="authenticatedButton" class="authenticatedButton"`) || !s.State().LoggedIn {
		t.Fatal("signed-in page lacks the auth marker")
	}
	// Another browser has no session: the store has one shopper, but
	// sessions are per cookie.
	if other := get(t, s.Client(), s.BaseURL()+"/en").body; strings.Contains(other, `id="authenticatedButton"`) {
		t.Fatal("a second browser is signed in without signing in")
	}
	authorize := "https://auth.moiid.ca" + authorizePath
	for _, tc := range []struct {
		name, query string
		status      int
	}{
		{"foreign redirect_uri", "?redirect_uri=https%3A%2F%2Fevil.example%2Fcb&state=%2Fen", http.StatusBadRequest},
		{"missing redirect_uri", "?state=%2Fen", http.StatusBadRequest},
	} {
		if r := get(t, c, authorize+tc.query); r.status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, r.status, tc.status)
		}
	}
	if r := get(t, c, s.BaseURL()+"/en/auth/callback?code=forged"); r.status != http.StatusBadRequest {
		t.Errorf("forged code: status %d", r.status)
	}
	// An absolute or protocol-relative state never leaves the store.
	c2 := s.Client()
	q := url.Values{"redirect_uri": {"https://www.metro.ca/en/auth/callback"}, "state": {"//evil.example/x"}}
	r := do(t, c2, http.MethodPost, authorize+"?"+q.Encode(), strings.NewReader(url.Values{"signInName": {"alice@example.com"}, "password": {"s3cret-pass"}}.Encode()),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if r.url.Host != HostStore || r.url.Path != "/en" || s.EvilHits() != 0 {
		t.Fatalf("state //evil.example led to %s (evil hits %d)", r.url, s.EvilHits())
	}
}

func TestExpireSessions(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	user, pass := s.Credentials()
	login(t, s, c, "/en", user, pass)
	postJSON(t, c, s.BaseURL()+"/api/postal-code", map[string]string{"postalCode": "H2X 1Y4"})
	if r, _ := postJSON(t, c, s.BaseURL()+"/api/cart/add", map[string]any{"productId": "bread-white-675g"}); r.status != 200 {
		t.Fatalf("add before expiry: %d", r.status)
	}
	s.ExpireSessions()
	if s.State().LoggedIn {
		t.Fatal("State().LoggedIn after ExpireSessions")
	}
	page := get(t, c, s.BaseURL()+"/en/online-grocery/search?filter=bread").body
	if !strings.Contains(page, `id="sign-in-button"`) || strings.Contains(page, `id="authenticatedButton"`) {
		t.Fatal("after expiry the page must show Sign in")
	}
	if r, m := postJSON(t, c, s.BaseURL()+"/api/cart/add", map[string]any{"productId": "bread-white-675g"}); r.status != http.StatusUnauthorized || !strings.Contains(m["message"].(string), "Please sign in") {
		t.Fatalf("add after expiry: %d %v", r.status, m)
	}
	if r := get(t, c, s.BaseURL()+"/api/cart"); r.status != http.StatusUnauthorized {
		t.Fatalf("/api/cart after expiry: %d", r.status)
	}
	if st := s.State(); st.CartCount != 1 {
		t.Fatalf("expiry must keep the account's cart: %+v", st)
	}
	login(t, s, c, "/en", user, pass)
	if r, m := postJSON(t, c, s.BaseURL()+"/api/cart/add", map[string]any{"productId": "bread-white-675g"}); r.status != 200 || m["quantity"] != 2.0 {
		t.Fatalf("add after re-login: %d %v", r.status, m)
	}
}

func TestConsent(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	if !strings.Contains(get(t, c, s.BaseURL()+"/en").body, `id="onetrust-accept-btn-handler"`) {
		t.Fatal("first visit lacks the consent banner")
	}
	if r, _ := postJSON(t, c, s.BaseURL()+"/api/consent", map[string]bool{"accepted": true}); r.status != 200 {
		t.Fatalf("consent: %d", r.status)
	}
	if strings.Contains(get(t, c, s.BaseURL()+"/en").body, `id="onetrust-consent-sdk"`) {
		t.Fatal("consent banner shown again after answering")
	}
	if !s.State().ConsentAccepted {
		t.Fatal("State().ConsentAccepted is false")
	}
}

func TestCheckoutHits(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	trap := []string{"/en/online-grocery/checkout", "/checkout", "/payment", "/billing", "/en/Checkout/step-1", "/fr/epicerie-en-ligne/checkout", "/en/%63heckout"}
	safe := []string{"/en/online-grocery/cart", "/en/checkouts-help", "/en"}
	for i, p := range trap {
		r := get(t, c, s.BaseURL()+p)
		if r.status != 200 || !strings.Contains(r.body, `id="checkout-page"`) {
			t.Errorf("%s: %d, not the checkout page", p, r.status)
		}
		if s.CheckoutHits() != i+1 {
			t.Fatalf("after %s CheckoutHits() = %d, want %d", p, s.CheckoutHits(), i+1)
		}
	}
	for _, p := range safe {
		get(t, c, s.BaseURL()+p)
	}
	if s.CheckoutHits() != len(trap) {
		t.Fatalf("safe pages counted as checkout: %d", s.CheckoutHits())
	}
}

func TestEvilHitsAndImages(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	for _, u := range []string{"https://evil.example/", "http://evil.example/offer", "https://evil.example/pixel.png"} {
		if r := get(t, c, u); r.status != 200 {
			t.Fatalf("%s: %d", u, r.status)
		}
	}
	if s.EvilHits() != 3 {
		t.Fatalf("EvilHits() = %d, want 3", s.EvilHits())
	}
	for _, p := range Catalogue() {
		r := get(t, c, "https://product-images.metro.ca/images/"+p.ID+".png")
		img, err := png.Decode(strings.NewReader(r.body))
		if r.status != 200 || err != nil || img.Bounds().Dx() != 120 {
			t.Fatalf("image of %s: %d %v", p.ID, r.status, err)
		}
	}
	if r := get(t, c, "https://product-images.metro.ca/images/nope.png"); r.status != 404 {
		t.Fatalf("unknown image: %d", r.status)
	}
	// Plain HTTP on the store redirects to HTTPS.
	if r := get(t, c, "http://www.metro.ca/en/online-grocery/search?filter=milk"); r.url.Scheme != "https" || r.status != 200 {
		t.Fatalf("http store URL ended at %s (%d)", r.url, r.status)
	}
	if s.EvilHits() != 3 {
		t.Fatal("store or image requests counted as evil hits")
	}
}

// TestExpressWidgetOption: every product page frames the express-checkout
// widget unless the store was started without it (the bench's measure of
// what the widget costs); the widget's own page is served either way.
func TestExpressWidgetOption(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		framed bool
	}{
		{"default", Options{}, true},
		{"NoExpressWidget", Options{NoExpressWidget: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startStore(t, tc.opts)
			c := s.Client()
			for _, path := range []string{"/en/online-grocery/aisles/fruits-vegetables/bananas/p/bananas-bunch", "/fr/epicerie-en-ligne/allees/fruits-et-legumes/bananes/p/bananas-bunch"} {
				r := get(t, c, s.BaseURL()+path)
				if r.status != 200 || !strings.Contains(r.body, `id="product-name"`) {
					t.Fatalf("%s: %d, not a product page", path, r.status)
				}
				if got := strings.Contains(r.body, `id="express-checkout"`); got != tc.framed {
					t.Errorf("%s frames the widget: %v, want %v", path, got, tc.framed)
				}
			}
			if r := get(t, c, s.BaseURL()+ExpressWidgetPath+"?product=bananas-bunch"); r.status != 200 {
				t.Errorf("the widget's page: %d", r.status)
			}
		})
	}
}

func TestSPAFragments(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	r := do(t, c, http.MethodGet, s.BaseURL()+"/en/online-grocery/aisles/bread-bakery-products", nil, map[string]string{"X-Demo-SPA": "1"})
	var frag struct{ Title, HTML string }
	if err := json.Unmarshal([]byte(r.body), &frag); err != nil || r.status != 200 {
		t.Fatalf("fragment: %d %v", r.status, err)
	}
	if frag.Title != "Bakery" || strings.Contains(frag.HTML, "<html") || len(tileIDs.FindAllString(frag.HTML, -1)) != 4 {
		t.Fatalf("fragment = %q / %.200q", frag.Title, frag.HTML)
	}
	full := get(t, c, s.BaseURL()+"/en/online-grocery/aisles/bread-bakery-products").body
	if !strings.Contains(full, frag.HTML) || !strings.Contains(full, `class="spa-link"`) || !strings.Contains(full, "history.pushState") {
		t.Fatal("full aisle page must contain the fragment and the SPA navigation")
	}
	if r := get(t, c, s.BaseURL()+"/en/online-grocery/aisles/nope"); r.status != 404 {
		t.Fatalf("unknown aisle: %d", r.status)
	}
}

func TestLayoutValues(t *testing.T) {
	// Other packages and docs/demostore.md rely on these exact numbers.
	pt := func(x, y int) [2]int { return [2]int{x, y} }
	for name, tc := range map[string]struct{ got, want [2]int }{
		"TileAddButton(0)":    {pt(TileAddButton(0)), [2]int{234, 492}},
		"TileAddButton(3)":    {pt(TileAddButton(3)), [2]int{1206, 492}},
		"TileAddButton(5)":    {pt(TileAddButton(5)), [2]int{558, 836}},
		"TileName(0)":         {pt(TileName(0)), [2]int{234, 372}},
		"ConsentAcceptButton": {pt(ConsentAcceptButton()), [2]int{1280, 830}},
		"ConsentRejectButton": {pt(ConsentRejectButton()), [2]int{1020, 830}},
		"PostalCodeInput":     {pt(PostalCodeInput()), [2]int{720, 402}},
		"PostalCodeSubmit":    {pt(PostalCodeSubmit()), [2]int{720, 488}},
		"SearchBox":           {pt(SearchBox()), [2]int{520, 76}},
		"SearchSubmit":        {pt(SearchSubmit()), [2]int{856, 76}},
		"CartCounter":         {pt(CartCounter()), [2]int{1286, 76}},
		"AccountButton":       {pt(AccountButton()), [2]int{1370, 76}},
		"LoginPanelSignIn":    {pt(LoginPanelSignIn()), [2]int{1240, 248}},
		"ProductAddButton":    {pt(ProductAddButton()), [2]int{570, 432}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", name, tc.got, tc.want)
		}
	}
	for i := range MaxTiles {
		x, y := TileAddButton(i)
		if x <= 0 || x >= ViewportWidth || y <= PromoStripHeight || y >= ViewportHeight {
			t.Errorf("TileAddButton(%d) = (%d,%d) is outside the first screen", i, x, y)
		}
	}
}

func TestConcurrentAdds(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	user, pass := s.Credentials()
	login(t, s, c, "/en", user, pass)
	postJSON(t, c, s.BaseURL()+"/api/postal-code", map[string]string{"postalCode": "H2X1Y4"})
	ids := []string{"milk-2pct-2l", "eggs-large-12", "bananas-bunch", "spaghetti-900g"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 5 {
				id := ids[(g+i)%len(ids)]
				b, _ := json.Marshal(map[string]string{"productId": id})
				r, err := c.Post(s.BaseURL()+"/api/cart/add", "application/json", bytes.NewReader(b))
				if err != nil {
					t.Errorf("add: %v", err)
					return
				}
				r.Body.Close()
				_ = s.State()
				_ = s.Cart()
			}
		})
	}
	wg.Wait()
	if st := s.State(); st.CartCount != 40 {
		t.Fatalf("CartCount = %d after 40 concurrent adds", st.CartCount)
	}
}

func TestCloseAndContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr(HostStore)
	// A silent connection (never sends a byte) must not hold Close up.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("listener still accepting after the context was cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if !strings.HasPrefix(s.HostResolverRules(), "MAP www.metro.ca 127.0.0.1:") || strings.Count(s.HostResolverRules(), "MAP ") != 4 {
		t.Fatalf("HostResolverRules() = %q", s.HostResolverRules())
	}
}

func TestLogsKeepSecrets(t *testing.T) {
	var buf syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := startStore(t, Options{Logger: log, Password: "hunter2-very-secret"})
	c := s.Client()
	user, _ := s.Credentials()
	login(t, s, c, "/en", user, "wrong-guess-secret")
	login(t, s, c, "/en", user, "hunter2-very-secret")
	if !s.State().LoggedIn {
		t.Fatal("login failed")
	}
	out := buf.String()
	if !strings.Contains(out, "shopper signed in") {
		t.Fatalf("log lacks the sign-in line:\n%s", out)
	}
	for _, secret := range []string{"hunter2-very-secret", "wrong-guess-secret", "code="} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %q:\n%s", secret, out)
		}
	}
}

func BenchmarkSearch(b *testing.B) {
	for b.Loop() {
		_ = Search("organic milk")
	}
}

func BenchmarkSearchPage(b *testing.B) {
	s := startStore(b, Options{})
	c := s.Client()
	u := s.BaseURL() + "/en/online-grocery/search?filter=milk"
	b.ReportAllocs()
	for b.Loop() {
		r := get(b, c, u)
		if r.status != 200 {
			b.Fatal(r.status)
		}
	}
}

func BenchmarkAddToCart(b *testing.B) {
	s := startStore(b, Options{})
	c := s.Client()
	user, pass := s.Credentials()
	login(b, s, c, "/en", user, pass)
	postJSON(b, c, s.BaseURL()+"/api/postal-code", map[string]string{"postalCode": "H2X1Y4"})
	var ids []string
	for _, p := range Catalogue() {
		if p.InStock {
			ids = append(ids, p.ID)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if r, _ := postJSON(b, c, s.BaseURL()+"/api/cart/add", map[string]any{"productId": ids[i%len(ids)]}); r.status != http.StatusOK {
			b.Fatalf("add: %d", r.status)
		}
	}
}
