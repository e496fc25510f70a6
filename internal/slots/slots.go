// Package slots holds the store's delivery slots as read (by code, in a
// reader tab: shop.PageSlotsReader) — the days and time windows the store
// offers for the household's address, each with its fee and whether it is
// still available — and what is said about them: the next available slot,
// the free windows of a day, whether a reading changed, and the openings a
// watch waits for. Reading slots never chooses, reserves or books one.
package slots

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/money"
)

// Slot is one delivery window.
type Slot struct {
	Start, End time.Time
	// Fee is the delivery fee of the window; meaningful only when FeeKnown.
	Fee      money.Cents
	FeeKnown bool
	// Available is false when the store shows the window as full.
	Available bool
}

// slotJSON is a slot as JSON: RFC 3339 times, the fee in dollars (null
// when the page did not show it).
type slotJSON struct {
	Start     time.Time    `json:"start"`
	End       time.Time    `json:"end"`
	Fee       *json.Number `json:"fee"`
	Available bool         `json:"available"`
}

// MarshalJSON writes {"start","end","fee","available"}.
func (s Slot) MarshalJSON() ([]byte, error) {
	j := slotJSON{Start: s.Start, End: s.End, Available: s.Available}
	if s.FeeKnown {
		n := json.Number(Dollars(s.Fee))
		j.Fee = &n
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Slot) UnmarshalJSON(b []byte) error {
	var j slotJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Slot{Start: j.Start, End: j.End, Available: j.Available}
	if j.Fee != nil {
		f, err := j.Fee.Float64()
		if err != nil || f < 0 || f > 1e6 {
			return fmt.Errorf("slots: fee %q", *j.Fee)
		}
		s.Fee, s.FeeKnown = money.Cents(math.Round(f*100)), true
	}
	return nil
}

// Dollars writes c as a plain decimal number of dollars ("4.99", "0.00").
func Dollars(c money.Cents) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return sign + strconv.FormatInt(int64(c/100), 10) + "." + fmt.Sprintf("%02d", int64(c%100))
}

// Reading is the store's slots as read at one moment.
type Reading struct {
	ReadAt time.Time `json:"read_at"`
	Slots  []Slot    `json:"slots"`
}

// Sorted returns the reading with its slots in start order.
func (r Reading) Sorted() Reading {
	r.Slots = slices.Clone(r.Slots)
	if r.Slots == nil {
		r.Slots = []Slot{}
	}
	slices.SortStableFunc(r.Slots, func(a, b Slot) int { return a.Start.Compare(b.Start) })
	return r
}

// Next is the first available slot that has not started at now.
func (r Reading) Next(now time.Time) (Slot, bool) {
	var best Slot
	found := false
	for _, s := range r.Slots {
		if !s.Available || s.Start.Before(now) {
			continue
		}
		if !found || s.Start.Before(best.Start) {
			best, found = s, true
		}
	}
	return best, found
}

// FreeOn counts the available windows that start on day's calendar date
// (in day's location) and have not started at now.
func (r Reading) FreeOn(day, now time.Time) int {
	y, m, d := day.Date()
	n := 0
	for _, s := range r.Slots {
		sy, sm, sd := s.Start.In(day.Location()).Date()
		if s.Available && !s.Start.Before(now) && sy == y && sm == m && sd == d {
			n++
		}
	}
	return n
}

// SameSlots says whether a and b show the same windows, fees and
// availability (when they were read does not matter).
func SameSlots(a, b Reading) bool {
	return slices.EqualFunc(a.Sorted().Slots, b.Sorted().Slots, func(x, y Slot) bool {
		return x.Start.Equal(y.Start) && x.End.Equal(y.End) && x.Fee == y.Fee && x.FeeKnown == y.FeeKnown && x.Available == y.Available
	})
}

// MaxSlots bounds a reading's windows (a page cannot make every consumer
// carry an unbounded list).
const MaxSlots = 200

// Bounded returns the reading with at most MaxSlots windows, the first.
func (r Reading) Bounded() Reading {
	if len(r.Slots) > MaxSlots {
		r.Slots = slices.Clone(r.Slots[:MaxSlots])
	}
	return r
}

// Info sums up a reading for Home Assistant (the MQTT sensors' attributes
// and the gemini_supply_slots event's data): when the slots were read, the
// next available window (null: none), the free windows today and tomorrow,
// and every window.
type Info struct {
	ReadAt       time.Time `json:"read_at"`
	Next         *Slot     `json:"next"`
	FreeToday    int       `json:"free_today"`
	FreeTomorrow int       `json:"free_tomorrow"`
	Slots        []Slot    `json:"slots"`
}

// NewInfo sums up r; "now", "today" and "tomorrow" are the reading's own
// time (its location is the household's).
func NewInfo(r Reading) Info {
	r = r.Sorted().Bounded()
	info := Info{ReadAt: r.ReadAt, Slots: r.Slots,
		FreeToday: r.FreeOn(r.ReadAt, r.ReadAt), FreeTomorrow: r.FreeOn(r.ReadAt.AddDate(0, 0, 1), r.ReadAt)}
	if n, ok := r.Next(r.ReadAt); ok {
		info.Next = &n
	}
	return info
}
