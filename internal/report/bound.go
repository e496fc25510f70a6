package report

import (
	"fmt"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/messages"
)

// Bounds of the texts a run's results carry to the panel, notifications,
// HA events, MQTT, Telegram, the summary and the journal: an item name
// (the list refuses longer ones before shopping, shoppinglist.PlanRun), a
// product name, an address, and any other text (explanations, warnings,
// messages).
const (
	MaxNameRunes    = 200
	MaxProductRunes = 300
	MaxURLBytes     = 2048
	MaxTextRunes    = 1000
)

// Clip returns s cut to at most limit runes, ending with "…" when cut.
func Clip(s string, limit int) string {
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit-1]) + "…"
}

// ClipText returns t with every value clipped to MaxTextRunes.
func ClipText(t messages.Text) messages.Text {
	if t.Args == nil {
		return t
	}
	args := make(map[string]string, len(t.Args))
	for k, v := range t.Args {
		args[k] = Clip(v, MaxTextRunes)
	}
	t.Args = args
	return t
}

// SkippedTooLong explains an item whose name is over MaxNameRunes.
func SkippedTooLong(runes int) string {
	return fmt.Sprintf("its name is %d characters long, more than the %d an item may have: shorten it on the list (left as written)", runes, MaxNameRunes)
}

// Bounded returns the result with every text clipped to its bound.
func (r ItemResult) Bounded() ItemResult {
	r.ItemID = Clip(r.ItemID, MaxNameRunes)
	r.ItemName = Clip(r.ItemName, MaxNameRunes)
	r.ProductName = Clip(r.ProductName, MaxProductRunes)
	if len(r.URL) > MaxURLBytes {
		r.URL = "" // a cut address would lead elsewhere
	}
	r.Explanation = Clip(r.Explanation, MaxTextRunes)
	r.Replay = Clip(r.Replay, MaxTextRunes)
	return r
}

// Bounded returns a copy of the summary with every text clipped (its items,
// warnings and unapplied updates).
func (s Summary) Bounded() Summary {
	items := make([]ItemResult, len(s.Items))
	for i, it := range s.Items {
		items[i] = it.Bounded()
	}
	s.Items = items
	if s.Warnings != nil {
		w := make([]string, len(s.Warnings))
		for i, x := range s.Warnings {
			w[i] = Clip(x, MaxTextRunes)
		}
		s.Warnings = w
	}
	if s.WarningTexts != nil {
		t := make([]messages.Text, len(s.WarningTexts))
		for i, x := range s.WarningTexts {
			t[i] = ClipText(x)
		}
		s.WarningTexts = t
	}
	if s.UnappliedUpdates != nil {
		u := make([]UnappliedUpdate, len(s.UnappliedUpdates))
		for i, x := range s.UnappliedUpdates {
			x.ItemName = Clip(x.ItemName, MaxNameRunes)
			x.Reason = Clip(x.Reason, MaxTextRunes)
			x.Update = Clip(x.Update, MaxTextRunes)
			u[i] = x
		}
		s.UnappliedUpdates = u
	}
	if len(s.CartURL) > MaxURLBytes {
		s.CartURL = ""
	}
	return s
}
