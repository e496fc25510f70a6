package homeassistant

import (
	"context"
	"testing"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// TestUsualEventPushesToThePhone: gemini_supply_usual makes the phones
// show "12 usual items, 3 probably still at home — review", a tap opening
// the panel; nothing else is called (the list is not touched).
func TestUsualEventPushesToThePhone(t *testing.T) {
	const svc = "mobile_app_pixel_8"
	f := startFake(t, fakeha.Options{})
	f.AddMobileApp(svc)
	c := dialTest(t, testOptions(f, nil))
	for _, tc := range []struct{ lang, want string }{
		{"en", "12 usual items, 3 probably still at home — review"},
		{"fr", "12 articles habituels, 3 sans doute encore à la maison — à revoir"},
	} {
		phone, err := NewPhone(c, PhoneOptions{Services: []string{svc}, Messages: messages.For(tc.lang)})
		if err != nil {
			t.Fatal(err)
		}
		tr := NewUsualTrigger(c, phone, "/hassio/ingress/gemini_supply", func(context.Context) (int, int, error) { return 12, 3, nil })
		ctx, cancel := context.WithCancel(testCtx(t))
		done := make(chan error, 1)
		before := len(f.Calls())
		go func() { done <- tr.Run(ctx, nil) }()
		eventually(t, "the subscription", func() bool { return f.Subscriptions(EventUsual) == 1 })
		f.FireEvent(EventUsual, nil)
		eventually(t, "the push", func() bool { return len(f.Calls()) > before })
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		calls := f.Calls()[before:]
		if len(calls) != 1 || calls[0].Domain != "notify" || calls[0].Service != svc {
			t.Fatalf("%s: calls %+v", tc.lang, calls)
		}
		d := calls[0].Data
		inner, _ := d["data"].(map[string]any)
		if d["message"] != tc.want || inner["url"] != "/hassio/ingress/gemini_supply" || inner["clickAction"] != "/hassio/ingress/gemini_supply" || inner["tag"] != UsualTag {
			t.Errorf("%s: push %+v", tc.lang, d)
		}
		eventually(t, "unsubscribed", func() bool { return f.Subscriptions(EventUsual) == 0 })
	}
}

// TestNeedsYouPush: a tab that needs a person is pushed to every phone as
// "Needs you: sign in" (in the household's language), a tap opening the
// panel; a later push replaces it (one tag).
func TestNeedsYouPush(t *testing.T) {
	const svc = "mobile_app_pixel_8"
	f := startFake(t, fakeha.Options{})
	f.AddMobileApp(svc)
	c := dialTest(t, testOptions(f, nil))
	for _, tc := range []struct{ lang, reason, title string }{
		{"en", runstatus.ReasonSignInChallenge, "Needs you: sign in"},
		{"fr", runstatus.ReasonSignInChallenge, "On a besoin de vous : connexion"},
		{"en", "agent_gave_up", "Needs you"},
	} {
		phone, err := NewPhone(c, PhoneOptions{Services: []string{svc}, Messages: messages.For(tc.lang)})
		if err != nil {
			t.Fatal(err)
		}
		if err := phone.PushNeedsYou(testCtx(t), tc.reason, "/hassio/ingress/gemini_supply"); err != nil {
			t.Fatal(err)
		}
		n := f.ShownOnPhone(svc)[NeedsYouTag]
		if n.Title != tc.title || n.Message == "" || n.Data["url"] != "/hassio/ingress/gemini_supply" || n.Data["clickAction"] != "/hassio/ingress/gemini_supply" {
			t.Errorf("%s %s: %+v", tc.lang, tc.reason, n)
		}
	}
}
