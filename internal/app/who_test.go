package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
			Result: &report.ItemResult{Outcome: report.OutcomeAdded, ProductName: "Natrel 2% 2 L"}}},
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
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"started_by":"Alice"`, `"stopped_by":"Carol"`, `"answered_by":["Bob"]`, `"by":"Dana"`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("the run's JSON for the page lacks %s:\n%s", w, b)
		}
	}
}
