package usual

import (
	"slices"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// Merge strategies (the coordinator's mergeStrategy).
const (
	Latest   = "latest"   // the last order (or run) only
	Combined = "combined" // the last Orders orders and runs
)

// DefaultOrders is how many orders Combined reads when not told.
const DefaultOrders = 3

// Options shape a proposal.
type Options struct {
	From       string // Latest or Combined (empty: Combined)
	Orders     int    // with Combined: how many of the newest orders (0: DefaultOrders)
	Favourites bool   // add the store's favourites
	Now        time.Time
	// Memory maps list items to remembered products (may be nil), so that
	// "milk" on the list is known as the 2% milk of the orders.
	Memory []products.Entry
	Lang   messages.Catalog
}

// Item is one proposed item.
type Item struct {
	Name           string    `json:"name"`
	Product        string    `json:"product,omitempty"`
	ProductID      string    `json:"product_id,omitempty"`
	Source         string    `json:"source"`
	LastBought     time.Time `json:"last_bought,omitzero"`
	CycleDays      int       `json:"cycle_days"`
	CycleDefault   bool      `json:"cycle_default,omitempty"`
	ProbablyAtHome bool      `json:"probably_at_home"`
	// Reason says it in words ("every 9 days, last bought 8 days ago").
	Reason string `json:"reason"`
	cycle  Cycle
}

// Pruned is an item left out of the proposal, or warned about on the list,
// and why: the review pack's pruning section.
type Pruned = reviewpack.Pruned

// Proposal is "the usual".
type Proposal struct {
	// Items are proposed, due ones first; those ProbablyAtHome are shown
	// apart and not ticked (add anyway).
	Items []Item `json:"items"`
	// OnList are usual items left out because the list has them already.
	OnList []Pruned `json:"on_list,omitempty"`
	// NotRead says what could not be read (a best-effort store reader).
	NotRead []string `json:"not_read,omitempty"`
}

// AtHome counts the items probably still at home.
func (p Proposal) AtHome() int {
	n := 0
	for _, it := range p.Items {
		if it.ProbablyAtHome {
			n++
		}
	}
	return n
}

// group is one item's purchases.
type group struct {
	key     string
	name    string
	product string
	id      string
	source  string
	ps      []Purchase
}

func groups(ps []Purchase) map[string]*group {
	out := map[string]*group{}
	for _, p := range ps {
		k := itemKey(p)
		g := out[k]
		if g == nil {
			g = &group{key: k}
			out[k] = g
		}
		g.ps = append(g.ps, p)
		// The newest purchase names the item.
		if p.At.Equal(latest(g.ps)) || g.name == "" {
			g.name, g.product, g.id, g.source = p.Item, p.Product, p.ProductID, p.Source
		}
	}
	return out
}

// Propose makes the proposal from h, leaving out what list (its open items)
// already has.
func Propose(h History, list []shoppinglist.Item, o Options) Proposal {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	n := o.Orders
	if n <= 0 {
		n = DefaultOrders
	}
	if o.From == Latest {
		n = 1
	}
	all := groups(h.Purchases)
	chosen := map[string]bool{}
	var order []string
	for i, b := range baskets(h.Purchases) {
		if i >= n {
			break
		}
		for _, p := range b {
			if k := itemKey(p); !chosen[k] {
				chosen[k] = true
				order = append(order, k)
			}
		}
	}
	if o.Favourites {
		for _, f := range h.Favourites {
			k := itemKey(f)
			if all[k] == nil {
				all[k] = &group{key: k, name: f.Item, product: f.Product, id: f.ProductID, source: FromFavourite}
			}
			if !chosen[k] {
				chosen[k] = true
				order = append(order, k)
			}
		}
	}
	open := openItems(list)
	p := Proposal{Items: []Item{}, NotRead: h.NotRead}
	for _, k := range order {
		g := all[k]
		it := g.item(o)
		if on, ok := onList(g, open, o.Memory); ok {
			t := messages.Say("usual.on_list", "item", on.Name)
			p.OnList = append(p.OnList, Pruned{Item: it.Name, Why: reviewpack.PrunedOnList, Message: t.English(), Text: t})
			continue
		}
		p.Items = append(p.Items, it)
	}
	slices.SortStableFunc(p.Items, func(a, b Item) int {
		if a.ProbablyAtHome != b.ProbablyAtHome {
			if a.ProbablyAtHome {
				return 1
			}
			return -1
		}
		return 0
	})
	return p
}

func (g *group) item(o Options) Item {
	c := CycleOf(g.ps, g.name, g.product)
	it := Item{Name: g.name, Product: g.product, ProductID: g.id, Source: g.source, LastBought: c.Last,
		CycleDays: c.Days, CycleDefault: c.Default, ProbablyAtHome: c.AtHome(o.Now), cycle: c}
	it.Reason = reason(c, o.Now, o.Lang)
	return it
}

// reason says an item's cycle in words.
func reason(c Cycle, now time.Time, lang messages.Catalog) string {
	ago := c.DaysSince(now)
	var s string
	switch {
	case ago < 0:
		return lang.T("usual.favourite")
	case c.Default:
		s = lang.T("usual.every_default", "days", c.Days, "kind", lang.T("usual.kind_"+c.Kind), "ago", ago)
	default:
		s = lang.T("usual.every", "days", c.Days, "ago", ago)
	}
	if c.AtHome(now) {
		s += " — " + lang.T("usual.at_home")
	}
	return s
}

// openItems are the list's items still to buy.
func openItems(list []shoppinglist.Item) []shoppinglist.Item {
	var out []shoppinglist.Item
	for _, it := range list {
		if it.Status == shoppinglist.StatusNeedsAction || it.Status == "" {
			out = append(out, it)
		}
	}
	return out
}

// onList finds the list item that is this usual item: the same item key,
// the product the memory remembers for the list item, or a list name
// whose every word is in the product's name ("milk" for "2% Partly
// Skimmed Milk").
func onList(g *group, open []shoppinglist.Item, mem []products.Entry) (shoppinglist.Item, bool) {
	for _, li := range open {
		if matches(g, li, mem) {
			return li, true
		}
	}
	return shoppinglist.Item{}, false
}

func matches(g *group, li shoppinglist.Item, mem []products.Entry) bool {
	lk := products.Key(li.Name)
	if lk == "" {
		return false
	}
	if lk == products.Key(g.name) {
		return true
	}
	for _, e := range mem {
		if e.Key == lk && e.Standing() && ((g.id != "" && e.ProductID == g.id) || products.Key(e.Name) == products.Key(g.product)) {
			return true
		}
	}
	words := strings.Fields(products.Key(g.name + " " + g.product))
	for _, w := range strings.Fields(lk) {
		if !slices.Contains(words, w) && !slices.Contains(words, w+"s") && !slices.Contains(words, strings.TrimSuffix(w, "s")) {
			return false
		}
	}
	return true
}

// Warnings are the list's open items bought less than AtHomeShare of their
// cycle ago: warned about in the review pack ("bought 2 days ago, usually
// every 10 days"), never dropped.
func Warnings(h History, list []shoppinglist.Item, mem []products.Entry, now time.Time) []Pruned {
	var out []Pruned
	gs := groups(h.Purchases)
	keys := make([]string, 0, len(gs))
	for k := range gs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, li := range openItems(list) {
		for _, k := range keys {
			g := gs[k]
			if !matches(g, li, mem) {
				continue
			}
			c := CycleOf(g.ps, g.name, g.product)
			if c.AtHome(now) {
				t := messages.Say("usual.recent_warning", "ago", c.DaysSince(now), "days", c.Days)
				out = append(out, Pruned{ItemID: li.ID, Item: li.Name, Why: reviewpack.PrunedAtHome, Message: t.English(), Text: t})
			}
			break
		}
	}
	return out
}
