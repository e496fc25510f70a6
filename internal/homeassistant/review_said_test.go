package homeassistant

import (
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
)

// TestReviewOnThePhoneInFrench: the phone's review says the pack's
// warnings in the configured language — no English sentence in French —
// and a warning from before keys as written.
func TestReviewOnThePhoneInFrench(t *testing.T) {
	results := []report.ItemResult{
		{ItemID: "u1", ItemName: "lait", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Lait 2 % 2 L",
			Price: money.Parse("5,49 $"), PreviousPrice: money.Parse("4,49 $"), NotAsked: true},
		{ItemID: "u2", ItemName: "beurre", Outcome: report.OutcomeNotFound, Explanation: "Tout est en rupture: out of stock."},
		{ItemID: "u3", ItemName: "œufs", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Œufs", ChosenBy: report.ChosenByHouseholdQuery},
	}
	pk := reviewpack.Build("r1", "", results, nil, nil, reviewpack.Options{})
	fr := messages.For("fr")
	text := reviewText(fr, pk)
	if left := fr.Foreign(text); len(left) > 0 {
		t.Errorf("English left in the French review: %q\n%s", left, text)
	}
	for _, want := range []string{"a augmenté de 22 %", "« beurre » était en rupture de stock", "Œufs remplace « œufs »", "sans demander"} {
		if !strings.Contains(text, want) {
			t.Errorf("the French review lacks %q:\n%s", want, text)
		}
	}
	if en := reviewText(messages.For("en"), pk); !strings.Contains(en, "is up 22 % since last time") || len(fr.Foreign(en)) == 0 {
		t.Errorf("the English review:\n%s", en)
	}
	old := reviewpack.Pack{Items: []reviewpack.Item{{ItemName: "lait", Outcome: report.OutcomeAdded,
		Warnings: []reviewpack.Warning{{Kind: reviewpack.WarnMissing, Message: "kept as written"}}}}}
	if text := reviewText(fr, old); !strings.Contains(text, "lait: kept as written") {
		t.Errorf("a keyless warning:\n%s", text)
	}
}
