package app

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// TestSlotWatchTellsOnceWhenAWindowOpens: the household watches
// tomorrow's windows, all full; the scout reads the demo store's slots
// page and tells nothing. A window opens (the test changes the store):
// the scout tells of it once, and not again on the next reading. The bus
// gets a reading only when the slots changed (quiet otherwise), and no
// reservation ever reaches the store.
func TestSlotWatchTellsOnceWhenAWindowOpens(t *testing.T) {
	e := newE2E(t, "milk")
	runner, err := NewRunner(e.cfg, e.deps)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = runner.Close(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, tomorrow, watched := fillTomorrow(ctx, t, runner)

	bus := &runstatus.Bus{}
	sub := bus.Subscribe(16)
	defer sub.Close()
	var mu sync.Mutex
	var told []string
	scout := &SlotScout{
		Read: runner.ReadSlots, Bus: bus, Messages: messages.For("en"),
		Watch: slots.Watch{Weekday: tomorrow.Weekday(), HasWeekday: true},
		Alerts: []SlotAlert{func(_ context.Context, title, body string) error {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, title+": "+body)
			return nil
		}},
	}
	tell := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), told...)
	}
	check := func() {
		t.Helper()
		if err := scout.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}

	check()
	if got := tell(); len(got) != 0 {
		t.Fatalf("told %v while every watched window is full", got)
	}
	srv.SetSlotFull(watched[len(watched)-1], false)
	check()
	check()
	got := tell()
	if len(got) != 1 {
		t.Fatalf("told %d times, want once: %v", len(got), got)
	}
	if !strings.Contains(got[0], "A delivery window opened") || !strings.Contains(got[0], tomorrow.Weekday().String()) {
		t.Errorf("told %q", got[0])
	}

	published := 0
	for len(sub.C) > 0 {
		if ev := <-sub.C; ev.Kind == runstatus.KindSlotsRead {
			published++
		}
	}
	if published != 2 {
		t.Errorf("%d readings published, want 2 (the first, the change; not the unchanged third)", published)
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

// fillTomorrow reads the slots once (which starts the demo store), then
// makes every window of tomorrow full: the watched windows, in start
// order.
func fillTomorrow(ctx context.Context, t *testing.T, runner *Runner) (*demostore.Server, time.Time, []time.Time) {
	t.Helper()
	if _, err := runner.ReadSlots(ctx); err != nil {
		t.Fatal(err)
	}
	srv := runner.DemoStore()
	tomorrow := time.Now().AddDate(0, 0, 1)
	var watched []time.Time
	for _, s := range srv.DeliverySlots() {
		if s.Start.Weekday() == tomorrow.Weekday() {
			srv.SetSlotFull(s.Start, true)
			watched = append(watched, s.Start)
		}
	}
	if len(watched) == 0 {
		t.Fatal("the demo store shows no window tomorrow")
	}
	return srv, tomorrow, watched
}
