package demostore

import (
	"fmt"
	"strings"
	"time"
)

// The demo store's account pages that "the usual" reads (package usual):
// the household's past orders ("past baskets") and its favourites. They
// only show: nothing on them changes anything, and a reader tab reads them
// with GET requests only. Their paths are outside the order families the
// store policy refuses (an order page proper, /orders, is refused to
// every tab).
const (
	PastBasketsPath = "/en/my-account/past-baskets"
	FavouritesPath  = "/en/my-account/favourites"
)

// BasketLine is one line of a past order.
type BasketLine struct {
	ProductID string
	Quantity  int
}

// Basket is one past order of the demo account, dated relative to today.
type Basket struct {
	ID      string
	DaysAgo int
	Lines   []BasketLine
}

// pastBaskets are the demo account's past orders, newest first: milk
// every week (last bought 3 days ago: probably still at home), bread
// every week but skipped last time (due), coffee every two weeks (due),
// eggs every two weeks (bought 3 days ago: at home).
var pastBaskets = []Basket{
	{ID: "B-1042", DaysAgo: 3, Lines: []BasketLine{{"milk-2pct-4l", 1}, {"bananas-bunch", 1}, {"eggs-large-12", 1}}},
	{ID: "B-1035", DaysAgo: 10, Lines: []BasketLine{{"milk-2pct-4l", 1}, {"bananas-bunch", 1}, {"coffee-ground-340g", 1}, {"bread-white-675g", 1}}},
	{ID: "B-1027", DaysAgo: 17, Lines: []BasketLine{{"milk-2pct-4l", 2}, {"eggs-large-12", 1}, {"bread-white-675g", 1}}},
	{ID: "B-1019", DaysAgo: 24, Lines: []BasketLine{{"milk-2pct-4l", 1}, {"bananas-bunch", 1}, {"coffee-ground-340g", 1}, {"bread-white-675g", 1}}},
}

// favourites are the demo account's favourite products.
var favourites = []string{"yogurt-greek-750g", "orange-juice-1540ml", "coffee-ground-340g"}

// PastBaskets returns the demo account's past orders, newest first.
func PastBaskets() []Basket {
	out := make([]Basket, len(pastBaskets))
	for i, b := range pastBaskets {
		out[i] = b
		out[i].Lines = append([]BasketLine(nil), b.Lines...)
	}
	return out
}

// Favourites returns the product ids of the demo account's favourites.
func Favourites() []string { return append([]string(nil), favourites...) }

// accountContent renders the past baskets and favourites pages; it says
// whether path is one of them.
func (s *Server) accountContent(p *page, path string, logged bool) bool {
	l := p.l
	switch path {
	case PastBasketsPath:
		p.title = "Past baskets"
	case FavouritesPath:
		p.title = "Favourites"
	default:
		return false
	}
	if !logged {
		p.content = heading(p.title) + message("account-sign-in", "Please sign in to see your account.") + footer(l, 280)
		return true
	}
	var b strings.Builder
	b.WriteString(heading(p.title))
	rows := 0
	if path == PastBasketsPath {
		today := time.Now()
		b.WriteString(`<div id="past-baskets" style="position:absolute;left:40px;top:170px;width:900px">`)
		for _, bk := range pastBaskets {
			d := today.AddDate(0, 0, -bk.DaysAgo)
			fmt.Fprintf(&b, `<section class="basket" data-basket-id="%s"><h2>Order %s — <time class="basket-date" datetime="%s">%s</time></h2><ul>`,
				esc(bk.ID), esc(bk.ID), d.Format(time.DateOnly), esc(d.Format("January 2, 2006")))
			rows++
			for _, ln := range bk.Lines {
				if prod, ok := byID[ln.ProductID]; ok {
					fmt.Fprintf(&b, `<li class="basket-line" data-product-id="%s"><a class="basket-line-name" href="%s">%s</a> <span class="basket-line-qty">× %d</span></li>`,
						esc(prod.ID), esc(l.productURL(prod)), esc(l.name(prod)+", "+prod.Size), ln.Quantity)
					rows++
				}
			}
			b.WriteString(`</ul></section>`)
		}
		b.WriteString(`</div>`)
	} else {
		b.WriteString(`<ul id="favourites" style="position:absolute;left:40px;top:170px;width:900px">`)
		for _, id := range favourites {
			if prod, ok := byID[id]; ok {
				fmt.Fprintf(&b, `<li class="favourite" data-product-id="%s"><a class="favourite-name" href="%s">%s</a></li>`,
					esc(prod.ID), esc(l.productURL(prod)), esc(l.name(prod)+", "+prod.Size))
				rows++
			}
		}
		b.WriteString(`</ul>`)
	}
	b.WriteString(footer(l, 170+rows*22))
	p.content = b.String()
	return true
}
