package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// BaselineModel is the setting that needs no model: code that searches
// the demo store for the item, as the list reads it, and adds the first
// in-stock, non-sponsored result (the quantity by the list's rule), with
// no judgement and never a question. A model's score is read against it:
// a suite where the baseline scores well tests the store's search order,
// not the shopper.
const BaselineModel = "baseline"

// WithBaseline returns the settings with the baseline added (last) when it
// is not among them: every comparison shows it.
func WithBaseline(settings []Setting) []Setting {
	for _, s := range settings {
		if s.Model == BaselineModel {
			return settings
		}
	}
	return append(append([]Setting(nil), settings...), Setting{Model: BaselineModel})
}

// The search results page as the store serves it: a tile per product,
// sponsored or not, with an add button when it is in stock.
var (
	tileRE     = regexp.MustCompile(`(?s)<article class="tile" data-product-id="([^"]+)"([^>]*)>(.*?)</article>`)
	tileNameRE = regexp.MustCompile(`(?s)<a class="tile-name"[^>]*>(.*?)</a>`)
	tileSizeRE = regexp.MustCompile(`(?s)<div class="tile-size[^"]*">(.*?)</div>`)
	signInRE   = regexp.MustCompile(`id="login-panel-sign-in" class="btn" href="([^"]+)"`)
)

// baselineTile is one tile of the results page.
type baselineTile struct {
	id, name, size     string
	inStock, sponsored bool
}

// baselinePick is the baseline's rule: the first in-stock, non-sponsored
// tile (false when there is none).
func baselinePick(tiles []baselineTile) (baselineTile, bool) {
	for _, t := range tiles {
		if t.inStock && !t.sponsored {
			return t, true
		}
	}
	return baselineTile{}, false
}

// readTiles reads the tiles of a results page.
func readTiles(page string) []baselineTile {
	var out []baselineTile
	for _, m := range tileRE.FindAllStringSubmatch(page, -1) {
		t := baselineTile{id: html.UnescapeString(m[1]), sponsored: strings.Contains(m[2], `data-sponsored="true"`), inStock: strings.Contains(m[3], `data-add="`)}
		if n := tileNameRE.FindStringSubmatch(m[3]); n != nil {
			t.name = html.UnescapeString(n[1])
		}
		if n := tileSizeRE.FindStringSubmatch(m[3]); n != nil {
			t.size = html.UnescapeString(n[1])
		}
		out = append(out, t)
	}
	return out
}

// shopBaseline runs the baseline on one case in its own demo store, over
// HTTP as a browser would (sign in, postal code, the search page, the
// add-to-cart call), and returns what the store holds after it.
func shopBaseline(ctx context.Context, c Case, log *slog.Logger) (outcome, error) {
	start := time.Now()
	srv, err := demostore.Start(ctx, demostore.Options{Logger: log})
	if err != nil {
		return outcome{}, fmt.Errorf("start the demo store: %w", err)
	}
	defer func() { _ = srv.Close() }()
	cl := srv.Client()
	p := shoppinglist.Parse(c.Item)
	item := shoppinglist.Item{Name: p.Name, Quantity: p.Quantity, Pieces: p.Pieces, Product: p.Product}
	res := report.ItemResult{Outcome: report.OutcomeNotFound}
	err = func() error {
		user, pass := srv.Credentials()
		if err := baselineSignIn(ctx, cl, srv.BaseURL(), user, pass); err != nil {
			return err
		}
		if _, err := baselinePost(ctx, cl, srv.BaseURL()+"/api/postal-code", map[string]any{"postalCode": "H2X 1Y4"}); err != nil {
			return err
		}
		page, err := baselineGet(ctx, cl, srv.BaseURL()+"/en/online-grocery/search?filter="+url.QueryEscape(p.Product))
		if err != nil {
			return err
		}
		t, ok := baselinePick(readTiles(page))
		if !ok {
			res.Explanation = "no in-stock result on the first page"
			return nil
		}
		n := item.PackagesFor(t.name + " " + t.size)
		if _, err := baselinePost(ctx, cl, srv.BaseURL()+"/api/cart/add", map[string]any{"productId": t.id, "quantity": n}); err != nil {
			return err
		}
		res.Outcome, res.Quantity, res.ProductName, res.URL = report.OutcomeAdded, n, t.name, demostore.ProductURL(t.id)
		return nil
	}()
	res.Duration = time.Since(start)
	return outcome{item: res, found: true, runErr: err, cart: srv.Cart(), checkouts: srv.CheckoutHits(), evil: srv.EvilHits()}, nil
}

// baselineSignIn signs in as a shopper does: the sign-in link of the
// home page, the identity host's form, the redirect back.
func baselineSignIn(ctx context.Context, cl *http.Client, base, user, pass string) error {
	home, err := baselineGet(ctx, cl, base+"/en")
	if err != nil {
		return err
	}
	m := signInRE.FindStringSubmatch(home)
	if m == nil {
		return fmt.Errorf("baseline: no sign-in link on the home page")
	}
	form := url.Values{"signInName": {user}, "password": {pass}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, html.UnescapeString(m[1]), strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("baseline: sign in: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err = baselineDo(cl, req)
	return err
}

func baselineGet(ctx context.Context, cl *http.Client, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("baseline: %w", err)
	}
	return baselineDo(cl, req)
}

func baselinePost(ctx context.Context, cl *http.Client, u string, v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("baseline: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(string(b)))
	if err != nil {
		return "", fmt.Errorf("baseline: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	return baselineDo(cl, req)
}

func baselineDo(cl *http.Client, req *http.Request) (string, error) {
	resp, err := cl.Do(req)
	if err != nil {
		return "", fmt.Errorf("baseline: %s %s: %w", req.Method, req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", fmt.Errorf("baseline: %s %s: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("baseline: %s %s: %s", req.Method, req.URL.Path, resp.Status)
	}
	return string(b), nil
}
