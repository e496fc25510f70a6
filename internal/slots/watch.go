package slots

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Watch is what the household waits for: a window that opens on a given
// day (a weekday, or a date) and/or that starts before a time of day.
// The zero Watch watches nothing.
type Watch struct {
	// Weekday, when HasWeekday, is the day of the week.
	Weekday    time.Weekday
	HasWeekday bool
	// Date, when not zero, is one date (YYYY-MM-DD).
	Date string
	// Before, when not zero, is the latest start: the window starts
	// strictly before this time of day (minutes after midnight).
	Before    int
	HasBefore bool
}

// Active says whether the watch waits for anything.
func (w Watch) Active() bool { return w.HasWeekday || w.Date != "" || w.HasBefore }

// Matches says whether s is a window the watch waits for (availability
// aside).
func (w Watch) Matches(s Slot) bool {
	if !w.Active() {
		return false
	}
	if w.HasWeekday && s.Start.Weekday() != w.Weekday {
		return false
	}
	if w.Date != "" && s.Start.Format(time.DateOnly) != w.Date {
		return false
	}
	if w.HasBefore && s.Start.Hour()*60+s.Start.Minute() >= w.Before {
		return false
	}
	return true
}

// ParseWatch reads a watch as the household writes it: "saturday",
// "samedi", "2026-11-28", "before 12:00", "avant 12h",
// "saturday before 10:00". Empty is no watch.
func ParseWatch(text string) (Watch, error) {
	var w Watch
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" {
		return w, nil
	}
	day, after := t, ""
	for _, sep := range []string{"before", "avant"} {
		if i := strings.Index(t, sep); i >= 0 {
			day, after = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+len(sep):])
			break
		}
	}
	if day != "" {
		if g := isoDate.FindString(day); g != "" && g == day {
			if _, err := time.Parse(time.DateOnly, g); err != nil {
				return Watch{}, fmt.Errorf("slot watch %q: %w", text, err)
			}
			w.Date = g
		} else if wd, ok := weekdays[strings.Trim(day, " ,")]; ok {
			w.Weekday, w.HasWeekday = wd, true
		} else {
			return Watch{}, fmt.Errorf("slot watch %q: %q is not a day of the week or a date (YYYY-MM-DD)", text, day)
		}
	}
	if after != "" {
		g := clock.FindStringSubmatch(after)
		h, m := -1, 0
		if g != nil && strings.TrimSpace(g[0]) == after {
			h, _ = strconv.Atoi(g[1])
			if g[2] != "" {
				m, _ = strconv.Atoi(g[2])
			}
			h = to24(h, strings.ToLower(strings.NewReplacer(".", "", " ", "").Replace(g[3])))
		}
		if h < 0 || m > 59 {
			return Watch{}, fmt.Errorf("slot watch %q: %q is not a time of day", text, after)
		}
		w.Before, w.HasBefore = h*60+m, true
	}
	return w, nil
}

// Watcher tells of each opening a watch waits for at most once: a
// matching window seen available and not told of yet. A window seen full
// again may be told of again when it reopens (a new opening). Not safe
// for concurrent use.
type Watcher struct {
	Watch Watch
	told  map[int64]bool // start (Unix) → told while available
}

// Openings returns the windows of r to tell of now, and remembers them.
func (w *Watcher) Openings(r Reading, now time.Time) []Slot {
	if w.told == nil {
		w.told = map[int64]bool{}
	}
	var out []Slot
	for _, s := range r.Sorted().Slots {
		k := s.Start.Unix()
		switch {
		case !s.Available:
			delete(w.told, k)
		case w.Watch.Matches(s) && !s.Start.Before(now) && !w.told[k]:
			w.told[k] = true
			out = append(out, s)
		}
	}
	return out
}
