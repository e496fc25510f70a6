package slots

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/money"
)

// The parsers below read what a store's slots page shows, in English or
// French: they are best effort, and a text they cannot read is no reading
// (the reader then says it could not read the page).

var (
	isoDate = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	// clock is one time of day: "10:00", "10 h 00", "10h", "10 am", "2:30 p.m.".
	clock = regexp.MustCompile(`(?i)\b(\d{1,2})(?:\s*(?::|h)\s*(\d{2})?)?\s*(a\.?\s?m\.?|p\.?\s?m\.?)?`)
	words = regexp.MustCompile(`[\p{L}']+`)
	digit = regexp.MustCompile(`\b(\d{1,2})\b`)
)

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
	"dimanche": time.Sunday, "lundi": time.Monday, "mardi": time.Tuesday, "mercredi": time.Wednesday,
	"jeudi": time.Thursday, "vendredi": time.Friday, "samedi": time.Saturday,
}

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
	"september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
	"janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7, "août": 8, "aout": 8,
	"septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12, "decembre": 12,
}

// ParseDay reads a day label ("2026-11-28", "Today", "Demain",
// "Saturday, November 28", "samedi 28 novembre", "Sat") as the date at
// midnight in now's location: a date without a year is the next one from
// now's day on, a weekday alone the next such day within a week.
func ParseDay(text string, now time.Time) (time.Time, bool) {
	loc := now.Location()
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if g := isoDate.FindStringSubmatch(text); g != nil {
		yy, _ := strconv.Atoi(g[1])
		mm, _ := strconv.Atoi(g[2])
		dd, _ := strconv.Atoi(g[3])
		t := time.Date(yy, time.Month(mm), dd, 0, 0, 0, 0, loc)
		if t.Month() != time.Month(mm) || t.Day() != dd {
			return time.Time{}, false
		}
		return t, true
	}
	lower := strings.ToLower(text)
	var month time.Month
	wd, haveWD := time.Weekday(0), false
	for _, w := range words.FindAllString(lower, -1) {
		switch w {
		case "today", "aujourd'hui", "aujourd":
			return today, true
		case "tomorrow", "demain":
			return today.AddDate(0, 0, 1), true
		}
		if mo, ok := months[w]; ok && month == 0 {
			month = mo
		}
		if x, ok := weekdays[w]; ok && !haveWD {
			wd, haveWD = x, true
		}
	}
	if month != 0 {
		g := digit.FindStringSubmatch(lower)
		if g == nil {
			return time.Time{}, false
		}
		dd, _ := strconv.Atoi(g[1])
		for _, yy := range []int{y, y + 1} {
			t := time.Date(yy, month, dd, 0, 0, 0, 0, loc)
			if t.Month() != month {
				return time.Time{}, false
			}
			if !t.Before(today) {
				return t, true
			}
		}
		return time.Time{}, false
	}
	if haveWD {
		return today.AddDate(0, 0, (int(wd)-int(today.Weekday())+7)%7), true
	}
	return time.Time{}, false
}

// ParseWindow reads a window's text ("10:00–12:00", "10 h à 12 h",
// "2:00 PM - 4:00 PM", "2-4 pm") on day (midnight, in its location). The
// end is after the start, on the same day or at midnight.
func ParseWindow(day time.Time, text string) (start, end time.Time, ok bool) {
	type hm struct {
		h, m   int
		suffix string
	}
	var found []hm
	for _, g := range clock.FindAllStringSubmatch(text, -1) {
		h, _ := strconv.Atoi(g[1])
		m := 0
		if g[2] != "" {
			m, _ = strconv.Atoi(g[2])
		}
		suffix := strings.ToLower(strings.NewReplacer(".", "", " ", "").Replace(g[3]))
		found = append(found, hm{h, m, suffix})
		if len(found) == 2 {
			break
		}
	}
	if len(found) != 2 {
		return time.Time{}, time.Time{}, false
	}
	a, b := found[0], found[1]
	if a.suffix == "" && b.suffix != "" {
		// "2-4 pm": the start shares the end's half of the day unless that
		// would put it after the end ("11-1 pm").
		a.suffix = b.suffix
		if to24(a.h, a.suffix) > to24(b.h, b.suffix) {
			a.suffix = "am"
		}
	}
	ha, hb := to24(a.h, a.suffix), to24(b.h, b.suffix)
	if ha < 0 || hb < 0 || a.m > 59 || b.m > 59 {
		return time.Time{}, time.Time{}, false
	}
	y, mo, d := day.Date()
	loc := day.Location()
	start = time.Date(y, mo, d, ha, a.m, 0, 0, loc)
	end = time.Date(y, mo, d, hb, b.m, 0, 0, loc)
	if hb == 0 && b.m == 0 {
		end = time.Date(y, mo, d+1, 0, 0, 0, 0, loc) // "10 pm - 12 am"
	}
	if !end.After(start) || end.Sub(start) > 12*time.Hour {
		return time.Time{}, time.Time{}, false
	}
	return start, end, true
}

// to24 is an hour of a 24-hour clock, -1 when it cannot be one.
func to24(h int, suffix string) int {
	switch suffix {
	case "":
		if h > 24 {
			return -1
		}
		return h % 24
	case "am":
		if h < 1 || h > 12 {
			return -1
		}
		return h % 12
	case "pm":
		if h < 1 || h > 12 {
			return -1
		}
		return h%12 + 12
	}
	return -1
}

// ParseFee reads a fee ("$4.99", "4,99 $", "Free", "Gratuit").
func ParseFee(text string) (money.Cents, bool) {
	l := strings.ToLower(strings.TrimSpace(text))
	if l == "" {
		return 0, false
	}
	for _, w := range words.FindAllString(l, -1) {
		if w == "free" || w == "gratuit" || w == "gratuite" {
			return 0, true
		}
	}
	p := money.Parse(text)
	if !p.Known || p.Per != "" || p.UnitCents < 0 {
		return 0, false
	}
	return p.UnitCents, true
}
