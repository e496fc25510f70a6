package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// TestRunPruning: a run's milk bought by the runs before every 7 days,
// last 3 days ago, is warned about in its review pack; bread, due, is not;
// the run's own journal does not count.
func TestRunPruning(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	runs := shop.JournalDir(dir)
	if err := os.MkdirAll(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(id string, daysAgo int, items ...string) {
		at := now.AddDate(0, 0, -daysAgo)
		rec := shop.JournalRecord{RunID: id, StartedAt: at}
		for _, it := range items {
			rec.Items = append(rec.Items, shop.JournalItem{ItemID: it, Name: it, Status: shop.ItemDone, FinishedAt: &at,
				Result: &report.ItemResult{ItemName: it, Outcome: report.OutcomeAdded, ProductName: "Store " + it, URL: "https://www.metro.ca/en/p/" + it}})
		}
		b, _ := json.Marshal(rec)
		if err := os.WriteFile(filepath.Join(runs, id+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("r1", 17, "milk", "bread")
	write("r2", 10, "milk", "bread")
	write("r3", 3, "milk")
	write("now", 0, "milk", "bread")
	r, err := NewRunner(config.Config{Store: "demo", GeminiModel: config.ScriptedModel, DataDir: dir}, Deps{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	got := r.pruning("now", []shoppinglist.Item{{ID: "a", Name: "milk"}, {ID: "b", Name: "bread"}})
	if len(got) != 1 || got[0].ItemID != "a" || got[0].Why != reviewpack.PrunedAtHome || got[0].Message != "bought 3 days ago, usually every 7 days" {
		t.Fatalf("pruning = %+v", got)
	}
}
