package app

import (
	"context"
	"strings"
	"testing"
	"time"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
)

// TestSlotWatchPushesToThePhonesOnce: with slot_watch and ha_notify, serve's
// slot scout (NewSlotScout) pushes to the household's phones through the
// companion app's notify service — as well as Home Assistant's persistent
// notification — once when a watched full window of the demo store opens
// (the test changes the store), and not again while it stays open; a tap
// opens the panel. Nothing is pushed while every watched window is full,
// and no reservation reaches the store.
func TestSlotWatchPushesToThePhonesOnce(t *testing.T) {
	e := newE2E(t, "milk")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f, c := phoneOnFakeHA(ctx, t, &e.cfg)
	const svc = phoneService
	runner := e.start()
	srv, tomorrow, watched := fillTomorrow(ctx, t, runner)
	cfg := e.cfg
	cfg.HANotify = []string{"notify." + svc}
	cfg.SlotWatch = strings.ToLower(tomorrow.Weekday().String())
	scout, err := NewSlotScout(cfg, runner, c, e.deps, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	pushes := func() []fakeha.ServiceCall {
		var out []fakeha.ServiceCall
		for _, call := range f.Calls() {
			if call.Domain == "notify" && call.Service == svc {
				out = append(out, call)
			}
		}
		return out
	}
	notices := func() int {
		n := 0
		for _, call := range f.Calls() {
			if call.Domain == "persistent_notification" && call.Service == "create" && call.Data["notification_id"] == slotNotificationID {
				n++
			}
		}
		return n
	}
	check := func() {
		t.Helper()
		if err := scout.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}

	check()
	if n := len(pushes()); n != 0 {
		t.Fatalf("%d pushes while every watched window is full", n)
	}
	srv.SetSlotFull(watched[0], false)
	check()
	check() // still open: no second push
	got := pushes()
	if len(got) != 1 || notices() != 1 {
		t.Fatalf("%d pushes and %d notifications, want one of each: %+v", len(got), notices(), got)
	}
	d := got[0].Data
	inner, _ := d["data"].(map[string]any)
	msg, _ := d["message"].(string)
	if d["title"] != "A delivery window opened" || !strings.Contains(msg, tomorrow.Weekday().String()) ||
		inner["tag"] != SlotPushTag || inner["url"] != AddOnPanelPath || inner["clickAction"] != AddOnPanelPath {
		t.Errorf("push %+v", d)
	}
	if n := srv.SlotReservations(); n != 0 {
		t.Errorf("%d reservations reached the store", n)
	}
}
