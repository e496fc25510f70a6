package homeassistant

import (
	"context"
	"strings"
	"sync"
	"testing"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// TestReviewOnThePhone: after a run the phone shows the review — what needs
// a look — with Open the cart (a URI action) and, for the first added item
// with a warning, Wrong product and Remove from cart; pressing one carries
// the action out (source "phone") and the notification says what it did.
// Other notifications' actions are left alone.
func TestReviewOnThePhone(t *testing.T) {
	const svc = "mobile_app_pixel_8"
	f := startFake(t, fakeha.Options{})
	f.AddMobileApp(svc)
	c := dialTest(t, testOptions(f, nil))
	phone, err := NewPhone(c, PhoneOptions{Services: []string{svc}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []reviewpack.Request
	rp := NewReviewPhone(phone, recordActions(&mu, &got, reviewpack.Action{ItemName: "milk", Product: "Natrel 2% Milk 2 L", Before: 1, Forgot: true, Reshop: "milk"}))
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(16)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() { done <- rp.Consume(ctx, sub) }()
	defer func() {
		cancel()
		receive(t, done, "Consume to return")
	}()

	// Subscribed to the presses before the review goes out.
	eventually(t, "the press subscription", func() bool { return f.Subscriptions(EventNotificationAction) > 0 })
	pack := reviewpack.Pack{RunID: "run-1", CartURL: "https://www.metro.ca/en/online-grocery/cart", Items: []reviewpack.Item{
		{ItemID: "u0", ItemName: "eggs", Outcome: report.OutcomeAdded, ProductID: "eggs-large-12", Warnings: []reviewpack.Warning{}},
		{ItemID: "u1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductID: "milk-2pct-2l",
			Warnings: []reviewpack.Warning{{Kind: reviewpack.WarnPriceChanged, Message: "Natrel 2% Milk 2 L is up 22 % since last time."}}},
		{ItemID: "u2", ItemName: "butter", Outcome: report.OutcomeNotFound, Warnings: []reviewpack.Warning{{Kind: reviewpack.WarnOutOfStock, Message: `"butter" was out of stock.`}}},
	}}
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "run-1", Pack: &pack})
	var shown fakeha.PhoneNotification
	eventually(t, "the review on the phone", func() bool {
		n, ok := f.ShownOnPhone(svc)[ReviewTag]
		shown = n
		return ok
	})
	if !strings.Contains(shown.Message, "2 added, 1 not added") || !strings.Contains(shown.Message, "up 22 %") || !strings.Contains(shown.Message, "butter") {
		t.Errorf("review text %q", shown.Message)
	}
	acts := shown.Actions()
	if len(acts) != 3 || acts[0]["action"] != "URI" || acts[0]["uri"] != pack.CartURL ||
		acts[1]["title"] != "Wrong: milk" || acts[2]["title"] != "Remove: milk" {
		t.Fatalf("actions %v", acts)
	}
	// Another notification's action is not the review's.
	f.FireEvent(EventNotificationAction, map[string]any{"action": "GS_abc123_P0"})
	if err := f.PressNotificationAction(svc, acts[1]["action"].(string), ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the action's result on the phone", func() bool {
		n, ok := f.ShownOnPhone(svc)[ReviewTag]
		return ok && strings.Contains(n.Message, "Wrong product for \"milk\"") && strings.Contains(n.Message, "shopping the item again")
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != (reviewpack.Request{RunID: "run-1", ItemID: "u1", Kind: reviewpack.ActWrongProduct, Source: "phone"}) {
		t.Errorf("actions carried out: %+v", got)
	}
	if n := f.ShownOnPhone(svc)[ReviewTag]; len(n.Actions()) != 1 || n.Actions()[0]["action"] != "URI" {
		t.Errorf("after the action the notification offers %v, want Open the cart only", n.Actions())
	}
}
