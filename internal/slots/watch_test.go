package slots

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
)

func TestParseWatch(t *testing.T) {
	sat10 := Slot{Start: time.Date(2026, 11, 28, 10, 0, 0, 0, toronto), End: time.Date(2026, 11, 28, 12, 0, 0, 0, toronto), Available: true}
	sat18 := Slot{Start: time.Date(2026, 11, 28, 18, 0, 0, 0, toronto), End: time.Date(2026, 11, 28, 20, 0, 0, 0, toronto), Available: true}
	sun10 := Slot{Start: time.Date(2026, 11, 29, 10, 0, 0, 0, toronto), End: time.Date(2026, 11, 29, 12, 0, 0, 0, toronto), Available: true}
	tests := []struct {
		text    string
		matches []bool // sat10, sat18, sun10
		bad     bool
	}{
		{text: "saturday", matches: []bool{true, true, false}},
		{text: "Samedi", matches: []bool{true, true, false}},
		{text: "2026-11-29", matches: []bool{false, false, true}},
		{text: "before 12:00", matches: []bool{true, false, true}},
		{text: "avant 12 h", matches: []bool{true, false, true}},
		{text: "saturday before 10:00", matches: []bool{false, false, false}},
		{text: "saturday before 10:30", matches: []bool{true, false, false}},
		{text: "", matches: []bool{false, false, false}},
		{text: "someday", bad: true},
		{text: "saturday before noonish", bad: true},
	}
	for _, tc := range tests {
		w, err := ParseWatch(tc.text)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseWatch(%q) = %+v, want an error", tc.text, w)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseWatch(%q): %v", tc.text, err)
			continue
		}
		for i, s := range []Slot{sat10, sat18, sun10} {
			if got := w.Matches(s); got != tc.matches[i] {
				t.Errorf("%q matches %s = %v, want %v", tc.text, s.Start.Format("Mon 15:04"), got, tc.matches[i])
			}
		}
	}
}

// TestWatcherOncePerOpening: a watched window is told of once while it
// stays open, and again only after it was full and reopened.
func TestWatcherOncePerOpening(t *testing.T) {
	s := Slot{Start: time.Date(2026, 11, 28, 10, 0, 0, 0, toronto), End: time.Date(2026, 11, 28, 12, 0, 0, 0, toronto)}
	w := &Watcher{Watch: Watch{Weekday: time.Saturday, HasWeekday: true}}
	read := func(avail bool) int {
		s.Available = avail
		return len(w.Openings(Reading{Slots: []Slot{s}}, thu))
	}
	for i, tc := range []struct {
		avail bool
		want  int
	}{{false, 0}, {true, 1}, {true, 0}, {false, 0}, {true, 1}} {
		if got := read(tc.avail); got != tc.want {
			t.Errorf("reading %d (available %v): told %d, want %d", i, tc.avail, got, tc.want)
		}
	}
}

func TestNextLine(t *testing.T) {
	r := Reading{Slots: []Slot{{Start: time.Date(2026, 11, 28, 10, 0, 0, 0, toronto), End: time.Date(2026, 11, 28, 12, 0, 0, 0, toronto), Fee: 499, FeeKnown: true, Available: true}}}
	if got := NextLine(messages.For("en"), r, thu); got != "Next delivery: Saturday 10:00–12:00, $4.99" {
		t.Errorf("en: %q", got)
	}
	if got := NextLine(messages.For("fr"), r, thu); got != "Prochaine livraison : samedi 10 h 00 – 12 h 00, 4,99\u00a0$" {
		t.Errorf("fr: %q", got)
	}
	if got := NextLine(messages.For("en"), Reading{}, thu); got != "No delivery window is available." {
		t.Errorf("none: %q", got)
	}
}

// The table `gemini-supply slots` prints is in the household's language,
// every word of it: the next window, each window available or full, when
// it was read.
func TestTableInEveryLanguage(t *testing.T) {
	sat := func(h int) time.Time { return time.Date(2026, 11, 28, h, 0, 0, 0, toronto) }
	r := Reading{ReadAt: thu, Slots: []Slot{
		{Start: sat(10), End: sat(12), Fee: 499, FeeKnown: true, Available: true},
		{Start: sat(14), End: sat(16), Fee: 0, FeeKnown: true},
	}}
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"en", []string{"Next delivery: Saturday 10:00–12:00, $4.99", "available", "full", "Nothing was chosen or booked."}},
		{"fr", []string{"Prochaine livraison : samedi 10 h 00 – 12 h 00", "libre", "complète", "Rien n'a été choisi ni réservé."}},
	} {
		m := messages.For(tc.lang)
		got := Table(m, r)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the table lacks %q:\n%s", tc.lang, w, got)
			}
		}
		if left := m.Foreign(got); len(left) > 0 {
			t.Errorf("%s: English left %q:\n%s", tc.lang, left, got)
		}
	}
}
