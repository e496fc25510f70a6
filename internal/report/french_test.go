package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
)

// Every part of the summary the product writes is French in French: the
// headings, counts, fallbacks, the product's own explanations, prices,
// totals, model use and the cart link.
func TestSummaryInFrench(t *testing.T) {
	fr := messages.For("fr")
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s := Summary{RunID: "r1", StartedAt: start, FinishedAt: start.Add(4 * time.Minute), CartURL: "https://www.metro.ca/fr/panier",
		Items: []ItemResult{
			{ItemName: "lait", Quantity: 1, Outcome: OutcomeAdded, ProductName: "Lait 2 %", Price: money.Parse("5,49 $"), Replay: "remembered product, by the agent"},
			{ItemName: "pommes", Quantity: 3, Outcome: OutcomeAdded, ProductName: "Pommes", Price: money.Price{Text: "1,99 $/kg", UnitCents: 199, Per: "kg", Known: true}},
			{ItemName: "farine", Quantity: 1, Outcome: OutcomeAdded, ProductName: "Farine", Price: money.Price{Text: "?"}},
			{ItemName: "safran", Outcome: OutcomeNotFound},
			{ItemName: "œufs", Outcome: OutcomeFailed},
			{ItemName: "œufs", Outcome: OutcomeDuplicate},
			{ItemName: "", Outcome: OutcomeSkipped, Explanation: SkippedRemoved},
			{ItemName: "pain", Outcome: OutcomeSkipped, Explanation: SkippedCheckedOff},
			{ItemName: "thé", Outcome: OutcomeNotShopped},
		},
		UnappliedUpdates: []UnappliedUpdate{{ItemName: "lait", Update: "mark completed", Reason: "timeout"}},
		Warnings:         []string{"Le panier a une ligne de plus."},
		Usage:            Usage{PromptTokens: 1200, OutputTokens: 300, CostUnknown: true},
	}
	md := s.MarkdownIn(fr)
	if left := fr.Foreign(md); len(left) > 0 {
		t.Errorf("English left in the French summary: %q\n%s", left, md)
	}
	if left := fr.Foreign(s.TitleIn(fr)); len(left) > 0 || !strings.HasPrefix(s.TitleIn(fr), "gemini-supply : 3 ajoutés") {
		t.Errorf("title %q (English: %q)", s.TitleIn(fr), left)
	}
	for _, want := range []string{"# Épicerie", "Commencée le 2026-11-25 10:00 UTC, durée 4m0s.", "**3 ajoutés, 1 introuvable",
		"produit mémorisé, par l'agent", "1,99\u00a0$/kg, environ 5,97\u00a0$", "prix inconnu (« ? »)", "(sans nom)",
		"retiré de la liste pendant l'épicerie", "coché par quelqu'un", "Avertissements de la vérification (1)",
		"coût inconnu", "(1 des 3 articles ajoutés", "1\u00a0500 jetons (1\u00a0200 en entrée", "[votre panier]"} {
		if !strings.Contains(md, want) {
			t.Errorf("the French summary lacks %q:\n%s", want, md)
		}
	}
	// The English summary is unchanged by the catalogue, and is caught.
	if en := s.Markdown(); len(fr.Foreign(en)) < 10 {
		t.Errorf("Foreign found only %q in the English summary", fr.Foreign(en))
	}
}
