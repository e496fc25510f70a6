package usual

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Tab is what reading the store's pages needs of a reader tab
// (browser.Host.NewReader: only GET and HEAD leave it).
type Tab interface {
	Load(ctx context.Context, url string) error
	ReadElements(ctx context.Context, selectors map[string]string, attr string) (map[string]browser.Element, error)
	ReadRows(ctx context.Context, row string, fields map[string]string, attr string) ([]browser.Row, error)
}

// StoreReader reads the past orders and favourites named by the store
// profile's UsualPages, by code. A page it cannot read is said in
// History.NotRead, never guessed.
type StoreReader struct {
	Pages store.UsualPages
	// Orders is how many of the newest orders to read (0: all shown).
	Orders int
	Lang   messages.Catalog
}

// Read reads the orders and, with favourites, the favourites.
func (r StoreReader) Read(ctx context.Context, t Tab, favourites bool) History {
	var h History
	if r.Pages.OrdersURL == "" {
		h.NotRead = append(h.NotRead, r.Lang.T("usual.not_read", "page", r.Lang.T("usual.page_orders"), "why", "the store profile names no order-history page"))
	} else if ps, err := r.readOrders(ctx, t); err != nil {
		h.NotRead = append(h.NotRead, r.Lang.T("usual.not_read", "page", r.Lang.T("usual.page_orders"), "why", err.Error()))
	} else {
		h.Purchases = ps
	}
	if !favourites {
		return h
	}
	if r.Pages.FavouritesURL == "" {
		h.NotRead = append(h.NotRead, r.Lang.T("usual.not_read", "page", r.Lang.T("usual.page_favourites"), "why", "the store profile names no favourites page"))
	} else if fs, err := r.readFavourites(ctx, t); err != nil {
		h.NotRead = append(h.NotRead, r.Lang.T("usual.not_read", "page", r.Lang.T("usual.page_favourites"), "why", err.Error()))
	} else {
		h.Favourites = fs
	}
	return h
}

func (r StoreReader) readOrders(ctx context.Context, t Tab) ([]Purchase, error) {
	p := r.Pages
	if err := t.Load(ctx, p.OrdersURL); err != nil {
		return nil, fmt.Errorf("open %s: %w", p.OrdersURL, err)
	}
	date := p.OrderDate
	orders, err := t.ReadRows(ctx, p.Order, map[string]string{"date": date}, p.OrderIDAttr)
	if err != nil {
		return nil, err
	}
	if len(orders) == 0 {
		return nil, errors.New("no past order was found on the page (signed out, or laid out otherwise)")
	}
	var out []Purchase
	for i, o := range orders {
		if r.Orders > 0 && i >= r.Orders {
			break
		}
		id := strings.TrimSpace(o.Attr)
		at, err := r.orderDate(ctx, t, id, o.Fields["date"])
		if id == "" || err != nil {
			return nil, fmt.Errorf("order %d: no id or date (%q, %v)", i+1, id, err)
		}
		sel := strings.ReplaceAll(p.OrderLine, "{id}", cssString(id))
		lines, err := t.ReadRows(ctx, sel, map[string]string{"name": p.LineName, "qty": p.LineQuantity}, p.LineProductAttr)
		if err != nil {
			return nil, err
		}
		for j, ln := range lines {
			name := strings.Join(strings.Fields(ln.Fields["name"]), " ")
			if name == "" {
				return nil, fmt.Errorf("order %s, line %d: no name", id, j+1)
			}
			out = append(out, Purchase{Item: itemFromProduct(name), Product: name, ProductID: strings.TrimSpace(ln.Attr),
				Units: units(ln.Fields["qty"]), At: at, Source: FromOrder, Basket: id})
		}
	}
	return out, nil
}

// orderDate reads an order's date: its date element's DateAttr attribute,
// else its text (2006-01-02).
func (r StoreReader) orderDate(ctx context.Context, t Tab, id, text string) (time.Time, error) {
	if r.Pages.DateAttr != "" {
		sel := strings.ReplaceAll(r.Pages.OrderLine, "{id}", cssString(id))
		// The order's own block: the line selector up to its first space.
		block, _, _ := strings.Cut(sel, " ")
		els, err := t.ReadElements(ctx, map[string]string{"date": block + " " + r.Pages.OrderDate}, r.Pages.DateAttr)
		if err == nil && els["date"].Attr != "" {
			text = els["date"].Attr
		}
	}
	return time.ParseInLocation(time.DateOnly, strings.TrimSpace(text), time.Local)
}

func (r StoreReader) readFavourites(ctx context.Context, t Tab) ([]Purchase, error) {
	p := r.Pages
	if err := t.Load(ctx, p.FavouritesURL); err != nil {
		return nil, fmt.Errorf("open %s: %w", p.FavouritesURL, err)
	}
	rows, err := t.ReadRows(ctx, p.Favourite, map[string]string{"name": p.FavouriteName}, p.FavouriteProductAttr)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errors.New("no favourite was found on the page (none, signed out, or laid out otherwise)")
	}
	var out []Purchase
	for _, row := range rows {
		name := strings.Join(strings.Fields(row.Fields["name"]), " ")
		if name == "" {
			continue
		}
		out = append(out, Purchase{Item: itemFromProduct(name), Product: name, ProductID: strings.TrimSpace(row.Attr), Source: FromFavourite})
	}
	return out, nil
}

// units is the one number of a quantity's text ("× 2"), 1 when none.
func units(s string) int {
	f := strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) == 1 {
		if n, err := strconv.Atoi(f[0]); err == nil && n > 0 && n < 1000 {
			return n
		}
	}
	return 1
}

// cssString escapes s for a double-quoted CSS string.
func cssString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ").Replace(s)
}
