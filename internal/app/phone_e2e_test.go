package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// phoneService is the companion app of phoneOnFakeHA.
const phoneService = "mobile_app_pixel_8"

// phoneOnFakeHA starts a fake Home Assistant with one phone (phoneService),
// connects to it and sets cfg's ha_notify to that phone.
func phoneOnFakeHA(ctx context.Context, t *testing.T, cfg *config.Config) (*fakeha.Server, *homeassistant.Client) {
	t.Helper()
	f, err := fakeha.Start(fakeha.Options{Token: "ha-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.AddMobileApp(phoneService)
	c, err := homeassistant.Dial(ctx, homeassistant.Options{URL: f.URL(), Token: config.Secret("ha-token")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	cfg.HANotify = []string{"notify." + phoneService}
	return f, c
}

// TestOutOfStockChoiceOnThePhone: with ha_notify wired by WireQuestions, the
// sold-out item's question arrives on the phone as an actionable
// notification; every butter of the demo store is sold out, so its buttons
// are the in-stock alternatives the wider search found (never a sold-out
// product, which would end "not found"); the person presses the first and
// the agent adds it, and the notification is cleared.
func TestOutOfStockChoiceOnThePhone(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "butter", "bananas")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f, c := phoneOnFakeHA(ctx, t, &e.cfg)
	const svc = phoneService
	e.cfg.TelegramResponseTimeout = time.Hour
	if err := WireQuestions(e.cfg, c, &e.deps, testLogger(t)); err != nil {
		t.Fatal(err)
	}

	pressed := make(chan string, 1)
	go func() {
		defer close(pressed)
		var n fakeha.PhoneNotification
		ok := false
		for !ok && ctx.Err() == nil {
			for _, s := range f.ShownOnPhone(svc) {
				n, ok = s, true
			}
			if !ok {
				time.Sleep(20 * time.Millisecond)
			}
		}
		for _, a := range n.Actions() {
			if title, _ := a["title"].(string); strings.Contains(title, "Butter") {
				t.Errorf("a sold-out butter is a button: %v", a)
			}
		}
		for _, a := range n.Actions() {
			if id, _ := a["action"].(string); strings.HasSuffix(id, "_P0") {
				if err := f.PressNotificationAction(svc, id, ""); err == nil {
					pressed <- n.Tag()
				}
				return
			}
		}
	}()
	res, err := e.shop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tag, ok := <-pressed
	if !ok {
		t.Fatal("no question reached the phone")
	}
	got := outcomes(res.Summary)
	if got["butter"] != "added" || got["bananas"] != "added" {
		t.Fatalf("outcomes = %v", got)
	}
	if n := cartUnits(e.runner.DemoStore())["margarine-original-907g"]; n != 1 {
		t.Errorf("the demo cart has %d of the margarine chosen on the phone, want 1", n)
	}
	testwait.Until(t, "the notification to be cleared", time.Minute, func() bool {
		return len(f.ShownOnPhone(svc)) == 0
	})
	all := f.PhoneNotifications(svc)
	if last := all[len(all)-1]; last.Message != homeassistant.ClearNotification || last.Tag() != tag {
		t.Errorf("last phone call = %+v, want clear_notification of %s", last, tag)
	}
}
