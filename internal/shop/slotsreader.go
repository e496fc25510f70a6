package shop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/slots"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// SlotsHost opens reader tabs: tabs from which only GETs and HEADs leave
// (*browser.Host).
type SlotsHost interface {
	NewReader(ctx context.Context) (*browser.Tab, error)
}

// PageSlotsReader reads the store's delivery slots page by code, in a
// reader tab, with the store profile's Slots selectors: the days and
// windows offered for the household's address, each with its fee and
// whether it is full. It never chooses, reserves or books a slot — it
// clicks nothing, and its tab cannot send anything but a GET or a HEAD,
// whatever the page's scripts try. A page it cannot read is an error that
// says so (metro's reader is best effort), never a guessed reading.
type PageSlotsReader struct {
	URL  string
	Page store.SlotsPage
	// Now is the clock, and its location the household's (nil: time.Now).
	Now func() time.Time
}

// NewPageSlotsReader is the slots reader of profile p (nil: p has none).
func NewPageSlotsReader(p store.Profile) *PageSlotsReader {
	if p.SlotsURL == "" || p.Slots.Row == "" || p.Slots.Root == "" {
		return nil
	}
	return &PageSlotsReader{URL: p.SlotsURL, Page: p.Slots}
}

// slotsTab is what reading the slots page needs of a tab.
type slotsTab interface {
	Load(ctx context.Context, url string) error
	ReadElements(ctx context.Context, selectors map[string]string, attr string) (map[string]browser.Element, error)
	ReadRows(ctx context.Context, row string, fields map[string]string, attr string) ([]browser.Row, error)
}

// ReadSlots opens the slots page in a new reader tab of h and reads it.
func (p *PageSlotsReader) ReadSlots(ctx context.Context, h SlotsHost) (slots.Reading, error) {
	if p == nil || p.URL == "" || p.Page.Row == "" || p.Page.Root == "" {
		return slots.Reading{}, errors.New("read the delivery slots: the store profile has no slots reader")
	}
	tab, err := h.NewReader(ctx)
	if err != nil {
		return slots.Reading{}, fmt.Errorf("read the delivery slots: open a reader tab: %w", err)
	}
	defer func() { _ = tab.Close() }()
	if !tab.IsReader() { // cannot happen with a *browser.Host; never read otherwise
		return slots.Reading{}, errors.New("read the delivery slots: the tab is not a reader")
	}
	if err := tab.Load(ctx, p.URL); err != nil {
		return slots.Reading{}, fmt.Errorf("read the delivery slots: open %s: %w", p.URL, err)
	}
	return p.read(ctx, tab)
}

// read reads the slots from a loaded slots page.
func (p *PageSlotsReader) read(ctx context.Context, t slotsTab) (slots.Reading, error) {
	now := p.now()
	els, err := t.ReadElements(ctx, map[string]string{"root": p.Page.Root}, "")
	if err != nil {
		return slots.Reading{}, fmt.Errorf("read the delivery slots: %w", err)
	}
	if !els["root"].Found {
		return slots.Reading{}, errors.New("read the delivery slots: the page shows no delivery slots (signed out, no delivery address, or laid out otherwise)")
	}
	rows, err := t.ReadRows(ctx, p.Page.Row, map[string]string{
		"day": p.Page.Day, "time": p.Page.Time, "fee": p.Page.Fee, "full": p.Page.Full,
	}, p.Page.DateAttr)
	if err != nil {
		return slots.Reading{}, fmt.Errorf("read the delivery slots: %w", err)
	}
	r := slots.Reading{ReadAt: now, Slots: []slots.Slot{}}
	for i, row := range rows {
		dayText := row.Fields["day"]
		if p.Page.DateAttr != "" {
			dayText = row.Attr
		}
		day, ok := slots.ParseDay(dayText, now)
		if !ok {
			return slots.Reading{}, fmt.Errorf("read the delivery slots: window %d: cannot read the day %q", i+1, clip(dayText))
		}
		start, end, ok := slots.ParseWindow(day, row.Fields["time"])
		if !ok {
			return slots.Reading{}, fmt.Errorf("read the delivery slots: window %d: cannot read the hours %q", i+1, clip(row.Fields["time"]))
		}
		s := slots.Slot{Start: start, End: end, Available: strings.TrimSpace(row.Fields["full"]) == ""}
		s.Fee, s.FeeKnown = slots.ParseFee(row.Fields["fee"])
		r.Slots = append(r.Slots, s)
	}
	return r.Sorted(), nil
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

func (p *PageSlotsReader) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}
