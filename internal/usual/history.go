// Package usual proposes "the usual": the items a household buys again and
// again, from what gemini-supply has seen it buy (its run journals and
// product memory) and, where the store profile can read them, the store's
// own past orders and favourites (read by code in a reader tab, reader.go).
// Each item gets a restock cycle (cycle.go); an item bought less than 70 %
// of its cycle ago is probably still at home. The proposal (proposal.go)
// leaves out what is already on the list and adds nothing by itself: the
// household confirms what goes on the list.
package usual

import (
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// Sources of a purchase or a proposed item (the JSON's "source").
const (
	FromHistory   = "history"   // a gemini-supply run added it to the cart
	FromOrder     = "order"     // the store's order history
	FromFavourite = "favourite" // the store's favourites
)

// Purchase is one time an item was bought.
type Purchase struct {
	// Item is the list's name for it ("milk"); for a store order, the
	// product's name without its size.
	Item      string    `json:"item"`
	Product   string    `json:"product,omitempty"`
	ProductID string    `json:"product_id,omitempty"`
	Units     int       `json:"units,omitempty"`
	At        time.Time `json:"at"`
	Source    string    `json:"source"`
	// Basket names the order or run it belongs to ("B-1042", a run id).
	Basket string `json:"basket,omitempty"`
}

// History is what the household bought and favours.
type History struct {
	Purchases  []Purchase `json:"purchases"`
	Favourites []Purchase `json:"favourites,omitempty"`
	// NotRead says what could not be read (a best-effort store reader).
	NotRead []string `json:"not_read,omitempty"`
}

// FromJournals is every item a run added to the cart, dated when the item
// finished (else when the run started).
func FromJournals(recs []shop.JournalRecord) []Purchase {
	var out []Purchase
	for _, rec := range recs {
		for _, it := range rec.Items {
			r := it.Result
			if r == nil || r.Outcome != report.OutcomeAdded {
				continue
			}
			at := rec.StartedAt
			if it.FinishedAt != nil {
				at = *it.FinishedAt
			}
			name := it.Name
			if name == "" {
				name = r.ItemName
			}
			out = append(out, Purchase{Item: name, Product: r.ProductName, ProductID: productIDFromURL(r.URL),
				Units: r.Quantity, At: at, Source: FromHistory, Basket: rec.RunID})
		}
	}
	return out
}

// FromMemory is the product memory's last purchase of each item that has
// no dated purchase in ps already (a journal deleted, or a run from before
// journals): one purchase per item, at its LastSeen.
func FromMemory(entries []products.Entry, ps []Purchase) []Purchase {
	seen := map[string]bool{}
	for _, p := range ps {
		seen[products.Key(p.Item)] = true
	}
	var out []Purchase
	for _, e := range entries {
		if !e.Standing() || e.LastSeen.IsZero() || seen[e.Key] {
			continue
		}
		out = append(out, Purchase{Item: e.Key, Product: e.Name, ProductID: e.ProductID, Units: e.Quantity,
			At: e.LastSeen, Source: FromHistory, Basket: "memory"})
	}
	return out
}

// productIDFromURL is the product id of a store product address
// (".../p/ID"), or "".
func productIDFromURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := len(segs) - 2; i >= 0; i-- {
		if segs[i] == "p" {
			return segs[i+1]
		}
	}
	return ""
}

// itemFromProduct is the list name of a store product: its name without
// the size after the first comma ("2% Partly Skimmed Milk, 4 L"; "Bananas,
// bunch of 6, approx. 1.2 kg").
func itemFromProduct(name string) string {
	name = strings.Join(strings.Fields(name), " ")
	if i := strings.Index(name, ", "); i > 0 {
		return name[:i]
	}
	return name
}

// baskets groups purchases by basket, newest first.
func baskets(ps []Purchase) [][]Purchase {
	by := map[string][]Purchase{}
	var keys []string
	for _, p := range ps {
		k := p.Source + "|" + p.Basket
		if p.Basket == "" || p.Basket == "memory" {
			k = p.Source + "|" + p.At.Format(time.DateOnly)
		}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], p)
	}
	sort.SliceStable(keys, func(i, j int) bool { return latest(by[keys[i]]).After(latest(by[keys[j]])) })
	out := make([][]Purchase, len(keys))
	for i, k := range keys {
		out[i] = by[k]
	}
	return out
}

func latest(ps []Purchase) time.Time {
	var t time.Time
	for _, p := range ps {
		if p.At.After(t) {
			t = p.At
		}
	}
	return t
}
