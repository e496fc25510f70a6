package usual

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// pageTab is a reader tab on pages that fail to load or show rows.
type pageTab struct {
	refuse map[string]error
	rows   map[string][]browser.Row // by row selector
	loaded []string
}

func (p *pageTab) Load(_ context.Context, u string) error {
	p.loaded = append(p.loaded, u)
	return p.refuse[u]
}

func (p *pageTab) ReadElements(context.Context, map[string]string, string) (map[string]browser.Element, error) {
	return map[string]browser.Element{}, nil
}

func (p *pageTab) ReadRows(_ context.Context, row string, _ map[string]string, _ string) ([]browser.Row, error) {
	return p.rows[row], nil
}

// TestMetroReaderSaysWhatItCouldNotRead: metro's order history is refused
// by the store policy and its favourites page shows nothing readable: both
// are said, nothing is guessed.
func TestMetroReaderSaysWhatItCouldNotRead(t *testing.T) {
	pages := store.Metro().Usual
	if v := store.Metro().CheckURL(pages.OrdersURL); v.Allowed {
		t.Fatalf("metro's order history %s is allowed: %+v", pages.OrdersURL, v)
	}
	tab := &pageTab{refuse: map[string]error{pages.OrdersURL: errors.New("pages under /orders may not be opened by the agent")}}
	h := StoreReader{Pages: pages, Lang: messages.For("en")}.Read(context.Background(), tab, true)
	if len(h.Purchases) != 0 || len(h.Favourites) != 0 || len(h.NotRead) != 2 ||
		!strings.Contains(h.NotRead[0], "could not read the store's order history") || !strings.Contains(h.NotRead[0], "/orders") ||
		!strings.Contains(h.NotRead[1], "favourites") {
		t.Fatalf("history %+v", h)
	}
}

// TestReaderRefusesUndatedOrders: an order without a readable date is not
// read at all (no purchase at a guessed date).
func TestReaderRefusesUndatedOrders(t *testing.T) {
	pages := store.Demo().Usual
	tab := &pageTab{rows: map[string][]browser.Row{
		pages.Order: {{Attr: "B-1", Fields: map[string]string{"date": "last Tuesday"}}},
	}}
	h := StoreReader{Pages: pages, Lang: messages.For("en")}.Read(context.Background(), tab, false)
	if len(h.Purchases) != 0 || len(h.NotRead) != 1 || !strings.Contains(h.NotRead[0], "order 1") {
		t.Fatalf("history %+v", h)
	}
}
