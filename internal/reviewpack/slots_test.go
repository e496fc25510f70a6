package reviewpack

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// TestSlotsSection: the pack's slots section says when the slots were
// read, the next available window, the free windows today and tomorrow,
// and keeps them through the journal (JSON); a page that could not be
// read is said with its reason, and the summary then says nothing of a
// delivery.
func TestSlotsSection(t *testing.T) {
	zone := time.FixedZone("EST", -5*3600)
	at := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, zone) }
	r := slots.Reading{ReadAt: at(27, 9), Slots: []slots.Slot{
		{Start: at(27, 8), End: at(27, 10), Fee: 299, FeeKnown: true, Available: true}, // started
		{Start: at(27, 10), End: at(27, 12), Fee: 499, FeeKnown: true},                 // full
		{Start: at(27, 14), End: at(27, 16), Fee: 399, FeeKnown: true, Available: true},
		{Start: at(28, 10), End: at(28, 12), Fee: 499, FeeKnown: true, Available: true},
		{Start: at(28, 14), End: at(28, 16), Available: true},
	}}
	s := NewSlots(r, nil)
	if !s.Read() || !s.ReadAt.Equal(r.ReadAt) || s.Next == nil || !s.Next.Start.Equal(at(27, 14)) || s.Next.Fee != 399 ||
		s.FreeToday != 1 || s.FreeTomorrow != 2 || len(s.Windows) != 5 {
		t.Fatalf("section %+v", s)
	}
	if d := s.Delivery(); d == nil || d.Slot == nil || !d.Slot.Start.Equal(at(27, 14)) {
		t.Errorf("delivery %+v", d)
	}
	b, err := json.Marshal(Pack{RunID: "r", Items: []Item{}, Slots: s})
	if err != nil {
		t.Fatal(err)
	}
	var back Pack
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, ok := back.Slots.Reading()
	if !ok || !slots.SameSlots(got, r) || !back.Slots.Next.Start.Equal(at(27, 14)) || back.Slots.FreeTomorrow != 2 {
		t.Errorf("after the journal: %+v", back.Slots)
	}

	failed := NewSlots(slots.Reading{}, errors.New("read the delivery slots: the page shows no delivery slots"))
	if failed.Read() || failed.Delivery() != nil || !strings.Contains(failed.Error, "shows no delivery slots") {
		t.Errorf("a page that could not be read: %+v", failed)
	}
	if _, ok := failed.Reading(); ok {
		t.Error("a failed section gives a reading")
	}
	var none *Slots
	if none.Read() || none.Delivery() != nil {
		t.Error("no section is read")
	}
	b, _ = json.Marshal(failed)
	if strings.Contains(string(b), "read_at") || strings.Contains(string(b), `"slots"`) {
		t.Errorf("a failed section as JSON: %s", b)
	}
	long := Slots{Windows: make([]slots.Slot, slots.MaxSlots+5), Error: strings.Repeat("x", 10000)}.Bounded()
	if len(long.Windows) != slots.MaxSlots || len(long.Error) >= 10000 {
		t.Errorf("bounded: %d windows, error of %d bytes", len(long.Windows), len(long.Error))
	}
}
