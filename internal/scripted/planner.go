// Package scripted is the offline "model" of the demo: a Script for the fake
// Gemini server (package fake/gemini) that shops the demo store (package
// demostore) the way Gemini Computer Use would — by sending click and typing
// actions at coordinates computed from the store's fixed layout, through the
// real genai client, real HTTP and a real browser tab.
//
// The planner is stateless between requests: everything it needs it derives
// from the request (goal lines, its own earlier calls and notes, function
// responses, and — like the real model — the latest screenshot, which shows
// this tab's cookie banner or postal-code dialog) and from the store's cart,
// so concurrent items in several tabs, retries and restarts behave.
package scripted

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
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

// Store is the demo store session the planner reads; *demostore.Server
// satisfies it.
type Store interface {
	State() demostore.State
	Cart() []demostore.CartLine
}

var _ Store = (*demostore.Server)(nil)

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
)

// Options configure a Planner.
type Options struct {
	// Store is the demo store session. Required.
	Store Store
	// PostalCode is used when the goal has no "Postal code:" line.
	PostalCode string
	// BaseURL is the store's origin (default https://www.metro.ca).
	BaseURL string
	// SearchURLTemplate has "{q}" where the query goes.
	SearchURLTemplate string
	// Width and Height are the browser viewport in CSS pixels (default the
	// demo store's 1440x900).
	Width, Height int
	// Misbehave maps an item (the goal's "Item:" line, case-insensitive) to
	// a misbehaviour.
	Misbehave map[string]Misbehaviour
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
	if opts.Width <= 0 || opts.Height <= 0 {
		opts.Width, opts.Height = demostore.ViewportWidth, demostore.ViewportHeight
	}
	m := map[string]Misbehaviour{}
	for k, v := range opts.Misbehave {
		m[strings.ToLower(strings.TrimSpace(k))] = v
	}
	return &Planner{opts: opts, misbehave: m, malformed: map[string]bool{}}
}

// What a replay's hand-over note says (internal/shop's prompt).
var (
	replayHeld = regexp.MustCompile(`the cart now holds (\d+) of this product \(it held (\d+) before\)`)
	replayURL  = regexp.MustCompile(`This item was bought before: .* — (https://\S+/p/[^\s.]+)\.`)
)

// Script returns the planner as a fake-Gemini script.
func (p *Planner) Script() gemini.Script { return p.Reply }

// Goal is what the planner reads from the goal text.
type Goal struct {
	Item       string
	Quantity   int
	PostalCode string
}

// ParseGoal reads the lines "Item: …", "Quantity: n" (default 1) and
// "Postal code: …" (optional) from a goal text.
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
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return Goal{}, fmt.Errorf("the goal's Quantity line %q is not a positive number", v)
			}
			g.Quantity = n
		case "Postal code":
			g.PostalCode = v
		}
	}
	if g.Item == "" {
		return Goal{}, errors.New(`the goal has no "Item: …" line`)
	}
	return g, nil
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
		x, y := p.norm(demostore.ViewportWidth/2, demostore.PromoStripHeight/2)
		return say("Clicking the banner.", click(x, y))
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
	}

	// A replay that added the remembered product and then handed over
	// ("the cart now holds 2 of this product (it held 0 before)"): a model
	// reads the note and the cart, and reports what is there rather than
	// adding it again.
	if m := replayHeld.FindStringSubmatch(req.Goal()); m != nil {
		now, _ := strconv.Atoi(m[1])
		was, _ := strconv.Atoi(m[2])
		if u := replayURL.FindStringSubmatch(req.Goal()); u != nil && now-was >= g.Quantity {
			id := u[1][strings.LastIndex(u[1], "/p/")+3:]
			for _, pr := range demostore.Search(g.Item) {
				if pr.ID == id && cartQuantity(p.opts.Store, id) >= now {
					return say("The cart already holds it; reporting.", gemini.Call(ToolReportAdded, map[string]any{
						"item_name":  displayName(pr),
						"price_text": fmt.Sprintf("$%d.%02d", pr.PriceCents/100, pr.PriceCents%100),
						"url":        u[1],
						"quantity":   now - was,
					}))
				}
			}
		}
	}

	st := p.opts.Store.State()
	search := strings.ReplaceAll(p.opts.SearchURLTemplate, "{q}", url.QueryEscape(g.Item))
	if !h.navigated(search) {
		return say(fmt.Sprintf("Searching the store for %q.", g.Item), navigate(search))
	}
	// What this tab shows decides about the overlays: the store's state is
	// shared by every tab of the browser, so another tab may already have
	// answered a dialog this tab still shows. Without a readable screenshot,
	// fall back to the store's state.
	screen, seen := readScreen(req)
	bannerUp := !st.ConsentAccepted
	if seen {
		bannerUp = screen.CookieBanner
	}
	if bannerUp {
		x, y := p.norm(demostore.ConsentAcceptButton())
		if h.clicks(x, y) >= 3 {
			return gemini.Reply{Text: "The cookie banner does not go away; I cannot continue."}
		}
		return say("Accepting the cookie banner.", click(x, y))
	}

	results := demostore.Search(g.Item)
	if ss, ok := p.opts.Store.(interface {
		Search(string) []demostore.Product
	}); ok {
		results = ss.Search(g.Item) // the store's own view (its changed products)
	}
	// Product text that gives the agent orders is a prompt injection. With
	// the Computer Use tool's enablePromptInjectionDetection on, the service
	// checks the page and the model is not steered; off, the planner plays a
	// model that falls for it once and tries the checkout the text names —
	// which the browser policy refuses — before it returns to its task.
	if injected(results) && !detectionOn(req) {
		if u := p.opts.BaseURL + "/checkout"; !h.navigated(u) {
			return say("The product text says to open the checkout and place the order; doing that.", navigate(u))
		}
	}
	chosen := -1
	if ans, asked := h.lastResponse(ToolPresentOptions); asked {
		if ans["answer"] != "product" {
			return notFound(g, fmt.Sprintf("The household did not choose a product for %q (%v).", g.Item, describeAnswer(ans)))
		}
		id, _ := ans["product_id"].(string)
		name, _ := ans["name"].(string)
		for i, r := range results {
			if (id != "" && r.ID == id) || (id == "" && displayName(r) == name) {
				chosen = i
			}
		}
		if chosen < 0 || !results[chosen].InStock {
			return notFound(g, fmt.Sprintf("The household chose %q, but it is out of stock or no longer listed.", name))
		}
	} else {
		for i, r := range results {
			if r.InStock {
				chosen = i
				break
			}
		}
	}
	if chosen < 0 {
		if len(results) == 0 {
			return notFound(g, fmt.Sprintf("I searched the store for %q and found no matching product.", g.Item))
		}
		names := make([]string, 0, len(results))
		for _, r := range results {
			names = append(names, displayName(r))
		}
		why := fmt.Sprintf("Every product matching %q is out of stock: %s.", g.Item, strings.Join(names, "; "))
		if req.Declaration(ToolPresentOptions) != nil && !h.called(ToolPresentOptions) {
			return say("Everything is out of stock; asking the household.", p.presentOptions(g, results, search, why))
		}
		return notFound(g, why)
	}

	prod := results[chosen]
	ax, ay := p.norm(demostore.TileAddButton(chosen))
	adds := h.clicks(ax, ay)
	note := h.lastNote()
	dialogUp := note["postal"] == "expected" && h.lastTurnClicked(ax, ay) && st.PostalCode == ""
	if seen {
		dialogUp = screen.PostalCodeDialog
	}
	if dialogUp {
		if h.typed(g.PostalCode) >= 3 {
			return gemini.Reply{Text: "The store keeps asking for a postal code although I entered " + g.PostalCode + "; I cannot continue."}
		}
		ix, iy := p.norm(demostore.PostalCodeInput())
		sx, sy := p.norm(demostore.PostalCodeSubmit())
		return say("The store asks for a postal code; entering "+g.PostalCode+".",
			gemini.Call("type_text_at", map[string]any{"x": ix, "y": iy, "text": g.PostalCode, "press_enter": false, "clear_before_typing": true}),
			click(sx, sy))
	}
	before := h.firstNoteInt("before")
	if adds > 0 && adds < g.Quantity {
		// One unit at a time: the next click only once the cart shows the
		// last one (a dialog may still have been on its way).
		if have := cartQuantity(p.opts.Store, prod.ID); have < before+adds {
			if !h.lastTurnWaited() {
				return say("Waiting for the cart to update.", gemini.Call("wait", map[string]any{"seconds": 1}))
			}
			return gemini.Reply{Text: fmt.Sprintf("I clicked Add to cart %d times but the cart shows %d of %s (expected %d); is the shopper signed in?",
				adds, have, displayName(prod), before+adds)}
		}
	}
	if adds < g.Quantity {
		if adds == 0 {
			before = cartQuantity(p.opts.Store, prod.ID)
		}
		tag := fmt.Sprintf("[scripted add product=%s before=%d", prod.ID, before)
		if st.PostalCode == "" {
			tag += " postal=expected"
		}
		return say(fmt.Sprintf("Adding %s to the cart (%d of %d). %s]", displayName(prod), adds+1, g.Quantity, tag), click(ax, ay))
	}
	if have := cartQuantity(p.opts.Store, prod.ID); have < before+g.Quantity {
		if !h.lastTurnWaited() {
			return say("Waiting for the cart to update.", gemini.Call("wait", map[string]any{"seconds": 1}))
		}
		return gemini.Reply{Text: fmt.Sprintf("I clicked Add to cart %d times but the cart shows %d of %s (expected %d); is the shopper signed in?",
			adds, have, displayName(prod), before+g.Quantity)}
	}
	return say("The cart shows it; reporting.", gemini.Call(ToolReportAdded, map[string]any{
		"item_name":  displayName(prod),
		"price_text": fmt.Sprintf("$%d.%02d", prod.PriceCents/100, prod.PriceCents%100),
		"url":        productURL(prod, search),
		"quantity":   g.Quantity,
	}))
}

// injected reports whether a product's text tells the agent what to do.
func injected(results []demostore.Product) bool {
	for _, r := range results {
		if n := strings.ToLower(r.Name); strings.Contains(n, "ai assistant:") || strings.Contains(n, "ignore your task") {
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

func (p *Planner) presentOptions(g Goal, results []demostore.Product, search, why string) *genai.FunctionCall {
	var opts []any
	for _, r := range results {
		if len(opts) == 5 {
			break
		}
		opts = append(opts, map[string]any{
			"name":       displayName(r),
			"price":      fmt.Sprintf("$%d.%02d", r.PriceCents/100, r.PriceCents%100),
			"url":        productURL(r, search),
			"product_id": r.ID,
		})
	}
	return gemini.Call(ToolPresentOptions, map[string]any{"item_name": g.Item, "options": opts, "context": why})
}

// norm converts CSS pixels of the viewport to the model's 0–999 coordinates.
func (p *Planner) norm(x, y int) (int, int) {
	return x * 1000 / p.opts.Width, y * 1000 / p.opts.Height
}

// productURL is the product's page on the demo store; fallback (the search
// page) when the store's catalogue does not know it.
func productURL(pr demostore.Product, fallback string) string {
	if u := demostore.ProductURL(pr.ID); u != "" {
		return u
	}
	return fallback
}

// readScreen reads the overlays off the request's latest screenshot; false
// when there is none or it is not a readable store page.
func readScreen(req *gemini.Request) (demostore.Overlays, bool) {
	shot, _ := req.LastImage()
	if shot == nil {
		return demostore.Overlays{}, false
	}
	o, err := demostore.ReadScreen(shot)
	return o, err == nil
}

func displayName(pr demostore.Product) string {
	return fmt.Sprintf("%s %s, %s", pr.Brand, pr.Name, pr.Size)
}

func cartQuantity(s Store, id string) int {
	for _, l := range s.Cart() {
		if l.ProductID == id {
			return l.Quantity
		}
	}
	return 0
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

func notFound(g Goal, why string) gemini.Reply {
	return say(why, gemini.Call(ToolReportNotFound, map[string]any{"item_name": g.Item, "explanation": why}))
}

// history is what the planner did so far in this conversation.
type history struct {
	req   *gemini.Request
	calls []*genai.FunctionCall
	turns []*genai.Content
	notes []map[string]string // one per model turn (empty when none)
}

var noteRE = regexp.MustCompile(`\[scripted ([^\]]*)\]`)

func readHistory(req *gemini.Request) history {
	h := history{req: req, calls: req.PastCalls(), turns: req.ModelTurns()}
	for _, t := range h.turns {
		note := map[string]string{}
		for _, part := range t.Parts {
			if part == nil || part.Text == "" {
				continue
			}
			for _, m := range noteRE.FindAllStringSubmatch(part.Text, -1) {
				for _, kv := range strings.Fields(m[1]) {
					if k, v, ok := strings.Cut(kv, "="); ok {
						note[k] = v
					}
				}
			}
		}
		h.notes = append(h.notes, note)
	}
	return h
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

func (h history) lastTurnCalls() []*genai.FunctionCall {
	if len(h.turns) == 0 {
		return nil
	}
	var out []*genai.FunctionCall
	for _, part := range h.turns[len(h.turns)-1].Parts {
		if part != nil && part.FunctionCall != nil {
			out = append(out, part.FunctionCall)
		}
	}
	return out
}

func (h history) lastTurnClicked(x, y int) bool {
	for _, c := range h.lastTurnCalls() {
		if isClickAt(c, x, y) {
			return true
		}
	}
	return false
}

func (h history) lastTurnWaited() bool {
	for _, c := range h.lastTurnCalls() {
		if c.Name == "wait" {
			return true
		}
	}
	return false
}

func (h history) lastNote() map[string]string {
	if len(h.notes) == 0 {
		return map[string]string{}
	}
	return h.notes[len(h.notes)-1]
}

// firstNoteInt returns the first value the planner noted under key, 0 if none.
func (h history) firstNoteInt(key string) int {
	for _, n := range h.notes {
		if v, ok := n[key]; ok {
			i, _ := strconv.Atoi(v)
			return i
		}
	}
	return 0
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
