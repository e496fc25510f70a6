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
