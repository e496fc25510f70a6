// Package store holds the store profiles: everything site-specific the
// browser and the shopping run need to know about a grocery web site, as
// data rather than code paths — the hosts the browser may talk to, the paths
// it must never open, the search URL, the marker that shows a signed-in
// session and the scripted login steps.
//
// Two profiles exist: "metro" (www.metro.ca) and "demo" (the local
// imitation in package demostore, reached under the same host names).
package store

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Profile describes one store. The zero value allows nothing.
type Profile struct {
	// Name is the profile's name ("metro", "demo").
	Name string
	// HomeURL is the store's home page.
	HomeURL string
	// CartURL is the page showing the cart.
	CartURL string
	// SearchURLTemplate is the search results URL with "{q}" where the
	// query-escaped search words go.
	SearchURLTemplate string
	// AllowedHosts are the hosts the browser may reach at any time. An entry
	// "*.metro.ca" matches every subdomain of metro.ca (not metro.ca itself).
	AllowedHosts []string
	// LoginHosts are hosts allowed only while the scripted login runs, and
	// only for the login's own page (the identity provider).
	LoginHosts []string
	// BlockedPaths are URL paths no request may reach ("/checkout",
	// "/account/settings"): navigations at any depth, subresources, fetch,
	// workers, redirect hops. A path is blocked when its normalised segments
	// contain a blocked path's segments in a row; see PathBlocked. The
	// scripted login may open them (CheckRequest with login).
	BlockedPaths []string
	// OrderPaths are the order families (checkout, payment, billing,
	// orders…): refused for every request, even during the login. Matched
	// like BlockedPaths.
	OrderPaths []string
	// StoreHosts are the hosts an order could be placed on. State-changing
	// requests (any method but GET and HEAD) to them are allowed only to
	// CartPaths. Empty means AllowedHosts.
	StoreHosts []string
	// CartPaths are the paths of the store's cart operations (add, update,
	// remove, the postal-code and consent answers the first add needs):
	// the only paths of StoreHosts that take state-changing requests.
	// Matched like BlockedPaths, or, with CartPathsExact, only when the
	// whole normalised path is equal.
	CartPaths      []string
	CartPathsExact bool
	// CartOpWords, for a profile whose cart paths are prefixes (not
	// CartPathsExact), are the only segments that may follow a cart path
	// in a state change, besides ids (segments without a letter) and
	// other cart paths ("/cart/add", "/cart-entries/0",
	// "/delivery-mode/timeslot"): the cart's operations named as an
	// allowlist, so "/cart/buy-now", "/cart/submit" or "/cart/acheter"
	// are refused whatever their words. Empty keeps the open prefix,
	// guarded by the order word list only (the strict option for a store
	// whose operations cannot be named).
	CartOpWords []string
	// WebSocketPaths are the paths of StoreHosts a WebSocket may be opened
	// to (matched like BlockedPaths); empty refuses every WebSocket to a
	// store host: a socket's messages are not read by the policy, and
	// neither profile's pages need one.
	WebSocketPaths []string
	// CartOps describe the cart operations among CartPaths that change a
	// line, so that each tab's cart changes can be read (see CartChange);
	// a profile without them still attributes every cart change to its tab.
	CartOps []CartOp
	// AddedProductText is a CSS selector of the elements that show a
	// product's name and size on the store's pages (its tile, its page),
	// with {id} for the product id an add names (CartChange.ProductID):
	// the cart guard reads their text before it lets an add through, to
	// know how the product is sold (a box of 12, a 3 lb bag, loose) and so
	// how many packages cover a count of pieces ("12 eggs" is one box of
	// 12: shoppinglist.Packages). Empty: not read (the count is then the
	// limit, as for a product sold loose).
	AddedProductText string
	// CartSetupPaths are the cart paths that set up the delivery (postal
	// code, delivery mode, store, time slot, consent) and change no cart
	// line; matched like BlockedPaths. A cart change of unknown kind (no
	// CartOps for it) to any other cart path may have added a unit.
	CartSetupPaths []string
	// AuthMarkerSelector is a CSS selector present on store pages only when
	// the shopper is signed in.
	AuthMarkerSelector string
	// AuthMarkerOnEveryPage says the marker is part of every store page's
	// header, so a tab that shows a store page without it has lost its
	// session (the browser then reports ErrAuthExpired).
	AuthMarkerOnEveryPage bool
	// SessionInCookies says the store keeps its session in cookies and
	// renders the marker from them on its server: a browser that would send
	// no cookie to HomeURL is signed out, and the session check says so
	// without loading a page (a fresh profile's first run signs in at once).
	SessionInCookies bool
	// LoginSteps is the scripted login, run by code with the credentials
	// from the configuration (never by the model).
	LoginSteps []LoginStep
	// ChallengeSelector is a CSS selector the identity site shows when it
	// asks for more than the password (a "not a robot" check, a code sent
	// by e-mail or SMS): the login then waits for a person (take over).
	ChallengeSelector string
	// BannerText is the text of the bar shown on every page while the agent
	// works, followed by the current item's name.
	BannerText string
	// IgnoreHTTPSErrors accepts self-signed certificates (demo store only).
	IgnoreHTTPSErrors bool
	// CartJSONURL is an endpoint returning the cart as JSON (demo store);
	// empty means the cart is read from the cart page by the model.
	CartJSONURL string
	// PostalCodeHint tells the model how the store asks for a postal code.
	PostalCodeHint string
	// DefaultPostalCode is the postal code used when none is configured:
	// set only for a store that accepts any (the demo store), so that the
	// agent and a replay answer its delivery dialog the same way.
	DefaultPostalCode string
	// Product tells code how to read a product page and add it, for the
	// replay of a remembered product without a model (see ProductPage).
	Product ProductPage
	// Cart tells code how to read the cart page, for the cart review
	// without a model (see CartPage).
	Cart CartPage
	// Usual tells code how to read the past orders and favourites (see
	// UsualPages).
	Usual UsualPages
	// SlotsURL is the delivery slots page and Slots how to read it by
	// code, only ever reading (see SlotsPage; empty: no slots reader).
	SlotsURL string
	Slots    SlotsPage
}

// CartPage is how to read a store's cart page by code: CSS selectors. An
// empty Line means the profile has no reader (the review asks the model).
// A reading the page does not confirm is no reading: the review then asks
// the model, so a wrong selector costs a model call, never a wrong review.
type CartPage struct {
	// Root is present on the cart page when it shows a cart (signed in),
	// with lines or empty.
	Root string
	// Line matches each product line of the cart and nothing else;
	// ProductIDAttr, when set, is the line's attribute holding the store's
	// product id.
	Line          string
	ProductIDAttr string
	// Name, Quantity, UnitPrice and LineTotal are read inside a line (the
	// first match). Quantity is the one number of its text, or an input's
	// value.
	Name, Quantity, UnitPrice, LineTotal string
	// Empty is present when the cart is empty: without it, a page with no
	// line is not read as an empty cart.
	Empty string
	// Exact says the reader was checked against the store's real pages
	// (the demo store, whose pages are ours). A best-effort reader must
	// also agree with the header's count of units (ProductPage.CartCount)
	// to be believed.
	Exact bool
}

// ProductPage is how to read a store's product page: CSS selectors, each
// the first match — so each must point inside the product's own block (a
// page also lists other products). An empty Root means the profile has no
// reader (replay then hands the item to the agent).
type ProductPage struct {
	// Root is present on a product page and nowhere else; its
	// ProductIDAttr attribute, when set, carries the store's product id.
	Root          string
	ProductIDAttr string
	// Name, Size and Price hold the product's name, size and price text.
	Name, Size, Price string
	// Brand holds the product's brand, when the page shows it apart from
	// the name: a remembered name (which may carry brand and size) must
	// find each of its words in the page's name, brand and size (without
	// Brand: in the whole Root block's text).
	Brand string
	// OutOfStock is present (or the Add control disabled) when the product
	// cannot be bought.
	OutOfStock string
	// Add is the add-to-cart control; one click adds one unit.
	Add string
	// PostalInput and PostalSubmit are a postal-code dialog an add may
	// open (filled with postal_code when configured).
	PostalInput, PostalSubmit string
	// InCart, inside Root, shows how many units of this product the cart
	// holds (the one number in its text; empty text is none): the cart check of the
	// product's own line, with no request of its own. Without it, the cart
	// is read from CartJSONURL, else from CartCount, the header's count of
	// all units.
	InCart    string
	CartCount string
	// Exact says the reader was checked against the store's real pages
	// (the demo store, whose pages are ours). A best-effort reader (metro)
	// defaults to replay "agent".
	Exact bool
}

// LoginStepKind is what one login step does.
type LoginStepKind string

// Login step kinds.
const (
	// StepGoto opens URL (HomeURL when empty) and waits for the page to load.
	StepGoto LoginStepKind = "goto"
	// StepClick clicks the first element matching Selector once it is
	// visible. With Optional, a missing element is not an error.
	StepClick LoginStepKind = "click"
	// StepDoneIfAuthenticated ends the login successfully when the auth
	// marker shows up within Timeout (the session is still valid).
	StepDoneIfAuthenticated LoginStepKind = "done_if_authenticated"
	// StepWaitForHost waits until the page's URL is on Host.
	StepWaitForHost LoginStepKind = "wait_for_host"
	// StepWaitForSelector waits until Selector is visible.
	StepWaitForSelector LoginStepKind = "wait_for_selector"
	// StepFill clicks Selector, clears it and types the credential named by
	// Value key by key.
	StepFill LoginStepKind = "fill"
	// StepPress presses Key on the focused element.
	StepPress LoginStepKind = "press"
	// StepWaitForAuthMarker waits until the auth marker is present; the
	// login fails if it does not appear within Timeout.
	StepWaitForAuthMarker LoginStepKind = "wait_for_auth_marker"
)

// Credential names a secret a login step types.
type Credential string

// Credentials a StepFill can type.
const (
	CredentialUsername Credential = "username"
	CredentialPassword Credential = "password"
)

// LoginStep is one step of a scripted login.
type LoginStep struct {
	Kind     LoginStepKind
	Selector string
	URL      string
	Host     string
	Key      string
	Value    Credential
	Optional bool
	// Timeout bounds the step; zero means the browser's default step timeout.
	Timeout time.Duration
	// What is a short description used in logs and errors ("open the login panel").
	What string
}

// DefaultBannerText is the banner's text before the item name.
const DefaultBannerText = "Grocery agent active — shopping for: "

// metroBlockedPaths are the pages the agent must never open on metro.ca
// (grocery-agent-design.md §4).
var metroBlockedPaths = []string{
	"/checkout", "/payment", "/billing",
	"/login", "/logout", "/signup", "/register",
	"/account/settings", "/account/edit", "/password", "/password-reset",
}

// orderPaths are the order families every profile refuses for every
// request and method: placing, paying for or confirming an order.
var orderPaths = []string{
	"/checkout", "/payment", "/payments", "/billing", "/order", "/orders",
	"/place-order", "/placeorder", "/place_order", "/submit-order", "/submitorder", "/submit_order",
	"/confirm-order", "/confirmorder", "/confirm_order", "/purchase",
	"/reorder", "/re-order", "/buy-now", "/buynow",
}

// orderWords, found as a word anywhere in a state-changing request's path,
// query or body ("/cart/pay", "/cart/confirmOrder", "?_eventId=placeOrder";
// see orderWordIn for words holding one), refuse it even under a cart
// path: a cart operation never needs them.
var orderWords = map[string]bool{
	"checkout": true, "pay": true, "payment": true, "order": true, "orders": true, "placeorder": true,
	"submitorder": true, "confirmorder": true, "purchase": true, "finalize": true, "finalise": true,
}

// cartPrefixSegments may stand before a (non-exact) cart path: the cart
// operation must be the store's own cart, not a "cart" segment somewhere
// under another path ("/account/delete-me/cart").
var cartPrefixSegments = map[string]bool{
	"online-grocery": true, "api": true, "rest": true, "occ": true, "v1": true, "v2": true, "metro": true,
}

// metroCartPaths is a best-effort list of metro.ca's cart operations
// (state-changing requests elsewhere on *.metro.ca are refused and logged
// as a warning naming the path, so a user can report one that is missing).
// metro.ca publishes no API; these follow its page paths
// (/en/online-grocery/cart…) and the usual SAP Commerce names for adding,
// updating and removing entries, the mini cart, and the delivery/pickup
// (postal code, store, time slot) choice the first add asks for.
var metroCartPaths = append([]string{
	"/cart", "/carts", "/minicart", "/mini-cart", "/add-to-cart", "/addtocart",
	"/cart-entry", "/cart-entries",
}, metroCartSetupPaths...)

// cartContainers are cart paths that name a cart, not an operation on it.
var cartContainers = map[string]bool{"cart": true, "carts": true, "minicart": true, "mini-cart": true}

// metroCartOpWords are the segments that may follow one of
// metroCartPaths in a state change (see Profile.CartOpWords): adding,
// updating and removing entries, SAP Commerce's "current" cart.
var metroCartOpWords = []string{"add", "update", "remove", "delete", "entry", "entries", "quantity", "current"}

// metroCartSetupPaths are the ones among metroCartPaths that choose the
// delivery and change no cart line.
var metroCartSetupPaths = []string{
	"/postal-code", "/postalcode", "/delivery-mode", "/pickup", "/store-selector", "/set-store", "/timeslot", "/time-slot",
}

// Metro is the profile of www.metro.ca.
func Metro() Profile {
	return Profile{
		Name:              "metro",
		HomeURL:           "https://www.metro.ca/en",
		CartURL:           "https://www.metro.ca/en/online-grocery/cart",
		SearchURLTemplate: "https://www.metro.ca/en/online-grocery/search?filter={q}",
		AllowedHosts: []string{
			// Core shopping: the app, its images, the search bundle and Coveo.
			"*.metro.ca",
			"d94qwxh6czci4.cloudfront.net",
			"static.cloud.coveo.com",
			// Benign assets: fonts, the cookie banner, opt-in forms.
			"use.typekit.net", "p.typekit.net",
			"cdn.cookielaw.org",
			"cdn.dialoginsight.com",
			// Metro's own telemetry endpoints (observed).
			"mpc2-prod-1-is5qnl632q-uc.a.run.app",
			"db7q4jg5rkhk8.cloudfront.net", "d2o5idwacg3gyw.cloudfront.net",
		},
		LoginHosts:            []string{"auth.moiid.ca", "challenges.cloudflare.com"},
		BlockedPaths:          slices.Clone(metroBlockedPaths),
		OrderPaths:            slices.Clone(orderPaths),
		StoreHosts:            []string{"metro.ca", "*.metro.ca"},
		CartPaths:             slices.Clone(metroCartPaths),
		CartOpWords:           slices.Clone(metroCartOpWords),
		CartSetupPaths:        slices.Clone(metroCartSetupPaths),
		AuthMarkerSelector:    "#authenticatedButton, .authenticatedButton",
		AuthMarkerOnEveryPage: true,
		SessionInCookies:      true,
		// Best effort: a one-time-code field or a challenge frame.
		ChallengeSelector: `input[autocomplete="one-time-code"], iframe[src*="challenges.cloudflare.com"], iframe[src*="recaptcha"], iframe[src*="hcaptcha"]`,
		LoginSteps: []LoginStep{
			{Kind: StepGoto, What: "open the store"},
			{Kind: StepClick, Selector: "#onetrust-accept-btn-handler", Optional: true, Timeout: 5 * time.Second, What: "accept the cookie banner"},
			{Kind: StepDoneIfAuthenticated, Timeout: 5 * time.Second, What: "check for an existing session"},
			{Kind: StepClick, Selector: ".login--btn", What: "open the login panel"},
			{Kind: StepClick, Selector: "#loginSidePanelForm .cta-basic-primary", What: "follow the panel's sign-in button"},
			{Kind: StepWaitForHost, Host: "auth.moiid.ca", What: "reach the identity site"},
			{Kind: StepFill, Selector: "#signInName", Value: CredentialUsername, Timeout: 30 * time.Second, What: "enter the email address"},
			{Kind: StepFill, Selector: "#password", Value: CredentialPassword, What: "enter the password"},
			{Kind: StepPress, Key: "Enter", What: "submit the sign-in form"},
			{Kind: StepWaitForHost, Host: "www.metro.ca", Timeout: 45 * time.Second, What: "return to the store"},
			{Kind: StepWaitForAuthMarker, Timeout: 15 * time.Second, What: "see the signed-in marker"},
		},
		BannerText:     DefaultBannerText,
		PostalCodeHint: `metro.ca may show a "Delivery or Pickup?" dialog asking for a postal code on the first add to cart.`,
		// Best effort: read from metro.ca's product pages as seen in 2025;
		// not verifiable from here, so metro replays through the agent by
		// default (replay: agent). Every selector is inside the product's
		// own block, so a recommendation on the same page is never read
		// or clicked; a page laid out otherwise is simply not read (the
		// item goes to the agent).
		Product: ProductPage{
			Root:          ".pdp-wrapper",
			ProductIDAttr: "data-product-code",
			Name:          ".pdp-wrapper .pi--title",
			Size:          ".pdp-wrapper .pi--weight",
			Price:         ".pdp-wrapper .pi--main-price",
			OutOfStock:    ".pdp-wrapper .pi--out-of-stock",
			Add:           ".pdp-wrapper button.addToCartButton",
			CartCount:     ".cart-count",
		},
		// Best effort, like Product: metro.ca's cart page as seen in 2025,
		// not verifiable from here. A reading that does not match the
		// header's count of units goes to the model reader.
		Cart: CartPage{
			Root:          ".cart-page, #cart-page",
			Line:          ".cart-page .product-item, #cart-page .product-item",
			ProductIDAttr: "data-product-code",
			Name:          ".pi--title",
			Quantity:      "input.quantity-input, .qty-input input, .pi--quantity",
			UnitPrice:     ".pi--main-price",
			LineTotal:     ".pi--total-price, .cart-item-total",
			Empty:         ".cart-empty, .empty-cart",
		},
		Usual:    metroUsualPages(),
		SlotsURL: metroSlotsURL,
		Slots:    metroSlots,
	}
}

// demoStepTimeout bounds the demo login's steps that wait for something
// the local store always shows.
const demoStepTimeout = time.Minute

// Demo is the profile of the local demo store (package demostore). It uses
// metro's host names, reached through --host-resolver-rules, and accepts the
// demo's self-signed certificate.
func Demo() Profile {
	return Profile{
		Name:              "demo",
		HomeURL:           "https://www.metro.ca/en",
		CartURL:           "https://www.metro.ca/en/online-grocery/cart",
		SearchURLTemplate: "https://www.metro.ca/en/online-grocery/search?filter={q}",
		AllowedHosts:      []string{"www.metro.ca", "product-images.metro.ca"},
		LoginHosts:        []string{"auth.moiid.ca"},
		BlockedPaths:      slices.Clone(metroBlockedPaths),
		OrderPaths:        slices.Clone(orderPaths),
		StoreHosts:        []string{"www.metro.ca", "product-images.metro.ca"},
		// Exactly the demo store's cart API (package demostore).
		CartPaths:      []string{"/api/cart/add", "/api/cart/update", "/api/postal-code", "/api/consent"},
		CartSetupPaths: []string{"/api/postal-code", "/api/consent"},
		CartPathsExact: true,
		CartOps: []CartOp{
			{Path: "/api/cart/add", Kind: CartAdd, ProductField: "productId", QuantityField: "quantity"},
			{Path: "/api/cart/update", Kind: CartSet, ProductField: "productId", QuantityField: "quantity"},
		},
		AddedProductText: `[data-product-id="{id}"] .tile-name, [data-product-id="{id}"] .tile-size, ` +
			`#product[data-product-id="{id}"] #product-name, #product[data-product-id="{id}"] #product-size`,
		AuthMarkerSelector:    "#authenticatedButton, .authenticatedButton",
		AuthMarkerOnEveryPage: true,
		SessionInCookies:      true,
		ChallengeSelector:     "#challenge-form", // demostore's SignInChallenge
		LoginSteps: []LoginStep{
			{Kind: StepGoto, What: "open the store"},
			{Kind: StepClick, Selector: "#onetrust-accept-btn-handler", Optional: true, Timeout: time.Second, What: "accept the cookie banner"},
			{Kind: StepDoneIfAuthenticated, Timeout: time.Second, What: "check for an existing session"},
			// Generous bounds: these steps wait for what always comes on the
			// local demo store, and a loaded machine may be slow.
			{Kind: StepClick, Selector: "#sign-in-button", Timeout: demoStepTimeout, What: "open the login panel"},
			{Kind: StepClick, Selector: "#login-panel-sign-in", Timeout: demoStepTimeout, What: "follow the panel's sign-in link"},
			{Kind: StepWaitForHost, Host: "auth.moiid.ca", Timeout: demoStepTimeout, What: "reach the identity site"},
			{Kind: StepFill, Selector: "#signInName", Value: CredentialUsername, Timeout: demoStepTimeout, What: "enter the email address"},
			{Kind: StepFill, Selector: "#password", Value: CredentialPassword, Timeout: demoStepTimeout, What: "enter the password"},
			{Kind: StepPress, Key: "Enter", Timeout: demoStepTimeout, What: "submit the sign-in form"},
			{Kind: StepWaitForHost, Host: "www.metro.ca", Timeout: demoStepTimeout, What: "return to the store"},
			{Kind: StepWaitForAuthMarker, Timeout: demoStepTimeout, What: "see the signed-in marker"},
		},
		BannerText:        DefaultBannerText,
		IgnoreHTTPSErrors: true,
		CartJSONURL:       "https://www.metro.ca/api/cart",
		PostalCodeHint:    `The store shows a "Delivery or Pickup?" dialog asking for a postal code on the first add to cart.`,
		DefaultPostalCode: "H2X 1Y4",
		// Exactly the demo store's product page (package demostore).
		Product: ProductPage{
			Root: "#product", ProductIDAttr: "data-product-id",
			Name: "#product-name", Brand: "#product-brand", Size: "#product-size", Price: "#product-price",
			OutOfStock: "#product-add[disabled]", Add: "#product-add", InCart: "#product-status",
			PostalInput: "#postal-code-input", PostalSubmit: "#postal-code-submit",
			CartCount: "#cart-count", Exact: true,
		},
		// Exactly the demo store's cart page.
		Cart: CartPage{
			Root: "#cart-lines, #cart-empty", Line: "#cart-lines .cart-row", ProductIDAttr: "data-product-id",
			Name: ".cart-name", Quantity: ".cart-qty", UnitPrice: ".cart-unit", LineTotal: ".cart-line-total",
			Empty: "#cart-empty", Exact: true,
		},
		Usual:    demoUsualPages(),
		SlotsURL: demoSlotsURL,
		Slots:    demoSlots,
	}
}

var profiles = map[string]func() Profile{"metro": Metro, "demo": Demo}

// Names lists the known profile names, sorted.
func Names() []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the profile called name ("metro" or "demo", any case).
func Lookup(name string) (Profile, error) {
	f, ok := profiles[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Profile{}, fmt.Errorf("unknown store %q: known stores are %s", name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

// SearchURL returns the search results URL for query.
func (p Profile) SearchURL(query string) string {
	return strings.ReplaceAll(p.SearchURLTemplate, "{q}", url.QueryEscape(strings.TrimSpace(query)))
}

// HostAllowed reports whether host (a host name, with or without a port) is
// on the allowlist.
func (p Profile) HostAllowed(host string) bool { return hostMatches(p.AllowedHosts, host) }

// LoginHostAllowed reports whether host is one of the login-only hosts.
func (p Profile) LoginHostAllowed(host string) bool { return hostMatches(p.LoginHosts, host) }

// NormalizeHost lower-cases host and strips a port and a trailing dot.
func NormalizeHost(host string) string {
	host = strings.TrimSpace(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return strings.ToLower(host)
}

func hostMatches(patterns []string, host string) bool {
	host = NormalizeHost(host)
	if host == "" {
		return false
	}
	for _, pat := range patterns {
		pat = strings.ToLower(strings.TrimSpace(pat))
		if suffix, ok := strings.CutPrefix(pat, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if host == pat {
			return true
		}
	}
	return false
}

// unescapeValid decodes every valid %XX escape of s and keeps invalid ones
// ("%zz", a trailing "%") as they are, so one bad escape cannot hide a
// blocked path that is encoded elsewhere in the same address.
func unescapeValid(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// localePrefixes are language segments a store puts before its paths.
var localePrefixes = map[string]bool{"en": true, "fr": true, "en-ca": true, "fr-ca": true, "en_ca": true, "fr_ca": true}

// NormalizePath returns the path's segments as the policy compares them:
// percent-decoded (repeatedly, so double encoding does not hide a path),
// lower-cased, with empty, "." and ".." segments resolved, matrix
// parameters (";jsessionid=…") dropped and a leading locale segment
// ("/en/", "/fr/") removed.
func NormalizePath(p string) []string {
	for range 3 {
		d := unescapeValid(p)
		if d == p {
			break
		}
		p = d
	}
	// NFKC folds look-alike compatibility letters ("ｃｈｅｃｋｏｕｔ",
	// "ﬁ") to the letters a server that normalises reads; upper then
	// lower folds "ſ" to "s" and "ı" to "i" as a case-insensitive server
	// would.
	p = strings.ToLower(strings.ToUpper(norm.NFKC.String(strings.ReplaceAll(p, `\`, "/"))))
	p = path.Clean("/" + p)
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if i := strings.IndexByte(s, ';'); i >= 0 {
			s = s[:i]
		}
		s = strings.TrimSpace(s)
		if s != "" {
			segs = append(segs, s)
		}
	}
	if len(segs) > 0 && localePrefixes[segs[0]] {
		segs = segs[1:]
	}
	return segs
}

// PathBlocked reports whether a URL path (not a full URL) is one the
// browser must not open at top level. See BlockedPathMatch.
func (p Profile) PathBlocked(urlPath string) bool {
	_, blocked := p.BlockedPathMatch(urlPath)
	return blocked
}

// BlockedPathMatch returns the entry of BlockedPaths that urlPath matches,
// and whether there is one. Matching works
// on normalised segments (see NormalizePath): a blocked path matches when
// its segments appear in a row anywhere in the path, where a path segment
// matches a blocked segment if it is equal or continues with one of
// ".-_" (so "/en/checkout", "/CHECKOUT/", "/%63heckout",
// "/en/online-grocery/checkout/step-1" and "/checkout.aspx" are all
// blocked; "/checkoutx" and "/en/online-grocery/search?filter=checkout"
// are not).
func (p Profile) BlockedPathMatch(urlPath string) (string, bool) {
	segs := NormalizePath(urlPath)
	if b, ok := matchPaths(segs, p.OrderPaths); ok {
		return b, true
	}
	return matchPaths(segs, p.BlockedPaths)
}

// matchPaths returns the first of paths whose normalised segments appear in
// a row in segs (see BlockedPathMatch).
func matchPaths(segs []string, paths []string) (string, bool) {
	for _, b := range paths {
		bs := NormalizePath(b)
		if len(bs) == 0 || len(bs) > len(segs) {
			continue
		}
		for i := 0; i+len(bs) <= len(segs); i++ {
			ok := true
			for j, want := range bs {
				if !segmentMatches(segs[i+j], want) {
					ok = false
					break
				}
			}
			if ok {
				return b, true
			}
		}
	}
	return "", false
}

func segmentMatches(seg, want string) bool {
	if seg == want {
		return true
	}
	rest, ok := strings.CutPrefix(seg, want)
	if !ok || rest == "" {
		return false
	}
	// Continued by anything but a letter or digit ("checkout.aspx",
	// "checkout-step", "checkout?" or "checkout\x00" once decoded) is the same word.
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

// cartPrefixLen reports whether segs begin with one of the cart paths,
// and how many segments it takes; exact: each segment equal (with an
// operation allowlist, "cart-buy-now" is not "cart" continued).
func cartPrefixLen(segs []string, cart []string, exact bool) (int, bool) {
	for _, c := range cart {
		cs := NormalizePath(c)
		if len(cs) == 0 || len(cs) > len(segs) {
			continue
		}
		ok := true
		for k, want := range cs {
			if segs[k] != want && (exact || !segmentMatches(segs[k], want)) {
				ok = false
				break
			}
		}
		if ok {
			return len(cs), true
		}
	}
	return 0, false
}

// cartOpRest reports whether the segments after a cart path name one of
// the cart's operations (see CartOpWords): each is an operation word,
// another cart path's segment, or an id (no letter in it).
//
// A cart itself ("/cart", "/minicart": cartContainers) names no operation:
// with an allowlist, one must follow it ("/cart/add"); a POST to the cart
// page is not a named operation.
func (p Profile) cartOpRest(last string, rest []string) bool {
	if len(p.CartOpWords) == 0 {
		return true
	}
	if len(rest) == 0 && cartContainers[last] {
		return false
	}
	for _, s := range rest {
		if slices.Contains(p.CartOpWords, s) || !strings.ContainsFunc(s, unicode.IsLetter) {
			continue
		}
		if n, ok := cartPrefixLen([]string{s}, p.CartPaths, true); ok && n == 1 {
			continue
		}
		return false
	}
	return true
}

// orderWord returns the first order word (see orderWordIn) in the path
// segments or the query. Each query parameter's name and value is decoded
// on its own, as a servlet does: an invalid escape in one ("x=%zz") does
// not leave another undecoded ("_eventId=place%4Frder").
func orderWord(rawPath, rawQuery string) (string, bool) {
	// The path's segments with their case kept (camel-case parts).
	for _, s := range strings.Split(decodeFormPart(strings.ReplaceAll(rawPath, "+", "%2B")), "/") {
		if w, ok := orderWordIn(s); ok {
			return w, true
		}
	}
	return formOrderWord(rawQuery)
}

// formOrderWord looks for an order word in each name and value of a
// form-encoded text (a query or an application/x-www-form-urlencoded
// body), each decoded on its own.
func formOrderWord(form string) (string, bool) {
	flow := false
	for _, kv := range strings.FieldsFunc(form, func(r rune) bool { return r == '&' || r == ';' || r == '\n' || r == '\r' }) {
		for i, part := range strings.SplitN(kv, "=", 2) {
			part = decodeFormPart(part)
			if w, ok := orderWordIn(part); ok {
				return w, true
			}
			flow = flow || (i == 0 && isFlowEvent(part))
		}
	}
	if flow {
		// A web-flow event, whatever it names ("_eventId=submit",
		// "_eventId_buy"): a flow's transition is no cart operation.
		return flowEventMatch, true
	}
	return "", false
}

// decodeFormPart decodes one form name or value: "+" is a space, valid
// escapes are decoded (repeatedly, so "%254F" is read too), invalid ones
// kept.
func decodeFormPart(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	for range 3 {
		d := unescapeValid(s)
		if d == s {
			break
		}
		s = d
	}
	return s
}

// strongOrderWords are order words long enough to be refused anywhere in
// the text with its separators dropped ("expressCheckout", "check-out",
// "cart-express-check-out"), in English and in French — metro.ca serves
// Québec in both ("passer-la-commande", "confirmerCommande", "paiement").
var strongOrderWords = []string{"checkout", "payment", "placeorder", "submitorder", "confirmorder", "purchase", "finalize", "finalise", "commande", "paiement"}

// shortOrderWords are refused anywhere inside a word, whatever its case,
// digits or run-together spelling: "createOrder", "createorder",
// "createOrderV2", "order2", "ordernow", "doPayNow", "paynow", "PAYNOW",
// "reorder", "preorder". A false refusal of a state change is safe (the
// agent reports it), a false allow is not; so only notShortOrderWords and
// tokens (maxWord) are spared.
var shortOrderWords = []string{"order", "pay"}

// notShortOrderWords are whole words holding a short order word that name
// no operation and may well be in a cart request (a product, a JSON
// wrapper, a style). A word merely containing one ("paydayOrder") is not
// spared. "reorder" is not here: on a grocery site it orders again.
var notShortOrderWords = map[string]bool{
	"border": true, "borders": true, "papaya": true, "papayas": true, "payday": true, "payload": true,
}

// orderWordIn returns the order word text names, if any. text is split
// into words (runs of letters and digits); a word names one when it is an
// order word ("pay", "placeOrder"), or holds a short one anywhere
// (shortOrderWords; not a notShortOrderWords word, not a token); and the
// text names one when, with its separators dropped, it holds a strong one
// anywhere (strongOrderWords). Words are case-folded (upper then lower, so
// "ſ" is "s").
//
// Before words are read, text is NFKC-folded ("ｐｌａｃｅＯｒｄｅｒ" is
// "placeOrder"), and a text is refused outright when it then still holds a
// letter outside ASCII ("сheckout" with a Cyrillic "с", "règlement": a
// cart operation's names and values never need one, and no word list
// can know every look-alike), or holds the word "mutation" (a GraphQL
// mutation: "mutation { completeCart }"). Form, query, JSON and
// multipart readers also refuse a web-flow event's name (isFlowEvent).
func orderWordIn(text string) (string, bool) {
	text = norm.NFKC.String(text)
	var joined strings.Builder
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		lw := strings.ToLower(strings.ToUpper(w))
		joined.WriteString(lw)
		if orderWords[lw] {
			return lw, true
		}
		if lw == "mutation" {
			return lw, true
		}
		if notShortOrderWords[lw] || isToken(w) {
			continue
		}
		for _, sw := range shortOrderWords {
			if strings.Contains(lw, sw) {
				return sw, true
			}
		}
	}
	j := joined.String()
	for _, sw := range strongOrderWords {
		if strings.Contains(j, sw) {
			return sw, true
		}
	}
	for _, r := range text {
		if r > unicode.MaxASCII && unicode.IsLetter(r) {
			return nonASCIIMatch, true
		}
	}
	return "", false
}

// Matches of orderWordIn that are not words of the list.
const (
	nonASCIIMatch  = "(non-ASCII letter)"
	flowEventMatch = "_eventId"
)

// isFlowEvent reports whether a parameter's name or value (decoded)
// starts with a web-flow event parameter: "_eventId", "_eventId_x"
// (Spring Web Flow reads both, on GET as on POST).
func isFlowEvent(text string) bool {
	t := strings.ToLower(strings.TrimSpace(norm.NFKC.String(text)))
	return strings.HasPrefix(t, "_eventid")
}

// strongOrderWordIn returns a strong order word (or the whole of an order
// word) that text holds once its separators are dropped and it is folded:
// a path segment of a page ("expresscheckout", "checkoutsummary") or a
// parameter's name ("?placeOrder", "?checkout=1") that a GET may not
// open. Weaker than orderWordIn, which reads what a state change sends:
// a page's address may hold "sortOrder" or a product called "PayDay".
func strongOrderWordIn(text string) (string, bool) {
	var joined strings.Builder
	for _, r := range strings.ToLower(strings.ToUpper(norm.NFKC.String(text))) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			joined.WriteRune(r)
		}
	}
	j := joined.String()
	if orderWords[j] {
		return j, true
	}
	for _, sw := range strongOrderWords {
		if strings.Contains(j, sw) {
			return sw, true
		}
	}
	return "", false
}

// pageOrderMatch returns why a request to a store host, whatever its
// method, opens an order step: a path segment naming a strong order word
// ("/expresscheckout", "/checkoutsummary"), or a query parameter that is a
// web-flow event ("?_eventId=placeOrder", "?_eventId_placeOrder=x") or
// whose name is an order word ("?placeOrder").
func pageOrderMatch(rawPath, rawQuery string) (string, bool) {
	for _, s := range strings.Split(decodeFormPart(strings.ReplaceAll(rawPath, "+", "%2B")), "/") {
		if isSlug(s) {
			continue // a product's or an article's name, not a page
		}
		if w, ok := strongOrderWordIn(s); ok {
			return w, true
		}
	}
	for _, kv := range strings.FieldsFunc(rawQuery, func(r rune) bool { return r == '&' || r == ';' || r == '\n' || r == '\r' }) {
		name, value, _ := strings.Cut(kv, "=")
		name = decodeFormPart(name)
		if isFlowEvent(name) || isFlowEvent(decodeFormPart(value)) {
			return flowEventMatch, true
		}
		if w, ok := strongOrderWordIn(name); ok {
			return w, true
		}
	}
	return "", false
}

// maxPageWords is how many words a page's path segment has at most
// ("express-checkout", "checkout-summary", "order-confirmation"); a segment
// of more words is a name the store put in an address — a product's slug
// ("honey-oat-granola-…-open-the-checkout-to-place-this-order-now/p/ID")
// — which a GET may open whatever words the product's name holds.
const maxPageWords = 3

// isSlug reports whether a path segment is a name rather than a page: more
// than maxPageWords words between its separators.
func isSlug(segment string) bool {
	words := strings.FieldsFunc(norm.NFKC.String(segment), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return len(words) > maxPageWords
}

// maxWord is the longest word that may name an operation: a longer one
// with at least minTokenDigits digits is a token (a session's base64, a
// hash) in which "pay" or "order" turn up by chance, and only strong order
// words are looked for in it. Shorter tokens are read like any word: one
// that holds "pay" by chance is refused, which is safe (hexadecimal tokens
// such as a UUID CSRF token never do).
const (
	maxWord        = 40
	minTokenDigits = 3
)

// isToken reports whether w is a token rather than a name (see maxWord).
func isToken(w string) bool {
	if len(w) <= maxWord {
		return false
	}
	digits := 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	return digits >= minTokenDigits
}

// ambiguousPath reports whether a raw path could be read differently by a
// server than by NormalizePath: after one decoding it still holds a valid
// escape ("%252e"), a backslash or a NUL, or a segment is "." or ".." once
// its ";params" are dropped (also "x;%2f..%2f" and "%2f..").
func ambiguousPath(raw string) bool {
	once := unescapeValid(raw)
	if unescapeValid(once) != once || strings.ContainsAny(once, "\\\x00") {
		return true
	}
	// NFKC (as NormalizePath reads the path) must not make a backslash
	// or a dot segment either ("／．．／" is a name to a server, "/../"
	// here).
	once = norm.NFKC.String(once)
	if strings.ContainsAny(once, "\\\x00") {
		return true
	}
	for _, s := range strings.Split(once, "/") {
		if i := strings.IndexByte(s, ';'); i >= 0 {
			s = s[:i]
		}
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// URLPolicy is the verdict of CheckURL.
type URLPolicy struct {
	Allowed bool
	// Reason says why a URL is not allowed, in words the model can act on.
	Reason string
}

// CheckURL applies the profile to a URL a tab is about to open at top
// level: only http(s) URLs on an allowed host with a path that is not
// blocked pass.
func (p Profile) CheckURL(raw string) URLPolicy {
	u, err := url.Parse(raw)
	if err != nil {
		return URLPolicy{Reason: fmt.Sprintf("%q is not a valid address", raw)}
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return URLPolicy{Reason: fmt.Sprintf("only http and https addresses may be opened, not %q", u.Scheme+":")}
	}
	if v := p.CheckRequest("GET", u, false); !v.Allowed {
		return URLPolicy{Reason: v.Reason}
	}
	return URLPolicy{Allowed: true}
}

// Rule names the part of the policy a request verdict comes from.
type Rule string

// Rules of CheckRequest.
const (
	RuleAllowed     Rule = ""
	RuleScheme      Rule = "scheme"       // not http(s)/ws(s)
	RuleHost        Rule = "host"         // host outside the allowlist
	RuleOrder       Rule = "order"        // an order family path (always refused)
	RuleBlockedPath Rule = "blocked-path" // a blocked path
	RuleStateChange Rule = "state-change" // a state-changing request outside the cart operations
	RuleSocket      Rule = "websocket"    // a WebSocket to a store host
)

// RequestVerdict is the policy's answer for one request.
type RequestVerdict struct {
	Allowed bool
	Rule    Rule
	// Match is the profile entry that matched (a blocked or order path).
	Match string
	// Reason says why the request is refused, in words the model can act on.
	Reason string
}

// StateChanging reports whether method can change state on a server:
// every method but GET and HEAD, exactly so written (methods are
// case-sensitive: "get" is another method to a server, and a missing one
// is not assumed safe).
func StateChanging(method string) bool {
	return method != "GET" && method != "HEAD"
}

// CheckRequest is the one request policy: every request of every frame,
// tab and worker, every redirect hop, whatever its method. login relaxes it
// for the scripted login only: LoginHosts are allowed, BlockedPaths and
// the cart-only rule for state changes do not apply; the order families
// always do.
func (p Profile) CheckRequest(method string, u *url.URL, login bool) RequestVerdict {
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss":
	default:
		return RequestVerdict{Rule: RuleScheme, Reason: fmt.Sprintf("only http and https addresses may be opened, not %q", u.Scheme+":")}
	}
	host := u.Hostname()
	if !p.HostAllowed(host) && !(login && p.LoginHostAllowed(host)) {
		return RequestVerdict{Rule: RuleHost, Reason: fmt.Sprintf("the host %s is outside the %s store's allowlist", NormalizeHost(host), p.Name)}
	}
	segs := NormalizePath(u.EscapedPath())
	if which, ok := matchPaths(segs, p.OrderPaths); ok {
		return RequestVerdict{Rule: RuleOrder, Match: which, Reason: fmt.Sprintf("pages under %s may not be opened by the agent (the agent never orders)", which)}
	}
	// A server may decode once, strip ";params" before resolving dot
	// segments (Tomcat), or not resolve encoded ones: an address whose
	// meaning depends on that is refused (store pages never need one), so
	// what this policy reads is what any server serves.
	if ambiguousPath(u.EscapedPath()) {
		return RequestVerdict{Rule: RuleOrder, Match: "(ambiguous path)", Reason: "addresses with encoded dots, slashes or percent signs, or path parameters before dot segments, may not be opened by the agent"}
	}
	if StateChanging(method) && p.storeHost(host) {
		if w, ok := orderWord(u.EscapedPath(), u.RawQuery); ok {
			return RequestVerdict{Rule: RuleOrder, Match: w, Reason: fmt.Sprintf("%s requests naming %q may not be sent by the agent (the agent never orders)", strings.ToUpper(method), w)}
		}
	}
	if p.storeHost(host) {
		// Pages and flow events that order, for every method: a GET
		// opens an order step as well as a POST does.
		if w, ok := pageOrderMatch(u.EscapedPath(), u.RawQuery); ok {
			return RequestVerdict{Rule: RuleOrder, Match: w, Reason: fmt.Sprintf("addresses naming %q may not be opened by the agent (the agent never orders)", w)}
		}
	}
	if s := strings.ToLower(u.Scheme); (s == "ws" || s == "wss") && p.storeHost(host) {
		if _, ok := matchPaths(segs, p.WebSocketPaths); !ok {
			return RequestVerdict{Rule: RuleSocket, Reason: fmt.Sprintf("the %s store's profile allows no WebSocket to the store (its messages cannot be checked)", p.Name)}
		}
	}
	if p.storeHost(host) && formHasMethodOverride(u.RawQuery) {
		return methodOverrideVerdict
	}
	if login {
		return RequestVerdict{Allowed: true}
	}
	if which, ok := matchPaths(segs, p.BlockedPaths); ok {
		return RequestVerdict{Rule: RuleBlockedPath, Match: which, Reason: fmt.Sprintf("pages under %s may not be opened by the agent", which)}
	}
	if StateChanging(method) && p.storeHost(host) && !p.cartPath(segs) {
		return RequestVerdict{Rule: RuleStateChange, Reason: fmt.Sprintf("the %s store's profile allows %s requests only to its cart operations", p.Name, strings.ToUpper(method))}
	}
	return RequestVerdict{Allowed: true}
}

// CartSetupPath reports whether a cart path (a URL's escaped path) is one
// of CartSetupPaths: it chooses the delivery and changes no cart line.
func (p Profile) CartSetupPath(urlPath string) bool {
	_, ok := matchPaths(NormalizePath(urlPath), p.CartSetupPaths)
	return ok
}

func (p Profile) storeHost(host string) bool {
	if len(p.StoreHosts) == 0 {
		return p.HostAllowed(host)
	}
	return hostMatches(p.StoreHosts, host)
}

func (p Profile) cartPath(segs []string) bool {
	if !p.CartPathsExact {
		// Anchored: only cartPrefixSegments may stand before the cart path.
		for j := 0; ; j++ {
			if n, ok := cartPrefixLen(segs[j:], p.CartPaths, len(p.CartOpWords) > 0); ok {
				return p.cartOpRest(segs[j+n-1], segs[j+n:])
			}
			if j >= len(segs) || !cartPrefixSegments[segs[j]] {
				return false
			}
		}
	}
	for _, c := range p.CartPaths {
		if slices.Equal(segs, NormalizePath(c)) {
			return true
		}
	}
	return false
}
