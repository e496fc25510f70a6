package shop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// cartPage is a cart page as code reads it: which blocks are there, the
// header's count, and the lines' texts.
type cartPage struct {
	*fakeTab
	root, empty bool
	count       string // the header's count ("" when absent)
	rows        []browser.Row
	loaded      string
}

func (p *cartPage) Load(_ context.Context, u string) error { p.loaded = u; return nil }

func (p *cartPage) ReadElements(_ context.Context, sels map[string]string, _ string) (map[string]browser.Element, error) {
	return map[string]browser.Element{
		"root":  {Found: p.root},
		"empty": {Found: p.empty},
		"count": {Found: p.count != "", Text: p.count},
	}, nil
}

func (p *cartPage) ReadRows(context.Context, string, map[string]string, string) ([]browser.Row, error) {
	return p.rows, nil
}

func row(id, name, qty, unit, total string) browser.Row {
	return browser.Row{Attr: id, Fields: map[string]string{"name": name, "qty": qty, "unit": unit, "total": total}}
}

// TestPageCartReader: the cart page is believed only when the page
// confirms the reading; anything doubtful is an error, so the review asks
// the model instead of judging the run on a misreading.
func TestPageCartReader(t *testing.T) {
	milk := row("m1", " Natrel 2% Milk\n2 L ", "2", "$5.49", "$10.98")
	bread := row("b1", "POM White Bread 675 g", "1", "", "$3.99")
	tests := []struct {
		name    string
		exact   bool
		page    cartPage
		want    string // lines as "id name qty cents; …"
		wantErr string
	}{
		{name: "exact reader, two lines", exact: true, page: cartPage{root: true, rows: []browser.Row{milk, bread}},
			want: "m1 Natrel 2% Milk 2 L 2 549; b1 POM White Bread 675 g 1 399"},
		{name: "empty cart, said by the page", exact: true, page: cartPage{root: true, empty: true}, want: ""},
		{name: "no lines and no empty marker", exact: true, page: cartPage{root: true}, wantErr: "does not say the cart is empty"},
		{name: "signed out: no cart block", exact: true, page: cartPage{rows: []browser.Row{milk}}, wantErr: "shows no cart"},
		{name: "a line without a name", exact: true, page: cartPage{root: true, rows: []browser.Row{row("x", " ", "1", "$1.00", "")}}, wantErr: "line 1"},
		{name: "a quantity with two numbers", exact: true, page: cartPage{root: true, rows: []browser.Row{row("x", "Milk", "Only 3 left – 1", "$1.00", "")}}, wantErr: "line 1"},
		{name: "an absurd quantity", exact: true, page: cartPage{root: true, rows: []browser.Row{row("x", "Milk", "99999999999999999999", "$1.00", "")}}, wantErr: "line 1"},
		{name: "zero units", exact: true, page: cartPage{root: true, rows: []browser.Row{row("x", "Milk", "0", "$1.00", "")}}, wantErr: "line 1"},
		{name: "best effort, header agrees", page: cartPage{root: true, count: "3", rows: []browser.Row{milk, bread}},
			want: "m1 Natrel 2% Milk 2 L 2 549; b1 POM White Bread 675 g 1 399"},
		{name: "best effort, a line missed", page: cartPage{root: true, count: "4", rows: []browser.Row{milk, bread}}, wantErr: "header counts 4"},
		{name: "best effort, no header count", page: cartPage{root: true, rows: []browser.Row{milk}}, wantErr: "cannot confirm"},
		{name: "best effort, empty and header 0", page: cartPage{root: true, empty: true, count: "0"}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := tc.page
			h := &fakeHost{authed: true}
			h.tabFor = func(ft *fakeTab) Tab { page.fakeTab = ft; return &page }
			rd := &PageCartReader{CartURL: "https://shop.test/cart", CartCount: "#count",
				Page: store.CartPage{Root: "#cart", Line: ".line", Empty: "#empty", Exact: tc.exact}}
			c, err := rd.ReadCart(context.Background(), h)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q (cart %+v)", err, tc.wantErr, c)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range c.Lines {
				got = append(got, fmt.Sprintf("%s %s %d %d", l.ProductID, l.Name, l.Quantity, l.Price.UnitCents))
			}
			if strings.Join(got, "; ") != tc.want || c.Source != CartFromPage || c.Usage.Calls != 0 || page.loaded != rd.CartURL {
				t.Errorf("read %q from %s (source %s, %d calls), want %q", strings.Join(got, "; "), page.loaded, c.Source, c.Usage.Calls, tc.want)
			}
			if h.open != 0 {
				t.Errorf("%d tabs left open", h.open)
			}
		})
	}
}

// staticCart is a CartReader with a fixed answer.
type staticCart struct {
	c     Cart
	err   error
	calls int
}

func (s *staticCart) ReadCart(context.Context, Host) (Cart, error) { s.calls++; return s.c, s.err }

// TestFallbackCartReader: the model reads the cart only when the page
// could not be read by code; a cancelled run does not ask it.
func TestFallbackCartReader(t *testing.T) {
	byPage := Cart{Source: CartFromPage}
	byModel := Cart{Source: CartFromModel}
	tests := []struct {
		name       string
		page       *staticCart
		cancel     bool
		wantSource string
		wantModel  int
		wantErr    string
	}{
		{name: "page read", page: &staticCart{c: byPage}, wantSource: CartFromPage},
		{name: "page doubtful", page: &staticCart{err: errors.New("header counts 4")}, wantSource: CartFromModel, wantModel: 1},
		{name: "cancelled", page: &staticCart{err: context.Canceled}, cancel: true, wantModel: 0, wantErr: "canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			model := &staticCart{c: byModel}
			c, err := (&FallbackCartReader{First: tc.page, Then: model}).ReadCart(ctx, &fakeHost{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || c.Source != tc.wantSource {
				t.Fatalf("source %q, err %v; want %q", c.Source, err, tc.wantSource)
			}
			if model.calls != tc.wantModel {
				t.Errorf("the model was asked %d times, want %d", model.calls, tc.wantModel)
			}
		})
	}
}
