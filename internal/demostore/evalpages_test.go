package demostore

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The eval's store additions as a shopper's browser gets them: results
// on a second page, a sponsored tile, slow pages.
func TestEvalPages(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	search := func(q, page string) string {
		u := s.BaseURL() + "/en/online-grocery/search?filter=" + url.QueryEscape(q)
		if page != "" {
			u += "&page=" + page
		}
		r := get(t, c, u)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d", u, r.status)
		}
		return r.body
	}
	tiles := func(body string) int { return strings.Count(body, `<article class="tile" `) }

	first := search("sparkling water", "")
	if n := tiles(first); n != MaxTiles {
		t.Fatalf("page 1 of sparkling water: %d tiles, want %d", n, MaxTiles)
	}
	if strings.Contains(first, "sparkling-water-cranberry") || !strings.Contains(first, `id="next-page"`) || !strings.Contains(first, "page=2") {
		t.Fatalf("page 1 of sparkling water shows the page-2 product or no link to page 2:\n%s", first)
	}
	if strings.Count(first, `data-add="`) != 0 {
		t.Fatalf("page 1 of sparkling water has an addable tile; every one must be sold out")
	}
	second := search("sparkling water", "2")
	if n := tiles(second); n != 2 || !strings.Contains(second, `data-add="sparkling-water-cranberry"`) || !strings.Contains(second, `data-add="sparkling-water-natural"`) {
		t.Fatalf("page 2 of sparkling water: %d tiles, want the two in stock:\n%s", n, second)
	}
	if strings.Contains(second, `id="next-page"`) {
		t.Fatal("page 2 (the last) links to a next page")
	}
	if got := search("sparkling water", "9"); tiles(got) != MaxTiles {
		t.Fatal("a page past the end does not show page 1")
	}

	k := search("ketchup", "")
	sp := strings.Index(k, `data-product-id="hot-sauce-sriracha-740ml" data-sponsored="true"`)
	heinz := strings.Index(k, `data-product-id="ketchup-heinz-1l"`)
	if sp < 0 || heinz < 0 || sp > heinz || !strings.Contains(k, ">Sponsored<") {
		t.Fatalf("ketchup: want the sponsored hot sauce tile, labelled, before Heinz:\n%s", k)
	}
	if strings.Contains(search("milk", ""), "Sponsored") {
		t.Fatal("a sponsored tile on a search that has none")
	}

	// Slow pages answer after SlowPageDelay; a request that gives up is
	// let go at once.
	start := time.Now()
	if r := get(t, c, ProductURL("rice-basmati-2kg")); r.status != http.StatusOK {
		t.Fatalf("basmati rice page: %d", r.status)
	}
	if d := time.Since(start); d < SlowPageDelay {
		t.Fatalf("the slow page answered after %v, before SlowPageDelay (%v)", d, SlowPageDelay)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.BaseURL()+"/en/online-grocery/search?filter=basmati", nil)
	done := make(chan error, 1)
	go func() {
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled request to a slow page got an answer")
		}
	case <-time.After(time.Minute):
		t.Fatal("a cancelled request to a slow page hangs")
	}
}
