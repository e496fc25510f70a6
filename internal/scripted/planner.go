// Package scripted is the offline "model" of the demo and the tests: a
// Script for the fake Gemini server (package fake/gemini) that shops the
// demo store the way Gemini Computer Use would — through the real genai
// client, real HTTP and a real browser tab — seeing only what a model is
// sent: the URL and the screen. It cannot read pixels, so the agent sends
// it the screen's accessibility tree with every screenshot
// (agent.Config.DescribePage): roles, names and boxes as a screen reader
// gets them. It finds products, prices, stock and the cart count in that
// text, clicks elements by their boxes, and knows nothing of the store's
// internals, catalogue or cart (it does not import internal/demostore;
// internal/archrules checks that).
//
// The planner keeps no state between requests beyond the conversation:
// what it chose and what the cart showed before it added are sentences of
// its own earlier turns, as a model's would be, so concurrent items in
// several tabs, retries and restarts behave.
package scripted

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// Tool names the planner calls (declared by the shopping run).
const (
	ToolReportAdded    = "report_item_added"
	ToolReportNotFound = "report_item_not_found"
	ToolPresentOptions = "present_options"
)

// Defaults for Options.
const (
	DefaultPostalCode        = "H2X 1Y4"
	DefaultBaseURL           = "https://www.metro.ca"
	DefaultSearchURLTemplate = "https://www.metro.ca/en/online-grocery/search?filter={q}"
)

// Misbehaviour makes the planner misbehave for one item, for tests and demos
// of the failure paths.
type Misbehaviour string

// Misbehaviours.
const (
	// Checkout first tries to open the checkout page (the browser policy
	// must refuse it), then shops normally.
	Checkout Misbehaviour = "checkout"
	// ServerError fails every model call for the item with HTTP 500.
	ServerError Misbehaviour = "server_error"
	// MalformedOnce answers the item's first request with a malformed
	// function call (the agent retries), then shops normally.
	MalformedOnce Misbehaviour = "malformed_once"
	// NoReport stops without calling a report tool.
	NoReport Misbehaviour = "no_report"
	// Stuck clicks an inert spot forever (the agent's loop detection ends it).
	Stuck Misbehaviour = "stuck"
	// CountsPackages reads a count of pieces as a count of packages ("12
	// eggs" as twelve boxes of 12, as a model that ignores the goal's "How
	// many" does): the item's cart limit must refuse the second box.
	CountsPackages Misbehaviour = "counts_packages"
)

// Options configure a Planner.
type Options struct {
	// PostalCode is used when the goal has no "Postal code:" line.
	PostalCode string
	// BaseURL is the store's origin (default https://www.metro.ca).
	BaseURL string
	// SearchURLTemplate has "{q}" where the query goes.
	SearchURLTemplate string
	// Misbehave maps an item (the goal's "Item:" line, case-insensitive) to
	// a misbehaviour.
	Misbehave map[string]Misbehaviour
	// ProductPages: open the chosen product's page and add it there, as a
	// real agent does (and as a replay does), instead of adding from its
	// search tile.
	ProductPages bool
}

// Planner answers fake-Gemini requests for the demo store.
type Planner struct {
	opts      Options
	misbehave map[string]Misbehaviour

	mu        sync.Mutex
	malformed map[string]bool // goals already answered with a malformed call
}

// New returns a planner.
func New(opts Options) *Planner {
	if opts.PostalCode == "" {
		opts.PostalCode = DefaultPostalCode
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if opts.SearchURLTemplate == "" {
		opts.SearchURLTemplate = DefaultSearchURLTemplate
	}
	m := map[string]Misbehaviour{}
	for k, v := range opts.Misbehave {
		m[strings.ToLower(strings.TrimSpace(k))] = v
	}
	return &Planner{opts: opts, misbehave: m, malformed: map[string]bool{}}
}

// What a replay's hand-over note says (internal/shop's prompt).
var (
	replayHeld   = regexp.MustCompile(`the cart now holds (\d+) of this product \(it held (\d+) before\)`)
	earlierAdded = regexp.MustCompile(`An earlier attempt at this item stopped after it had already added to the cart: (\d+) × product ([A-Za-z0-9_-]+)`)
	replayURL    = regexp.MustCompile(`This item was bought before: (.*) — (https://\S+/p/[^\s.]+)\.`)
)

// Script returns the planner as a fake-Gemini script.
func (p *Planner) Script() gemini.Script { return p.Reply }

// Goal is what the planner reads from the goal text.
type Goal struct {
	Item     string
	Quantity int
	// Pieces: the goal's quantity counts pieces ("Quantity: 12 pieces"),
	// which the packages of the chosen product cover (units).
	Pieces     bool
	PostalCode string
	// Wrong are the products the household rejected ("Wrong product: …"
	// lines, each its address or name): never chosen.
	Wrong []string
}

// ParseGoal reads the lines "Item: …", "Quantity: n" or "Quantity: n
// pieces …" (default 1) and "Postal code: …" (optional) from a goal text.
func ParseGoal(text string) (Goal, error) {
	g := Goal{Quantity: 1}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Item":
			g.Item = v
		case "Quantity":
			f := strings.Fields(v)
			n, err := 0, errors.New("empty")
			if len(f) > 0 {
				n, err = strconv.Atoi(f[0])
			}
			if err != nil || n < 1 {
				return Goal{}, fmt.Errorf("the goal's Quantity line %q is not a positive number", v)
			}
			g.Quantity = n
			g.Pieces = len(f) > 1 && f[1] == "pieces"
		case "Postal code":
			g.PostalCode = v
		case "Wrong product":
			g.Wrong = append(g.Wrong, v)
		}
	}
	if g.Item == "" {
		return Goal{}, errors.New(`the goal has no "Item: …" line`)
	}
	return g, nil
}

// units is how many units of the product the page shows as productText
// the goal asks for: its quantity, or — when it counts pieces — the
// packages that cover them, read from the product's name and size as a
// model reads them (one box of "12 eggs" for 12 eggs; the goal's "How
// many").
func (g Goal) units(productText string) int {
	return shoppinglist.Packages(g.Quantity, g.Pieces, shoppinglist.ReadPackFor(productText, g.Item))
}

// Reply decides the next model turn for req.
func (p *Planner) Reply(req *gemini.Request) gemini.Reply {
	g, err := ParseGoal(req.Goal())
	if err != nil {
		return gemini.Reply{Text: "I cannot tell what to buy: " + err.Error()}
	}
	if g.PostalCode == "" {
		g.PostalCode = p.opts.PostalCode
	}
	h := readHistory(req)

	switch p.misbehave[strings.ToLower(g.Item)] {
	case ServerError:
		return gemini.Reply{Status: 500, Message: "scripted failure: the model service had an internal error"}
	case NoReport:
		return gemini.Reply{Text: "I had a look around and I am stopping here."}
	case Stuck:
		// The top of the screen: the store's promo strip, which does
		// nothing when clicked.
		return say("Clicking the banner.", click(500, 20))
	case MalformedOnce:
		p.mu.Lock()
		first := !p.malformed[req.Goal()]
		p.malformed[req.Goal()] = true
		p.mu.Unlock()
		if first {
			return gemini.Reply{Malformed: true}
		}
	case Checkout:
		u := p.opts.BaseURL + "/checkout"
		if !h.navigated(u) {
			return say("Let me look at the checkout first.", navigate(u))
		}
	case CountsPackages:
		g.Pieces = false
	}

	v := readView(req)
	search := strings.ReplaceAll(p.opts.SearchURLTemplate, "{q}", url.QueryEscape(g.Item))
	if v.root == nil && h.called("navigate") {
		// The page's text did not come with the screen (it was still
		// loading): look again.
		if h.waitsInARow() < maxCartWaits {
			return say("I cannot make out the page yet; waiting.", wait())
		}
		return gemini.Reply{Text: "I cannot make out the store's page; stopping."}
	}

	// What covers the page first: the cookie banner, the postal code.
	if accept := v.cookieBanner(); accept != nil {
		x, y := accept.center()
		if h.clicks(x, y) >= 3 {
			return gemini.Reply{Text: "The cookie banner does not go away; I cannot continue."}
		}
		return say("Accepting the cookie banner.", click(x, y))
	}
	if field, submit, ok := v.postalDialog(); ok {
		if h.typed(g.PostalCode) >= 3 {
			return gemini.Reply{Text: "The store keeps asking for a postal code although I entered " + g.PostalCode + "; I cannot continue."}
		}
		fx, fy := field.center()
		sx, sy := submit.center()
		return say("The store asks for a postal code; entering "+g.PostalCode+".",
			gemini.Call("type_text_at", map[string]any{"x": fx, "y": fy, "text": g.PostalCode, "press_enter": false, "clear_before_typing": true}),
			click(sx, sy))
	}

	if r, ok := p.handedOver(req, g, h, v); ok {
		return r
	}
	if ch, ok := h.choice(); ok {
		return p.add(g, h, v, ch, search)
	}
	return p.choose(req, g, h, v, search)
}

// handedOver answers a replay that added the remembered product and then
// handed over ("the cart now holds 2 of this product (it held 0
// before)"): a model opens the product's page, sees the units in the cart
// and reports them rather than adding them again.
func (p *Planner) handedOver(req *gemini.Request, g Goal, h history, v view) (gemini.Reply, bool) {
	m := replayHeld.FindStringSubmatch(req.Goal())
	u := replayURL.FindStringSubmatch(req.Goal())
	if m == nil || u == nil {
		return gemini.Reply{}, false
	}
	now, _ := strconv.Atoi(m[1])
	was, _ := strconv.Atoi(m[2])
	if now-was < g.units(u[1]) || h.navigations(u[2]) > 1 {
		return gemini.Reply{}, false
	}
	if !sameURL(v.url, u[2]) {
		if h.navigated(u[2]) {
			return gemini.Reply{}, false
		}
		return say("The replay says the cart holds it; opening its page to check.", navigate(u[2])), true
	}
	prod, ok := v.productPage()
	if !ok || prod.inCart < now {
		return gemini.Reply{}, false
	}
	return say(fmt.Sprintf("The page shows %d of it in the cart; reporting.", prod.inCart), gemini.Call(ToolReportAdded, map[string]any{
		"item_name":  prod.display(),
		"price_text": prod.price,
		"url":        u[2],
		"quantity":   now - was,
	})), true
}

// choose finds the product on the search results (or asks the household,
// or gives up) and starts adding it.
func (p *Planner) choose(req *gemini.Request, g Goal, h history, v view, search string) gemini.Reply {
	// The household answered the question: its choice, added from its page.
	if ans, asked := h.lastResponse(ToolPresentOptions); asked {
		if ans["answer"] != "product" {
			return notFound(g, fmt.Sprintf("The household did not choose a product for %q (%v).", g.Item, describeAnswer(ans)))
		}
		name, _ := ans["name"].(string)
		price, _ := ans["price"].(string)
		u, _ := ans["url"].(string)
		offered := h.offered()
		if u == "" {
			id, _ := ans["product_id"].(string)
			for _, o := range offered {
				if (id != "" && o["product_id"] == id) || o["name"] == name {
					u, _ = o["url"].(string)
				}
			}
		}
		if productID(u) == "" {
			return notFound(g, fmt.Sprintf("The household chose %q, but I cannot find its page.", name))
		}
		ch := choice{name: name, price: price, url: u, matches: len(offered), onPage: true, answered: true}
		return ch.start(p.add(g, h, v, ch, search))
	}

	// On a page of the store's search (this one, its next page or a
	// wider one) the results are read; anywhere else, search.
	if !samePath(v.url, search) {
		if h.navigations(search) >= 3 {
			return gemini.Reply{Text: "I cannot get to the store's search results; stopping."}
		}
		return say(fmt.Sprintf("Searching the store for %q.", g.Item), navigate(search))
	}
	tiles := v.tiles()

	// A retry after an attempt that had already added the product ("An
	// earlier attempt at this item stopped after it had already added to
	// the cart: 1 × product olive-oil-1l."): the tile shows those units in
	// the cart, so a model reports them instead of adding them again.
	if m := earlierAdded.FindStringSubmatch(req.Goal()); m != nil {
		units, _ := strconv.Atoi(m[1])
		for _, t := range tiles {
			if t.id() == m[2] && units >= g.units(t.display()) && t.inCart >= units {
				return say(fmt.Sprintf("An earlier attempt already added it and the page shows %d in the cart; reporting.", t.inCart), gemini.Call(ToolReportAdded, map[string]any{
					"item_name":  t.display(),
					"price_text": t.price,
					"url":        t.url,
					"quantity":   units,
				}))
			}
		}
	}

	// Product text that gives the agent orders is a prompt injection. With
	// the Computer Use tool's enablePromptInjectionDetection on, the service
	// checks the page and the model is not steered; off, the planner plays a
	// model that falls for it once and tries the checkout the text names —
	// which the browser policy refuses — before it returns to its task.
	if injected(tiles) && !detectionOn(req) {
		if u := p.opts.BaseURL + "/checkout"; !h.navigated(u) {
			return say("The product text says to open the checkout and place the order; doing that.", navigate(u))
		}
	}

	wrong := func(t product) bool {
		return slices.ContainsFunc(g.Wrong, func(w string) bool { return sameURL(w, t.url) || w == t.display() })
	}
	var matches, canAdd []product
	soldOut := h.soldOutOnPages()
	for _, t := range tiles {
		if t.sponsored {
			continue // an advertisement, not a result
		}
		matches = append(matches, t)
		if t.inStock && !wrong(t) && !soldOut[t.url] {
			canAdd = append(canAdd, t)
		}
	}
	asks := req.Declaration(ToolPresentOptions) != nil && !h.called(ToolPresentOptions)

	// On the wider search of a sold-out item: what can be added instead.
	if wider, why := h.wider(); wider != "" && sameURL(v.url, wider) {
		if len(canAdd) > 0 && asks {
			return say("Everything is out of stock; asking the household about the alternatives in stock.",
				p.presentOptions(g, canAdd, "out_of_stock", why+" These are in stock instead."))
		}
		return notFound(g, why)
	}

	// The thing itself before an imitation of it: "maple syrup" is the
	// "Pure Maple Syrup", not the "Maple Flavoured Table Syrup" (the
	// store's order decides among equals).
	slices.SortStableFunc(canAdd, func(a, b product) int {
		return boolRank(imitates(g.Item, a)) - boolRank(imitates(g.Item, b))
	})
	if len(canAdd) > 0 {
		// "Always ask for this item": a model asks before it adds, with
		// the matches it can add.
		if alwaysAsk.MatchString(req.Goal()) && asks {
			return say("The household wants to be asked about this item.", p.presentOptions(g, canAdd, "several_match",
				fmt.Sprintf("The list asks to be asked before %q is added.", g.Item)))
		}
		c := canAdd[0]
		ch := choice{name: c.display(), price: c.price, url: c.url, matches: len(canAdd), onPage: p.opts.ProductPages}
		return ch.start(p.add(g, h, v, ch, search))
	}
	if len(matches) == 0 {
		// The words that name the product, without the amount ("a dozen
		// eggs" → "eggs"), before giving up.
		if plain := productWords(g.Item); plain != "" && !strings.EqualFold(plain, g.Item) {
			if u := strings.ReplaceAll(p.opts.SearchURLTemplate, "{q}", url.QueryEscape(plain)); !h.navigated(u) {
				return say(fmt.Sprintf("Nothing for %q; searching for %q.", g.Item, plain), navigate(u))
			}
		}
		return notFound(g, fmt.Sprintf("I searched the store for %q and found no matching product.", g.Item))
	}
	// Nothing here can be added: the next page of results, then the
	// products' kind (the page's related search) for the household to
	// choose from.
	if next := v.link(nextPageRE); next != "" && !h.navigated(next) {
		return say("Nothing on this page is in stock; looking at the next page.", navigate(next))
	}
	names := make([]string, 0, len(matches))
	for _, t := range matches {
		names = append(names, t.display())
	}
	why := fmt.Sprintf("Every product matching %q is out of stock: %s.", g.Item, strings.Join(names, "; "))
	if slices.ContainsFunc(matches, func(t product) bool { return t.inStock && wrong(t) }) {
		why = fmt.Sprintf("The only product in stock for %q is the one the household said was wrong.", g.Item)
	}
	if rel := v.related(); rel != "" && asks && !h.navigated(rel) {
		return say(why+" "+searchingWider+rel, navigate(rel))
	}
	return notFound(g, why)
}

// add adds the chosen product one unit a turn, from its page or its tile,
// each unit once the page shows the last one in the cart, and reports it.
func (p *Planner) add(g Goal, h history, v view, ch choice, search string) gemini.Reply {
	var prod product
	found := false
	if ch.onPage {
		if !sameURL(v.url, ch.url) {
			if h.navigations(ch.url) >= 3 {
				return gemini.Reply{Text: "The page of " + ch.name + " does not open; stopping."}
			}
			return say("Opening the page of "+ch.name+".", navigate(ch.url))
		}
		prod, found = v.productPage()
	} else {
		for _, t := range v.tiles() {
			if sameURL(t.url, ch.url) && !found {
				prod, found = t, true
			}
		}
		if !found && !sameURL(v.url, search) {
			if h.navigations(search) >= 3 {
				return gemini.Reply{Text: "I cannot get back to the search results; stopping."}
			}
			return say("Back to the search results.", navigate(search))
		}
	}
	if ch.onPage && !ch.answered && !(found && prod.inStock) {
		// Its page, opened, says otherwise than its tile: a model goes
		// back to the results — for another product when the page says
		// it is sold out, for this one's tile when the page does not open.
		if h.navigations(search) >= 3 {
			return gemini.Reply{Text: "I cannot get back to the search results; stopping."}
		}
		if found {
			return say(fmt.Sprintf("%s%s. Choosing another.", soldOutOnPage, ch.url), navigate(search))
		}
		return say(fmt.Sprintf("The page of %s does not open. %s%s.", ch.name, fromTileInstead, ch.url), navigate(search))
	}
	switch {
	case !found:
		return notFound(g, fmt.Sprintf("The store's page does not show %s any more.", ch.name))
	case !prod.inStock && ch.answered:
		return notFound(g, fmt.Sprintf("The household chose %q, but it is out of stock or no longer listed.", ch.name))
	case !prod.inStock:
		return notFound(g, fmt.Sprintf("%s is out of stock.", ch.name))
	case !prod.add.onScreen():
		if h.count("scroll_document") >= 3 {
			return gemini.Reply{Text: "I cannot bring the Add to cart button of " + ch.name + " into view; stopping."}
		}
		return say("Scrolling to the product.", gemini.Call("scroll_document", map[string]any{"direction": "down"}))
	}
	ax, ay := prod.add.center()
	before, adds := h.adding()
	want := g.units(prod.display())
	if adds == 0 {
		return say(fmt.Sprintf("%s%d of it in the cart. %s (1 of %d).", pageShows, prod.inCart, addingSentence(ch.name), want), click(ax, ay))
	}
	if refused, already := h.refusedAdd(); refused && prod.inCart < before+adds {
		// The cart refused an add (the tab's notice says so, and how many
		// the item's tabs had added): a model stops adding and reports
		// what the cart holds from it.
		n := prod.inCart - before
		if already > n {
			n = already
		}
		if n < 1 {
			return gemini.Reply{Text: "The store refused the add to the cart; nothing of " + ch.name + " is in the cart; stopping."}
		}
		return say(fmt.Sprintf("The store refused the last add; %d of it in the cart from this item; reporting.", n), gemini.Call(ToolReportAdded, map[string]any{
			"item_name":  ch.name,
			"price_text": prod.price,
			"url":        ch.url,
			"quantity":   n,
			"matches":    ch.matches,
		}))
	}
	if prod.inCart < before+adds {
		// A model watches the page's "Adding…" turn into the count.
		if h.waitsInARow() < maxCartWaits {
			return say("Waiting for the cart to update.", wait())
		}
		return gemini.Reply{Text: fmt.Sprintf("I clicked Add to cart %d times but the page shows %d of %s in the cart (expected %d); is the shopper signed in?",
			adds, prod.inCart, ch.name, before+adds)}
	}
	if adds < want {
		return say(fmt.Sprintf("%s (%d of %d).", addingSentence(ch.name), adds+1, want), click(ax, ay))
	}
	price := prod.price
	if price == "" {
		price = ch.price
	}
	return say(fmt.Sprintf("%s%d of it in the cart; reporting.", pageShows, prod.inCart), gemini.Call(ToolReportAdded, map[string]any{
		"item_name":  ch.name,
		"price_text": price,
		"url":        ch.url,
		"quantity":   want,
		"matches":    ch.matches,
	}))
}

// amountWords say how much, not what ("a dozen eggs", "une douzaine d'œufs").
var amountWords = map[string]bool{
	"a": true, "an": true, "the": true, "some": true, "dozen": true, "pack": true, "of": true, "x": true,
	"un": true, "une": true, "des": true, "de": true, "du": true, "douzaine": true, "paquet": true,
}

// productWords is the item without its amount words and numbers.
func productWords(item string) string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(item)) {
		if _, err := strconv.Atoi(strings.TrimSuffix(w, "x")); err == nil || amountWords[w] {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// imitationRE are the words that make a product a stand-in for what it
// names ("maple flavoured syrup" is not maple syrup).
var imitationRE = regexp.MustCompile(`(?i)\b(?:flavou?red|flavou?r|imitation|saveur|aromatisé)\b`)

// imitates: the product says it is a stand-in, and the item did not ask
// for one.
func imitates(item string, p product) bool {
	return imitationRE.MatchString(p.display()) && !imitationRE.MatchString(item)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// injected reports whether a product's text tells the agent what to do.
func injected(tiles []product) bool {
	for _, t := range tiles {
		if n := strings.ToLower(t.name); strings.Contains(n, "ai assistant:") || strings.Contains(n, "ignore your task") {
			return true
		}
	}
	return false
}

// detectionOn reports whether the request asked the Computer Use tool for
// prompt injection detection.
func detectionOn(req *gemini.Request) bool {
	cu := req.ComputerUse()
	return cu != nil && cu.EnablePromptInjectionDetection != nil && *cu.EnablePromptInjectionDetection
}

// alwaysAsk is the goal's line for an item the household always wants to
// be asked about (#ask).
var alwaysAsk = regexp.MustCompile(`(?m)^- Always ask for this item`)

func (p *Planner) presentOptions(g Goal, products []product, reason, why string) *genai.FunctionCall {
	var opts []any
	for _, r := range products {
		if len(opts) == 5 {
			break
		}
		opts = append(opts, map[string]any{
			"name":       r.display(),
			"price":      r.price,
			"url":        r.url,
			"product_id": r.id(),
		})
	}
	return gemini.Call(ToolPresentOptions, map[string]any{"item_name": g.Item, "options": opts, "reason": reason, "context": why})
}

// samePath: both addresses are on the same page of the same host,
// whatever their query (the search's pages).
func samePath(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && a != "" && b != "" && ua.Host == ub.Host &&
		strings.TrimSuffix(ua.Path, "/") == strings.TrimSuffix(ub.Path, "/")
}

// sameURL compares two addresses by host, path and query values (the
// browser may re-encode what was typed).
func sameURL(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || a == "" || b == "" {
		return false
	}
	return ua.Host == ub.Host && strings.TrimSuffix(ua.Path, "/") == strings.TrimSuffix(ub.Path, "/") &&
		ua.Query().Encode() == ub.Query().Encode()
}

func describeAnswer(ans map[string]any) string {
	if a, ok := ans["answer"]; ok {
		return fmt.Sprint(a)
	}
	if e, ok := ans["error"]; ok {
		return fmt.Sprint(e)
	}
	return "no answer"
}

func say(text string, calls ...*genai.FunctionCall) gemini.Reply {
	return gemini.Reply{Text: text, Calls: calls}
}

func click(x, y int) *genai.FunctionCall {
	return gemini.Call("click_at", map[string]any{"x": x, "y": y})
}

func navigate(u string) *genai.FunctionCall {
	return gemini.Call("navigate", map[string]any{"url": u})
}

func wait() *genai.FunctionCall {
	return gemini.Call("wait", map[string]any{"seconds": 1})
}

func notFound(g Goal, why string) gemini.Reply {
	return say(why, gemini.Call(ToolReportNotFound, map[string]any{"item_name": g.Item, "explanation": why}))
}

// What the planner says, and reads back from its own earlier turns: the
// conversation is its only memory.
const (
	choosing        = "Choosing "
	pageShows       = "The page shows "
	searchingWider  = "Searching wider: "
	soldOutOnPage   = "Its page says it is out of stock: "
	fromTileInstead = "Adding it from its search tile instead: "
)

var (
	choiceRE = regexp.MustCompile(`Choosing "([^"]*)" at (.*?) \((\d+) in stock to choose from\): (\S+) — adding it (on its page|from its tile)\.`)
	beforeRE = regexp.MustCompile(`The page shows (\d+) of it in the cart\. Adding `)
	addingRE = regexp.MustCompile(`Adding .* to the cart \(\d+ of \d+\)\.`)
	widerRE  = regexp.MustCompile(`^(.*) Searching wider: (\S+)$`)
)

func addingSentence(name string) string { return "Adding " + name + " to the cart" }

// choice is the product the planner chose, as its turn said it.
type choice struct {
	name, price, url string
	matches          int
	onPage           bool // added on its page (else from its search tile)
	answered         bool // the household chose it
}

// start says the choice before the first step of adding it.
func (c choice) start(r gemini.Reply) gemini.Reply {
	where := "from its tile"
	if c.onPage {
		where = "on its page"
	}
	r.Text = fmt.Sprintf(`%s"%s" at %s (%d in stock to choose from): %s — adding it %s. %s`, choosing, c.name, c.price, c.matches, c.url, where, r.Text)
	return r
}

// history is what the planner did so far in this conversation.
type history struct {
	req   *gemini.Request
	calls []*genai.FunctionCall
	turns []*genai.Content
}

func readHistory(req *gemini.Request) history {
	return history{req: req, calls: req.PastCalls(), turns: req.ModelTurns()}
}

func (h history) navigated(u string) bool {
	for _, c := range h.calls {
		if c.Name == "navigate" && c.Args["url"] == u {
			return true
		}
	}
	return false
}

func (h history) called(name string) bool {
	for _, c := range h.calls {
		if c.Name == name {
			return true
		}
	}
	return false
}

func isClickAt(c *genai.FunctionCall, x, y int) bool {
	if c.Name != "click_at" {
		return false
	}
	cx, ok1 := c.Args["x"].(float64)
	cy, ok2 := c.Args["y"].(float64)
	return ok1 && ok2 && int(cx) == x && int(cy) == y
}

// typed counts the past type_text_at calls that typed text.
func (h history) typed(text string) int {
	n := 0
	for _, c := range h.calls {
		if c.Name == "type_text_at" && c.Args["text"] == text {
			n++
		}
	}
	return n
}

// clicks counts the past clicks at (x, y).
func (h history) clicks(x, y int) int {
	n := 0
	for _, c := range h.calls {
		if isClickAt(c, x, y) {
			n++
		}
	}
	return n
}

// maxCartWaits is how many times in a row the planner waits for the cart
// to show a unit it clicked for, as a model watching the page's "Adding…"
// would, before it gives up: the add's request may take seconds on a
// starved machine.
const maxCartWaits = 5

// waitsInARow counts the latest model turns that waited, back to the
// last one that did not.
func (h history) waitsInARow() int {
	n := 0
	for i := len(h.turns) - 1; i >= 0; i-- {
		waited := false
		for _, part := range h.turns[i].Parts {
			if part != nil && part.FunctionCall != nil && part.FunctionCall.Name == "wait" {
				waited = true
			}
		}
		if !waited {
			break
		}
		n++
	}
	return n
}

// lastResponse returns the latest function response to the named function.
func (h history) lastResponse(name string) (map[string]any, bool) {
	rs := h.req.AllFunctionResponses()
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Name == name {
			return rs[i].Response, true
		}
	}
	return nil, false
}

// refusedAdd reads the browser's notice of an add to the cart it refused
// (the item's cart limit), the latest one: whether there was one, and how
// many units it says the item's tabs had already added ("…and its tabs
// have already added 1; adding 1 more would…"), -1 when it does not say.
func (h history) refusedAdd() (bool, int) {
	refused, already := false, -1
	note := func(s string) {
		if !strings.Contains(s, "The add to the cart was refused") {
			return
		}
		refused, already = true, -1
		if m := alreadyAddedRE.FindStringSubmatch(s); m != nil {
			already, _ = strconv.Atoi(m[1])
		}
	}
	for _, r := range h.req.AllFunctionResponses() {
		switch ns := r.Response["notices"].(type) {
		case []any:
			for _, n := range ns {
				s, _ := n.(string)
				note(s)
			}
		case []string:
			for _, s := range ns {
				note(s)
			}
		}
	}
	return refused, already
}

var alreadyAddedRE = regexp.MustCompile(`its tabs have already added (\d+)`)

// navigations counts the past navigations to u.
func (h history) navigations(u string) int {
	n := 0
	for _, c := range h.calls {
		if c.Name == "navigate" && c.Args["url"] == u {
			n++
		}
	}
	return n
}

// count counts the past calls of a function.
func (h history) count(name string) int {
	n := 0
	for _, c := range h.calls {
		if c.Name == name {
			n++
		}
	}
	return n
}

// texts are the planner's own words, one string per model turn.
func (h history) texts() []string {
	out := make([]string, len(h.turns))
	for i, t := range h.turns {
		for _, part := range t.Parts {
			if part != nil && part.Text != "" && !part.Thought {
				out[i] += part.Text
			}
		}
	}
	return out
}

// choice is the product the planner said it chose, and the turn it said
// so in; ok false before it chose.
func (h history) choice() (choice, bool) {
	texts := h.texts()
	for i := len(texts) - 1; i >= 0; i-- {
		m := choiceRE.FindStringSubmatch(texts[i])
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		ans, asked := h.lastResponse(ToolPresentOptions)
		c := choice{name: m[1], price: m[2], matches: n, url: m[4], onPage: m[5] == "on its page",
			answered: asked && ans["answer"] == "product"}
		for _, later := range texts[i:] {
			if strings.Contains(later, soldOutOnPage+c.url) {
				return choice{}, false // choose again
			}
			if strings.Contains(later, fromTileInstead+c.url) {
				c.onPage = false
			}
		}
		return c, true
	}
	return choice{}, false
}

// adding is what the turns since the choice said: the units the page
// showed in the cart before the first add, and how many adds were clicked.
func (h history) adding() (before, adds int) {
	texts := h.texts()
	from := 0
	for i := len(texts) - 1; i >= 0; i-- {
		if choiceRE.MatchString(texts[i]) {
			from = i
			break
		}
	}
	seen := false
	for _, t := range texts[from:] {
		if m := beforeRE.FindStringSubmatch(t); m != nil && !seen {
			before, _ = strconv.Atoi(m[1])
			seen = true
		}
		adds += len(addingRE.FindAllString(t, -1))
	}
	return before, adds
}

// wider is the wider search the planner went to when the item's matches
// were sold out, and why it did ("" before).
func (h history) wider() (u, why string) {
	for _, t := range h.texts() {
		if m := widerRE.FindStringSubmatch(t); m != nil {
			return m[2], m[1]
		}
	}
	return "", ""
}

// soldOutOnPages are the products whose page said they are sold out.
func (h history) soldOutOnPages() map[string]bool {
	out := map[string]bool{}
	for _, t := range h.texts() {
		if i := strings.Index(t, soldOutOnPage); i >= 0 {
			rest := t[i+len(soldOutOnPage):]
			out[strings.TrimSuffix(strings.Fields(rest)[0], ".")] = true
		}
	}
	return out
}

// offered is the options of the planner's question to the household.
func (h history) offered() []map[string]any {
	var out []map[string]any
	for _, c := range h.calls {
		if c.Name != ToolPresentOptions {
			continue
		}
		out = out[:0]
		list, _ := c.Args["options"].([]any)
		for _, o := range list {
			if m, ok := o.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}
