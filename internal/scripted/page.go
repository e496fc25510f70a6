package scripted

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

// The planner sees what a model is sent: the screenshot, the URL, and —
// because it cannot read pixels — the page's accessibility tree the agent
// sends with each screenshot (agent.Config.DescribePage, browser.Tab's
// DescribePage). This file reads a store page out of that text: product
// tiles, a product page, the cart counter, the cookie banner and the
// postal-code dialog, by their roles and visible words (English and
// French), never by the store's internals.

// element is one line of the page tree.
type element struct {
	role, name string
	disabled   bool
	url        string
	box        [4]int // x0, y0, x1, y1 in 0–999 of the screen
	hasBox     bool
	children   []*element
}

// center is where a click on the element lands.
func (e *element) center() (int, int) {
	return (e.box[0] + e.box[2]) / 2, (e.box[1] + e.box[3]) / 2
}

// onScreen: its centre is inside the screenshot.
func (e *element) onScreen() bool {
	x, y := e.center()
	return e.hasBox && x >= 0 && x < 1000 && y >= 0 && y < 1000
}

// walk visits e's descendants in page order (e itself first).
func (e *element) walk(fn func(*element) bool) bool {
	if !fn(e) {
		return false
	}
	for _, c := range e.children {
		if !c.walk(fn) {
			return false
		}
	}
	return true
}

// all is every descendant (e included) the predicate holds for.
func (e *element) all(pred func(*element) bool) []*element {
	var out []*element
	e.walk(func(x *element) bool {
		if pred(x) {
			out = append(out, x)
		}
		return true
	})
	return out
}

// first is the first descendant the predicate holds for, nil if none.
func (e *element) first(pred func(*element) bool) *element {
	var out *element
	e.walk(func(x *element) bool {
		if pred(x) {
			out = x
			return false
		}
		return true
	})
	return out
}

func role(r string) func(*element) bool { return func(e *element) bool { return e.role == r } }

var lineRE = regexp.MustCompile(`^( *)- (\S+)(?: ("(?:[^"\\]|\\.)*"))?(.*)$`)
var boxRE = regexp.MustCompile(`@(-?\d+),(-?\d+),(-?\d+),(-?\d+)`)

// parseTree reads the page tree's text into a root element.
func parseTree(text string) *element {
	root := &element{role: "page"}
	stack := []*element{root} // stack[d] is the parent of depth d
	for _, line := range strings.Split(text, "\n") {
		m := lineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		depth := len(m[1]) / 2
		e := &element{role: m[2]}
		if m[3] != "" {
			e.name, _ = strconv.Unquote(m[3])
		}
		rest := m[4]
		e.disabled = strings.Contains(rest, "[disabled]")
		for _, f := range strings.Fields(rest) {
			if u, ok := strings.CutPrefix(f, "url="); ok {
				e.url = u
			}
		}
		if b := boxRE.FindStringSubmatch(rest); b != nil {
			for i := range 4 {
				e.box[i], _ = strconv.Atoi(b[i+1])
			}
			e.hasBox = true
		}
		if depth+1 > len(stack) {
			depth = len(stack) - 1
		}
		stack = stack[:depth+1]
		parent := stack[depth]
		parent.children = append(parent.children, e)
		stack = append(stack, e)
	}
	return root
}

// view is the page as the latest request shows it.
type view struct {
	url  string
	root *element // nil: the request carries no page text
}

// readView finds the latest page tree of the request and the address it
// came with: in the last function response that carries one (an action's,
// whose "url" is where the tab is — a tool's answer may name another
// address), else in the first turn's text.
func readView(req *gemini.Request) view {
	var v view
	rs := req.AllFunctionResponses()
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if t, ok := r.Response[agent.PageTreeKey].(string); ok && t != "" {
			v.root = parseTree(t)
			v.url, _ = r.Response["url"].(string)
			return v
		}
	}
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if u, ok := strings.CutPrefix(p.Text, "Current URL: "); ok {
				v.url = strings.TrimSpace(u)
			}
			if t, ok := strings.CutPrefix(p.Text, agent.PageTreeIntro); ok {
				v.root = parseTree(t)
			}
		}
		break // only the first turn carries it as text
	}
	if v.root == nil {
		v.url = req.URL() // no page text at all: the last address any action gave
	}
	return v
}

// Words of the store's pages, in English and French.
var (
	priceRE     = regexp.MustCompile(`^(?:\$\d+\.\d\d|\d+,\d\d\s?\$)$`)
	inCartRE    = regexp.MustCompile(`(?i)^(?:in cart|dans le panier)\s*:\s*(\d{1,4})$`)
	sponsoredRE = regexp.MustCompile(`(?i)^(?:sponsored|commandité)$`)
	stockRE     = regexp.MustCompile(`(?i)^(?:in stock|out of stock|en stock|en rupture de stock|rupture de stock)$`)
	acceptRE    = regexp.MustCompile(`(?i)^accept`)
	cookieRE    = regexp.MustCompile(`(?i)cookie|témoins`)
	cancelRE    = regexp.MustCompile(`(?i)^(?:cancel|annuler|close|fermer)$`)
	nextPageRE  = regexp.MustCompile(`(?i)^(?:next page|page suivante)`)
	relatedRE   = regexp.MustCompile(`(?i)^(?:related searches|recherches associées)$`)
)

// product is a product as a tile or its page shows it.
type product struct {
	name, brand, size string
	price             string
	url               string
	sponsored         bool
	add               *element // the add button; nil when there is none
	inStock           bool     // the add button can be pressed
	inCart            int      // the units the page says are in the cart
}

// display is how the planner names a product: "Natrel 2% Partly Skimmed
// Milk, 2 L".
func (p product) display() string {
	s := strings.TrimSpace(p.brand + " " + p.name)
	if p.size != "" {
		s += ", " + p.size
	}
	return s
}

// id is the store's product id at the end of its address (/p/<id>).
func (p product) id() string { return productID(p.url) }

func productID(u string) string {
	i := strings.LastIndex(u, "/p/")
	if i < 0 {
		return ""
	}
	id := u[i+3:]
	if j := strings.IndexAny(id, "?#/"); j >= 0 {
		id = id[:j]
	}
	return id
}

// readTexts fills a product's fields from its texts in page order: the
// price, the cart and stock lines, the sponsored badge, and — the plain
// lines left, in order — the brand and the size.
func (p *product) readTexts(texts []string) {
	var plain []string
	for _, t := range texts {
		switch {
		case priceRE.MatchString(t):
			p.price = t
		case inCartRE.MatchString(t):
			p.inCart, _ = strconv.Atoi(inCartRE.FindStringSubmatch(t)[1])
		case sponsoredRE.MatchString(t):
			p.sponsored = true
		case stockRE.MatchString(t):
		default:
			plain = append(plain, t)
		}
	}
	if len(plain) > 0 {
		p.brand = plain[0]
	}
	if len(plain) > 1 {
		p.size = plain[1]
	}
}

func texts(e *element) []string {
	var out []string
	for _, t := range e.all(role("text")) {
		out = append(out, t.name)
	}
	return out
}

// addButton is the product's button: enabled when it can be added.
func addButton(e *element) *element {
	return e.first(func(x *element) bool { return x.role == "button" && !cancelRE.MatchString(x.name) })
}

// tiles are the product tiles of a listing, in page order.
func (v view) tiles() []product {
	if v.root == nil {
		return nil
	}
	var out []product
	for _, a := range v.root.all(role("article")) {
		link := a.first(func(x *element) bool { return x.role == "link" && productID(x.url) != "" })
		if link == nil {
			continue
		}
		p := product{name: link.name, url: link.url}
		p.readTexts(texts(a))
		p.add = addButton(a)
		p.inStock = p.add != nil && !p.add.disabled
		out = append(out, p)
	}
	return out
}

// productPage is the product the page shows when it is a product's page.
func (v view) productPage() (product, bool) {
	if v.root == nil || productID(v.url) == "" {
		return product{}, false
	}
	main := v.root.first(role("main"))
	if main == nil {
		return product{}, false
	}
	h := main.first(func(x *element) bool { return x.role == "heading" })
	if h == nil {
		return product{}, false
	}
	p := product{name: h.name, url: v.url}
	p.readTexts(texts(main))
	if p.price == "" {
		return product{}, false // a page with a heading but no price is not a product's (Page not found)
	}
	p.add = addButton(main)
	p.inStock = p.add != nil && !p.add.disabled
	return p, true
}

// cookieBanner is the banner's accept button, nil when no banner shows.
func (v view) cookieBanner() *element {
	if v.root == nil {
		return nil
	}
	banner := v.root.first(func(x *element) bool {
		return (x.role == "region" || x.role == "dialog") && cookieRE.MatchString(x.name)
	})
	if banner == nil {
		return nil
	}
	return banner.first(func(x *element) bool { return x.role == "button" && acceptRE.MatchString(x.name) })
}

// postalDialog is the dialog asking for a postal code: its field and its
// submit button; ok false when it is not shown.
func (v view) postalDialog() (field, submit *element, ok bool) {
	if v.root == nil {
		return nil, nil, false
	}
	for _, d := range v.root.all(role("dialog")) {
		field = d.first(role("textbox"))
		submit = d.first(func(x *element) bool { return x.role == "button" && !cancelRE.MatchString(x.name) })
		if field != nil && submit != nil {
			return field, submit, true
		}
	}
	return nil, nil, false
}

// link is the address of the first link whose name matches re ("" if none).
func (v view) link(re *regexp.Regexp) string {
	if v.root == nil {
		return ""
	}
	if l := v.root.first(func(x *element) bool { return x.role == "link" && re.MatchString(x.name) }); l != nil {
		return l.url
	}
	return ""
}

// related is the address of the page's first related search ("" if none).
func (v view) related() string {
	if v.root == nil {
		return ""
	}
	nav := v.root.first(func(x *element) bool { return x.role == "navigation" && relatedRE.MatchString(x.name) })
	if nav == nil {
		return ""
	}
	if l := nav.first(role("link")); l != nil {
		return l.url
	}
	return ""
}
