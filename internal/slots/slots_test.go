package slots

import (
	"encoding/json"
	"testing"
	"time"
)

var toronto = func() *time.Location {
	l, err := time.LoadLocation("America/Toronto")
	if err != nil {
		return time.FixedZone("EST", -5*3600)
	}
	return l
}()

// Thursday 26 November 2026, 09:00.
var thu = time.Date(2026, 11, 26, 9, 0, 0, 0, toronto)

func TestParseDay(t *testing.T) {
	tests := []struct {
		text string
		want string // YYYY-MM-DD, "" when not read
	}{
		{"2026-11-28", "2026-11-28"},
		{"Today", "2026-11-26"},
		{"Demain", "2026-11-27"},
		{"Saturday, November 28", "2026-11-28"},
		{"samedi 28 novembre", "2026-11-28"},
		{"Sat", "2026-11-28"},
		{"Thursday", "2026-11-26"},
		{"January 3", "2027-01-03"},
		{"3 janvier", "2027-01-03"},
		{"2026-02-30", ""},
		{"soon", ""},
		{"", ""},
	}
	for _, tc := range tests {
		got, ok := ParseDay(tc.text, thu)
		s := ""
		if ok {
			s = got.Format(time.DateOnly)
		}
		if s != tc.want {
			t.Errorf("ParseDay(%q) = %q, want %q", tc.text, s, tc.want)
		}
	}
}

func TestParseWindow(t *testing.T) {
	day := time.Date(2026, 11, 28, 0, 0, 0, 0, toronto)
	tests := []struct {
		text string
		want string // "15:04-15:04", "" when not read
	}{
		{"10:00–12:00", "10:00-12:00"},
		{"10 h 00 à 12 h 00", "10:00-12:00"},
		{"10h-12h", "10:00-12:00"},
		{"2:00 PM - 4:00 PM", "14:00-16:00"},
		{"2-4 pm", "14:00-16:00"},
		{"11 a.m. – 1 p.m.", "11:00-13:00"},
		{"10 pm - 12 am", "22:00-00:00"},
		{"12:00–10:00", ""},
		{"10:00", ""},
		{"Full", ""},
		{"25:00-26:00", ""},
	}
	for _, tc := range tests {
		s, e, ok := ParseWindow(day, tc.text)
		got := ""
		if ok {
			got = s.Format("15:04") + "-" + e.Format("15:04")
		}
		if got != tc.want {
			t.Errorf("ParseWindow(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestParseFee(t *testing.T) {
	tests := []struct {
		text  string
		cents int64
		ok    bool
	}{
		{"$4.99", 499, true}, {"4,99 $", 499, true}, {"Free", 0, true}, {"Gratuit", 0, true},
		{"", 0, false}, {"—", 0, false}, {"$1.99/kg", 0, false},
	}
	for _, tc := range tests {
		c, ok := ParseFee(tc.text)
		if ok != tc.ok || int64(c) != tc.cents {
			t.Errorf("ParseFee(%q) = %d %v, want %d %v", tc.text, c, ok, tc.cents, tc.ok)
		}
	}
}

func at(h int, dayOffset int) time.Time {
	return time.Date(2026, 11, 26+dayOffset, h, 0, 0, 0, toronto)
}

func TestNextAndFreeOn(t *testing.T) {
	r := Reading{Slots: []Slot{
		{Start: at(8, 0), End: at(10, 0), Available: true}, // past at 09:00
		{Start: at(14, 0), End: at(16, 0), Available: false},
		{Start: at(18, 0), End: at(20, 0), Fee: 699, FeeKnown: true, Available: true},
		{Start: at(10, 1), End: at(12, 1), Fee: 499, FeeKnown: true, Available: true},
		{Start: at(14, 1), End: at(16, 1), Available: true},
	}}
	n, ok := r.Next(thu)
	if !ok || !n.Start.Equal(at(18, 0)) {
		t.Errorf("Next = %+v %v, want today 18:00", n, ok)
	}
	if got := r.FreeOn(thu, thu); got != 1 {
		t.Errorf("free today = %d, want 1", got)
	}
	if got := r.FreeOn(thu.AddDate(0, 0, 1), thu); got != 2 {
		t.Errorf("free tomorrow = %d, want 2", got)
	}
	if _, ok := (Reading{}).Next(thu); ok {
		t.Error("an empty reading has a next slot")
	}
}

func TestSlotJSON(t *testing.T) {
	r := Reading{ReadAt: thu, Slots: []Slot{
		{Start: at(10, 2), End: at(12, 2), Fee: 499, FeeKnown: true, Available: true},
		{Start: at(14, 2), End: at(16, 2), Available: false},
	}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"read_at":"2026-11-26T09:00:00-05:00","slots":[{"start":"2026-11-28T10:00:00-05:00","end":"2026-11-28T12:00:00-05:00","fee":4.99,"available":true},` +
		`{"start":"2026-11-28T14:00:00-05:00","end":"2026-11-28T16:00:00-05:00","fee":null,"available":false}]}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var back Reading
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !SameSlots(r, back) {
		t.Errorf("round trip changed the slots: %+v", back)
	}
}
