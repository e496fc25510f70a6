package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// TestSummarySaysTheNextDelivery: the summary (Home Assistant's
// notification, Telegram, the terminal) says the next delivery window
// read after the run in the household's language — the day and 24 h
// hours in the store's time zone, the fee as the language writes prices
// — or that none is available; nothing when the slots were not read.
func TestSummarySaysTheNextDelivery(t *testing.T) {
	store := time.FixedZone("EST", -5*3600) // 10:00 there is 15:00 UTC
	read := time.Date(2026, 11, 27, 20, 0, 0, 0, store)
	sat := slots.Slot{Start: time.Date(2026, 11, 28, 10, 0, 0, 0, store), End: time.Date(2026, 11, 28, 12, 0, 0, 0, store),
		Fee: 499, FeeKnown: true, Available: true}
	next := &slots.Next{ReadAt: read, Slot: &sat}
	none := &slots.Next{ReadAt: read}
	for _, tc := range []struct {
		name     string
		lang     string
		delivery *slots.Next
		want     string // "" : no delivery line
	}{
		{"english", "en", next, "Next delivery: Saturday 10:00–12:00, $4.99"},
		{"french", "fr", next, "Prochaine livraison : samedi 10 h 00 – 12 h 00, 4,99\u00a0$"}, // the no-break space of French prices
		{"none available", "en", none, "No delivery window is available."},
		{"none available, french", "fr", none, "Aucune plage de livraison n'est libre."},
		{"not read", "en", nil, ""},
		{"not read, french", "fr", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := messages.For(tc.lang)
			s := Summary{RunID: "r1", StartedAt: read, FinishedAt: read.Add(time.Minute), Delivery: tc.delivery,
				Items: []ItemResult{{ItemName: "milk", Quantity: 1, Outcome: OutcomeAdded, ProductName: "Milk", Price: money.Parse("$5.49")}}}
			md := s.MarkdownIn(m)
			if tc.want == "" {
				for _, w := range []string{"delivery", "livraison"} {
					if strings.Contains(strings.ToLower(md), w) {
						t.Errorf("the summary speaks of delivery although the slots were not read:\n%s", md)
					}
				}
				return
			}
			if !strings.Contains(md, "\n"+tc.want+"\n") {
				t.Errorf("the summary does not say %q on a line of its own:\n%s", tc.want, md)
			}
			if left := m.Foreign(md); tc.lang == "fr" && len(left) > 0 {
				t.Errorf("English left in the French summary: %q", left)
			}
		})
	}
}
