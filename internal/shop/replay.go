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
)

// Remembered is the product the memory holds for an item.
type Remembered struct {
	Name, URL, ProductID, Price, Size string
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
	if mode == "" || mode == ReplayOff || r.cfg.Recall == nil {
		return false
	}
	rem, ok := r.cfg.Recall.Recall(it.p.item.Name)
	if !ok || rem.URL == "" {
		return false
	}
	tab, err := r.host.NewTab(ctx)
	r.noteNewTab(err)
	if err != nil {
		r.log.Debug("replay: no tab; the agent shops the item", "item", it.p.item.Name, "err", err)
		return false
	}
	if err := tab.SetItem(ctx, it.p.item.Name); err != nil {
		r.log.Debug("setting the banner failed", "item", it.p.item.Name, "err", err)
	}
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
	added, why, cart := it.replayDirect(ctx, rt, rem)
	if why == "" {
		_ = tab.Close()
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
	it.handTab, it.note, it.replayInfo = tab, note, replayFellBack+why
	r.log.Info("replay fell back to the agent", "item", it.p.item.Name, "why", why)
	return false
}

// replayDirect opens, checks and adds the remembered product. It returns
// the add, or why it handed over and what the cart then holds of it.
func (it *itemRun) replayDirect(ctx context.Context, t replayTab, rem Remembered) (shoppinglist.Added, string, string) {
	r := it.r
	pp := r.cfg.Store.Product
	qty := max(it.p.item.Quantity, 1)
	t0 := time.Now()
	if err := t.Load(ctx, rem.URL); err != nil {
		return shoppinglist.Added{}, "the remembered product page could not be opened (" + firstLine(err) + ")", ""
	}
	if !samePage(t.URL(), rem.URL) {
		return shoppinglist.Added{}, "the remembered product page now leads to " + t.URL(), ""
	}
	r.log.Debug("replay: page loaded", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	els, err := t.ReadElements(ctx, map[string]string{
		"root": pp.Root, "name": pp.Name, "size": pp.Size, "price": pp.Price, "out": pp.OutOfStock, "add": pp.Add, "in": pp.InCart,
	}, pp.ProductIDAttr)
	if err != nil {
		return shoppinglist.Added{}, "the product page could not be read (" + firstLine(err) + ")", ""
	}
	if !els["root"].Found {
		return shoppinglist.Added{}, "the remembered product page shows no product (it may be gone)", ""
	}
	id := els["root"].Attr
	if id == "" {
		id = rem.ProductID
	}
	// Read from the store's own page: its count of the product (read
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
	if got := els["root"].Attr; rem.ProductID != "" && got != "" && got != rem.ProductID {
		return shoppinglist.Added{}, fmt.Sprintf("the page shows another product (id %s, not %s)", got, rem.ProductID), ""
	}
	name := els["name"].Text
	if !sameName(name, rem.Name) {
		return shoppinglist.Added{}, fmt.Sprintf("the product is now called %q, not %q", name, rem.Name), ""
	}
	if size := els["size"].Text; rem.Size != "" && !strings.EqualFold(strings.Join(strings.Fields(size), " "), strings.Join(strings.Fields(rem.Size), " ")) {
		return shoppinglist.Added{}, fmt.Sprintf("the size is now %q, not %q", size, rem.Size), ""
	}
	if els["out"].Found || els["add"].Disabled {
		return shoppinglist.Added{}, "the remembered product is out of stock", ""
	}
	price := money.Parse(els["price"].Text)
	if why := priceMoved(money.Parse(rem.Price), price, r.cfg.ReplayMaxPriceChange); why != "" {
		return shoppinglist.Added{}, why, ""
	}
	if !els["add"].Found {
		return shoppinglist.Added{}, "the add-to-cart control was not found on the product page", ""
	}
	r.log.Debug("replay: page read", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	// One click adds one unit; each must land before the next, so that a
	// click lost in a dialog is never repeated blindly.
	var after cartState
	for i := 1; i <= qty; i++ {
		if err := t.ClickElement(ctx, pp.Add); err != nil {
			after, _ = it.cartState(ctx, t, id)
			return shoppinglist.Added{}, "clicking add to cart failed (" + firstLine(err) + ")", after.holds(id, before)
		}
		after, err = it.waitCart(ctx, t, before, id, i)
		if err != nil {
			return shoppinglist.Added{}, "the cart did not change as expected after adding (" + firstLine(err) + ")", after.holds(id, before)
		}
	}
	r.log.Debug("replay: added", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	if why := after.delta(before, id, qty); why != "" {
		return shoppinglist.Added{}, why, after.holds(id, before)
	}
	if !price.Known {
		price = money.Parse(rem.Price)
	}
	return shoppinglist.Added{ProductName: rem.Name, Price: price, URL: rem.URL, Quantity: qty}, "", ""
}

// waitCart waits (bounded by the action timeout) until the cart holds n
// more units than before, answering a postal-code dialog on the way.
func (it *itemRun) waitCart(ctx context.Context, t replayTab, before cartState, id string, n int) (cartState, error) {
	r := it.r
	pp := r.cfg.Store.Product
	deadline := r.now().Add(replayAddWait)
	postalDone := false
	for {
		now, err := it.cartState(ctx, t, id)
		if err == nil && now.units(id)-before.units(id) >= n {
			return now, nil
		}
		if !postalDone && pp.PostalInput != "" && r.cfg.PostalCode != "" {
			if els, err := t.ReadElements(ctx, map[string]string{"in": pp.PostalInput}, ""); err == nil && els["in"].Visible {
				// The first add of a session asks for the postal code; the
				// store adds the unit once it has it.
				postalDone = true
				if err := t.FillElement(ctx, pp.PostalInput, r.cfg.PostalCode); err == nil {
					_ = t.ClickElement(ctx, pp.PostalSubmit)
				}
			}
		}
		if r.now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("the cart holds %d, %d expected", now.units(id), before.units(id)+n)
			}
			return now, err
		}
		select {
		case <-ctx.Done():
			return now, ctx.Err()
		case <-time.After(replayPoll):
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
}

// cartState reads the cart: the product page's own count of the product
// (Product.InCart), else the store's cart endpoint, else the header's
// count of all units. id is the product's id.
func (it *itemRun) cartState(ctx context.Context, t replayTab, id string) (cartState, error) {
	st := it.r.cfg.Store
	switch {
	case st.Product.InCart != "":
		els, err := t.ReadElements(ctx, map[string]string{"n": st.Product.InCart}, "")
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
		if !els["n"].Found || err != nil {
			return cartState{}, fmt.Errorf("the cart count %q cannot be read", els["n"].Text)
		}
		return cartState{count: n}, nil
	}
	return cartState{}, errors.New("the store profile names no way to read the cart")
}

// inCartState reads the product page's count of the product: the first
// number of its text; an empty text is none.
func inCartState(text, id string) (cartState, error) {
	n := 0
	if m := firstNumber.FindString(text); m != "" {
		n, _ = strconv.Atoi(m)
	} else if text != "" {
		return cartState{}, fmt.Errorf("the product's cart status reads %q", text)
	}
	return cartState{lines: map[string]int{id: n}, count: n}, nil
}

// firstNumber is the first whole number in a text.
var firstNumber = regexp.MustCompile(`\d+`)

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

// priceMoved says why a price change is too large, or "" (an unknown
// price on either side is no reason: the name and id were checked).
func priceMoved(was, now money.Price, maxPercent float64) string {
	if !was.Known || !now.Known || was.UnitCents <= 0 || was.Per != now.Per {
		return ""
	}
	change := float64(now.UnitCents-was.UnitCents) / float64(was.UnitCents) * 100
	if change > maxPercent || -change > maxPercent {
		return fmt.Sprintf("the price moved from %s to %s (%+.0f%%, more than %.0f%%)", was.Text, now.Text, change, maxPercent)
	}
	return ""
}

// sameName: every word of the page's product name is in the remembered
// name (which may add the brand and size the agent read from a tile).
func sameName(page, remembered string) bool {
	pw := nameWords(page)
	if len(pw) == 0 {
		return false
	}
	have := map[string]bool{}
	for _, w := range nameWords(remembered) {
		have[w] = true
	}
	for _, w := range pw {
		if !have[w] {
			return false
		}
	}
	return true
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
