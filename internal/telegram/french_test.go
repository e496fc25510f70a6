package telegram

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

var french = messages.For("fr")

// noEnglish fails for every text the bot sent (messages as edited,
// buttons, toasts) that holds a fixed English text of the catalogue.
func noEnglish(t *testing.T, h *harness) {
	t.Helper()
	var texts []string
	for _, m := range h.fake.Messages() {
		texts = append(texts, m.Text)
		for _, b := range m.Buttons() {
			texts = append(texts, b.Text)
		}
	}
	for _, c := range h.fake.Callbacks() {
		texts = append(texts, c.Text)
	}
	for _, s := range texts {
		if left := french.Foreign(s); len(left) > 0 {
			t.Errorf("English left in %q: %q", s, left)
		}
	}
}

func frenchHarness(t *testing.T, timeout time.Duration) *harness {
	return newHarness(t, func(o *Options) {
		o.Messages = french
		if timeout > 0 {
			o.ResponseTimeout = timeout
		}
	})
}

func laitQuestion() choice.Question {
	return choice.Question{ItemName: "lait 2 %", Context: "Plusieurs laits 2 % conviennent.", Options: []choice.Option{
		{Name: "Lait 2 % Natrel 2 L", Price: "5,49 $"}, {Name: "Lait 2 % Lactantia 2 L", Price: "5,29 $"},
	}}
}

// A household speaking French is asked, answered and told in French on
// Telegram: the question, its buttons, the toasts, the re-asks, the typed
// French replies, the answer lines, the safety check, the timeouts and the
// notices with the summary.
func TestTelegramSpeaksFrench(t *testing.T) {
	t.Run("question, Autre chose, free text", func(t *testing.T) {
		h := frenchHarness(t, 0)
		res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), laitQuestion()) })
		m := h.waitText("🛒 Épicerie : lait 2 %", "3. Rien (passer cet article)", "5. Pas cette semaine (il reste sur la liste)",
			"Répondez par un numéro")
		h.fake.SendText(testChat, "7")
		h.waitText("Choisissez entre 1 et 5")
		press(h, m, "Autre chose")
		h.waitText("Que voulez-vous à la place de « lait 2 % » ?")
		h.fake.SendText(testChat, "lait d'avoine")
		a, err := await(t, res)
		if err != nil || a.Kind != choice.KindCustom || a.Text != "lait d'avoine" {
			t.Fatalf("answer %+v, %v", a, err)
		}
		h.waitText("✏️ Vous avez demandé : lait d'avoine")
		noEnglish(t, h)
	})
	for _, c := range []struct {
		reply string
		want  choice.Kind
		line  string
	}{
		{"rien", choice.KindNothing, "🚫 Rien : cet article est passé."},
		{"Pas cette semaine", choice.KindSkip, "⏭ Pas cette semaine"},
		{"retenir 2", choice.KindProduct, "⭐ Vous avez choisi 2. Lait 2 % Lactantia 2 L (5,29 $), et je m'en souviendrai"},
	} {
		t.Run("typed "+c.reply, func(t *testing.T) {
			h := frenchHarness(t, 0)
			res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), laitQuestion()) })
			h.waitText("🛒 Épicerie")
			h.fake.SendText(testChat, c.reply)
			if a, err := await(t, res); err != nil || a.Kind != c.want {
				t.Fatalf("answer %+v, %v, want %s", a, err, c.want)
			}
			h.waitText(c.line)
			noEnglish(t, h)
		})
	}
	t.Run("no answer in time", func(t *testing.T) {
		h := frenchHarness(t, 2*time.Second)
		res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), laitQuestion()) })
		if a, err := await(t, res); err != nil || a.Reason != choice.ReasonTimeout {
			t.Fatalf("answer %+v, %v", a, err)
		}
		h.waitText("⏱ Pas de réponse en 2 secondes : cet article est passé.")
		noEnglish(t, h)
	})
	t.Run("safety check", func(t *testing.T) {
		h := frenchHarness(t, 0)
		res := async(func() (bool, error) {
			return h.bot.Confirm(h.ctx(), "Le site demande d'accepter les témoins.", "cliquer « Tout accepter »")
		})
		m := h.waitText("⚠️ Vérification de sécurité", "L'agent d'épicerie veut : cliquer", "Pourquoi il demande :", "Le permettre ?")
		if b := m.Buttons(); len(b) != 2 || b[0].Text != "✅ Oui" || b[1].Text != "❌ Non" {
			t.Errorf("buttons %+v", b)
		}
		h.fake.SendText(testChat, "peut-être")
		h.waitText("Répondez oui ou non.")
		h.fake.SendText(testChat, "Oui")
		if yes, err := await(t, res); err != nil || !yes {
			t.Fatalf("Confirm = %v, %v", yes, err)
		}
		h.waitText("✅ Vous avez dit oui.")
		noEnglish(t, h)
	})
	t.Run("notices and summary", func(t *testing.T) {
		h := frenchHarness(t, 0)
		bus := &runstatus.Bus{}
		h.bot.Follow(h.ctx(), bus)
		bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, Progress: runstatus.Progress{Total: 3}})
		h.waitText("🛒 L'épicerie commence : 3 articles.")
		bus.Publish(runstatus.Event{Kind: runstatus.KindWaitingForUser, Item: &report.ItemResult{ItemName: "beurre"}})
		h.waitText("⏳ J'attends votre réponse pour : beurre")
		bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, Summary: &report.Summary{
			RunID: "r1", StartedAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), FinishedAt: time.Date(2026, 11, 25, 10, 4, 0, 0, time.UTC),
			Items: []report.ItemResult{
				{ItemName: "lait 2 %", Quantity: 2, Outcome: report.OutcomeAdded, ProductName: "Lait 2 % Natrel", URL: "https://www.metro.ca/fr/p/2",
					Price: money.Price{Text: "5,49 $", UnitCents: 549, Known: true}, Replay: "replayed"},
				{ItemName: "safran", Quantity: 1, Outcome: report.OutcomeNotFound},
				{ItemName: "beurre", Quantity: 1, Outcome: report.OutcomeSkipped, Explanation: choice.SkipExplanation},
			},
			CartURL: "https://www.metro.ca/fr/panier",
		}})
		m := h.waitText("Épicerie", "Ajoutés (1)", "Introuvables (1)", "Passés (1)", "Total estimé", "votre panier", "racheté tel quel",
			"la maisonnée a choisi de le passer cette semaine")
		if strings.Contains(m.Text, "Shopping run") {
			t.Errorf("summary in English:\n%s", m.Text)
		}
		noEnglish(t, h)
	})
}

// The catch: English text in a French message is found (the check above
// cannot pass by finding nothing).
func TestNoEnglishCatchesEnglish(t *testing.T) {
	h := newHarness(t) // English
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), laitQuestion()) })
	m := h.waitText("Shopping for")
	press(h, m, "Nothing")
	if _, err := await(t, res); err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, msg := range h.fake.Messages() {
		found = append(found, french.Foreign(msg.Text)...)
	}
	if len(found) < 4 {
		t.Errorf("Foreign found %q in the English question", found)
	}
}
