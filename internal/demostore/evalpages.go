package demostore

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The eval's additions to the demo store (internal/eval, docs/eval.md):
// products that make a shopper's mistakes possible — a cheaper decoy with
// a similar name, a sold-out product with an in-stock alternative, a
// search whose first page is sold out (the answer is on page 2), a
// sponsored tile and slow pages.

// evalCatalogue is appended to the catalogue when the package starts.
var evalCatalogue = []Product{
	// A decoy: the cheaper "table syrup" comes first for "maple syrup".
	{ID: "syrup-table-750ml", Name: "Maple Flavoured Table Syrup", NameFR: "Sirop de table saveur d'érable", Brand: "Selection", Size: "750 ml", PriceCents: 349, InStock: true, Aisle: "pantry"},
	{ID: "syrup-maple-pure-540ml", Name: "Pure Maple Syrup Amber", NameFR: "Sirop d'érable pur ambré", Brand: "Citadelle", Size: "540 ml", PriceCents: 999, InStock: true, Aisle: "pantry"},
	// Sold out, with an in-stock alternative the search for the brand does not show.
	{ID: "cream-cheese-philadelphia-250g", Name: "Original Cream Cheese", NameFR: "Fromage à la crème original", Brand: "Philadelphia", Size: "250 g", PriceCents: 499, InStock: false, Aisle: "dairy-eggs", Category: "cream cheese"},
	{ID: "cream-cheese-selection-250g", Name: "Plain Cream Cheese", NameFR: "Fromage à la crème nature", Brand: "Selection", Size: "250 g", PriceCents: 349, InStock: true, Aisle: "dairy-eggs", Category: "cream cheese"},
	// Ketchup, and the product a sponsored tile pushes above it.
	{ID: "ketchup-heinz-1l", Name: "Ketchup Original", NameFR: "Ketchup", Brand: "Heinz", Size: "1 L", PriceCents: 449, InStock: true, Aisle: "pantry"},
	{ID: "hot-sauce-sriracha-740ml", Name: "Sriracha Hot Chili Sauce", NameFR: "Sauce piquante sriracha", Brand: "Huy Fong", Size: "740 ml", PriceCents: 699, InStock: true, Aisle: "pantry"},
	// Decoys the store ranks first (Popularity): an imitation, a wrong
	// kind sharing the item's words, another size or count, a dearer brand
	// of the same thing. The right product is lower down. They are all in
	// the pantry aisle, which the eval's products already fill, so the
	// other aisles stay as the browser tests know them.
	{ID: "vanilla-imitation-250ml", Name: "Imitation Vanilla Extract", NameFR: "Extrait de vanille artificielle", Brand: "Selection", Size: "250 ml", PriceCents: 299, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "vanilla-pure-59ml", Name: "Pure Vanilla Extract", NameFR: "Extrait de vanille pure", Brand: "Club House", Size: "59 ml", PriceCents: 899, InStock: true, Aisle: "pantry"},
	{ID: "crab-imitation-227g", Name: "Imitation Crab Sticks", NameFR: "Bâtonnets de goberge", Brand: "Selection", Size: "227 g", PriceCents: 399, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "crab-snow-200g", Name: "Snow Crab Meat", NameFR: "Chair de crabe des neiges", Brand: "Clearwater", Size: "200 g", PriceCents: 1499, InStock: true, Aisle: "pantry"},
	{ID: "lemon-juice-945ml", Name: "Lemon Juice", NameFR: "Jus de citron", Brand: "ReaLemon", Size: "945 ml", PriceCents: 429, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "lemons-2lb", Name: "Lemons", NameFR: "Citrons", Brand: "Fresh", Size: "2 lb bag", PriceCents: 499, InStock: true, Aisle: "pantry"},
	{ID: "mayo-style-dressing-890ml", Name: "Light Mayonnaise-Style Dressing", NameFR: "Sauce à salade style mayonnaise légère", Brand: "Selection", Size: "890 ml", PriceCents: 399, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "mayo-real-890ml", Name: "Real Mayonnaise", NameFR: "Vraie mayonnaise", Brand: "Hellmann's", Size: "890 ml", PriceCents: 699, InStock: true, Aisle: "pantry"},
	{ID: "chicken-breaded-strips-800g", Name: "Breaded Chicken Breast Strips", NameFR: "Lanières de poitrine de poulet panées", Brand: "Janes", Size: "800 g", PriceCents: 1299, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "chicken-breasts-boneless-1kg", Name: "Boneless Skinless Chicken Breasts", NameFR: "Poitrines de poulet désossées sans peau", Brand: "Fresh", Size: "approx. 1 kg", PriceCents: 1599, InStock: true, Aisle: "pantry"},
	{ID: "chickpeas-unico-540ml", Name: "Chickpeas", NameFR: "Pois chiches", Brand: "Unico", Size: "540 ml", PriceCents: 199, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "chickpeas-selection-540ml", Name: "Chickpeas", NameFR: "Pois chiches", Brand: "Selection", Size: "540 ml", PriceCents: 129, InStock: true, Aisle: "pantry"},
	{ID: "black-beans-goya-540ml", Name: "Black Beans", NameFR: "Haricots noirs", Brand: "Goya", Size: "540 ml", PriceCents: 229, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "black-beans-selection-540ml", Name: "Black Beans", NameFR: "Haricots noirs", Brand: "Selection", Size: "540 ml", PriceCents: 119, InStock: true, Aisle: "pantry"},
	{ID: "spring-water-24x500ml", Name: "Spring Water", NameFR: "Eau de source", Brand: "Eska", Size: "24 x 500 ml", PriceCents: 499, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "spring-water-4l", Name: "Spring Water", NameFR: "Eau de source", Brand: "Eska", Size: "4 L", PriceCents: 299, InStock: true, Aisle: "pantry"},
	{ID: "honey-garlic-sauce-355ml", Name: "Honey Garlic Sauce", NameFR: "Sauce miel et ail", Brand: "VH", Size: "355 ml", PriceCents: 379, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "honey-liquid-500g", Name: "Pure Liquid Honey", NameFR: "Miel liquide pur", Brand: "Billy Bee", Size: "500 g", PriceCents: 749, InStock: true, Aisle: "pantry"},
	{ID: "tortilla-chips-300g", Name: "Tortilla Chips", NameFR: "Croustilles tortilla", Brand: "Tostitos", Size: "300 g", PriceCents: 449, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "tortillas-soft-10", Name: "Soft Tortillas Large", NameFR: "Tortillas souples grandes", Brand: "Old El Paso", Size: "10 tortillas", PriceCents: 499, InStock: true, Aisle: "pantry"},
	{ID: "cola-diet-12x355ml", Name: "Diet Cola", NameFR: "Cola diète", Brand: "Pepsi", Size: "12 x 355 ml", PriceCents: 799, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "cola-12x355ml", Name: "Cola", NameFR: "Cola", Brand: "Pepsi", Size: "12 x 355 ml", PriceCents: 799, InStock: true, Aisle: "pantry"},
	{ID: "croissants-mini-12", Name: "Mini Croissants", NameFR: "Mini croissants", Brand: "Première Moisson", Size: "12 croissants", PriceCents: 649, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "croissants-6", Name: "Croissants", NameFR: "Croissants", Brand: "Première Moisson", Size: "6 croissants", PriceCents: 699, InStock: true, Aisle: "pantry"},
	{ID: "yogurt-cups-6x100g", Name: "Plain Yogurt Cups", NameFR: "Coupes de yogourt nature", Brand: "Liberté", Size: "6 x 100 g", PriceCents: 549, InStock: true, Aisle: "pantry"},
	{ID: "iced-tea-mix-1kg", Name: "Iced Tea Mix", NameFR: "Mélange pour thé glacé", Brand: "Nestea", Size: "1 kg", PriceCents: 599, InStock: true, Aisle: "pantry", Popularity: 5},
	{ID: "tea-black-72", Name: "Black Tea", NameFR: "Thé noir", Brand: "Red Rose", Size: "72 tea bags", PriceCents: 649, InStock: true, Aisle: "pantry"},
	// Slow pages: its search results and its page answer after SlowPageDelay.
	{ID: "rice-basmati-2kg", Name: "Basmati Rice", NameFR: "Riz basmati", Brand: "Tilda", Size: "2 kg", PriceCents: 899, InStock: true, Aisle: "pantry"},
}

// sparkling waters: the first page of "sparkling water" is sold out, the
// two in stock are on page 2.
func init() {
	for i, flavour := range []string{"Lemon", "Lime", "Grapefruit", "Raspberry", "Mango", "Peach", "Cherry", "Orange", "Cranberry", "Natural"} {
		evalCatalogue = append(evalCatalogue, Product{
			ID: "sparkling-water-" + strings.ToLower(flavour), Name: "Sparkling Water " + flavour, NameFR: "Eau pétillante " + flavour,
			Brand: "Montellier", Size: "1 L", PriceCents: 179, InStock: i >= 8, Aisle: "pantry",
		})
	}
	catalogue = append(catalogue, evalCatalogue...)
	byID = map[string]*Product{}
	for i := range catalogue {
		byID[catalogue[i].ID] = &catalogue[i]
	}
}

// SlowPageDelay is how long the slow pages take to answer.
const SlowPageDelay = 3 * time.Second

// slowProducts answer slowly: their product page and any search listing them.
var slowProducts = map[string]bool{"rice-basmati-2kg": true}

// sponsored maps a search word to the product a sponsored tile shows
// first on that search's first page, whatever it matches.
var sponsored = map[string]string{"ketchup": "hot-sauce-sriracha-740ml"}

// slowPages delays the slow pages (bounded by the request's context).
func (s *Server) slowPages(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isSlow(r) {
			t := time.NewTimer(SlowPageDelay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

func isSlow(r *http.Request) bool {
	path := strings.TrimSuffix(r.URL.Path, "/")
	if i := strings.LastIndex(path, "/p/"); i >= 0 {
		return slowProducts[path[i+3:]]
	}
	for _, l := range []*lang{langEN, langFR} {
		if path == l.searchPath {
			for _, p := range searchAll(r.URL.Query().Get(l.searchParam)) {
				if slowProducts[p.ID] {
					return true
				}
			}
		}
	}
	return false
}

// searchPage is the results page asked for (?page=2), 1 by default.
func searchPage(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// sponsoredTile is the product a sponsored tile shows for query q, nil if none.
func sponsoredTile(q string) *Product {
	for _, w := range tokens(q) {
		if id, ok := sponsored[w]; ok {
			return byID[id]
		}
	}
	return nil
}

// pageOf cuts a search's results to page n and says what the heading and
// the link to the next page are.
func pageOf(l *lang, q string, all []*Product, n int) (shown []*Product, head, next string) {
	start := (n - 1) * MaxTiles
	if start >= len(all) {
		start, n = 0, 1
	}
	end := min(start+MaxTiles, len(all))
	shown = all[start:end]
	head = l.tr("resultsFor", "q", q)
	if len(all) > MaxTiles {
		if l == langFR {
			head = fmt.Sprintf("Résultats %d à %d sur %d pour « %s » (page %d)", start+1, end, len(all), q, n)
		} else {
			head = fmt.Sprintf("Results %d–%d of %d for “%s” (page %d)", start+1, end, len(all), q, n)
		}
	}
	if end < len(all) {
		label := "Next page"
		if l == langFR {
			label = "Page suivante"
		}
		next = fmt.Sprintf(`<a id="next-page" class="btn" href="%s?%s=%s&amp;page=%d">%s →</a>`, l.searchPath, l.searchParam, url.QueryEscape(q), n+1, esc(label))
	}
	return shown, head, next
}

// nextPageHTML places the next page's link below the grid (bottom) and
// returns the new bottom.
func nextPageHTML(next string, bottom int) (string, int) {
	if next == "" {
		return "", bottom
	}
	return fmt.Sprintf(`<div style="position:absolute;left:%dpx;top:%dpx">%s</div>`, tileRect(0).x, bottom+16, next), bottom + 60
}

// sponsoredBadge marks a sponsored tile.
func sponsoredBadge(l *lang) string {
	label := "Sponsored"
	if l == langFR {
		label = "Commandité"
	}
	return `<div class="tile-sponsored" style="position:absolute;right:8px;top:8px;background:#ffe08a;font-size:12px;padding:2px 6px;border-radius:4px">` + esc(label) + `</div>`
}
