package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// History says who started and stopped a run, who answered an item's
// question and who acted on the cart, as the journal recorded them.
func TestHistoryShowsWho(t *testing.T) {
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "data")}
	started := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	finished := started.Add(time.Minute)
	rec := shop.JournalRecord{RunID: "20261124T090000Z-who", StartedAt: started, FinishedAt: &finished, State: runstatus.StateCancelled,
		StartedBy: "Alice", StoppedBy: "Carol",
		Items: []shop.JournalItem{{ItemID: "1", Name: "milk", Quantity: 1, Status: shop.ItemDone, AnsweredBy: []string{"Bob"},
			Confirmations: []shop.Confirmation{{Action: "click “I agree”", Allowed: true, By: "Erin", At: started}},
			Result:        &report.ItemResult{Outcome: report.OutcomeAdded, ProductName: "Natrel 2% 2 L"}}},
		Pack: &reviewpack.Pack{RunID: "20261124T090000Z-who", Actions: []reviewpack.Action{{At: finished, Kind: reviewpack.ActRemove, Source: "phone", By: "Dana", ItemID: "1", ItemName: "milk"}}},
	}
	if _, err := shop.NewJournal(shop.JournalDir(cfg.DataDir), rec); err != nil {
		t.Fatal(err)
	}
	h := PanelHistory(cfg)
	runs, err := h.Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if runs[0].StartedBy != "Alice" || runs[0].StoppedBy != "Carol" {
		t.Errorf("History's run: started by %q, stopped by %q", runs[0].StartedBy, runs[0].StoppedBy)
	}
	d, err := h.Run(context.Background(), rec.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != 1 || !slices.Equal(d.Items[0].AnsweredBy, []string{"Bob"}) {
		t.Errorf("History's items %+v, want milk answered by Bob", d.Items)
	}
	if len(d.Items) == 1 && (len(d.Items[0].Confirmations) != 1 || d.Items[0].Confirmations[0].By != "Erin" || !d.Items[0].Confirmations[0].Allowed) {
		t.Errorf("History's milk: safety checks %+v, want one allowed by Erin", d.Items[0].Confirmations)
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"started_by":"Alice"`, `"stopped_by":"Carol"`, `"answered_by":["Bob"]`, `"by":"Dana"`, `"by":"Erin"`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("the run's JSON for the page lacks %s:\n%s", w, b)
		}
	}
}

// History says what each run was asked to do, as its journal recorded it
// (a Retry, a re-shop and whose review it belongs to); a journal written
// before runs recorded it is still read, its re-shop found as before.
func TestHistoryShowsTheRunsKind(t *testing.T) {
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "data")}
	week := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	milk := func(status shop.ItemStatus) []shop.JournalItem {
		return []shop.JournalItem{{ItemID: "1", Name: "milk", Quantity: 1, Status: status}}
	}
	recs := []shop.JournalRecord{
		{RunID: "20261124T090000Z-week", StartedAt: week, Kind: runstatus.RunWeekly, Items: append(milk(shop.ItemDone), shop.JournalItem{ItemID: "2", Name: "eggs", Quantity: 1}),
			Pack: &reviewpack.Pack{Actions: []reviewpack.Action{{At: week.Add(time.Hour), Kind: reviewpack.ActWrongProduct, ItemName: "milk", Reshop: "milk"}}}},
		// Started an hour after the action (it waited): the kind says so.
		{RunID: "20261124T110000Z-again", StartedAt: week.Add(2 * time.Hour), Kind: runstatus.RunReshop, ReshopOf: "20261124T090000Z-week", Items: milk(shop.ItemDone)},
		{RunID: "20261124T120000Z-retry", StartedAt: week.Add(3 * time.Hour), Kind: runstatus.RunRetry, Items: milk(shop.ItemDone)},
		// An old journal: no kind; a re-shop a minute after the action.
		{RunID: "20261124T100100Z-old", StartedAt: week.Add(time.Hour + time.Minute), Items: milk(shop.ItemDone)},
	}
	for _, rec := range recs {
		if _, err := shop.NewJournal(shop.JournalDir(cfg.DataDir), rec); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := PanelHistory(cfg).Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range runs {
		got[r.ID] = r.Kind + " " + r.ReshopOf
	}
	want := map[string]string{
		"20261124T090000Z-week":  " ",
		"20261124T110000Z-again": "reshop 20261124T090000Z-week",
		"20261124T120000Z-retry": "retry ",
		"20261124T100100Z-old":   "reshop ",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("run %s: kind and reshop_of %q, want %q", id, got[id], w)
		}
	}
}

// A trace's question step carries the household's answer, read from what
// the question tool answered the model; a step without one says none.
func TestTraceQuestionStepCarriesTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		resp       map[string]any
		kind, text string
	}{
		{"a product", map[string]any{"answer": "product", "name": "Natrel 2% 2 L", "price": "$5.49"}, "product", "Natrel 2% 2 L"},
		{"something else", map[string]any{"answer": "custom", "text": "lactose-free milk"}, "custom", "lactose-free milk"},
		{"skip this week", map[string]any{"answer": "skip", "instruction": "Stop"}, "skip", ""},
		{"none of them", map[string]any{"answer": "nothing", "reason": "timeout"}, "nothing", ""},
		{"nobody could be asked", map[string]any{"answer": "nobody could be asked; the item is closed"}, "", ""},
		{"an invalid answer", map[string]any{"error": "the answer named no listed option"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := panelCalls([]agent.TraceCall{{Name: shop.ToolPresentOptions, Args: map[string]any{"item_name": "milk"}, Response: tc.resp},
				{Name: "click_at", Args: map[string]any{"x": 1.0, "y": 2.0}, Response: map[string]any{"answer": "product", "name": "x"}}})
			if calls[0].Answer != tc.kind || calls[0].AnswerText != tc.text {
				t.Errorf("the question's answer: %q %q, want %q %q", calls[0].Answer, calls[0].AnswerText, tc.kind, tc.text)
			}
			if calls[1].Answer != "" {
				t.Errorf("a click carries an answer: %+v", calls[1])
			}
		})
	}
}
