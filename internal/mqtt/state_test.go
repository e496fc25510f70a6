package mqtt

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

var tt = newTopics("homeassistant", "gemini_supply")

func item(id, name string) *report.ItemResult {
	return &report.ItemResult{ItemID: id, ItemName: name, Quantity: 1}
}

func finished(it *report.ItemResult, o report.Outcome, cents money.Cents, known bool) *report.ItemResult {
	c := *it
	c.Outcome = o
	if o == report.OutcomeAdded {
		c.Price = money.Price{Text: "x", UnitCents: cents, Known: known}
	}
	return &c
}

func TestModel(t *testing.T) {
	long := strings.Repeat("é", 300)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("EST", -5*3600))
	tests := []struct {
		name   string
		events []runstatus.Event
		want   map[string]string // topic → payload ("" = must be absent)
		attrs  map[string]string // topic → substring of the JSON attributes
	}{
		{
			name: "before any run only status and current item are known",
			want: map[string]string{tt.Status: "idle", tt.CurrentItem: "None", tt.Progress: "", tt.LastRun: "", tt.CartTotal: "", tt.NotFound: ""},
		},
		{
			name: "parallel items: the newest is current, finishing it shows the older",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunStarted, RunID: "r", Progress: runstatus.Progress{Total: 4}},
				{Kind: runstatus.KindItemStarted, Item: item("1", "milk")},
				{Kind: runstatus.KindItemStarted, Item: item("2", "eggs")},
				{Kind: runstatus.KindItemFinished, Item: finished(item("2", "eggs"), report.OutcomeAdded, 100, true), Progress: runstatus.Progress{Total: 4, Done: 1, Added: 1}},
			},
			want:  map[string]string{tt.Status: "initializing", tt.CurrentItem: "milk", tt.Progress: "25"},
			attrs: map[string]string{tt.CurrentItemAttrs: `"items":["milk"]`, tt.ProgressAttrs: `"done":1`},
		},
		{
			name: "a long item name is cut to Home Assistant's 255 characters",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunStarted, RunID: "r", Progress: runstatus.Progress{Total: 1}},
				{Kind: runstatus.KindItemStarted, Item: item("1", long)},
			},
			want: map[string]string{tt.CurrentItem: strings.Repeat("é", 254) + "…"},
		},
		{
			name: "failure reason and waiting question reach the status attributes",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunStarted, RunID: "r", Progress: runstatus.Progress{Total: 1}},
				{Kind: runstatus.KindItemStarted, Item: item("1", "cheese")},
				{Kind: runstatus.KindWaitingForUser, Item: item("1", "cheese"), Message: "Which cheddar?"},
			},
			want:  map[string]string{tt.CurrentItem: "cheese"},
			attrs: map[string]string{tt.StatusAttributes: `"waiting_for_user":true,"question":"Which cheddar?"`, tt.CurrentItemAttrs: `"waiting_for_user":"cheese"`},
		},
		{
			name: "failed run",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunStarted, RunID: "r", Progress: runstatus.Progress{Total: 1}},
				{Kind: runstatus.KindStateChanged, State: runstatus.StateFailed, Message: "login failed: wrong password"},
			},
			want:  map[string]string{tt.Status: "failed"},
			attrs: map[string]string{tt.StatusAttributes: `"message":"login failed: wrong password"`},
		},
		{
			name: "cancelled run without an explicit state",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunStarted, RunID: "r", Progress: runstatus.Progress{Total: 2}},
				{Kind: runstatus.KindRunFinished, Summary: &report.Summary{RunID: "r", FinishedAt: t0, Cancelled: true,
					Items: []report.ItemResult{*finished(item("1", "a"), report.OutcomeAdded, 250, true)}}},
			},
			want:  map[string]string{tt.Status: "cancelled", tt.LastRun: "2026-01-02T08:04:05Z", tt.CartTotal: "2.50", tt.NotFound: "0", tt.CurrentItem: "None"},
			attrs: map[string]string{tt.LastRunAttributes: `"cancelled":true`},
		},
		{
			name: "no readable price: cart total unknown",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunFinished, State: runstatus.StateReviewReady, Summary: &report.Summary{RunID: "r", FinishedAt: t0,
					Items: []report.ItemResult{*finished(item("1", "a"), report.OutcomeAdded, 0, false)}}},
			},
			want:  map[string]string{tt.CartTotal: payloadNone},
			attrs: map[string]string{tt.CartTotalAttrs: `"unknown_price_items":1`},
		},
		{
			name: "quantity and several prices sum; not found listed with explanation",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunFinished, State: runstatus.StateReviewReady, Summary: &report.Summary{RunID: "r", FinishedAt: t0,
					Items: []report.ItemResult{
						{ItemName: "a", Quantity: 3, Outcome: report.OutcomeAdded, Price: money.Price{UnitCents: 199, Known: true}},
						{ItemName: "b", Quantity: 1, Outcome: report.OutcomeAdded, Price: money.Price{UnitCents: 100001, Known: true}},
						{ItemName: "c", Outcome: report.OutcomeNotFound, Explanation: "discontinued"},
					}}},
			},
			want:  map[string]string{tt.CartTotal: "1005.98", tt.NotFound: "1"},
			attrs: map[string]string{tt.NotFoundAttrs: `{"items":[{"name":"c","explanation":"discontinued"}]}`, tt.LastRunAttributes: `"estimated_total":"$1,005.98"`},
		},
		{
			name: "busy flag is cleared by the next run",
			events: []runstatus.Event{
				{Kind: runstatus.KindRunStarted, RunID: "r2", Progress: runstatus.Progress{Total: 1}},
			},
			want:  map[string]string{tt.Status: "initializing"},
			attrs: map[string]string{tt.StatusAttributes: `"busy":false`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(tt)
			if strings.HasPrefix(tc.name, "busy") {
				m.request(requestResult{Result: EventBusy, Source: "mqtt"})
				if !strings.Contains(m.messages()[tt.StatusAttributes], `"busy":true`) {
					t.Fatal("busy not shown")
				}
			}
			for _, e := range tc.events {
				m.apply(e)
			}
			got := m.messages()
			for topic, want := range tc.want {
				p, ok := got[topic]
				if want == "" {
					if ok {
						t.Errorf("%s = %q, want it left alone", topic, p)
					}
					continue
				}
				if p != want {
					t.Errorf("%s = %q, want %q", topic, p, want)
				}
			}
			for topic, sub := range tc.attrs {
				if !json.Valid([]byte(got[topic])) || !strings.Contains(got[topic], sub) {
					t.Errorf("%s = %s, want it to contain %s", topic, got[topic], sub)
				}
			}
		})
	}
}

func TestModelCapsSummary(t *testing.T) {
	var items []report.ItemResult
	for i := range 400 {
		items = append(items, report.ItemResult{ItemName: fmt.Sprintf("item %d with a fairly long name", i), Outcome: report.OutcomeNotFound,
			Explanation: strings.Repeat("nothing like it on the shelf ", 4)})
	}
	m := newModel(tt)
	m.apply(runstatus.Event{Kind: runstatus.KindRunFinished, Summary: &report.Summary{RunID: "big", FinishedAt: time.Now(), Items: items}})
	var attrs struct {
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(m.messages()[tt.LastRunAttributes]), &attrs); err != nil {
		t.Fatal(err)
	}
	if len(attrs.Summary) > maxSummaryBytes+64 || !strings.HasSuffix(attrs.Summary, "(truncated)") || !utf8.ValidString(attrs.Summary) {
		t.Errorf("summary of %d bytes not capped properly (suffix %q)", len(attrs.Summary), attrs.Summary[len(attrs.Summary)-20:])
	}
}

// BenchmarkModelEvent measures folding one item event into the model and
// rendering every sensor payload, with the last run's 40-item summary retained.
func BenchmarkModelEvent(b *testing.B) {
	var items []report.ItemResult
	for i := range 40 {
		items = append(items, report.ItemResult{ItemName: fmt.Sprintf("item %d", i), Quantity: 1, Outcome: report.OutcomeAdded,
			ProductName: "Some product 500 g", Price: money.Price{Text: "$4.99", UnitCents: 499, Known: true}, URL: "https://www.metro.ca/en/p/1"})
	}
	m := newModel(tt)
	m.apply(runstatus.Event{Kind: runstatus.KindRunFinished, Summary: &report.Summary{RunID: "r", FinishedAt: time.Now(), Items: items}})
	it := item("1", "milk")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.apply(runstatus.Event{Kind: runstatus.KindItemStarted, Item: it, Progress: runstatus.Progress{Total: 40, Done: i % 40}})
		_ = m.messages()
	}
}

// With Options.Messages French, the Last run sensor's title and summary
// attributes are French.
func TestModelSummaryInFrench(t *testing.T) {
	fr := messages.For("fr")
	o, err := Options{Broker: Broker{URL: "tcp://127.0.0.1:1883"}, Messages: fr}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	m := newModelIn(tt, o.Messages) // as Connect makes it
	m.apply(runstatus.Event{Kind: runstatus.KindRunFinished, Summary: &report.Summary{RunID: "r", FinishedAt: time.Now(),
		Items: []report.ItemResult{{ItemName: "lait", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Lait 2 %", Price: money.Parse("$5.49")}},
		Usage: report.Usage{TotalTokens: 10, PromptTokens: 8, OutputTokens: 2}}})
	var attrs struct {
		Title   string `json:"title"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal([]byte(m.messages()[tt.LastRunAttributes]), &attrs); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"# Épicerie", "5,49\u00a0$", "environ 0,00\u00a0$"} {
		if !strings.Contains(attrs.Summary, w) {
			t.Errorf("summary lacks %q:\n%s", w, attrs.Summary)
		}
	}
	for _, s := range []string{attrs.Title, attrs.Summary} {
		if left := fr.Foreign(s); len(left) > 0 {
			t.Errorf("English left in %q: %q", s, left)
		}
	}
}
