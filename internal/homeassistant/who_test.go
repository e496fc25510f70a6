package homeassistant

import (
	"context"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// The companion app's presses carry the phone's owner (the event's context
// user): an answer and a review action say who by the person's name, or the
// user id when no person entity names the user.
func TestPhoneSaysWhoPressed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		person bool
		want   string
	}{
		{"a person names the user", true, "Alice"},
		{"no person", false, "u-alice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const svc = "mobile_app_pixel_8"
			f := startFake(t, fakeha.Options{})
			f.AddMobileApp(svc)
			f.SetMobileAppUser(svc, "u-alice")
			f.SetState("person.bob", "home", map[string]any{"user_id": "u-bob", "friendly_name": "Bob"})
			if tc.person {
				f.SetState("person.alice", "home", map[string]any{"user_id": "u-alice", "friendly_name": "Alice"})
			}
			c := dialTest(t, testOptions(f, nil))
			phone, err := NewPhone(c, PhoneOptions{Services: []string{svc}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t)

			answers := make(chan choice.Answer, 1)
			go func() {
				a, err := phone.Choose(ctx, choice.Question{ItemName: "butter", Options: []choice.Option{{Name: "Lactantia"}, {Name: "Natrel"}}})
				if err != nil {
					t.Errorf("Choose: %v", err)
				}
				answers <- a
			}()
			shown := waitShown(t, f, svc, "butter")
			pressAction(t, f, svc, shown, phoneActProduct+"1", "")
			if a := receive(t, answers, "the phone's answer"); a.Kind != choice.KindProduct || a.Index != 1 || a.By != tc.want {
				t.Errorf("answer %+v, want Natrel by %q", a, tc.want)
			}

			// A safety confirmation's Allow says who pressed it too.
			type confirmed struct {
				yes bool
				by  string
			}
			confirms := make(chan confirmed, 1)
			go func() {
				yes, by, err := phone.ConfirmBy(ctx, "The page asks to accept the terms.", "click I agree")
				if err != nil {
					t.Errorf("ConfirmBy: %v", err)
				}
				confirms <- confirmed{yes, by}
			}()
			shown = waitShown(t, f, svc, "click I agree")
			pressAction(t, f, svc, shown, phoneActYes, "")
			if c := receive(t, confirms, "the phone's confirmation"); !c.yes || c.by != tc.want {
				t.Errorf("confirmation %+v, want allowed by %q", c, tc.want)
			}

			var mu sync.Mutex
			var got []reviewpack.Request
			rp := NewReviewPhone(phone, recordActions(&mu, &got, reviewpack.Action{ItemName: "milk"}))
			bus := &runstatus.Bus{}
			sub := bus.Subscribe(16)
			done := make(chan error, 1)
			rctx, cancel := context.WithCancel(ctx)
			go func() { done <- rp.Consume(rctx, sub) }()
			defer func() { cancel(); receive(t, done, "Consume to return") }()
			eventually(t, "the press subscription", func() bool { return f.Subscriptions(EventNotificationAction) > 0 })
			pack := reviewpack.Pack{RunID: "run-1", Items: []reviewpack.Item{{ItemID: "u1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductID: "milk-2",
				Warnings: []reviewpack.Warning{{Kind: reviewpack.WarnPriceChanged, Message: "up 22 %"}}}}}
			bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "run-1", Pack: &pack})
			var review fakeha.PhoneNotification
			eventually(t, "the review on the phone", func() bool {
				n, ok := f.ShownOnPhone(svc)[ReviewTag]
				review = n
				return ok && len(n.Actions()) > 0
			})
			acts := review.Actions()
			if err := f.PressNotificationAction(svc, acts[len(acts)-1]["action"].(string), ""); err != nil { // Remove: milk
				t.Fatal(err)
			}
			eventually(t, "the action carried out", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(got) == 1
			})
			mu.Lock()
			defer mu.Unlock()
			if got[0].By != tc.want || got[0].Source != "phone" {
				t.Errorf("review action %+v, want by %q from the phone", got[0], tc.want)
			}
		})
	}
}

// recordActions is a review's act that records each request in got (under
// mu) and answers action, with the request's kind, item and user.
func recordActions(mu *sync.Mutex, got *[]reviewpack.Request, action reviewpack.Action) func(context.Context, reviewpack.Request) (reviewpack.Action, error) {
	return func(_ context.Context, req reviewpack.Request) (reviewpack.Action, error) {
		mu.Lock()
		defer mu.Unlock()
		*got = append(*got, req)
		a := action
		a.Kind, a.ItemID, a.By = req.Kind, req.ItemID, req.By
		return a, nil
	}
}
