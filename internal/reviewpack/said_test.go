package reviewpack

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// TestWarningsSaidInEveryLanguage: every kind of warning the pack holds
// carries a catalogue key whose text is in English and French, fills every
// placeholder of it from its values (and has no value the text leaves
// out), says its Message in English and no English sentence in French.
func TestWarningsSaidInEveryLanguage(t *testing.T) {
	cart, added := milkCart(), addedMilk
	issue := func(kind WarningKind, t messages.Text) []ItemIssue {
		return []ItemIssue{{Item: "milk", Kind: kind, Message: t.English(), Text: t}}
	}
	tests := []struct {
		kind   WarningKind
		res    report.ItemResult
		issues []ItemIssue
	}{
		{WarnSubstitute, added(func(r *report.ItemResult) { r.ChosenBy = report.ChosenByHouseholdQuery }), nil},
		{WarnPriceChanged, added(func(r *report.ItemResult) { r.PreviousPrice = money.Parse("$4.49") }), nil},
		{WarnPriceChanged, added(func(r *report.ItemResult) { r.PreviousPrice = money.Parse("$10.98") }), nil},
		{WarnOutOfStock, added(func(r *report.ItemResult) { r.Replay = "replay fell back: it is out of stock"; r.Matches = 1 }), nil},
		{WarnOutOfStock, report.ItemResult{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeNotFound, Explanation: "It is out of stock."}, nil},
		{WarnNotAsked, added(func(r *report.ItemResult) { r.NotAsked = true }), nil},
		{WarnDifferentKind, added(func(r *report.ItemResult) { r.ItemName = "oranges"; r.ProductName = "Tropicana Orange Juice" }), nil},
		{WarnWrongRefused, func() report.ItemResult {
			r := report.ItemResult{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeNotFound}
			r.AddWarning(messages.Say("warning.tab_refused_wrong", "product", "Natrel 2% Milk"))
			return r
		}(), nil},
		{WarnUnreportedUnit, added(func(r *report.ItemResult) {
			r.AddWarning(messages.Say("warning.tab_added_other", "n", 1, "id", "butter-454g", "product", r.ProductName))
		}), nil},
		{WarnUnreportedUnit, added(func(r *report.ItemResult) {
			r.AddWarning(messages.Say("warning.tab_added_more", "product", r.ProductName, "n", 3, "want", 1, "extra", 2))
		}), nil},
		{WarnUnreportedUnit, added(func(r *report.ItemResult) {
			r.AddWarning(messages.Say("warning.tab_added_units", "total", 3, "want", 1))
		}), nil},
		{WarnUnreportedUnit, added(func(r *report.ItemResult) {
			r.AddWarning(messages.Say("warning.tab_refused", "tries", 2, "units", 2, "want", 1))
		}), nil},
		{WarnQuantityFar, added(func(r *report.ItemResult) {
			r.ItemName, r.ProductName, r.Quantity = "12 eggs", "Burnbrae Farms Large White Eggs, 12 eggs", 12
		}), nil},
		{WarnMissing, added(func(*report.ItemResult) {}), issue(WarnMissing, messages.Say("warning.missing", "item", "milk", "product", "@warning.no_product_name"))},
		{WarnQuantityShort, added(func(*report.ItemResult) {}), issue(WarnQuantityShort, messages.Say("warning.quantity_short", "item", "milk", "want", 2, "product", "Milk", "got", 1))},
		{WarnRecentlyBought, added(func(*report.ItemResult) {}), issue(WarnRecentlyBought, messages.Say("usual.recent_warning", "ago", 2, "days", 10))},
		{WarnPriceDiffers, added(func(*report.ItemResult) {}), issue(WarnPriceDiffers, messages.Say("warning.price_differs", "item", "milk", "reported", "$5.49", "cart", "$5.50", "product", "Milk"))},
	}
	en, fr := messages.For("en"), messages.For("fr")
	seen := map[WarningKind]bool{}
	for _, tc := range tests {
		p := Build("r1", "", []report.ItemResult{tc.res}, tc.issues, cart, Options{})
		var w *Warning
		for i := range p.Items[0].Warnings {
			if p.Items[0].Warnings[i].Kind == tc.kind {
				w = &p.Items[0].Warnings[i]
			}
		}
		if w == nil {
			t.Errorf("%s: no such warning in %+v", tc.kind, p.Items[0].Warnings)
			continue
		}
		seen[tc.kind] = true
		if w.Key == "" {
			t.Errorf("%s: %q has no key", tc.kind, w.Message)
			continue
		}
		enText, frText := en.T(w.Key), fr.T(w.Key)
		if enText == w.Key || frText == enText {
			t.Errorf("%s: key %q: English %q, French %q", tc.kind, w.Key, enText, frText)
		}
		args := slices.Sorted(maps.Keys(w.Args))
		for _, text := range []string{enText, frText} {
			if ph := messages.Placeholders(text); strings.Join(ph, ",") != strings.Join(args, ",") {
				t.Errorf("%s: %q fills %v, its warning has values %v", tc.kind, text, ph, args)
			}
		}
		if got := w.Said(en); got != w.Message {
			t.Errorf("%s: said in English %q, its Message %q", tc.kind, got, w.Message)
		}
		said := w.Said(fr)
		// The values filled in (the store's product names, the list's
		// words) are not the catalogue's to translate.
		// Longest first: "12 eggs" before the count "12".
		ours := said
		vals := slices.SortedFunc(maps.Values(w.Args), func(a, b string) int { return len(b) - len(a) })
		for _, v := range vals {
			if v != "" && !strings.HasPrefix(v, "@") {
				ours = strings.ReplaceAll(ours, v, "")
			}
		}
		if left := fr.Foreign(ours); len(left) > 0 || strings.Contains(said, "{") || strings.Contains(said, "@") {
			t.Errorf("%s: said in French %q (English left: %q)", tc.kind, said, left)
		}
	}
	for _, k := range ItemWarningKinds {
		if !seen[k] {
			t.Errorf("no case for %s", k)
		}
	}
	// A warning from a journal written before keys is said as written.
	old := Warning{Kind: WarnMissing, Message: `"milk" was reported added but the cart did not gain it.`}
	if got := old.Said(fr); got != old.Message {
		t.Errorf("a keyless warning said %q", got)
	}
}
