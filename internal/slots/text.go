package slots

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
)

// When is a window in m's language: "Saturday 10:00–12:00",
// "samedi 10 h 00 – 12 h 00".
func When(m messages.Catalog, s Slot) string {
	return m.T("slots.window", "day", m.T("slots.weekday_"+strconv.Itoa(int(s.Start.Weekday()))),
		"from", clockText(m, s.Start), "to", clockText(m, s.End))
}

// FeeText is a window's fee in m's language: "$4.99", "4,99 $", "free".
func FeeText(m messages.Catalog, s Slot) string {
	switch {
	case !s.FeeKnown:
		return m.T("slots.fee_unknown")
	case s.Fee == 0:
		return m.T("slots.fee_free")
	}
	return money.FormatIn(s.Fee, m.Lang())
}

// Table is the reading for a person, in m's language: the next available
// window, then every window one a line (date, day and hours, fee,
// available or full), then when it was read and that nothing was booked.
func Table(m messages.Catalog, r Reading) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", NextLine(m, r, r.ReadAt))
	for _, s := range r.Slots {
		state := m.T("slots.available")
		if !s.Available {
			state = m.T("slots.full")
		}
		fmt.Fprintf(&b, "%-12s %-36s %-18s %s\n", s.Start.Format(time.DateOnly), When(m, s), FeeText(m, s), state)
	}
	fmt.Fprintf(&b, "\n%s\n", m.T("slots.read_at", "at", r.ReadAt.Format("2006-01-02 15:04")))
	return b.String()
}

// NextLine is "Next delivery: Saturday 10:00–12:00, $4.99" in m's
// language for the first available window not started at now, or says
// none is available.
func NextLine(m messages.Catalog, r Reading, now time.Time) string {
	return NextAt(r, now).Line(m)
}

// Next is what a run's summary says of the delivery slots: the next
// available window as read at ReadAt (Slot nil: none was available).
type Next struct {
	ReadAt time.Time `json:"read_at"`
	Slot   *Slot     `json:"slot"`
}

// NextAt is r's next available window that has not started at now.
func NextAt(r Reading, now time.Time) Next {
	n := Next{ReadAt: r.ReadAt}
	if s, ok := r.Next(now); ok {
		n.Slot = &s
	}
	return n
}

// Line is "Next delivery: Saturday 10:00–12:00, $4.99" in m's language,
// the window in its own time zone (the store's, as read), or says none
// is available.
func (n Next) Line(m messages.Catalog) string {
	if n.Slot == nil {
		return m.T("slots.none")
	}
	return m.T("slots.next", "when", When(m, *n.Slot), "fee", FeeText(m, *n.Slot))
}

// OpenedText is the title and body of the notice that a watched window
// opened.
func OpenedText(m messages.Catalog, s Slot) (title, body string) {
	return m.T("slots.opened_title"), m.T("slots.opened_body", "when", When(m, s), "fee", FeeText(m, s))
}

// Hours is a window's hours in m's language: "10:00–12:00",
// "10 h 00 – 12 h 00" (24 h, in the window's own time zone).
func Hours(m messages.Catalog, s Slot) string {
	return m.T("slots.hours", "from", clockText(m, s.Start), "to", clockText(m, s.End))
}

// Day is a window's day in m's language: "Saturday 2026-11-28",
// "samedi 2026-11-28".
func Day(m messages.Catalog, s Slot) string {
	return m.T("slots.day", "day", m.T("slots.weekday_"+strconv.Itoa(int(s.Start.Weekday()))), "date", s.Start.Format(time.DateOnly))
}

// clockText is a time of day in m's language ("10:00", "10 h 00").
func clockText(m messages.Catalog, t time.Time) string {
	return m.T("slots.time", "h", strconv.Itoa(t.Hour()), "m", fmt.Sprintf("%02d", t.Minute()))
}
