package panel

import (
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestWarningsInFrenchInChromium: on a French panel the review pack's
// warnings and the summary's are said in French from their keys and
// values — no English sentence left — and a warning without a key (an old
// journal's) as written.
func TestWarningsInFrenchInChromium(t *testing.T) {
	fr := messages.For("fr")
	results := []report.ItemResult{
		{ItemID: "1", ItemName: "lait", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Lait 2 % 2 L",
			URL: "https://www.metro.ca/fr/epicerie-en-ligne/p/lait-2l", Price: money.Parse("5,49 $"), PreviousPrice: money.Parse("4,49 $"), NotAsked: true},
		{ItemID: "2", ItemName: "beurre", Outcome: report.OutcomeNotFound, Explanation: "out of stock"},
	}
	results[0].AddWarning(messages.Say("warning.tab_added_other", "n", 1, "id", "creme-1l", "product", "Lait 2 % 2 L"))
	missing := messages.Say("warning.quantity_short", "item", "lait", "want", 2, "product", "Lait 2 % 2 L", "got", 1)
	pack := reviewpack.Build("r1", "", results, []reviewpack.ItemIssue{{Item: "lait", Kind: reviewpack.WarnQuantityShort, Message: missing.English(), Text: missing}}, nil, reviewpack.Options{})
	pack.Items[1].Warnings = append(pack.Items[1].Warnings, reviewpack.Warning{Kind: reviewpack.WarnMissing, Message: "Old keyless text."})
	sum := report.Summary{RunID: "r1", Items: results}
	sum.Warn(messages.Say("warning.cart_gained", "n", 2, "product", "Crème 1 L"))
	sum.Warn(messages.Say("warning.run_stopped"))

	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, Messages: fr})
	if err != nil {
		t.Fatal(err)
	}
	bus := &runstatus.Bus{}
	_, text := openPanel(t, p, bus, playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 1280, Height: 800}, Locale: playwright.String("fr-CA")})
	testwait.Until(t, "the page to load its script and stream", 60*time.Second, func() bool { return text("#state") == fr.T("panel.no_run") })
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "r1", State: runstatus.StateReviewReady, Summary: &sum, Pack: &pack})
	testwait.Until(t, "the pack's lait", 60*time.Second, func() bool { return strings.Contains(text(`#pack li[data-item="lait"]`), "Lait 2 % 2 L") })

	packText, endText := text("#pack"), text("#end-warnings")
	for _, want := range []string{"a augmenté de 22 %", "sans demander", "le produit creme-1l", "mais le panier n'en a reçu que 1",
		"« beurre » était en rupture de stock", "Old keyless text."} {
		if !strings.Contains(packText, want) {
			t.Errorf("the French pack lacks %q:\n%s", want, packText)
		}
	}
	for _, want := range []string{"Le panier a reçu 2 × Crème 1 L", "La course a été arrêtée"} {
		if !strings.Contains(endText, want) {
			t.Errorf("the French summary's warnings lack %q:\n%s", want, endText)
		}
	}
	for _, s := range []string{packText, endText} {
		if left := fr.Foreign(s); len(left) > 0 {
			t.Errorf("English left on the French page: %q\n%s", left, s)
		}
	}
}
