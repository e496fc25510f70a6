package demostore

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The demo store's delivery slots page: a week of windows from today
// (today's past windows left out), each with its fee, some full; a test
// changes which are full with SetSlotFull. Every window has a "Reserve"
// button, and the page's scripts try to reserve one as soon as it loads
// (a fetch, an XHR, a beacon and a form posted into a frame): a reader of
// the slots must send none of them. Every reservation that reaches the
// store is counted (SlotReservations).

// Slots page paths, by language.
const (
	SlotsPathEN = "/en/online-grocery/delivery-slots"
	SlotsPathFR = "/fr/epicerie-en-ligne/plages-de-livraison"
	// SlotsReservePath takes a reservation (POST): the state change a
	// reader must never make.
	SlotsReservePath = "/api/slots/reserve"
)

// DeliverySlot is one window of the demo store's slots page.
type DeliverySlot struct {
	Start, End time.Time
	FeeCents   int64
	Full       bool
}

// slotWindows are each day's windows: start hour, end hour, fee.
var slotWindows = []struct {
	from, to int
	fee      int64
}{{8, 10, 299}, {10, 12, 499}, {14, 16, 399}, {18, 20, 699}}

// slotState is the slots' changeable part.
type slotState struct {
	mu       sync.Mutex
	full     map[int64]bool // start (Unix) → full, set by SetSlotFull
	reserved int
	now      func() time.Time
}

func (s *Server) slotClock() time.Time {
	s.slots.mu.Lock()
	f := s.slots.now
	s.slots.mu.Unlock()
	if f != nil {
		return f()
	}
	return time.Now()
}

// SetSlotClock sets the clock the slots page counts its week from (nil:
// time.Now), in the clock's location.
func (s *Server) SetSlotClock(now func() time.Time) {
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	s.slots.now = now
}

// DeliverySlots returns the windows the slots page shows now, in start
// order: seven days from today, today's past windows left out. A window
// is full by default when its place in the week says so (about one in
// three), or as SetSlotFull last set it.
func (s *Server) DeliverySlots() []DeliverySlot {
	now := s.slotClock()
	y, m, d := now.Date()
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	var out []DeliverySlot
	for day := range 7 {
		for i, w := range slotWindows {
			start := time.Date(y, m, d+day, w.from, 0, 0, 0, now.Location())
			if start.Before(now) {
				continue
			}
			full := (day*len(slotWindows)+i)%3 == 0
			if f, ok := s.slots.full[start.Unix()]; ok {
				full = f
			}
			out = append(out, DeliverySlot{Start: start, End: time.Date(y, m, d+day, w.to, 0, 0, 0, now.Location()), FeeCents: w.fee, Full: full})
		}
	}
	return out
}

// SetSlotFull makes the window starting at start full or available.
func (s *Server) SetSlotFull(start time.Time, full bool) {
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	if s.slots.full == nil {
		s.slots.full = map[int64]bool{}
	}
	s.slots.full[start.Unix()] = full
}

// SlotReservations counts the reservations that reached the store.
func (s *Server) SlotReservations() int {
	s.slots.mu.Lock()
	defer s.slots.mu.Unlock()
	return s.slots.reserved
}

// slotsPage serves the slots page in l's language.
func (s *Server) slotsPage(l *lang) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		logged := s.loggedIn(r)
		count, _ := s.cartSnapshot()
		if !logged {
			count = 0
		}
		p := &page{l: l, returnTo: r.URL.RequestURI(), loggedIn: logged, consented: consented(r), cartCount: count}
		fr := l == langFR
		title, reserve, fullText, free := "Delivery slots", "Reserve", "Full", "Free"
		if fr {
			title, reserve, fullText, free = "Plages de livraison", "Réserver", "Complet", "Gratuit"
		}
		p.title = title
		var b strings.Builder
		b.WriteString(heading(title))
		b.WriteString(`<iframe name="slot-sink" id="slot-sink" hidden></iframe>`)
		b.WriteString(`<form id="slot-auto" method="post" action="` + SlotsReservePath + `" target="slot-sink"><input type="hidden" name="slot" value="first"></form>`)
		b.WriteString(`<ul id="slots" style="position:absolute;left:24px;top:200px;width:900px;list-style:none">`)
		shown := s.DeliverySlots()
		for _, sl := range shown {
			fee := l.price(sl.FeeCents)
			if sl.FeeCents == 0 {
				fee = free
			}
			fmt.Fprintf(&b, `<li class="slot" data-date="%s"><span class="slot-day">%s</span> <span class="slot-time">%s</span> <span class="slot-fee">%s</span> `,
				sl.Start.Format(time.DateOnly), esc(dayLabel(sl.Start, fr)), esc(sl.Start.Format("15:04")+"–"+sl.End.Format("15:04")), esc(fee))
			if sl.Full {
				fmt.Fprintf(&b, `<span class="slot-full">%s</span>`, esc(fullText))
			} else {
				fmt.Fprintf(&b, `<form class="slot-reserve-form" method="post" action="%s"><input type="hidden" name="start" value="%s"><button class="slot-reserve" type="submit">%s</button></form>`,
					SlotsReservePath, esc(sl.Start.Format(time.RFC3339)), esc(reserve))
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>")
		// The page tries to reserve a window as soon as it loads.
		b.WriteString(`<script>
(() => {
  const body = JSON.stringify({slot: 'first'});
  fetch('` + SlotsReservePath + `', {method: 'POST', headers: {'Content-Type': 'application/json'}, body}).catch(() => {});
  fetch('` + SlotsReservePath + `', {method: 'PUT', body}).catch(() => {});
  try { const x = new XMLHttpRequest(); x.open('POST', '` + SlotsReservePath + `'); x.send(body); } catch (e) {}
  try { navigator.sendBeacon('` + SlotsReservePath + `', body); } catch (e) {}
  document.getElementById('slot-auto').submit();
})();
</script>`)
		b.WriteString(footer(l, 200+30*len(shown)))
		p.content = b.String()
		writeHTML(w, http.StatusOK, p.render())
	}
}

// reserveSlot takes a reservation: it counts it (a reader must never
// reach it).
func (s *Server) reserveSlot(w http.ResponseWriter, r *http.Request) {
	s.slots.mu.Lock()
	s.slots.reserved++
	s.slots.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]bool{"reserved": true})
}

var (
	dayNamesFR   = []string{"dimanche", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"}
	monthNamesFR = []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
)

// dayLabel is "Saturday, November 28" or "samedi 28 novembre".
func dayLabel(t time.Time, fr bool) string {
	if fr {
		return fmt.Sprintf("%s %d %s", dayNamesFR[t.Weekday()], t.Day(), monthNamesFR[t.Month()-1])
	}
	return t.Format("Monday, January 2")
}
