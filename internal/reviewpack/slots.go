package reviewpack

import (
	"slices"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// Slots is the pack's slots section (the coordinator's SlotScout): the
// store's delivery slots as read after the run, in a reader tab of the
// run's browser — when they were read, the next available window (start,
// end, fee), the free windows today and tomorrow (in the store's time
// zone, as read) and every window — or, Error set, that they could not be
// read and why. Read only: no slot is ever chosen or booked.
type Slots struct {
	ReadAt time.Time `json:"read_at,omitzero"`
	// Next is the first available window not started when read (nil:
	// none).
	Next         *slots.Slot  `json:"next,omitempty"`
	FreeToday    int          `json:"free_today"`
	FreeTomorrow int          `json:"free_tomorrow"`
	Windows      []slots.Slot `json:"slots,omitempty"`
	// Error is why the slots could not be read ("" when they were).
	Error string `json:"error,omitempty"`
}

// NewSlots is the section of a reading, or of the error that stopped it.
func NewSlots(r slots.Reading, err error) *Slots {
	if err != nil {
		return &Slots{Error: err.Error()}
	}
	info := slots.NewInfo(r)
	return &Slots{ReadAt: info.ReadAt, Next: info.Next, FreeToday: info.FreeToday, FreeTomorrow: info.FreeTomorrow, Windows: info.Slots}
}

// Read says whether the slots were read.
func (s *Slots) Read() bool { return s != nil && s.Error == "" }

// Reading is the section as a reading (false: the slots were not read).
func (s *Slots) Reading() (slots.Reading, bool) {
	if !s.Read() {
		return slots.Reading{}, false
	}
	return slots.Reading{ReadAt: s.ReadAt, Slots: s.Windows}, true
}

// Delivery is what the run's summary says of the slots (nil: they were
// not read — the summary then says nothing of a delivery).
func (s *Slots) Delivery() *slots.Next {
	if !s.Read() {
		return nil
	}
	return &slots.Next{ReadAt: s.ReadAt, Slot: s.Next}
}

// Bounded returns the section with at most slots.MaxSlots windows and its
// error clipped.
func (s Slots) Bounded() Slots {
	if len(s.Windows) > slots.MaxSlots {
		s.Windows = slices.Clone(s.Windows[:slots.MaxSlots])
	}
	s.Error = report.Clip(s.Error, report.MaxTextRunes)
	return s
}
