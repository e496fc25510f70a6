package panel

import (
	"net/http"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// SlotsView is the panel's slots card (GET /api/slots), said in the
// household's language on the server — days and 24 h hours in the
// store's time zone as read, fees as the language writes prices: the
// next available window first, then each day's windows with their fee
// and whether they are full. Read is false (and the card hidden) when no
// reading was made or told yet; Error says why the last reading failed.
// Read only: the card offers no way to choose or book a window.
type SlotsView struct {
	Read   bool      `json:"read"`
	ReadAt time.Time `json:"read_at,omitzero"`
	// Next is "Next delivery: Saturday 10:00–12:00, $4.99", or that none
	// is available; ReadAtText "Read at 2026-11-28 09:00. Nothing was
	// chosen or booked."
	Next       string     `json:"next,omitempty"`
	ReadAtText string     `json:"read_at_text,omitempty"`
	Error      string     `json:"error,omitempty"`
	Days       []SlotsDay `json:"days"`
	// Slots are the windows as read (RFC 3339 times, the fee in dollars).
	Slots []slots.Slot `json:"slots"`
}

// SlotsDay is one day of the card.
type SlotsDay struct {
	Day     string        `json:"day"`
	Windows []SlotsWindow `json:"windows"`
}

// SlotsWindow is one window of a day: its hours, fee, whether it is
// available, and whether it is the next available one.
type SlotsWindow struct {
	Hours     string `json:"hours"`
	Fee       string `json:"fee"`
	State     string `json:"state"`
	Available bool   `json:"available"`
	Next      bool   `json:"next,omitempty"`
}

// slotsView is the card of sec in m's language.
func slotsView(m messages.Catalog, sec *reviewpack.Slots) SlotsView {
	v := SlotsView{Days: []SlotsDay{}, Slots: []slots.Slot{}}
	if sec == nil {
		return v
	}
	if sec.Error != "" {
		v.Error = m.T("slots.unread", "error", sec.Error)
		return v
	}
	r, _ := sec.Reading()
	r = r.Sorted()
	v.Read, v.ReadAt, v.Slots = true, sec.ReadAt, r.Slots
	v.Next = sec.Delivery().Line(m)
	v.ReadAtText = m.T("slots.read_at", "at", sec.ReadAt.Format("2006-01-02 15:04"))
	for _, s := range r.Slots {
		day := slots.Day(m, s)
		if len(v.Days) == 0 || v.Days[len(v.Days)-1].Day != day {
			v.Days = append(v.Days, SlotsDay{Day: day, Windows: []SlotsWindow{}})
		}
		w := SlotsWindow{Hours: slots.Hours(m, s), Fee: slots.FeeText(m, s), State: m.T("slots.full"), Available: s.Available,
			Next: sec.Next != nil && s.Start.Equal(sec.Next.Start)}
		if s.Available {
			w.State = m.T("slots.available")
		}
		d := &v.Days[len(v.Days)-1]
		d.Windows = append(d.Windows, w)
	}
	return v
}

// slotsLocked takes what an event says of the delivery slots: a reading
// of the slot scout, or the slots section of a run's pack (read after its
// review, or why they could not be). It says whether the card changed.
func (p *Panel) slotsLocked(ev runstatus.Event) bool {
	var sec *reviewpack.Slots
	switch {
	case ev.Kind == runstatus.KindSlotsRead && ev.Slots != nil:
		sec = reviewpack.NewSlots(*ev.Slots, nil)
	case ev.Pack != nil && ev.Pack.Slots != nil:
		sec = ev.Pack.Slots
	default:
		return false
	}
	p.slots = sec
	p.slotsSeq++
	return true
}

// serveSlots is GET /api/slots: the slots card as last read.
func (p *Panel) serveSlots(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	sec := p.slots
	p.mu.Unlock()
	writeJSON(w, slotsView(p.opts.Messages, sec))
}
