package homeassistant

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

var french = messages.For("fr")

// shownTexts is every text Home Assistant got to show: the notify and
// persistent_notification calls' titles, messages and action titles, and
// the fired events' title and summary.
func shownTexts(f *fakeha.Server) []string {
	var out []string
	for _, c := range f.Calls() {
		for _, k := range []string{"title", "message", "textInputButtonTitle", "textInputPlaceholder"} {
			if s, ok := c.Data[k].(string); ok && s != ClearNotification {
				out = append(out, s)
			}
		}
		if d, ok := c.Data["data"].(map[string]any); ok {
			acts, _ := d["actions"].([]any)
			for _, a := range acts {
				if m, ok := a.(map[string]any); ok {
					out = append(out, fmt.Sprint(m["title"]), fmt.Sprint(m["textInputButtonTitle"]), fmt.Sprint(m["textInputPlaceholder"]))
				}
			}
		}
	}
	for _, e := range f.Events() {
		for _, k := range []string{"title", "summary"} {
			if s, ok := e.Data[k].(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func noEnglishShown(t *testing.T, f *fakeha.Server, want ...string) {
	t.Helper()
	all := strings.Join(shownTexts(f), "\n")
	for _, s := range shownTexts(f) {
		if left := french.Foreign(s); len(left) > 0 {
			t.Errorf("English left in %q: %q", s, left)
		}
	}
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("Home Assistant was not shown %q; it got:\n%s", w, all)
		}
	}
}

// A French household's phone question, safety check, review, waiting
// notification, summary notification and run_finished event are French:
// no fixed English text of the catalogue is left in what Home Assistant
// shows.
func TestHomeAssistantSpeaksFrench(t *testing.T) {
	const svc = "mobile_app_pixel_8"
	f := startFake(t, fakeha.Options{})
	f.AddMobileApp(svc)
	c := dialTest(t, testOptions(f, nil))
	phone, err := NewPhone(c, PhoneOptions{Services: []string{svc}, Messages: french})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)

	// The question: an invalid typed reply, then "Autre chose", then the text.
	q := choice.Question{ItemName: "beurre", Context: "Deux beurres salés conviennent.", Options: []choice.Option{
		{Name: "Beurre salé Lactantia 454 g", Price: "6,49 $"}, {Name: "Beurre salé Natrel 454 g", Price: "6,29 $"}}}
	answers := make(chan choice.Answer, 1)
	go func() {
		a, err := phone.Choose(ctx, q)
		if err != nil {
			t.Errorf("Choose: %v", err)
		}
		answers <- a
	}()
	shown := waitShown(t, f, svc, "lequel")
	press := func(kind, text string) { t.Helper(); pressAction(t, f, svc, shown, kind, text) }
	press(phoneActReply, "9")
	shown = waitShown(t, f, svc, "Choisissez entre 1 et 5")
	press(phoneActReply, "autre chose")
	shown = waitShown(t, f, svc, "Que voulez-vous à la place de « beurre »")
	press(phoneActReply, "beurre doux")
	if a := receive(t, answers, "the phone's answer"); a.Kind != choice.KindCustom || a.Text != "beurre doux" {
		t.Fatalf("answer %+v", a)
	}

	// The safety check, allowed with the French button.
	allowed := make(chan bool, 1)
	go func() {
		yes, err := phone.Confirm(ctx, "Le site demande d'accepter les témoins.", "cliquer « Tout accepter »")
		if err != nil {
			t.Errorf("Confirm: %v", err)
		}
		allowed <- yes
	}()
	shown = waitShown(t, f, svc, "Le permettre ?")
	press(phoneActYes, "")
	if !receive(t, allowed, "the confirmation") {
		t.Fatal("the French Permettre did not allow")
	}

	// The run's notifications and events: waiting, summary, review.
	notifier := NewNotifier(c, NotifierOptions{Messages: french})
	sink := NewEventSink(c, EventSinkOptions{Notifier: notifier})
	review := NewReviewPhone(phone, func(context.Context, reviewpack.Request) (reviewpack.Action, error) {
		return reviewpack.Action{}, nil
	})
	bus := &runstatus.Bus{}
	sinkSub, reviewSub := bus.Subscribe(64), bus.Subscribe(64)
	sinkDone, reviewDone := make(chan error, 1), make(chan error, 1)
	rctx, cancel := context.WithCancel(ctx)
	go func() { sinkDone <- sink.Consume(ctx, sinkSub) }()
	go func() { reviewDone <- review.Consume(rctx, reviewSub) }()
	eventually(t, "the review's press subscription", func() bool { return f.Subscriptions(EventNotificationAction) > 0 })

	bus.Publish(runstatus.Event{Kind: runstatus.KindWaitingForUser, RunID: "r1", Item: &report.ItemResult{ItemName: "beurre"}, Message: "Lequel?"})
	eventually(t, "the waiting notification", func() bool {
		_, ok := f.Notifications()[DefaultWaitingNotificationID]
		return ok
	})
	summary := report.Summary{RunID: "r1", Cancelled: true, CartURL: "https://www.metro.ca/fr/panier", Items: []report.ItemResult{
		{ItemID: "u1", ItemName: "lait 2 %", Quantity: 2, Outcome: report.OutcomeAdded, ProductName: "Lait 2 % Natrel 2 L",
			Price: money.Parse("5,49 $"), Replay: "replay fell back: price changed"},
		{ItemID: "u2", ItemName: "œufs", Quantity: 1, Outcome: report.OutcomeFailed},
		{ItemID: "u3", ItemName: "pain", Quantity: 1, Outcome: report.OutcomeNotShopped},
		{ItemID: "u4", ItemName: "pain", Quantity: 1, Outcome: report.OutcomeDuplicate},
		{ItemID: "u5", ItemName: "#bio", Quantity: 1, Outcome: report.OutcomeSkipped, Explanation: report.SkippedNoName},
	}}
	pack := reviewpack.Build("r1", summary.CartURL, summary.Items, nil, nil, reviewpack.Options{})
	pack.Items[0].Warnings = append(pack.Items[0].Warnings, reviewpack.Warning{Kind: reviewpack.WarnPriceChanged, Message: "Le prix a changé."})
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "r1", Summary: &summary, Pack: &pack})
	if err := notifier.SendSummary(ctx, summary); err != nil {
		t.Fatal(err)
	}
	waitShown(t, f, svc, "non ajoutés")
	bus.Close()
	receive(t, sinkDone, "the sink to stop")
	cancel()
	receive(t, reviewDone, "the review to stop")

	noEnglishShown(t, f,
		"🛒 beurre : lequel?", "3. Rien (passer cet article)", "5. Pas cette semaine (il reste sur la liste)", "✏️ Répondre", "Envoyer",
		"⚠️ Vérification de sécurité", "✅ Permettre", "❌ Refuser",
		"gemini-supply attend votre choix", "Un choix de produit a besoin de vous",
		"gemini-supply : arrêtée — 1 ajouté", "# Épicerie", "**Arrêtée :", "En échec (1)", "Non achetés (1)", "Doublons (1)",
		"rachat confié à l'agent : price changed", "son nom n'est fait que d'étiquettes", "5,49\u00a0$ chacun, 10,98\u00a0$", "votre panier",
		"Épicerie : la vérification", "Ouvrir le panier", "Mauvais : lait 2 %", "Retirer : lait 2 %", "Ajoutés : 1 · non ajoutés : 2.",
	)
}

// waitShown waits for the phone to show a notification holding text.
// pressAction presses the action of kind (phoneActReply, phoneActYes, …)
// of the shown notification n, with text for a reply.
func pressAction(t *testing.T, f *fakeha.Server, svc string, n fakeha.PhoneNotification, kind, text string) {
	t.Helper()
	for _, a := range n.Actions() {
		if strings.HasSuffix(fmt.Sprint(a["action"]), "_"+kind) {
			if err := f.PressNotificationAction(svc, fmt.Sprint(a["action"]), text); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no action %s in %v", kind, n.Actions())
}

func waitShown(t *testing.T, f *fakeha.Server, svc, text string) fakeha.PhoneNotification {
	t.Helper()
	var got fakeha.PhoneNotification
	eventually(t, "the phone to show "+text, func() bool {
		for _, n := range f.ShownOnPhone(svc) {
			if strings.Contains(n.Title+"\n"+n.Message, text) {
				got = n
				return true
			}
		}
		return false
	})
	return got
}

// With language fr, the note written on a to-do item that was added and
// the question's option prices on the phone are French ("ajouté : … ×
// 2 (4,29 $)", "(7,49 $)"), not "added … ($4.29)".
func TestFrenchTodoNoteAndOptionPrices(t *testing.T) {
	const svc = "mobile_app_pixel_8"
	f := startFake(t, fakeha.Options{})
	f.AddMobileApp(svc)
	f.AddTodoList(list, "Liste d'épicerie", fakeha.LocalTodoFeatures, fakeha.TodoItem{UID: "u1", Summary: "œufs"})
	c := dialTest(t, testOptions(f, nil))
	ctx := testCtx(t)

	p := NewTodoProvider(c, TodoOptions{Notifier: NewNotifier(c, NotifierOptions{Messages: french})})
	if err := p.MarkCompleted(ctx, "u1", shoppinglist.Added{ProductName: "Burnbrae Farms Large White Eggs, 12 eggs", Quantity: 2, Price: money.Parse("$4.29")}); err != nil {
		t.Fatal(err)
	}
	items := f.TodoItems(list)
	want := "gemini-supply: ajouté : Burnbrae Farms Large White Eggs, 12 eggs × 2 (4,29\u00a0$)"
	if len(items) != 1 || items[0].Description != want {
		t.Errorf("the note = %q, want %q", items[0].Description, want)
	}

	phone, err := NewPhone(c, PhoneOptions{Services: []string{svc}, Messages: french})
	if err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = phone.Choose(qctx, choice.Question{ItemName: "beurre", Options: []choice.Option{
			{Name: "Beurre salé Lactantia 454 g", Price: "$7.49"}, {Name: "Beurre salé Natrel 454 g", Price: "2 for $12.00"}}})
	}()
	shown := waitShown(t, f, svc, "lequel")
	msg := shown.Message
	for _, w := range []string{"Beurre salé Lactantia 454 g (7,49\u00a0$)", "Beurre salé Natrel 454 g (2 for 12,00\u00a0$)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("the question lacks %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, "$7") {
		t.Errorf("the question still writes prices the English way:\n%s", msg)
	}
	cancel()
	<-done
}
