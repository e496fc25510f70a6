package ask_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/ask"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// These tests put questions through the real clients — the Home Assistant
// websocket client with the companion-app Phone, the Telegram Bot — to the
// protocol fakes, and answer them the way a person would: pressing a
// notification action or typing into its reply field (the fake fires
// mobile_app_notification_action as the companion app does), pressing a
// Telegram button.

const (
	wait     = 60 * time.Second // bounds a hang; never a timing assertion
	haToken  = "ha-token"
	tgToken  = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"
	tgChat   = int64(4242)
	phoneSvc = "mobile_app_pixel_8"
)

var milk = choice.Question{
	ItemName: "milk",
	Context:  "Three kinds of milk match.",
	Options: []choice.Option{
		{Name: "Natrel 2% milk 2 L", Price: "$5.49"},
		{Name: "Lactantia 1% milk 2 L", Price: "$5.29"},
		{Name: "Oatly oat drink 1.75 L", Price: "$4.99"},
	},
}

type world struct {
	t     *testing.T
	ha    *fakeha.Server
	phone *homeassistant.Phone
	tg    *faketg.Server
	bot   *telegram.Bot
	logs  *syncbuf.Buffer
}

type setup struct {
	phone    bool
	telegram bool
	// unknownService: ha_notify names a service Home Assistant does not have.
	unknownService bool
}

func newWorld(t *testing.T, s setup) *world {
	t.Helper()
	w := &world{t: t, logs: &syncbuf.Buffer{}}
	logger := slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", w.logs.String())
		}
	})
	if s.phone {
		f, err := fakeha.Start(fakeha.Options{Token: haToken})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		w.ha = f
		svc := phoneSvc
		if !s.unknownService {
			f.AddMobileApp("notify." + phoneSvc)
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		c, err := homeassistant.Dial(ctx, homeassistant.Options{URL: f.URL(), Token: config.Secret(haToken), Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		w.phone, err = homeassistant.NewPhone(c, homeassistant.PhoneOptions{Services: []string{"notify." + svc}, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
	}
	if s.telegram {
		w.tg = faketg.NewServer(tgToken)
		t.Cleanup(w.tg.Close)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		bot, err := telegram.New(ctx, telegram.Options{
			Token: config.Secret(tgToken), ChatID: tgChat, Endpoint: w.tg.Endpoint(),
			ResponseTimeout: time.Hour, PollTimeout: 2 * time.Second, RequestTimeout: 10 * time.Second,
			StartupRetries: -1, Logger: logger,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			_ = bot.Close(ctx)
		})
		w.bot = bot
	}
	return w
}

func (w *world) asker(timeout time.Duration) *ask.Asker {
	w.t.Helper()
	var channels []ask.Channel
	if w.phone != nil {
		channels = append(channels, ask.Channel{Name: "the phone", Chooser: w.phone, Confirmer: w.phone})
	}
	if w.bot != nil {
		channels = append(channels, ask.Channel{Name: "Telegram", Chooser: w.bot, Confirmer: w.bot})
	}
	a, err := ask.New(ask.Options{Timeout: timeout}, channels...)
	if err != nil {
		w.t.Fatal(err)
	}
	return a
}

// shown waits until the phone shows a notification whose message contains
// sub, and returns it.
func (w *world) shown(sub string) fakeha.PhoneNotification {
	w.t.Helper()
	var found fakeha.PhoneNotification
	testwait.Until(w.t, "a phone notification with "+sub, wait, func() bool {
		for _, n := range w.ha.ShownOnPhone(phoneSvc) {
			if strings.Contains(n.Message, sub) {
				found = n
				return true
			}
		}
		return false
	}, func() string { return w.logs.String() })
	return found
}

// press presses the action of n whose id ends with suffix ("_P1", "_R").
func (w *world) press(n fakeha.PhoneNotification, suffix, reply string) {
	w.t.Helper()
	for _, a := range n.Actions() {
		if id, _ := a["action"].(string); strings.HasSuffix(id, suffix) {
			if err := w.ha.PressNotificationAction(phoneSvc, id, reply); err != nil {
				w.t.Fatal(err)
			}
			return
		}
	}
	w.t.Fatalf("notification %q has no action ending in %s: %v", n.Message, suffix, n.Actions())
}

// cleared waits until the phone shows nothing and the last call for tag
// was clear_notification.
func (w *world) cleared(tag string) {
	w.t.Helper()
	testwait.Until(w.t, "the phone notification "+tag+" to be cleared", wait, func() bool {
		all := w.ha.PhoneNotifications(phoneSvc)
		last := all[len(all)-1]
		return len(w.ha.ShownOnPhone(phoneSvc)) == 0 && last.Message == homeassistant.ClearNotification && last.Tag() == tag
	})
}

type result[T any] struct {
	v   T
	err error
}

func async[T any](f func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() { v, err := f(); ch <- result[T]{v, err} }()
	return ch
}

func await[T any](t *testing.T, ch <-chan result[T]) (T, error) {
	t.Helper()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(wait):
		t.Fatal("the question did not return")
	}
	var zero T
	return zero, nil
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return c
}

func TestChooseOnThePhone(t *testing.T) {
	type step struct {
		action, reply string
		// wantShown is a text the notification shows before this step.
		wantShown string
	}
	tests := []struct {
		name  string
		steps []step
		want  choice.Answer
	}{
		{"a button", []step{{action: "_P1", wantShown: "2. Lactantia 1% milk 2 L ($5.29)"}}, choice.Answer{Kind: choice.KindProduct, Index: 1}},
		{"a typed number", []step{{action: "_R", reply: "3"}}, choice.Answer{Kind: choice.KindProduct, Index: 2}},
		{"a typed number with ⭐ remembers", []step{{action: "_R", reply: "⭐1"}}, choice.Answer{Kind: choice.KindProduct, Index: 0, Remember: true}},
		{"an invalid number is asked again", []step{
			{action: "_R", reply: "9"},
			{action: "_R", reply: "2", wantShown: "Please choose 1–6"},
		}, choice.Answer{Kind: choice.KindProduct, Index: 1}},
		{"typed text", []step{{action: "_R", reply: "lactose-free milk"}}, choice.Answer{Kind: choice.KindCustom, Text: "lactose-free milk"}},
		{"something else, then the text", []step{
			{action: "_R", reply: "5"},
			{action: "_R", reply: "2", wantShown: "What would you like instead"},
		}, choice.Answer{Kind: choice.KindCustom, Text: "2"}},
		{"nothing", []step{{action: "_R", reply: "4"}}, choice.Answer{Kind: choice.KindNothing}},
		{"skip this week by number", []step{{action: "_R", reply: "6", wantShown: "6. Skip this week"}}, choice.Answer{Kind: choice.KindSkip}},
		{"skip this week typed", []step{{action: "_R", reply: "Skip this week"}}, choice.Answer{Kind: choice.KindSkip}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, setup{phone: true})
			a := w.asker(time.Hour)
			res := async(func() (choice.Answer, error) { return a.Choose(ctx(t), milk) })
			n := w.shown("1. Natrel 2% milk 2 L ($5.49)")
			if !strings.Contains(n.Title, "milk") || len(n.Actions()) > 3 || n.Tag() == "" {
				t.Errorf("notification: title %q, %d actions (Android shows 3), tag %q", n.Title, len(n.Actions()), n.Tag())
			}
			reply := n.Actions()[len(n.Actions())-1]
			if reply["behavior"] != "textInput" {
				t.Errorf("the last action is not a textInput reply: %v", reply)
			}
			for i, s := range tt.steps {
				if i > 0 {
					n = w.shown(s.wantShown)
				} else if s.wantShown != "" && !strings.Contains(n.Message, s.wantShown) {
					t.Errorf("notification %q lacks %q", n.Message, s.wantShown)
				}
				w.press(n, s.action, s.reply)
			}
			got, err := await(t, res)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("answer = %+v, want %+v", got, tt.want)
			}
			w.cleared(n.Tag())
		})
	}
}

// TestSkipThisWeekButtonOnThePhone: a one-option question (the one
// in-stock alternative of a sold-out item) gets a "Skip this week" button
// in Android's spare action slot; pressing it answers KindSkip.
func TestSkipThisWeekButtonOnThePhone(t *testing.T) {
	w := newWorld(t, setup{phone: true})
	a := w.asker(time.Hour)
	q := choice.Question{ItemName: "butter", Context: "Every butter is sold out.", Options: milk.Options[:1]}
	res := async(func() (choice.Answer, error) { return a.Choose(ctx(t), q) })
	n := w.shown("4. Skip this week")
	var titles []string
	for _, act := range n.Actions() {
		titles = append(titles, fmt.Sprint(act["title"]))
	}
	if len(titles) != 3 || titles[1] != "⏭ Skip this week" {
		t.Fatalf("actions = %q, want the option, Skip this week and Reply", titles)
	}
	w.press(n, "_W", "")
	got, err := await(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if got != (choice.Answer{Kind: choice.KindSkip}) {
		t.Errorf("answer = %+v, want skip", got)
	}
	w.cleared(n.Tag())
}

func TestChooseNotAnsweredTimesOut(t *testing.T) {
	w := newWorld(t, setup{phone: true})
	a := w.asker(time.Hour)
	// The timeout ends on cue, once the phone shows the question: a short
	// real timer could expire before the notification went out.
	expire := make(chan time.Time)
	a.SetExpiry(func(time.Duration) <-chan time.Time { return expire })
	res := async(func() (choice.Answer, error) { return a.Choose(ctx(t), milk) })
	w.shown("Natrel")
	close(expire)
	got, err := await(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != choice.KindNothing || got.Reason != choice.ReasonTimeout {
		t.Errorf("answer = %+v, want nothing/timeout (the item fails \"timeout\")", got)
	}
	all := w.ha.PhoneNotifications(phoneSvc)
	if len(all) < 2 {
		t.Fatalf("phone got %d notifications, want the question and its clearing", len(all))
	}
	w.cleared(all[0].Tag())
}

func TestAnsweredOnTelegramFirstClearsThePhone(t *testing.T) {
	w := newWorld(t, setup{phone: true, telegram: true})
	a := w.asker(time.Hour)
	res := async(func() (choice.Answer, error) { return a.Choose(ctx(t), milk) })
	n := w.shown("Natrel")
	m, err := w.tg.WaitMessage(ctx(t), func(m faketg.Message) bool { return strings.Contains(m.Text, "Natrel") })
	if err != nil {
		t.Fatal(err)
	}
	var data string
	for _, b := range m.Buttons() {
		if strings.HasPrefix(b.Text, "3.") {
			data = b.Data
		}
	}
	w.tg.Press(tgChat, m.ID, data)
	got, err := await(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if got != (choice.Answer{Kind: choice.KindProduct, Index: 2}) {
		t.Errorf("answer = %+v, want option 3", got)
	}
	w.cleared(n.Tag())
}

func TestAnsweredOnThePhoneFirstEditsTelegram(t *testing.T) {
	w := newWorld(t, setup{phone: true, telegram: true})
	a := w.asker(time.Hour)
	res := async(func() (choice.Answer, error) { return a.Choose(ctx(t), milk) })
	n := w.shown("Natrel")
	m, err := w.tg.WaitMessage(ctx(t), func(m faketg.Message) bool { return strings.Contains(m.Text, "Natrel") })
	if err != nil {
		t.Fatal(err)
	}
	w.press(n, "_P0", "")
	got, err := await(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if got != (choice.Answer{Kind: choice.KindProduct, Index: 0}) {
		t.Errorf("answer = %+v, want option 1", got)
	}
	// Choose returned after every channel closed: the edit is there.
	edited, _ := w.tg.Message(m.ID)
	if !strings.Contains(edited.Text, "You chose 1. Natrel 2% milk 2 L") || !strings.Contains(edited.Text, "answered on the phone") {
		t.Errorf("Telegram message not edited to say it was answered on the phone:\n%s", edited.Text)
	}
	w.cleared(n.Tag())
}

func TestPhoneCannotDeliverTelegramAsks(t *testing.T) {
	w := newWorld(t, setup{phone: true, telegram: true, unknownService: true})
	a := w.asker(time.Hour)
	res := async(func() (choice.Answer, error) { return a.Choose(ctx(t), milk) })
	m, err := w.tg.WaitMessage(ctx(t), func(m faketg.Message) bool { return strings.Contains(m.Text, "Natrel") })
	if err != nil {
		t.Fatal(err)
	}
	// The phone's attempt runs beside Telegram's; wait until Home Assistant
	// has refused it, or a quick answer could cancel it before it is made.
	testwait.Until(t, "the phone's notify call", wait, func() bool { return len(w.ha.Calls()) > 0 })
	w.tg.SendText(tgChat, "2")
	got, err := await(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if got != (choice.Answer{Kind: choice.KindProduct, Index: 1}) {
		t.Errorf("answer = %+v, want option 2", got)
	}
	calls := w.ha.Calls()
	if calls[0].Error != "not_found" {
		t.Errorf("Home Assistant calls = %+v, want the unknown notify service refused (not_found)", calls)
	}
	if len(w.ha.ShownOnPhone(phoneSvc)) != 0 {
		t.Error("an unknown service shows a notification")
	}
	if edited, _ := w.tg.Message(m.ID); !strings.Contains(edited.Text, "You chose 2.") {
		t.Errorf("Telegram message not edited with the answer:\n%s", edited.Text)
	}
}

func TestNoChannelCanAskIsAnError(t *testing.T) {
	w := newWorld(t, setup{phone: true, unknownService: true})
	if _, err := w.asker(time.Hour).Choose(ctx(t), milk); err == nil {
		t.Fatal("Choose with no deliverable channel returned no error")
	}
	if yes, err := w.asker(time.Hour).Confirm(ctx(t), "checkout", "click Place order"); err == nil || yes {
		t.Fatalf("Confirm with no deliverable channel = %v, %v; want false and an error (never a yes)", yes, err)
	}
}

func TestSafetyConfirmationOnThePhone(t *testing.T) {
	for _, tt := range []struct {
		press string
		want  bool
	}{{"_Y", true}, {"_X", false}} {
		t.Run(tt.press, func(t *testing.T) {
			w := newWorld(t, setup{phone: true, telegram: true})
			a := w.asker(time.Hour)
			res := async(func() (bool, error) {
				return a.Confirm(ctx(t), "The page asks to accept the terms.", "click I agree")
			})
			n := w.shown("click I agree")
			m, err := w.tg.WaitMessage(ctx(t), func(m faketg.Message) bool { return strings.Contains(m.Text, "click I agree") })
			if err != nil {
				t.Fatal(err)
			}
			w.press(n, tt.press, "")
			got, err := await(t, res)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Confirm = %v, want %v", got, tt.want)
			}
			w.cleared(n.Tag())
			edited, _ := w.tg.Message(m.ID)
			if !strings.Contains(edited.Text, "answered on the phone") {
				t.Errorf("Telegram confirmation not edited:\n%s", edited.Text)
			}
		})
	}
}
