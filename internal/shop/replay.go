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

// corrected is the quantity the household set for the product in a review
// when the list still asks for list (the quantity it had then), else 0: a
// list whose quantity was edited since wins.
func (r Remembered) corrected(list int) int {
	if r.HouseholdQuantity > 0 && r.ListQuantity == list {
		return r.HouseholdQuantity
	}
	return 0
}

// packagesFor is how many packages of the product whose page shows text
// (its name and size; "" unknown) the item buys: the household's
// correction from a review when one applies (Remembered.corrected), else
// the quantity rule (shoppinglist.Item.PackagesFor: "12 eggs" is one box
// of 12).
func (it *itemRun) packagesFor(text string) int {
	if it.corrected > 0 {
		return it.corrected
	}
	return it.p.item.PackagesFor(text)
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
	t0 := time.Now()
	if err := t.Load(ctx, rem.URL); err != nil {
		return shoppinglist.Added{}, "the remembered product page could not be opened (" + firstLine(err) + ")", ""
	}
	if !samePage(t.URL(), rem.URL) {
		it.replayChanged = true
		return shoppinglist.Added{}, "the remembered product page now leads to " + t.URL(), ""
	}
	r.log.Debug("replay: page loaded", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	els, err := t.ReadElements(ctx, productSelectors(pp), pp.ProductIDAttr)
	if err != nil {
		return shoppinglist.Added{}, "the product page could not be read (" + firstLine(err) + ")", ""
	}
	if !els["root"].Found {
		it.replayChanged = true
		return shoppinglist.Added{}, "the remembered product page shows no product (it may be gone)", ""
	}
	if why := checkProduct(els, rem, pp.ProductIDAttr != "", r.cfg.ReplayMaxPriceChange); why != "" {
		it.replayChanged = true // the product is not the remembered one as it was
		return shoppinglist.Added{}, why, ""
	}
	id := els["root"].Attr
	if id == "" {
		id = rem.ProductID
	}
	// The packages the item asks for, by how the page says the product is
	// sold (one box of 12 for "12 eggs"; shoppinglist.Packages).
	qty := it.packagesFor(strings.TrimSpace(els["name"].Text + " " + els["size"].Text + " " + rem.Name))
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
	// The tab's ledger (the cart requests the store answered) is what the
	// clicks really did; the page's count is only the page's word.
	led := newReplayLedger(t, it.r.cfg.Store.CartSetup)
	// One click adds one unit; each must land before the next, so that a
	// click lost in a dialog is never repeated blindly.
	after := before
	for i := 1; i <= qty; i++ {
		if err := t.PressElement(ctx, pp.Add); err != nil {
			after, _ = it.cartState(ctx, t, id)
			return shoppinglist.Added{}, "clicking add to cart failed (" + firstLine(err) + ")", led.holds(ctx, id, i-1, after.holds(id, before))
		}
		after, err = it.waitCart(ctx, t, before, after, id, i)
		var refused *addRefused
		switch {
		case errors.As(err, &refused):
			if l, ok := led.read(ctx, id); !ok || l.units < i {
				return shoppinglist.Added{}, refused.why, led.holds(ctx, id, i, after.holds(id, before))
			}
			// The store's cart requests say this press did add: the page's
			// words were no refusal, only a count it could not show.
			return shoppinglist.Added{}, "the cart did not change as expected after adding (" + refused.why + ")", led.holds(ctx, id, i, after.holds(id, before))
		case err != nil:
			return shoppinglist.Added{}, "the cart did not change as expected after adding (" + firstLine(err) + ")", led.holds(ctx, id, i, after.holds(id, before))
		}
	}
	r.log.Debug("replay: added", "item", it.p.item.Name, "after", time.Since(t0).Round(time.Millisecond))
	if why := after.delta(before, id, qty); why != "" {
		return shoppinglist.Added{}, why, led.holds(ctx, id, qty, after.holds(id, before))
	}
	if l, ok := led.read(ctx, id); ok && (l.units != qty || l.other > 0) {
		return shoppinglist.Added{}, fmt.Sprintf("the store's cart requests added %d units of the product (and %d of others), not %d, whatever the page's count says", l.units, l.other, qty), led.holds(ctx, id, qty, after.holds(id, before))
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

// replayLedger reads what a replay's clicks really did to the cart: the
// cart-changing requests its tab sent since the replay began (the tab's
// ledger, browser.Tab.CartRequests), as the store answered them. It is
// believed over the page's count, which is only the page's word (a
// press that adds 2 while the text shows +1, or nothing while it shows
// +1).
type replayLedger struct {
	rec   CartRecorder // nil: the tab keeps none
	base  int
	setup func(path string) bool
}

func newReplayLedger(t replayTab, setup func(path string) bool) replayLedger {
	rec, ok := t.(CartRecorder)
	if !ok {
		return replayLedger{}
	}
	return replayLedger{rec: rec, base: len(rec.CartRequests()), setup: setup}
}

// ledgerAdds are the units the store accepted: of the product, and of others.
type ledgerAdds struct{ units, other int }

func (l ledgerAdds) holds() string {
	if l.other > 0 {
		return fmt.Sprintf("the replay's cart requests added %d units of this product and %d of other products", l.units, l.other)
	}
	return fmt.Sprintf("the replay's cart requests added %d units of this product", l.units)
}

// ledgerWait bounds the wait for the store's answer to a cart request the
// page already shows (the browser reports the answer a moment later).
const ledgerWait = 5 * time.Second

// read sums the replay's answered cart requests. ok is false when the tab
// keeps no ledger, a request's effect cannot be read (an operation the
// profile does not describe, a quantity set, an add naming no product) or
// a request is still unanswered after ledgerWait.
func (l replayLedger) read(ctx context.Context, id string) (ledgerAdds, bool) {
	if l.rec == nil {
		return ledgerAdds{}, false
	}
	deadline := time.Now().Add(ledgerWait)
	for {
		reqs := l.rec.CartRequests()
		reqs = reqs[min(l.base, len(reqs)):]
		var a ledgerAdds
		known, pending := true, false
		for _, r := range reqs {
			switch {
			case r.Status == 0 && !r.Failed:
				pending = true
			case !r.Done():
			case r.Kind == store.CartAdd && r.ProductID == id:
				a.units += max(r.Quantity, 1)
			case r.Kind == store.CartAdd && r.ProductID != "":
				a.other += max(r.Quantity, 1)
			case r.Kind == "" && l.setup != nil && l.setup(r.Path):
				// The postal code or delivery choice: no line changed.
			default:
				known = false
			}
		}
		if !pending || time.Now().After(deadline) {
			return a, known && !pending
		}
		select {
		case <-ctx.Done():
			return a, false
		case <-time.After(replayPoll):
		}
	}
}

// holds is what the agent is told the cart holds after clicks presses:
// what the page's count says (pageSays, when it was read) and what the
// ledger says (when it can be read: the store's requests are believed
// over the page, and a store may add more than a request asks, so the
// agent gets both); with neither, after a press, that units may already
// be in the cart.
func (l replayLedger) holds(ctx context.Context, id string, clicks int, pageSays string) string {
	a, ok := l.read(ctx, id)
	switch {
	case ok && pageSays != "":
		return pageSays + "; " + a.holds()
	case ok:
		return a.holds()
	case pageSays != "" || clicks == 0:
		return pageSays
	}
	return fmt.Sprintf("add to cart was pressed %d times and the cart could not be read afterwards: up to %d units of this product may already be in the cart", clicks, clicks)
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
	want := rem.ProductID
	if want == "" {
		// A remembered entry without an id: the id its address names
		// ("…/p/<id>") is the one the page must show.
		want = store.ProductID(rem.URL)
	}
	switch {
	case hasID && got == "":
		return "the page names no product id"
	case hasID && want != "" && got != want:
		return fmt.Sprintf("the page shows another product (id %s, not %s)", got, want)
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
// units than before, answering the store's postal-code dialog on the way
// (a store whose session forgot the delivery address asks again, as the
// demo store does in a new process). last is the cart as last read. With a
// count on the page (the product's own, else the header's), each wait is
// one in-page wait for that count to change or the dialog to appear; with
// neither, the cart endpoint is polled. A dialog it cannot answer, or an
// add the page says the store refused, is an *addRefused.
func (it *itemRun) waitCart(ctx context.Context, t replayTab, before, last cartState, id string, n int) (cartState, error) {
	r := it.r
	pp := r.cfg.Store.Product
	watch := pp.CartCount
	if pp.InCart != "" {
		watch = pp.Root + " " + pp.InCart
	}
	dialog := pp.PostalInput
	deadline := r.now().Add(replayAddWait)
	shown := last.shown
	now := last
	answered := "" // the postal code entered in the dialog
	for {
		if watch != "" {
			appears := dialog
			if answered != "" {
				appears = "" // once answered, the count's change is what comes
			}
			if _, err := t.WaitChange(ctx, watch, shown, appears, max(deadline.Sub(r.now()), time.Millisecond)); err != nil {
				return now, err
			}
		}
		var err error
		now, err = it.cartState(ctx, t, id)
		if err == nil && now.units(id)-before.units(id) >= n {
			return now, nil
		}
		if watch != "" {
			// What the page shows now, read or not ("Adding…"): the next
			// wait is for it to change again, not a spin on the same text.
			if els, rerr := t.ReadElements(ctx, map[string]string{"w": watch}, ""); rerr == nil {
				shown = els["w"].Text
			}
		}
		asks := false
		if dialog != "" {
			els, err := t.ReadElements(ctx, map[string]string{"in": dialog}, "")
			asks = err == nil && els["in"].Visible
		}
		if asks && answered == "" {
			// The store asks where to deliver before it adds (the first
			// add of a session, also when the session forgot it); it adds
			// the unit once it has the postal code, so the wait goes on.
			if r.cfg.PostalCode == "" {
				return now, &addRefused{why: "the store asks for a delivery postal code before adding, and none is configured (postal_code)"}
			}
			answered = r.cfg.PostalCode
			if err := t.FillElement(ctx, pp.PostalInput, answered); err != nil {
				return now, &addRefused{why: "the store asks for a delivery postal code and it could not be entered (" + firstLine(err) + ")"}
			}
			if err := t.PressElement(ctx, pp.PostalSubmit); err != nil {
				return now, &addRefused{why: "the store asks for a delivery postal code and it could not be confirmed (" + firstLine(err) + ")"}
			}
			r.log.Debug("replay: answered the store's postal-code dialog", "item", it.p.item.Name)
			continue
		}
		if r.now().After(deadline) {
			if asks {
				return now, &addRefused{why: "the store did not take the delivery postal code " + answered + " (its dialog is still open)"}
			}
			if said := strings.TrimSpace(shown); watch != "" && err != nil && said != "" {
				// The page says something that is not a count: the store's
				// own answer to the add ("This product is out of stock.").
				return now, &addRefused{why: fmt.Sprintf("the store did not add it (the page says %q)", said)}
			}
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

// addRefused is an add the store did not take: why says what it asked
// for or answered instead (the reason the replay hands over).
type addRefused struct{ why string }

func (e *addRefused) Error() string { return e.why }

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
// no number, another number, a negative one ("In cart: -1") or an absurd
// one is not read.
func countIn(text string, max int) (int, bool) {
	nums := wholeNumber.FindAllString(text, -1)
	if len(nums) != 1 || len(nums[0]) > len(strconv.Itoa(max)) || negative.MatchString(text) {
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

// negative is a minus sign (ASCII or Unicode) before a number.
var negative = regexp.MustCompile(`[-\x{2212}\x{2012}\x{2013}\x{2014}\x{FE63}\x{FF0D}]\d`)

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
