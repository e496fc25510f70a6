package panel

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// slotsReading is a reading of two days in the store's time zone (not the
// test browser's): Friday evening full, Saturday 10:00 the next available.
func slotsReading() slots.Reading {
	store := time.FixedZone("EST", -5*3600)
	at := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, store) }
	return slots.Reading{ReadAt: at(27, 9), Slots: []slots.Slot{
		{Start: at(27, 18), End: at(27, 20), Fee: 699, FeeKnown: true},
		{Start: at(28, 8), End: at(28, 10), Fee: 299, FeeKnown: true},
		{Start: at(28, 10), End: at(28, 12), Fee: 499, FeeKnown: true, Available: true},
		{Start: at(28, 14), End: at(28, 16), Available: true},
	}}
}

// TestSlotsCardInChromium: the panel's slots card shows the last reading
// of the delivery slots in the household's language — the next available
// window first ("Next delivery: Saturday 10:00–12:00, $4.99"), then each
// day's windows with their fee, full or available, in the store's time
// zone — with no button that could choose one; a reading that failed is
// said with its reason; a reading between runs leaves the run shown as
// it was.
func TestSlotsCardInChromium(t *testing.T) {
	for _, tc := range []struct {
		lang, next, day, hours, fee, full, free, unread string
	}{
		{"en", "Next delivery: Saturday 10:00–12:00, $4.99", "Saturday 2026-11-28", "10:00–12:00", "$4.99", "full", "available", "The delivery slots could not be read"},
		{"fr", "Prochaine livraison : samedi 10 h 00 – 12 h 00, 4,99\u00a0$", "samedi 2026-11-28", "10 h 00 – 12 h 00", "4,99\u00a0$", "complète", "libre", "Les plages de livraison n'ont pas pu être lues"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			c := &control{}
			cat := messages.For(tc.lang)
			p, err := New(Options{Start: c.start, Stop: c.stop, Messages: cat})
			if err != nil {
				t.Fatal(err)
			}
			bus := &runstatus.Bus{}
			page, text := openPanel(t, p, bus, playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
			visible := func(sel string) bool { v, _ := page.Locator(sel).First().IsVisible(); return v }
			testwait.Until(t, "the page to load", 60*time.Second, func() bool { return text("#state") != "" })
			if visible("#slots") {
				t.Fatal("the slots card shows before any reading")
			}

			// A run that added one item, then a reading of the slot scout.
			bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "r1", State: runstatus.StateReviewReady,
				Progress: runstatus.Progress{Total: 1, Done: 1, Added: 1},
				Summary:  &report.Summary{RunID: "r1", Items: []report.ItemResult{{ItemID: "1", ItemName: "milk", Quantity: 1, Outcome: report.OutcomeAdded}}}})
			r := slotsReading()
			bus.Publish(runstatus.Event{Kind: runstatus.KindSlotsRead, Slots: &r})
			testwait.Until(t, "the slots card", 60*time.Second, func() bool { return visible("#slots") && text("#slots-next") != "" })
			if got := text("#slots-next"); got != tc.next {
				t.Errorf("next %q, want %q", got, tc.next)
			}
			days := page.Locator("#slots-days .slots-day")
			if n, _ := days.Count(); n != 2 {
				t.Fatalf("%d days, want 2", n)
			}
			if got, _ := days.Nth(1).Locator("h3").TextContent(); got != tc.day {
				t.Errorf("second day %q, want %q", got, tc.day)
			}
			next := page.Locator(`#slots-days li[data-next="true"]`)
			if n, _ := next.Count(); n != 1 {
				t.Fatalf("%d windows marked next, want 1", n)
			}
			if got, _ := next.TextContent(); !strings.Contains(got, tc.hours) || !strings.Contains(got, tc.fee) || !strings.Contains(got, tc.free) {
				t.Errorf("the next window reads %q", got)
			}
			if n, _ := page.Locator(`#slots-days li[data-available="false"]`).Count(); n != 2 {
				t.Errorf("%d full windows, want 2", n)
			}
			if got, _ := page.Locator(`#slots-days li[data-available="false"]`).First().TextContent(); !strings.Contains(got, tc.full) {
				t.Errorf("a full window reads %q", got)
			}
			if n, _ := page.Locator("#slots button, #slots a, #slots input").Count(); n != 0 {
				t.Errorf("the slots card has %d controls: a window must never be chosen from it", n)
			}
			if got := text("#slots-read"); !strings.Contains(got, "2026-11-27 09:00") {
				t.Errorf("read at %q", got)
			}
			if left := cat.Foreign(text("#slots")); tc.lang == "fr" && len(left) > 0 {
				t.Errorf("English in the French card: %q", left)
			}
			// The reading did not touch the run shown.
			if got := text("#counts"); !strings.Contains(got, "1") {
				t.Errorf("the run's counts after a slots reading: %q", got)
			}

			// The next run could not read them: the card says why.
			bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "r2", State: runstatus.StateReviewReady,
				Pack: &reviewpack.Pack{RunID: "r2", Items: []reviewpack.Item{},
					Slots: reviewpack.NewSlots(slots.Reading{}, errors.New("read the delivery slots: the page shows no delivery slots"))}})
			testwait.Until(t, "the reason", 60*time.Second, func() bool { return visible("#slots-error") })
			if got := text("#slots-error"); !strings.HasPrefix(got, tc.unread) || !strings.Contains(got, "shows no delivery slots") {
				t.Errorf("error %q", got)
			}
			if visible("#slots-next") || visible("#slots-days li") {
				t.Error("the card still shows the windows of the reading before")
			}
		})
	}
}

// TestASlotsReadingLeavesTheRunShown: a reading of the slot scout between
// runs changes the slots card only — the run's state, progress and items
// on the page stay as they were (GET /api/slots has the reading).
func TestASlotsReadingLeavesTheRunShown(t *testing.T) {
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop})
	if err != nil {
		t.Fatal(err)
	}
	p.apply(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "r1", State: runstatus.StateReviewReady,
		Progress: runstatus.Progress{Total: 1, Done: 1, Added: 1}, Message: "done"})
	r := slotsReading()
	p.apply(runstatus.Event{Kind: runstatus.KindSlotsRead, Slots: &r})
	p.mu.Lock()
	s := p.snapshotLocked()
	p.mu.Unlock()
	if s.RunID != "r1" || s.State != runstatus.StateReviewReady || s.Progress.Added != 1 || s.Progress.Done != 1 || s.Message != "done" {
		t.Errorf("after a slots reading the run shown is %+v", s)
	}
	if s.SlotsSeq != 1 {
		t.Errorf("slots_seq %d, want 1", s.SlotsSeq)
	}
	v := slotsView(messages.Catalog{}, p.slots)
	if !v.Read || v.Next != "Next delivery: Saturday 10:00–12:00, $4.99" || len(v.Days) != 2 || len(v.Slots) != 4 {
		t.Errorf("view %+v", v)
	}
}
