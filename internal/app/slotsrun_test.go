package app

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// TestARunReadsTheSlotsForItsPackAndSummary: a run of the demo store
// reads the delivery slots after its review, in a reader tab of its own
// browser: the review pack's slots section has when they were read, the
// next available window (the store's first window not full) with its
// fee and the free windows today and tomorrow; the summary says "Next
// delivery: <day> <hours>, <fee>" in English and French. The slot scout
// takes that reading (published once on the bus) instead of reading the
// slots again, and no reservation ever reaches the store.
func TestARunReadsTheSlotsForItsPackAndSummary(t *testing.T) {
	e := newE2E(t, "milk")
	bus := &runstatus.Bus{}
	e.deps.Bus = bus
	sub := bus.Subscribe(1024)
	defer sub.Close()
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Pack == nil || res.Pack.Slots == nil {
		t.Fatalf("the pack has no slots section: %+v", res.Pack)
	}
	sec := res.Pack.Slots
	if !sec.Read() || sec.ReadAt.IsZero() || len(sec.Windows) == 0 {
		t.Fatalf("the slots were not read: %+v", sec)
	}
	srv := e.runner.DemoStore()
	var want *slots.Slot
	free := map[string]int{}
	for _, s := range srv.DeliverySlots() {
		if s.Full || s.Start.Before(sec.ReadAt) {
			continue
		}
		free[s.Start.Format(time.DateOnly)]++
		if want == nil {
			want = &slots.Slot{Start: s.Start, End: s.End, Fee: money.Cents(s.FeeCents), FeeKnown: true, Available: true}
		}
	}
	if want == nil {
		t.Fatal("the demo store has no available window")
	}
	if sec.Next == nil || !sec.Next.Start.Equal(want.Start) || !sec.Next.End.Equal(want.End) || sec.Next.Fee != want.Fee {
		t.Errorf("next window %+v, want %+v", sec.Next, want)
	}
	today, tomorrow := sec.ReadAt.Format(time.DateOnly), sec.ReadAt.AddDate(0, 0, 1).Format(time.DateOnly)
	if sec.FreeToday != free[today] || sec.FreeTomorrow != free[tomorrow] {
		t.Errorf("free today %d, tomorrow %d; the store shows %d and %d", sec.FreeToday, sec.FreeTomorrow, free[today], free[tomorrow])
	}

	for _, tc := range []struct{ lang, prefix, day, fee string }{
		{"en", "Next delivery: ", want.Start.Weekday().String(), money.Format(want.Fee)},
		{"fr", "Prochaine livraison : ", messages.For("fr").T("slots.weekday_" + strconv.Itoa(int(want.Start.Weekday()))), money.FormatIn(want.Fee, "fr")},
	} {
		md := res.Summary.MarkdownIn(messages.For(tc.lang))
		i := strings.Index(md, tc.prefix)
		if i < 0 {
			t.Errorf("%s: the summary has no %q:\n%s", tc.lang, tc.prefix, md)
			continue
		}
		line, _, _ := strings.Cut(md[i:], "\n")
		if !strings.Contains(line, tc.day) || !strings.HasSuffix(line, tc.fee) {
			t.Errorf("%s: %q does not name %s and %s", tc.lang, line, tc.day, tc.fee)
		}
	}

	// The scout takes the run's reading: it does not read again.
	var reads atomic.Int32
	scoutBus := &runstatus.Bus{}
	published := scoutBus.Subscribe(16)
	defer published.Close()
	scout := &SlotScout{Bus: scoutBus, Messages: messages.For("en"), Read: func(ctx context.Context) (slots.Reading, error) {
		reads.Add(1)
		return e.runner.ReadSlots(ctx)
	}}
	var finished *runstatus.Event
	for finished == nil {
		select {
		case ev := <-sub.C:
			if ev.Kind == runstatus.KindRunFinished {
				finished = &ev
			}
		default:
			t.Fatal("the bus has no run_finished event")
		}
	}
	if !scout.tookRun(context.Background(), *finished) {
		t.Error("the scout did not take the run's reading")
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("the scout read the slots %d times after the run", n)
	}
	select {
	case ev := <-published.C:
		if ev.Kind != runstatus.KindSlotsRead || ev.Slots == nil || !slots.SameSlots(*ev.Slots, slots.Reading{Slots: sec.Windows}) {
			t.Errorf("published %+v", ev)
		}
	default:
		t.Error("the scout published no reading")
	}

	if n := srv.SlotReservations(); n != 0 {
		t.Errorf("%d reservations reached the store", n)
	}
	for req := range srv.Requests() {
		if strings.Contains(req, "/api/slots/") {
			t.Errorf("the store saw %q", req)
		}
	}
}
