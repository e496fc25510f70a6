// Package reviewpack is the review pack that ends every run: per item, what
// was added, how sure the run is of it (Confidence), the typed warnings the
// household should look at, and the cart as read after the run; plus the
// household's actions on the cart afterwards (Remove from cart, Change
// quantity, Wrong product), each journaled with the run. It is data only:
// shop builds a pack, the journal keeps it, the panel, Home Assistant and
// MQTT show it, app carries out the actions.
package reviewpack

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// Confidence says how the product of an item was chosen.
type Confidence string

const (
	// Replayed: the remembered product, opened, checked and added by code.
	Replayed Confidence = "replayed"
	// AgentOneMatch: the agent found one product that matched.
	AgentOneMatch Confidence = "agent_one_match"
	// AgentChose: the agent chose among Matches products.
	AgentChose Confidence = "agent_chose"
	// Agent: the agent added it and did not say how many matched.
	Agent Confidence = "agent"
	// Substitute: something else than what was asked for — the household
	// typed another product, or the remembered product was unavailable and
	// another one was added.
	Substitute Confidence = "substitute"
	// Household: the household chose the product from the options offered.
	Household Confidence = "household"
)

// WarningKind is a type of review warning.
type WarningKind string

const (
	// WarnPriceChanged: the price differs from the last time the product was
	// bought by at least the configured percentage.
	WarnPriceChanged WarningKind = "price_changed"
	// WarnOutOfStock: the item (or its remembered product) was out of stock.
	WarnOutOfStock WarningKind = "out_of_stock"
	// WarnSubstitute: the product is a substitute (Confidence Substitute).
	WarnSubstitute WarningKind = "substitute"
	// WarnUnreportedUnit: the item's own cart changes disagree with its
	// report (a unit of another product, more units than reported —
	// report.ItemResult.Warnings).
	WarnUnreportedUnit WarningKind = "unreported_unit"
	// WarnMissing: reported added, but the cart did not gain it (the cart
	// review's warnings).
	WarnMissing WarningKind = "missing"
	// WarnQuantityShort: the cart gained fewer units than were reported.
	WarnQuantityShort WarningKind = "quantity_short"
	// WarnPriceDiffers: the cart's price is not the one the agent reported
	// (any difference: it is what the checkout charges).
	WarnPriceDiffers WarningKind = "price_differs"
	// WarnNotAsked: added without the household's answer, although the
	// item says always ask (report.ItemResult.NotAsked).
	WarnNotAsked WarningKind = "not_asked"
	// WarnQuantityFar: the units added are far from what the item names —
	// at least twice, or at most half, the packages that cover its count
	// of pieces (twelve 12-packs for "12 eggs", three 3 lb bags for "3
	// apples": shoppinglist.Packages). First among the item's warnings.
	WarnQuantityFar WarningKind = "quantity_far"
	// WarnDifferentKind: the product is another kind of thing than the
	// item names — juice for a fruit (OtherKind).
	WarnDifferentKind WarningKind = "different_kind"
	// WarnWrongRefused: the item's tab refused an add of a product the
	// household marked wrong for the item (nothing reached the cart).
	WarnWrongRefused WarningKind = "wrong_refused"
	// WarnUnexpectedChange: the cart changed in a way no item's report
	// explains (the cart review's; about no item).
	WarnUnexpectedChange WarningKind = "unexpected_change"
	// WarnCartUnchecked: the cart could not be read after the run, so
	// nothing was checked (the cart review's; about no item).
	WarnCartUnchecked WarningKind = "review_unavailable"
)

// ItemWarningKinds are the kinds of an item's warnings, those that need a
// look first: what may be wrong in the cart (units far from what the item
// names, missing, fewer units, another
// kind of thing, added without the asked-for question, units nobody
// reported), then what costs more or is not the usual product (another
// price, a substitute, a price change), then what is only said (out of
// stock, a wrong product refused). An item's warnings are in this order.
// (The cart review's warnings about no item, WarnUnexpectedChange and
// WarnCartUnchecked, are the run's, not an item's.)
var ItemWarningKinds = []WarningKind{
	WarnQuantityFar, WarnMissing, WarnQuantityShort, WarnDifferentKind, WarnNotAsked, WarnUnreportedUnit,
	WarnPriceDiffers, WarnSubstitute, WarnPriceChanged,
	WarnOutOfStock, WarnWrongRefused, WarnRecentlyBought,
}

// needsLookUntil is the rank up to which a kind needs a look (Item.Attention).
const needsLookUntil = 5

// rank is a kind's place in ItemWarningKinds (an unknown kind first: it
// is from a newer version, and read).
func (k WarningKind) rank() int {
	for i, o := range ItemWarningKinds {
		if o == k {
			return i
		}
	}
	return -1
}

// NeedsLook says whether a warning of this kind needs the household's look
// before checking out (something may be wrong in the cart).
func (k WarningKind) NeedsLook() bool { return k.rank() <= needsLookUntil }

// Warning is one thing about an item the household should check.
type Warning struct {
	Kind WarningKind `json:"kind"`
	// Message is the warning in English (the journal's text; what is shown
	// for a warning without a key, from a journal written before keys).
	Message string `json:"message"`
	// Text is the warning as a catalogue key and its values ("key",
	// "args"), said in the reader's language: Catalog.Say(w.Text, w.Message).
	messages.Text
}

// warn is a warning said by the catalogue, its Message the English text.
func warn(kind WarningKind, t messages.Text) Warning {
	return Warning{Kind: kind, Message: t.English(), Text: t}
}

// Said is the warning in m's language.
func (w Warning) Said(m messages.Catalog) string { return m.Say(w.Text, w.Message) }

// DefaultPriceChangePercent is the price change, in percent, from which a
// price is worth a warning when the configuration sets none.
const DefaultPriceChangePercent = 10

// Item is one list item of the pack.
type Item struct {
	ItemID   string         `json:"item_id"`
	ItemName string         `json:"item_name"`
	Outcome  report.Outcome `json:"outcome"`
	// What was added (Outcome added).
	ProductName string      `json:"product_name,omitempty"`
	ProductID   string      `json:"product_id,omitempty"`
	URL         string      `json:"url,omitempty"`
	Quantity    int         `json:"quantity"`
	Price       money.Price `json:"price"`
	Confidence  Confidence  `json:"confidence,omitempty"`
	// Matches is how many products the agent chose among (AgentChose).
	Matches int `json:"matches,omitempty"`
	// Warnings are in the order of ItemWarningKinds: those that need a
	// look first.
	Warnings []Warning `json:"warnings"`
	// Attention: one of its warnings needs a look before checking out
	// (WarningKind.NeedsLook); the pack lists such items first.
	Attention bool `json:"attention,omitempty"`
}

// Line is one line of the cart.
type Line struct {
	Name      string      `json:"name"`
	ProductID string      `json:"product_id,omitempty"`
	Quantity  int         `json:"quantity"`
	Price     money.Price `json:"price"`
}

// Cart is the store's cart as read at one moment.
type Cart struct {
	Lines  []Line    `json:"lines"`
	ReadAt time.Time `json:"read_at"`
	URL    string    `json:"url,omitempty"`
}

// Units is the number of units in the cart.
func (c Cart) Units() int {
	n := 0
	for _, l := range c.Lines {
		n += l.Quantity
	}
	return n
}

// Total is the estimated total of the lines with a known price, and how
// many lines have none.
func (c Cart) Total() (money.Cents, int) {
	var t money.Cents
	unknown := 0
	for _, l := range c.Lines {
		if !l.Price.Known {
			unknown++
			continue
		}
		t += l.Price.UnitCents * money.Cents(l.Quantity)
	}
	return t, unknown
}

// Line returns the cart's line of a product.
func (c Cart) Line(productID string) (Line, bool) {
	for _, l := range c.Lines {
		if productID != "" && strings.EqualFold(l.ProductID, productID) {
			return l, true
		}
	}
	return Line{}, false
}

// Find returns the line of a product: by its id, or — for a cart read
// without ids (metro's, read by the model) — the one line with the same
// words as the product's name, else the one line whose name holds every
// word of the product's name or whose words the product's name holds.
func (c Cart) Find(productID, name string) (Line, bool) {
	if l, ok := c.Line(productID); ok {
		return l, true
	}
	want := nameWords(name)
	if len(want) == 0 {
		return Line{}, false
	}
	var same, near []Line
	for _, l := range c.Lines {
		if l.ProductID != "" && productID != "" {
			continue // ids on both sides: they decide
		}
		have := nameWords(l.Name)
		a, b := len(have) > 0 && containsAll(have, want), len(have) > 0 && containsAll(want, have)
		switch {
		case a && b:
			same = append(same, l)
		case a || b:
			near = append(near, l)
		}
	}
	switch {
	case len(same) == 1:
		return same[0], true
	case len(same) == 0 && len(near) == 1:
		return near[0], true
	}
	return Line{}, false // none, or not one to be sure of
}

func nameWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func containsAll(big, small []string) bool {
	set := make(map[string]bool, len(big))
	for _, w := range big {
		set[w] = true
	}
	for _, w := range small {
		if !set[w] {
			return false
		}
	}
	return true
}

// Pack is the review pack of one run.
type Pack struct {
	RunID   string `json:"run_id"`
	CartURL string `json:"cart_url,omitempty"`
	Items   []Item `json:"items"`
	// Cart is the cart after the run (nil when it could not be read).
	Cart *Cart `json:"cart,omitempty"`
	// Actions are the household's actions on the cart since the run,
	// oldest first.
	Actions []Action `json:"actions,omitempty"`
	// Pruning is what was probably still at home, and why (pruning.go).
	Pruning []Pruned `json:"pruning,omitempty"`
	// Slots are the store's delivery slots as read after the run, or why
	// they could not be (slots.go); nil: not read (no slots page, or the
	// run did not reach its review).
	Slots *Slots `json:"slots,omitempty"`
}

// Item returns the pack's item with id.
func (p *Pack) Item(id string) (*Item, bool) {
	if p == nil {
		return nil, false
	}
	for i := range p.Items {
		if p.Items[i].ItemID == id {
			return &p.Items[i], true
		}
	}
	return nil, false
}

// ActionKind is what the household asked of a cart line.
type ActionKind string

const (
	// ActRemove removes the item's product from the cart.
	ActRemove ActionKind = "remove"
	// ActQuantity sets the line's quantity.
	ActQuantity ActionKind = "quantity"
	// ActWrongProduct removes the product, forgets it from the product
	// memory and shops the item again with the agent.
	ActWrongProduct ActionKind = "wrong_product"
)

// MaxQuantity is the largest quantity Change quantity accepts.
const MaxQuantity = 99

// Request is an action the household asks for on one item of a run.
type Request struct {
	RunID    string     `json:"run_id"`
	ItemID   string     `json:"item_id"`
	Kind     ActionKind `json:"action"`
	Quantity int        `json:"quantity,omitempty"`
	// Source names where it came from ("panel", "phone").
	Source string `json:"source,omitempty"`
	// By is the Home Assistant user who asked for it ("" when not known).
	By string `json:"by,omitempty"`
}

// Check says what is wrong with the request itself, nil when nothing.
func (r Request) Check() error {
	switch r.Kind {
	case ActRemove, ActWrongProduct:
	case ActQuantity:
		if r.Quantity < 1 || r.Quantity > MaxQuantity {
			return fmt.Errorf("the quantity must be 1–%d (Remove from cart takes a product out), not %d", MaxQuantity, r.Quantity)
		}
	default:
		return fmt.Errorf("unknown action %q: remove, quantity or wrong_product", r.Kind)
	}
	if strings.TrimSpace(r.RunID) == "" || strings.TrimSpace(r.ItemID) == "" {
		return errors.New("the action names no run or item")
	}
	return nil
}

// Action is one action the household took, as journaled with the run.
type Action struct {
	At     time.Time  `json:"at"`
	Kind   ActionKind `json:"action"`
	Source string     `json:"source,omitempty"`
	// By is the Home Assistant user who took it ("" when not known).
	By       string `json:"by,omitempty"`
	ItemID   string `json:"item_id"`
	ItemName string `json:"item_name"`
	Product  string `json:"product,omitempty"`
	// Before and After are the line's units before and after.
	Before int `json:"before"`
	After  int `json:"after"`
	// Forgot: the product memory forgot the item's product; Reshop names
	// the item put back on the list to be shopped again (Wrong product).
	Forgot bool   `json:"forgot,omitempty"`
	Reshop string `json:"reshop,omitempty"`
	// Error is why the action failed ("" when it succeeded).
	Error string `json:"error,omitempty"`
}

// Text says what the action did in words, in English.
func (a Action) Text() string { return a.TextIn(messages.Catalog{}) }

// TextIn says what the action did in words, in m's language.
func (a Action) TextIn(m messages.Catalog) string {
	var s string
	switch a.Kind {
	case ActRemove:
		s = m.T("review.removed", "product", a.Product, "before", a.Before)
	case ActQuantity:
		s = m.T("review.quantity", "product", a.Product, "before", a.Before, "after", a.After)
	case ActWrongProduct:
		s = m.T("review.wrong", "item", a.ItemName, "product", a.Product, "before", a.Before, "after", a.After)
		if a.Forgot {
			s += m.T("review.forgot")
		}
		if a.Reshop != "" {
			s += m.T("review.reshop")
		}
	default:
		s = string(a.Kind)
	}
	if a.Error != "" {
		s = m.T("review.failed", "action", s, "error", a.Error)
	}
	return s
}

// KindText names an action kind in m's language ("Remove from cart").
func KindText(m messages.Catalog, k ActionKind) string {
	switch k {
	case ActRemove:
		return m.T("review.act_remove")
	case ActQuantity:
		return m.T("review.act_quantity")
	case ActWrongProduct:
		return m.T("review.act_wrong_product")
	}
	return strings.ReplaceAll(string(k), "_", " ")
}

// Options tune Build.
type Options struct {
	// PriceChangePercent: a price that changed by at least this much from the
	// last time is a warning (0: DefaultPriceChangePercent).
	PriceChangePercent float64
}

// ItemIssue is a warning about one item found elsewhere (the cart review).
type ItemIssue struct {
	Item    string
	Kind    WarningKind
	Message string
	// Text is Message as a catalogue key and values (none: Message is said).
	Text messages.Text
}

// Build makes the pack of a run from its results, the cart review's item
// warnings and the cart after it (nil: not read).
func Build(runID, cartURL string, results []report.ItemResult, issues []ItemIssue, after *Cart, o Options) Pack {
	pct := o.PriceChangePercent
	if pct <= 0 {
		pct = DefaultPriceChangePercent
	}
	p := Pack{RunID: runID, CartURL: cartURL, Items: make([]Item, 0, len(results)), Cart: after}
	for _, r := range results {
		if r.Outcome == report.OutcomeDuplicate || r.Outcome == report.OutcomeSkipped {
			continue
		}
		it := Item{ItemID: r.ItemID, ItemName: r.ItemName, Outcome: r.Outcome, Quantity: r.Quantity, Warnings: []Warning{}}
		if r.Outcome == report.OutcomeAdded {
			it.ProductName, it.URL, it.Price = r.ProductName, r.URL, r.Price
			it.ProductID = productID(r.URL, after)
			if w, ok := quantityFar(r, it.ProductID, after); ok {
				it.Warnings = append(it.Warnings, w)
			}
			it.Confidence, it.Matches = confidence(r)
			if it.Confidence == Substitute {
				it.Warnings = append(it.Warnings, warn(WarnSubstitute,
					messages.Say("warning.substitute", "product", r.ProductName, "item", r.ItemName)))
			}
			if kind, ok := OtherKind(r.ItemName, r.ProductName); ok {
				it.Warnings = append(it.Warnings, warn(WarnDifferentKind,
					messages.Say("warning.different_kind", "item", r.ItemName, "product", r.ProductName, "kind", kind)))
			}
			if w, ok := priceChange(r, pct); ok {
				it.Warnings = append(it.Warnings, w)
			}
			if r.NotAsked {
				it.Warnings = append(it.Warnings, Warning{Kind: WarnNotAsked, Message: report.NotAskedWarning,
					Text: messages.Say(report.NotAskedKey)})
			}
		}
		for i, w := range r.Warnings {
			if r.Outcome != report.OutcomeAdded && r.WarningText(i).Key != refusedWrongKey {
				continue
			}
			kind := WarnUnreportedUnit
			if r.WarningText(i).Key == refusedWrongKey {
				kind = WarnWrongRefused
			}
			it.Warnings = append(it.Warnings, Warning{Kind: kind, Message: w, Text: r.WarningText(i)})
		}
		if outOfStock(r) {
			it.Warnings = append(it.Warnings, warn(WarnOutOfStock, outOfStockText(r)))
		}
		for _, is := range issues {
			if is.Item == r.ItemName {
				it.Warnings = append(it.Warnings, Warning{Kind: is.Kind, Message: is.Message, Text: is.Text})
			}
		}
		slices.SortStableFunc(it.Warnings, func(a, b Warning) int { return a.Kind.rank() - b.Kind.rank() })
		it.Attention = len(it.Warnings) > 0 && it.Warnings[0].Kind.NeedsLook()
		p.Items = append(p.Items, it)
	}
	// The items that need a look first, each group in the list's order.
	slices.SortStableFunc(p.Items, func(a, b Item) int { return boolRank(b.Attention) - boolRank(a.Attention) })
	return p
}

// quantityFar is the warning of an item that counts pieces ("12 eggs",
// "3 apples") and got a number of packages far from the packages that
// cover them (shoppinglist.Packages), read from the product's name as
// reported and as the cart shows it. A count of packages ("2x milk") is
// checked by the cart review (WarnQuantityShort) and the tab's own adds
// (WarnUnreportedUnit).
func quantityFar(r report.ItemResult, id string, after *Cart) (Warning, bool) {
	var item shoppinglist.Item
	item.SetName(r.ItemName)
	if !item.Pieces {
		return Warning{}, false
	}
	text := r.ProductName
	if after != nil && id != "" {
		for _, l := range after.Lines {
			if l.ProductID == id {
				text += " " + l.Name
			}
		}
	}
	units := max(r.Quantity, 1)
	if !item.FarFrom(units, text) {
		return Warning{}, false
	}
	product := r.ProductName
	if product == "" {
		product = "@warning.no_product_name"
	}
	return warn(WarnQuantityFar, messages.Say("warning.quantity_far", "item", r.ItemName, "units", units,
		"product", product, "want", item.PackagesFor(text))), true
}

// refusedWrongKey is the key of an item's warning that its tab refused an
// add of a product marked wrong (internal/shop).
const refusedWrongKey = "warning.tab_refused_wrong"

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// confidence says how an added item's product was chosen.
func confidence(r report.ItemResult) (Confidence, int) {
	switch {
	case r.ChosenBy == report.ChosenByHouseholdQuery, r.ChosenBy == report.ChosenBySubstitute:
		return Substitute, 0
	case r.ChosenBy == report.ChosenByHousehold:
		return Household, 0
	case r.Replay == "replayed":
		return Replayed, 0
	case strings.HasPrefix(r.Replay, "replay fell back: ") && strings.Contains(strings.ToLower(r.Replay), "out of stock"):
		return Substitute, 0
	case r.Matches == 1:
		return AgentOneMatch, 1
	case r.Matches > 1:
		return AgentChose, r.Matches
	}
	return Agent, 0
}

func priceChange(r report.ItemResult, pct float64) (Warning, bool) {
	was, now := r.PreviousPrice, r.Price
	if !was.Known || !now.Known || was.UnitCents <= 0 || was.UnitCents == now.UnitCents {
		return Warning{}, false
	}
	diff := float64(now.UnitCents-was.UnitCents) * 100 / float64(was.UnitCents)
	if diff < pct && -diff < pct {
		return Warning{}, false
	}
	key := "warning.price_up"
	if diff < 0 {
		key, diff = "warning.price_down", -diff
	}
	return warn(WarnPriceChanged, messages.Say(key, "product", r.ProductName, "percent", fmt.Sprintf("%.0f", diff),
		"was", money.Format(was.UnitCents), "now", money.Format(now.UnitCents))), true
}

// outOfStock: the item ended not found for want of stock, or its
// remembered product was out of stock.
func outOfStock(r report.ItemResult) bool {
	s := strings.ToLower(r.Explanation + " " + r.Replay)
	return strings.Contains(s, "out of stock") || strings.Contains(s, "sold out")
}

func outOfStockText(r report.ItemResult) messages.Text {
	if r.Outcome == report.OutcomeAdded {
		return messages.Say("warning.out_of_stock_usual", "item", r.ItemName)
	}
	return messages.Say("warning.out_of_stock", "item", r.ItemName)
}

// productID finds the product id of an added item: the cart line whose id
// is a segment of the product's URL.
func productID(raw string, c *Cart) string {
	if c == nil || raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	segs := strings.Split(strings.ToLower(strings.Trim(u.Path, "/")), "/")
	for _, l := range c.Lines {
		for _, s := range segs {
			if l.ProductID != "" && s == strings.ToLower(l.ProductID) {
				return l.ProductID
			}
		}
	}
	return ""
}

// Bounded returns the cart with every text clipped to package report's
// bounds.
func (c Cart) Bounded() Cart {
	lines := make([]Line, len(c.Lines))
	for i, l := range c.Lines {
		l.Name = report.Clip(l.Name, report.MaxProductRunes)
		l.ProductID = report.Clip(l.ProductID, report.MaxNameRunes)
		l.Price.Text = report.Clip(l.Price.Text, report.MaxNameRunes)
		lines[i] = l
	}
	c.Lines = lines
	if len(c.URL) > report.MaxURLBytes {
		c.URL = ""
	}
	return c
}

// Bounded returns the action with every text clipped.
func (a Action) Bounded() Action {
	a.ItemID = report.Clip(a.ItemID, report.MaxNameRunes)
	a.ItemName = report.Clip(a.ItemName, report.MaxNameRunes)
	a.Product = report.Clip(a.Product, report.MaxProductRunes)
	a.Error = report.Clip(a.Error, report.MaxTextRunes)
	a.Source = report.Clip(a.Source, report.MaxNameRunes)
	return a
}

// Bounded returns the pack with every text clipped.
func (p Pack) Bounded() Pack {
	items := make([]Item, len(p.Items))
	for i, it := range p.Items {
		it.ItemID = report.Clip(it.ItemID, report.MaxNameRunes)
		it.ItemName = report.Clip(it.ItemName, report.MaxNameRunes)
		it.ProductName = report.Clip(it.ProductName, report.MaxProductRunes)
		if len(it.URL) > report.MaxURLBytes {
			it.URL = ""
		}
		ws := make([]Warning, len(it.Warnings))
		for j, w := range it.Warnings {
			w.Message = report.Clip(w.Message, report.MaxTextRunes)
			w.Text = report.ClipText(w.Text)
			ws[j] = w
		}
		it.Warnings = ws
		items[i] = it
	}
	p.Items = items
	if p.Cart != nil {
		c := p.Cart.Bounded()
		p.Cart = &c
	}
	acts := make([]Action, len(p.Actions))
	for i, a := range p.Actions {
		acts[i] = a.Bounded()
	}
	if p.Actions != nil {
		p.Actions = acts
	}
	if len(p.CartURL) > report.MaxURLBytes {
		p.CartURL = ""
	}
	if p.Slots != nil {
		s := p.Slots.Bounded()
		p.Slots = &s
	}
	return p
}

// Errors of the actions, for their callers to answer with (the panel: 400
// and 409).
var (
	// ErrInvalid: the request itself is wrong (unknown action, quantity
	// out of range).
	ErrInvalid = errors.New("invalid cart action")
	// ErrNotInCart: the item's product is not (or no longer) in the cart,
	// or the item added nothing.
	ErrNotInCart = errors.New("not in the cart")
)

// MaxInfoLines bounds the lines CartInfo lists (Home Assistant keeps
// attributes up to 16 KiB).
const MaxInfoLines = 100

// CartInfo is the cart as Home Assistant gets it: the MQTT cart sensor's
// attributes (its state is Units) and the gemini_supply_cart event's data.
type CartInfo struct {
	RunID          string     `json:"run_id,omitempty"`
	Units          int        `json:"units"`
	EstimatedTotal string     `json:"estimated_total"`
	TotalCents     int64      `json:"total_cents"`
	UnknownPrices  int        `json:"unknown_prices"`
	Lines          []LineInfo `json:"lines"`
	MoreLines      int        `json:"more_lines,omitempty"`
	CartURL        string     `json:"cart_url,omitempty"`
	ReadAt         time.Time  `json:"read_at"`
}

// LineInfo is one cart line in CartInfo.
type LineInfo struct {
	Name       string `json:"name"`
	Quantity   int    `json:"quantity"`
	Price      string `json:"price,omitempty"`
	PriceCents *int64 `json:"price_cents,omitempty"`
}

// Info is the cart as Home Assistant gets it.
func (c Cart) Info(runID string) CartInfo {
	total, unknown := c.Total()
	out := CartInfo{RunID: runID, Units: c.Units(), EstimatedTotal: money.Format(total), TotalCents: int64(total),
		UnknownPrices: unknown, Lines: []LineInfo{}, CartURL: c.URL, ReadAt: c.ReadAt.UTC()}
	for i, l := range c.Lines {
		if i == MaxInfoLines {
			out.MoreLines = len(c.Lines) - i
			break
		}
		li := LineInfo{Name: l.Name, Quantity: l.Quantity}
		if l.Price.Known {
			cents := int64(l.Price.UnitCents)
			li.Price, li.PriceCents = money.Format(l.Price.UnitCents), &cents
		}
		out.Lines = append(out.Lines, li)
	}
	return out
}
