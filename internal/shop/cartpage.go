package shop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Cart sources: how a cart was read.
const (
	CartFromPage  = "page"  // by code, from the cart page (PageCartReader)
	CartFromModel = "model" // by the model, from screenshots (ModelCartReader)
)

// PageCartReader reads the cart page by code, with the store profile's
// CartPage selectors: no model call. It believes only a reading the page
// confirms — the cart's block present, every line with a name and a sane
// quantity, an empty cart only where the page says so, and, for a
// best-effort reader, the lines' units equal to the header's count — and
// returns an error otherwise (FallbackCartReader then asks the model).
type PageCartReader struct {
	CartURL string
	Page    store.CartPage
	// CartCount is the header's count of every unit in the cart (the
	// profile's ProductPage.CartCount): a best-effort reading must agree
	// with it.
	CartCount string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

var _ CartReader = (*PageCartReader)(nil)

// cartPageTab is what reading the cart page needs of a tab.
type cartPageTab interface {
	Tab
	Load(ctx context.Context, url string) error
	ReadElements(ctx context.Context, selectors map[string]string, attr string) (map[string]browser.Element, error)
	ReadRows(ctx context.Context, row string, fields map[string]string, attr string) ([]browser.Row, error)
}

// ReadCart opens the cart page in a new tab of h and reads it.
func (p *PageCartReader) ReadCart(ctx context.Context, h Host) (Cart, error) {
	if p.CartURL == "" || p.Page.Line == "" || p.Page.Root == "" {
		return Cart{}, errors.New("read the cart page: the store profile has no cart page reader")
	}
	tab, err := h.NewTab(ctx)
	if err != nil {
		return Cart{}, fmt.Errorf("read the cart page: open a tab: %w", err)
	}
	defer func() { _ = tab.Close() }()
	t, ok := tab.(cartPageTab)
	if !ok {
		return Cart{}, fmt.Errorf("read the cart page: a %T cannot read a page", tab)
	}
	if err := t.Load(ctx, p.CartURL); err != nil {
		return Cart{}, fmt.Errorf("read the cart page: open %s: %w", p.CartURL, err)
	}
	return p.read(ctx, t)
}

// read reads the cart from a loaded cart page.
func (p *PageCartReader) read(ctx context.Context, t cartPageTab) (Cart, error) {
	els, err := t.ReadElements(ctx, map[string]string{"root": p.Page.Root, "empty": p.Page.Empty, "count": p.CartCount}, "")
	if err != nil {
		return Cart{}, fmt.Errorf("read the cart page: %w", err)
	}
	if !els["root"].Found {
		return Cart{}, errors.New("read the cart page: the page shows no cart (signed out, or laid out otherwise)")
	}
	rows, err := t.ReadRows(ctx, p.Page.Line, map[string]string{
		"name": p.Page.Name, "qty": p.Page.Quantity, "unit": p.Page.UnitPrice, "total": p.Page.LineTotal,
	}, p.Page.ProductIDAttr)
	if err != nil {
		return Cart{}, fmt.Errorf("read the cart page: %w", err)
	}
	c := Cart{Lines: []CartLine{}, ReadAt: p.now(), Source: CartFromPage}
	if len(rows) == 0 && (p.Page.Empty == "" || !els["empty"].Found) {
		return Cart{}, errors.New("read the cart page: no cart line was found and the page does not say the cart is empty")
	}
	for i, r := range rows {
		name := strings.Join(strings.Fields(r.Fields["name"]), " ")
		qty, ok := countIn(r.Fields["qty"], maxUnits)
		if name == "" || !ok || qty < 1 {
			return Cart{}, fmt.Errorf("read the cart page: line %d reads %q × %q", i+1, r.Fields["qty"], name)
		}
		price := money.Parse(r.Fields["unit"])
		if !price.Known {
			if tot := money.Parse(r.Fields["total"]); tot.Known {
				price = money.Price{Text: r.Fields["total"], UnitCents: tot.UnitCents / money.Cents(qty), Known: true}
			}
		}
		c.Lines = append(c.Lines, CartLine{Name: name, ProductID: strings.TrimSpace(r.Attr), Quantity: qty, Price: price})
	}
	if !p.Page.Exact {
		n, ok := countIn(els["count"].Text, maxCartCount)
		if !els["count"].Found || !ok {
			return Cart{}, fmt.Errorf("read the cart page: the header's cart count %q cannot confirm the reading", els["count"].Text)
		}
		if n != c.Units() {
			return Cart{}, fmt.Errorf("read the cart page: %d units read in %d lines, the header counts %d", c.Units(), len(c.Lines), n)
		}
	}
	return c, nil
}

func (p *PageCartReader) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// FallbackCartReader reads the cart with First and, when First cannot
// (its reading was not confirmed), with Then: the cart page by code, then
// by the model.
type FallbackCartReader struct {
	First, Then CartReader
	Logger      *slog.Logger
}

var _ CartReader = (*FallbackCartReader)(nil)

// ReadCart reads the cart.
func (f *FallbackCartReader) ReadCart(ctx context.Context, h Host) (Cart, error) {
	c, err := f.First.ReadCart(ctx, h)
	if err == nil || ctx.Err() != nil || f.Then == nil {
		return c, err
	}
	if f.Logger != nil {
		f.Logger.Info("the cart page was not read by code; asking the model", "why", err)
	}
	c2, err2 := f.Then.ReadCart(ctx, h)
	if err2 != nil {
		return c2, fmt.Errorf("%w (and by code: %v)", err2, err)
	}
	return c2, nil
}
