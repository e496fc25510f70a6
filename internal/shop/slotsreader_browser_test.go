package shop

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/slots"
	"github.com/gemini-supply/gemini-supply/internal/store"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
)

// TestPageSlotsReaderReadsTheDemoSlotsAndReservesNothing reads the demo
// store's slots page in a reader tab: every window, fee and full mark as
// the store shows them, then again after a window opened. The page tries
// to reserve a window as soon as it loads (fetch, XHR, beacon, a form
// posted into a frame) and has a Reserve button per window: the store
// sees nothing but GETs and HEADs from the reader and not one
// reservation, while the reader's log shows the page's tries refused.
func TestPageSlotsReaderReadsTheDemoSlotsAndReservesNothing(t *testing.T) {
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" {
		t.Skip("no browser: run scripts/setup.sh and eval its output")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := demostore.Start(ctx, demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	// Noon: today's morning windows are past, its afternoon ones not.
	y, m, d := time.Now().Date()
	noon := time.Date(y, m, d, 12, 30, 0, 0, time.Local)
	srv.SetSlotClock(func() time.Time { return noon })
	var logs syncbuf.Buffer
	h, err := browser.Launch(ctx, browser.Options{
		ExecutablePath: exe, ProfileDir: t.TempDir(), Headless: true, Store: store.Demo(), SkipAuthCheck: true,
		ExtraArgs: []string{"--host-resolver-rules=" + srv.HostResolverRules()},
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Close(context.WithoutCancel(ctx)) }()

	rd := NewPageSlotsReader(store.Demo())
	rd.Now = func() time.Time { return noon }
	check := func(t *testing.T, r slots.Reading) {
		t.Helper()
		shown := srv.DeliverySlots()
		if len(r.Slots) != len(shown) {
			t.Fatalf("read %d windows, the page shows %d", len(r.Slots), len(shown))
		}
		avail, full := 0, 0
		for i, s := range r.Slots {
			w := shown[i]
			if !s.Start.Equal(w.Start) || !s.End.Equal(w.End) || !s.FeeKnown || int64(s.Fee) != w.FeeCents || s.Available == w.Full {
				t.Errorf("window %d read as %+v, the page shows %+v", i, s, w)
			}
			if s.Available {
				avail++
			} else {
				full++
			}
		}
		if avail == 0 || full == 0 {
			t.Errorf("%d available and %d full windows: the demo shows both", avail, full)
		}
	}

	r, err := rd.ReadSlots(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	check(t, r)
	if !r.ReadAt.Equal(noon) {
		t.Errorf("read_at %v, want %v", r.ReadAt, noon)
	}
	// A full window opens (the test hook); the next reading sees it.
	var opened time.Time
	for _, s := range srv.DeliverySlots() {
		if s.Full {
			opened = s.Start
			break
		}
	}
	srv.SetSlotFull(opened, false)
	r2, err := rd.ReadSlots(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	check(t, r2)
	if slots.SameSlots(r, r2) {
		t.Error("the reading did not change after a window opened")
	}

	for req := range srv.Requests() {
		if method := strings.SplitN(req, " ", 2)[0]; method != "GET" && method != "HEAD" {
			t.Errorf("the reader sent %q to the store", req)
		}
	}
	if n := srv.SlotReservations(); n != 0 {
		t.Fatalf("%d reservations reached the store from the reader", n)
	}

	// The page did try: the reader refused its writes (and logged each).
	if !strings.Contains(logs.String(), "a request that could change something was refused") {
		t.Errorf("the reader refused nothing: the page's reserving scripts did not run?\n%s", logs.String())
	}
}
