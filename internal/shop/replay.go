package shop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// ReplayMode says how a run uses a product the memory holds for an item.
type ReplayMode string

const (
	// ReplayDirect: code opens the remembered product, checks it and adds
	// it without a model; any doubt hands the item to the agent.
	ReplayDirect ReplayMode = "direct"
	// ReplayAgent: the agent starts on the remembered product's page with
	// a short goal instead of the search.
	ReplayAgent ReplayMode = "agent"
	// ReplayOff: the agent searches as if nothing were remembered.
	ReplayOff ReplayMode = "off"
)

// How the summary and the journal name what happened to an item
// (report.ItemResult.Replay).
const (
	ReplayedDirect = "replayed"
	ReplayedAgent  = "remembered product, by the agent"
	replayFellBack = "replay fell back: "
	// ReplayPending is an item being shopped that has a remembered product
	// to replay (its item_started event; the panel says so on its card).
	ReplayPending = "remembered"
)

// Remembered is the product the memory holds for an item.
type Remembered struct {
	Name, URL, ProductID, Price, Size string
	// HouseholdQuantity is the quantity the household set for it in the
	// review, while the list asks for ListQuantity (0: none).
	HouseholdQuantity, ListQuantity int
}

// quantityFor is how many the item buys when the list asks for list: the
// household's quantity while the list still asks for what it asked for
// when the household set it, else the list's (the list wins once edited).
func (r Remembered) quantityFor(list int) int {
	if r.HouseholdQuantity > 0 && r.ListQuantity == list {
		return r.HouseholdQuantity
	}
	return list
}

// quantity is how many units the item buys: the list's, or the household's
// correction from a review (Remembered.quantityFor).
func (it *itemRun) quantity() int {
	if it.qty > 0 {
		return it.qty
	}
	return max(it.p.item.Quantity, 1)
}

// ProductRecall finds the product remembered for an item (the product
// memory, internal/products).
type ProductRecall interface {
	Recall(itemName string) (Remembered, bool)
}

// replayTab is what a direct replay needs of a tab beyond the agent's
// actions: reading and clicking known elements, and fetching the cart.
type replayTab interface {
	Tab
	ReadElements(ctx context.Context, selectors map[string]string, attr string) (map[string]browser.Element, error)
	Load(ctx context.Context, url string) error
	ClickElement(ctx context.Context, selector string) error
	FillElement(ctx context.Context, selector, text string) error
	FetchJSON(ctx context.Context, url string) ([]byte, error)
	// ReplayOnly: the tab loads only what a replay needs (on) or what
	// the agent needs (off).
	ReplayOnly(ctx context.Context, on bool) error
	// PressElement is one trusted click at an element's box.
	PressElement(ctx context.Context, selector string) error
	// WaitChange waits in the page until selector's text is not from or
	// appears is visible, at most d.
	WaitChange(ctx context.Context, selector, from, appears string, d time.Duration) (bool, error)
}

// ReplayNote goes into the agent's goal when a remembered product was
// tried first or is the place to start.
type ReplayNote struct {
	Name, URL, Price string
	// Found says why the replay handed over ("it is out of stock").
	Found string
	// Cart says what the cart holds of the product after a replay's add.
	Cart string
	// OnPage: the tab the agent gets is on the product's page.
	OnPage bool
}

// replayPoll is how often a replay looks at the cart while it waits for an
// add to land (bounded by the action timeout).
const replayPoll = 150 * time.Millisecond

// replay tries the remembered product before any agent runs. It returns
// true when the item is finished (added without a model). Otherwise the
// item goes to the agent, in the tab replay opened when it left one
// (it.handTab), with what was found in it.note.
func (it *itemRun) replay(ctx context.Context) bool {
	r := it.r
	mode := r.cfg.Replay
	if mode == "" || mode == ReplayOff || r.cfg.Recall == nil || it.policy.Ask {
		// An "always ask" item is asked about, never replayed.
		return false
	}
	if _, wrong := r.cfg.WrongProducts[it.p.item.Name]; wrong {
		return false // the household rejected what the memory held
	}
	rem, ok := r.cfg.Recall.Recall(it.p.item.Name)
	if !ok || rem.URL == "" {
		return false
	}
	if w, wrong := it.rejectedAs(rem.ProductID, rem.URL, rem.Name); wrong {
		r.log.Warn("replay: the remembered product is marked wrong for the item; the agent shops it", "item", it.p.item.Name, "product", w.Name)
		return false
	}
	tab := r.pooledReplayTab(ctx, it.p.item.Name)
	if tab == nil {
		var err error
		tab, err = r.host.NewTab(ctx)
		r.noteNewTab(err)
		if err != nil {
			r.log.Debug("replay: no tab; the agent shops the item", "item", it.p.item.Name, "err", err)
			return false
		}
		if err := tab.SetItem(ctx, it.p.item.Name); err != nil {
			r.log.Debug("setting the banner failed", "item", it.p.item.Name, "err", err)
		}
	}
	it.setTab(tab) // the item's cart changes from here on (a pooled tab holds earlier items' too)
	note := &ReplayNote{Name: rem.Name, URL: rem.URL, Price: rem.Price}
	rt, canRead := tab.(replayTab)
	if mode == ReplayDirect && (!canRead || r.cfg.Store.Product.Root == "") {
		mode = ReplayAgent
	}
	if mode == ReplayAgent {
		note.OnPage = tab.Navigate(ctx, rem.URL) == nil
		it.handTab, it.note, it.replayInfo = tab, note, ReplayedAgent
		r.log.Info("replay: the agent starts on the remembered product", "item", it.p.item.Name, "product", rem.Name)
		return false
	}
	start := r.now()
	// The replay tab loads only the page's document and the store's own
	// scripts, styles and calls (browser.Tab.ReplayOnly).
	lean := rt.ReplayOnly(ctx, true) == nil
	added, why, cart := it.replayDirect(ctx, rt, rem)
	if why == "" {
		it.keepTabCart(tab) // the item's own requests, before the tab serves the next replay
		r.keepReplayTab(tab)
		it.replayInfo = ReplayedDirect
		e := ending{kind: endAdded, added: added, tool: "replay"}
		it.onReport(ctx, e)
		it.finish(ctx, it.resultFrom(e))
		r.log.Info("replay: added the remembered product without a model", "item", it.p.item.Name, "product", added.ProductName, "took", r.now().Sub(start).Round(time.Millisecond))
		return true
	}
	if ctx.Err() != nil {
		_ = tab.Close()
		return false
	}
	note.Found, note.Cart, note.OnPage = why, cart, true
	if lean {
		// The agent sees the page as a person would: loaded again with
		// the agent's rules (frames, images, fonts).
		note.OnPage = rt.ReplayOnly(ctx, false) == nil && tab.Navigate(ctx, rem.URL) == nil
	}
	it.handTab, it.note, it.replayInfo = tab, note, replayFellBack+why
	r.log.Info("replay fell back to the agent", "item", it.p.item.Name, "why", why)
	return false
}

// pooledReplayTab is a tab a finished replay left (already loading only
// what a replay needs), set to the item; nil when none is left or the
// one left no longer answers (then it is closed). Reusing a tab spares
// opening and closing one (a window and a renderer) per replayed item.
func (r *run) pooledReplayTab(ctx context.Context, item string) Tab {
	select {
	case tab := <-r.replayPool:
		if err := tab.SetItem(ctx, item); err != nil {
			_ = tab.Close()
			return nil
		}
		return tab
	default:
		return nil
	}
}

// keepReplayTab leaves a replay's tab for the next replay (at most one
// per replay slot); the others are closed.
func (r *run) keepReplayTab(tab Tab) {
	select {
	case r.replayPool <- tab:
	default:
		_ = tab.Close()
	}
}

// closeReplayTabs closes the tabs replays left, once no item runs.
func (r *run) closeReplayTabs() {
	for {
		select {
		case tab := <-r.replayPool:
			_ = tab.Close()
		default:
			return
		}
	}
}

// replayDirect opens, checks and adds the remembered product. It returns
// the add, or why it handed over and what the cart then holds of it.
func (it *itemRun) replayDirect(ctx context.Context, t replayTab, rem Remembered) (shoppinglist.Added, string, string) {
	r := it.r
	pp := r.cfg.Store.Product
	qty := it.quantity()
	t0 := time.Now()
	if err := t.Load(ctx, rem.URL); err != nil {
		return shoppinglist.Added{}, "the remembered product page could not be opened (" + firstLine(err) + ")", ""
	}
	if !samePage(t.URL(), rem.URL) {
		return shoppinglist.Added{}, "the remembered product page now leads to " + t.URL(), ""
	}
	r.log.Debug("replay: page loaded", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	els, err := t.ReadElements(ctx, productSelectors(pp), pp.ProductIDAttr)
	if err != nil {
		return shoppinglist.Added{}, "the product page could not be read (" + firstLine(err) + ")", ""
	}
	if !els["root"].Found {
		return shoppinglist.Added{}, "the remembered product page shows no product (it may be gone)", ""
	}
	if why := checkProduct(els, rem, pp.ProductIDAttr != "", r.cfg.ReplayMaxPriceChange); why != "" {
		return shoppinglist.Added{}, why, ""
	}
	id := els["root"].Attr
	if id == "" {
		id = rem.ProductID
	}
	// Read from the store's own page: the product's own count (read
	// above), or a request of the page's own (same origin, its session).
	var before cartState
	if pp.InCart != "" {
		before, err = inCartState(els["in"].Text, id)
	} else {
		before, err = it.cartState(ctx, t, id)
	}
	if err != nil {
		return shoppinglist.Added{}, "the cart could not be read before adding (" + firstLine(err) + ")", ""
	}
	price := money.Parse(els["price"].Text)
	r.log.Debug("replay: page read", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	// One click adds one unit; each must land before the next, so that a
	// click lost in a dialog is never repeated blindly.
	after := before
	for i := 1; i <= qty; i++ {
		if err := t.PressElement(ctx, pp.Add); err != nil {
			after, _ = it.cartState(ctx, t, id)
			return shoppinglist.Added{}, "clicking add to cart failed (" + firstLine(err) + ")", after.holds(id, before)
		}
		after, err = it.waitCart(ctx, t, before, after, id, i)
		if err != nil {
			return shoppinglist.Added{}, "the cart did not change as expected after adding (" + firstLine(err) + ")", after.holds(id, before)
		}
	}
	r.log.Debug("replay: added", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	if why := after.delta(before, id, qty); why != "" {
		return shoppinglist.Added{}, why, after.holds(id, before)
	}
	// The price the cart was filled at is the one the page shows now.
	now, err := t.ReadElements(ctx, map[string]string{"price": pp.Price}, "")
	if err != nil {
		return shoppinglist.Added{}, "the price could not be read again after adding (" + firstLine(err) + ")", after.holds(id, before)
	}
	if p := money.Parse(now["price"].Text); !p.Known || p.UnitCents != price.UnitCents || p.Per != price.Per {
		return shoppinglist.Added{}, fmt.Sprintf("the price changed from %q to %q while adding", els["price"].Text, now["price"].Text), after.holds(id, before)
	}
	return shoppinglist.Added{ProductName: rem.Name, Price: price, URL: rem.URL, Quantity: qty}, "", ""
}

// productSelectors are what a replay reads of a product page; the product's
// cart count only inside the product's own block.
func productSelectors(pp store.ProductPage) map[string]string {
	in := ""
	if pp.InCart != "" {
		in = pp.Root + " " + pp.InCart
	}
	return map[string]string{
		"root": pp.Root, "name": pp.Name, "brand": pp.Brand, "size": pp.Size, "price": pp.Price,
		"out": pp.OutOfStock, "add": pp.Add, "in": in,
	}
}

// checkProduct says why the product page read into els is not the
// remembered product as it was, or "": the id (required when the store
// names one), the name (both ways), the size, the stock, a readable price
// (and, when a price is remembered, a readable remembered one in the same
// unit that it did not move more than maxPercent from), and an add
// control — all before any click.
func checkProduct(els map[string]browser.Element, rem Remembered, hasID bool, maxPercent float64) string {
	got := els["root"].Attr
	switch {
	case hasID && got == "":
		return "the page names no product id"
	case hasID && rem.ProductID != "" && got != rem.ProductID:
		return fmt.Sprintf("the page shows another product (id %s, not %s)", got, rem.ProductID)
	}
	name := els["name"].Text
	whole := els["root"].Text
	if els["brand"].Found || els["size"].Found {
		whole = strings.Join([]string{name, els["brand"].Text, els["size"].Text}, " ")
	}
	if !sameName(name, whole, rem.Name) {
		return fmt.Sprintf("the product is now called %q, not %q", name, rem.Name)
	}
	if size := els["size"].Text; rem.Size != "" && !strings.EqualFold(strings.Join(strings.Fields(size), " "), strings.Join(strings.Fields(rem.Size), " ")) {
		return fmt.Sprintf("the size is now %q, not %q", size, rem.Size)
	}
	if els["out"].Found || els["add"].Disabled {
		return "the remembered product is out of stock"
	}
	if why := priceMoved(money.Parse(rem.Price), money.Parse(els["price"].Text), maxPercent); why != "" {
		return why
	}
	if !els["add"].Found {
		return "the add-to-cart control was not found on the product page"
	}
	return ""
}

// waitCart waits (bounded by replayAddWait) until the cart holds n more
// units than before, answering a postal-code dialog on the way. last is the
// cart as last read. With a count on the page (the product's own, else the
// header's), each wait is one in-page wait for that count to change or
// the dialog to appear; with neither, the cart endpoint is polled.
func (it *itemRun) waitCart(ctx context.Context, t replayTab, before, last cartState, id string, n int) (cartState, error) {
	r := it.r
	pp := r.cfg.Store.Product
	watch := pp.CartCount
	if pp.InCart != "" {
		watch = pp.Root + " " + pp.InCart
	}
	postal := ""
	if pp.PostalInput != "" && r.cfg.PostalCode != "" {
		postal = pp.PostalInput
	}
	deadline := r.now().Add(replayAddWait)
	shown := last.shown
	now := last
	for {
		if watch != "" {
			if _, err := t.WaitChange(ctx, watch, shown, postal, max(deadline.Sub(r.now()), time.Millisecond)); err != nil {
				return now, err
			}
		}
		var err error
		now, err = it.cartState(ctx, t, id)
		if err == nil && now.units(id)-before.units(id) >= n {
			return now, nil
		}
		if err == nil {
			shown = now.shown
		}
		if postal != "" {
			if els, err := t.ReadElements(ctx, map[string]string{"in": postal}, ""); err == nil && els["in"].Visible {
				// The first add of a session asks for the postal code; the
				// store adds the unit once it has it.
				postal = ""
				if err := t.FillElement(ctx, pp.PostalInput, r.cfg.PostalCode); err == nil {
					_ = t.PressElement(ctx, pp.PostalSubmit)
				}
			}
		}
		if r.now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("the cart holds %d, %d expected", now.units(id), before.units(id)+n)
			}
			return now, err
		}
		if watch == "" {
			select {
			case <-ctx.Done():
				return now, ctx.Err()
			case <-time.After(replayPoll):
			}
		}
	}
}

// replayAddWait bounds the wait for one add to land in the cart.
const replayAddWait = 20 * time.Second

// cartState is the cart as a replay sees it: units per product id when the
// store has a cart endpoint, else only the header's count.
type cartState struct {
	lines map[string]int // nil: only count is known
	count int
	shown string // the page's text the count was read from ("" for the endpoint)
}

// cartState reads the cart: the product page's own count of the product
// (Product.InCart), else the store's cart endpoint, else the header's
// count of all units. id is the product's id.
func (it *itemRun) cartState(ctx context.Context, t replayTab, id string) (cartState, error) {
	st := it.r.cfg.Store
	switch {
	case st.Product.InCart != "":
		els, err := t.ReadElements(ctx, map[string]string{"n": st.Product.Root + " " + st.Product.InCart}, "")
		if err != nil {
			return cartState{}, err
		}
		return inCartState(els["n"].Text, id)
	case st.CartJSONURL != "":
		body, err := t.FetchJSON(ctx, st.CartJSONURL)
		if err != nil {
			return cartState{}, err
		}
		var c struct {
			Lines []struct {
				ProductID string `json:"productId"`
				Quantity  int    `json:"quantity"`
			} `json:"lines"`
		}
		if err := json.Unmarshal(body, &c); err != nil {
			return cartState{}, fmt.Errorf("the cart answer is not JSON: %w", err)
		}
		cs := cartState{lines: map[string]int{}}
		for _, l := range c.Lines {
			cs.lines[l.ProductID] += l.Quantity
			cs.count += l.Quantity
		}
		return cs, nil
	case st.Product.CartCount != "":
		els, err := t.ReadElements(ctx, map[string]string{"n": st.Product.CartCount}, "")
		if err != nil {
			return cartState{}, err
		}
		n, err := strconv.Atoi(strings.TrimSpace(els["n"].Text))
		if !els["n"].Found || err != nil || n < 0 || n > maxCartCount {
			return cartState{}, fmt.Errorf("the cart count %q cannot be read", els["n"].Text)
		}
		return cartState{count: n, shown: els["n"].Text}, nil
	}
	return cartState{}, errors.New("the store profile names no way to read the cart")
}

// inCartState reads the product's own cart count: the one whole number of
// its text (an empty text is none), at most maxUnits. A text with another
// number ("Only 3 left – in cart: 1") or an absurd one is not read.
func inCartState(text, id string) (cartState, error) {
	n := 0
	if strings.TrimSpace(text) != "" {
		var ok bool
		if n, ok = countIn(text, maxUnits); !ok {
			return cartState{}, fmt.Errorf("the product's cart status reads %q", text)
		}
	}
	return cartState{lines: map[string]int{id: n}, count: n, shown: text}, nil
}

// countIn reads the one whole number of a text, at most max; a text with
// no number, another number or an absurd one is not read.
func countIn(text string, max int) (int, bool) {
	nums := wholeNumber.FindAllString(text, -1)
	if len(nums) != 1 || len(nums[0]) > len(strconv.Itoa(max)) {
		return 0, false
	}
	n, err := strconv.Atoi(nums[0])
	if err != nil || n > max {
		return 0, false
	}
	return n, true
}

// wholeNumber is a whole number in a text (digits, possibly with a
// decimal part, which then makes it another number).
var wholeNumber = regexp.MustCompile(`\d+(?:[.,]\d+)?`)

// maxUnits is the most units of one product a replay believes a page
// shows in the cart; maxCartCount, of the whole cart.
const (
	maxUnits     = 99
	maxCartCount = 999
)

// units is how many units of product id the cart holds: its line when
// the cart's lines are known, else the header's count of all units.
func (c cartState) units(id string) int {
	if c.lines != nil {
		return c.lines[id]
	}
	return c.count
}

// delta checks that the product's line grew by exactly qty units. Other
// lines are not this replay's to judge: the run's other tabs add to the
// same cart at the same time. With only the header's count (no cart
// endpoint: best effort), other tabs' adds cannot be told apart, so the
// count must have grown by at least qty.
func (c cartState) delta(before cartState, id string, qty int) string {
	got := c.units(id) - before.units(id)
	switch {
	case c.lines != nil && before.lines != nil && got != qty:
		return fmt.Sprintf("the product's cart line changed by %d units, not %d", got, qty)
	case got < qty:
		return fmt.Sprintf("the cart grew by %d units, not %d", got, qty)
	}
	return ""
}

// holds says what the cart holds of product id now, for the agent.
func (c cartState) holds(id string, before cartState) string {
	if c.lines != nil && id != "" {
		return fmt.Sprintf("the cart now holds %d of this product (it held %d before)", c.lines[id], before.lines[id])
	}
	if c.count != 0 || before.count != 0 {
		return fmt.Sprintf("the cart now holds %d units in all (it held %d before)", c.count, before.count)
	}
	return ""
}

// priceMoved says why the page's price is not the remembered one within
// maxPercent, or "". The page's price must be readable whatever the memory
// holds: the add is reported at that price, and the price is read again
// after the clicks (an unreadable one would be found only once a unit is
// in the cart). A remembered price must be readable too, the page's per
// the same unit, and within maxPercent of it. Nothing remembered is no
// reason (the id and name decide).
func priceMoved(was, now money.Price, maxPercent float64) string {
	remembered := strings.TrimSpace(was.Text) != ""
	switch {
	case !now.Known && remembered:
		return fmt.Sprintf("the price cannot be read (the page shows %q, remembered %s)", now.Text, was.Text)
	case !now.Known:
		return fmt.Sprintf("the price cannot be read (the page shows %q)", now.Text)
	case !remembered:
		return ""
	case !was.Known || was.UnitCents <= 0:
		return fmt.Sprintf("the remembered price %q cannot be read, so the page's %s cannot be checked against it", was.Text, now.Text)
	case was.Per != now.Per:
		return fmt.Sprintf("the price is now %s, not per the same unit as %s", now.Text, was.Text)
	}
	change := float64(now.UnitCents-was.UnitCents) / float64(was.UnitCents) * 100
	if change > maxPercent || -change > maxPercent {
		return fmt.Sprintf("the price moved from %s to %s (%+.0f%%, more than %.0f%%)", was.Text, now.Text, change, maxPercent)
	}
	return ""
}

// sameName compares names both ways: every word of the page's product
// name is in the remembered name, and every word of the remembered name
// (which may add the brand and size the agent read from a tile) is on the
// page — in whole, the page's name, brand and size (or the product's block).
func sameName(page, whole, remembered string) bool {
	pw, rw := nameWords(page), nameWords(remembered)
	return len(pw) > 0 && subset(pw, rw) && subset(rw, nameWords(page+" "+whole))
}

func nameWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '%' || r > 127)
	})
}

// samePage: the tab is on the remembered address (host and path; query,
// fragment and a trailing slash aside), not redirected elsewhere.
func samePage(now, want string) bool {
	a, err1 := url.Parse(now)
	b, err2 := url.Parse(want)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(a.Hostname(), b.Hostname()) && strings.TrimSuffix(a.EscapedPath(), "/") == strings.TrimSuffix(b.EscapedPath(), "/")
}

// firstLine is an error's first line.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// replayNoteFor is the note of the attempt: the tab is on the product only
// for the attempt that got replay's tab.
func (it *itemRun) replayNoteFor(onPage bool) *ReplayNote {
	if it.note == nil {
		return nil
	}
	n := *it.note
	n.OnPage = n.OnPage && onPage
	return &n
}
