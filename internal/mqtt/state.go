package mqtt

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// Home Assistant rejects sensor states longer than 255 characters; summaries
// in attributes are capped so the recorder keeps them.
const (
	maxStateChars   = 255
	maxSummaryBytes = 12 << 10
)

// requestResult is the outcome of the last start request from MQTT.
type requestResult struct {
	Result      string    `json:"result"` // accepted | busy | error | stopping | no_run
	Source      string    `json:"source"`
	RetryTagged bool      `json:"retry_tagged"`
	At          time.Time `json:"at"`
	Message     string    `json:"message,omitempty"`
}

type inFlight struct {
	id, name string
	quantity int
}

type notFoundItem struct {
	Name        string `json:"name"`
	Explanation string `json:"explanation,omitempty"`
}

// model is what the sensors show, built from run events. It is not safe for
// concurrent use (the Client guards it).
type model struct {
	status    runstatus.State
	runID     string
	startedAt time.Time
	message   string
	question  string
	waiting   string // item waiting for the user
	lastReq   *requestResult
	busy      bool // a start request was refused during the current run

	progress *runstatus.Progress // nil until a run starts in this process
	items    []inFlight          // started, not finished; newest last

	notFound     []notFoundItem
	haveNotFound bool // notFound is meaningful (a run started or finished)

	// lastRun holds the payloads of the last run's sensors, rendered once
	// when the run finishes (the summary markdown is the costly part).
	lastRun map[string]string

	// cart is the store's cart as last read (after a run or an action);
	// cartRun the run it belongs to.
	cart    *reviewpack.Cart
	cartRun string

	// slots are the store's delivery slots as last read (slots.go).
	slots *slots.Reading

	t Topics
	// msgs is the household's language: the last run's title and summary.
	msgs messages.Catalog
}

func newModel(t Topics) *model { return newModelIn(t, messages.Catalog{}) }

// newModelIn is a model whose last-run title and summary are in msgs' language.
func newModelIn(t Topics, msgs messages.Catalog) *model {
	return &model{status: runstatus.StateIdle, t: t, msgs: msgs}
}

// apply folds one event into the model.
func (m *model) apply(e runstatus.Event) {
	if e.Kind == runstatus.KindSlotsRead {
		if e.Slots != nil {
			m.slots = e.Slots
		}
		return
	}
	if e.Kind == runstatus.KindCartChanged {
		// An action on the cart after a run (maybe not the last one).
		if e.Cart != nil {
			m.cart, m.cartRun = e.Cart, e.RunID
		}
		return
	}
	if e.RunID != "" && e.RunID != m.runID && e.Kind != runstatus.KindRunStarted && e.Kind != runstatus.KindRunFinished {
		// An event of a run we did not see start (subscribed late or dropped).
		m.runID = e.RunID
	}
	switch e.Kind {
	case runstatus.KindRunStarted:
		m.runID, m.startedAt, m.message, m.question, m.waiting = e.RunID, e.Time, "", "", ""
		m.items = nil
		m.busy = false
		m.notFound, m.haveNotFound = nil, true
		m.setStatus(e.State, runstatus.StateInitializing)
		p := e.Progress
		m.progress = &p
	case runstatus.KindStateChanged:
		m.setStatus(e.State, m.status)
		if e.State == runstatus.StateFailed || e.Message != "" {
			m.message = e.Message
		}
	case runstatus.KindItemStarted:
		if e.Item != nil {
			m.removeItem(e.Item)
			m.items = append(m.items, inFlight{id: e.Item.ItemID, name: e.Item.ItemName, quantity: e.Item.Quantity})
		}
		m.setProgress(e.Progress)
	case runstatus.KindItemFinished:
		if e.Item != nil {
			m.removeItem(e.Item)
			if e.Item.Outcome == report.OutcomeNotFound {
				m.notFound = append(m.notFound, notFoundItem{Name: e.Item.ItemName, Explanation: e.Item.Explanation})
				m.haveNotFound = true
			}
			if m.waiting == e.Item.ItemName {
				m.waiting, m.question = "", ""
			}
		}
		m.setProgress(e.Progress)
	case runstatus.KindWaitingForUser:
		if e.Item != nil {
			m.waiting = e.Item.ItemName
		}
		m.question = e.Message
	case runstatus.KindUserAnswered:
		m.waiting, m.question = "", ""
	case runstatus.KindRunFinished:
		m.items = nil
		m.busy = false
		m.waiting, m.question = "", ""
		if e.Pack != nil && e.Pack.Cart != nil {
			m.cart, m.cartRun = e.Pack.Cart, e.RunID
		}
		if e.Summary != nil {
			s := *e.Summary
			m.lastRun = lastRunPayloads(m.t, m.msgs, &s)
			m.notFound = nil
			for _, it := range s.Items {
				if it.Outcome == report.OutcomeNotFound {
					m.notFound = append(m.notFound, notFoundItem{Name: it.ItemName, Explanation: it.Explanation})
				}
			}
			m.haveNotFound = true
		}
		fallback := runstatus.StateReviewReady
		if e.Summary != nil && e.Summary.Cancelled {
			fallback = runstatus.StateCancelled
		}
		m.setStatus(e.State, fallback)
		if e.Message != "" {
			m.message = e.Message
		}
		m.setProgress(e.Progress)
	}
}

// request records the outcome of a start request from MQTT.
func (m *model) request(r requestResult) {
	m.lastReq = &r
	if r.Result == EventBusy {
		m.busy = true
	}
}

func (m *model) setStatus(s, fallback runstatus.State) {
	if s == "" {
		s = fallback
	}
	m.status = s
}

func (m *model) setProgress(p runstatus.Progress) {
	if p == (runstatus.Progress{}) {
		return // events that do not carry progress
	}
	m.progress = &p
}

func (m *model) removeItem(it *report.ItemResult) {
	m.items = slices.DeleteFunc(m.items, func(f inFlight) bool {
		if it.ItemID != "" {
			return f.id == it.ItemID
		}
		return f.name == it.ItemName
	})
}

// messages is every retained state the model knows, topic → payload. Topics
// the model knows nothing about (no run seen yet) are left out, so values
// retained by an earlier process stay.
func (m *model) messages() map[string]string {
	t := m.t
	out := make(map[string]string, 16)

	out[t.Status] = string(m.status)
	out[t.StatusAttributes] = mustJSON(struct {
		RunID       string         `json:"run_id,omitempty"`
		StartedAt   *time.Time     `json:"started_at,omitempty"`
		Message     string         `json:"message,omitempty"`
		Waiting     bool           `json:"waiting_for_user"`
		Question    string         `json:"question,omitempty"`
		LastRequest *requestResult `json:"last_request,omitempty"`
		Busy        bool           `json:"busy"`
	}{
		RunID: m.runID, StartedAt: timePtr(m.startedAt), Message: m.message,
		Waiting: m.waiting != "", Question: m.question, LastRequest: m.lastReq,
		Busy: m.busy,
	})

	cur := payloadNone
	names := make([]string, 0, len(m.items))
	for _, it := range m.items {
		names = append(names, it.name)
	}
	if n := len(m.items); n > 0 {
		cur = truncateRunes(m.items[n-1].name, maxStateChars)
	}
	out[t.CurrentItem] = cur
	out[t.CurrentItemAttrs] = mustJSON(struct {
		Items           []string `json:"items"`
		WaitingForUser  string   `json:"waiting_for_user,omitempty"`
		Question        string   `json:"question,omitempty"`
		ItemsInProgress int      `json:"items_in_progress"`
	}{Items: names, WaitingForUser: m.waiting, Question: m.question, ItemsInProgress: len(names)})

	if p := m.progress; p != nil {
		out[t.Progress] = strconv.Itoa(p.Percent())
		out[t.ProgressAttrs] = mustJSON(p)
	}

	if m.haveNotFound {
		out[t.NotFound] = strconv.Itoa(len(m.notFound))
		out[t.NotFoundAttrs] = mustJSON(struct {
			Items []notFoundItem `json:"items"`
		}{Items: nonNil(m.notFound)})
	}

	for k, v := range m.lastRun {
		out[k] = v
	}
	if m.cart != nil {
		info := m.cart.Info(m.cartRun)
		out[t.Cart] = strconv.Itoa(info.Units)
		out[t.CartAttrs] = mustJSON(info)
	}
	if m.slots != nil {
		maps.Copy(out, slotPayloads(t.Slots, *m.slots))
	}
	return out
}

// lastRunPayloads renders the "Last run", "Estimated cart total" payloads of a finished run.
func lastRunPayloads(t Topics, msgs messages.Catalog, s *report.Summary) map[string]string {
	out := make(map[string]string, 4)
	finished := s.FinishedAt
	if finished.IsZero() {
		finished = time.Now()
	}
	out[t.LastRun] = finished.UTC().Format(time.RFC3339)
	c := s.Counts()
	total, unknown := s.EstimatedTotal()
	summary := s.MarkdownIn(msgs)
	if len(summary) > maxSummaryBytes {
		summary = truncateBytes(summary, maxSummaryBytes) + "\n\n…(truncated)"
	}
	out[t.LastRunAttributes] = mustJSON(struct {
		RunID          string     `json:"run_id"`
		StartedAt      *time.Time `json:"started_at,omitempty"`
		FinishedAt     time.Time  `json:"finished_at"`
		DurationS      float64    `json:"duration_s"`
		Total          int        `json:"total"`
		Added          int        `json:"added"`
		NotFound       int        `json:"not_found"`
		Failed         int        `json:"failed"`
		Duplicate      int        `json:"duplicate"`
		Cancelled      bool       `json:"cancelled"`
		EstimatedTotal string     `json:"estimated_total"`
		CartURL        string     `json:"cart_url,omitempty"`
		Warnings       []string   `json:"warnings"`
		Title          string     `json:"title"`
		Summary        string     `json:"summary"`
	}{
		RunID: s.RunID, StartedAt: timePtr(s.StartedAt), FinishedAt: finished.UTC(),
		DurationS: s.Duration().Round(time.Second).Seconds(),
		Total:     c.Total, Added: c.Added, NotFound: c.NotFound, Failed: c.Failed, Duplicate: c.Duplicate,
		Cancelled: s.Cancelled, EstimatedTotal: money.Format(total), CartURL: s.CartURL,
		Warnings: nonNil(s.Warnings), Title: s.TitleIn(msgs), Summary: summary,
	})
	state := decimal(total)
	if c.Added > 0 && unknown == c.Added {
		state = payloadNone // no added item has a readable price
	}
	out[t.CartTotal] = state
	out[t.CartTotalAttrs] = mustJSON(struct {
		Items             int    `json:"items_added"`
		UnknownPriceItems int    `json:"unknown_price_items"`
		Formatted         string `json:"formatted"`
		CartURL           string `json:"cart_url,omitempty"`
	}{Items: c.Added, UnknownPriceItems: unknown, Formatted: money.Format(total), CartURL: s.CartURL})

	return out
}

// decimal renders cents as Home Assistant expects a number: "1234.56".
func decimal(c money.Cents) string {
	neg := c < 0
	u := uint64(c)
	if neg {
		u = uint64(-c)
	}
	s := fmt.Sprintf("%d.%02d", u/100, u%100)
	if neg {
		s = "-" + s
	}
	return s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // cannot happen: plain data
		panic(fmt.Sprintf("mqtt: encoding state: %v", err))
	}
	return string(b)
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// truncateBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
