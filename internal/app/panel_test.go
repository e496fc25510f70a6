package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// The panel's history reads the journals (newest first, other files
// skipped) and the traces they name; what is not there is "not found".
func TestPanelHistoryReadsJournalsAndTraces(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Config{DataDir: filepath.Join(dir, "data"), TraceDir: filepath.Join(dir, "traces")}
	h := PanelHistory(cfg)
	if runs, err := h.Runs(context.Background()); err != nil || len(runs) != 0 {
		t.Fatalf("no journals yet: %v, %v", runs, err)
	}
	started := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for _, rec := range []shop.JournalRecord{
		{RunID: "20261123T090000Z-aaaa", StartedAt: started.Add(-24 * time.Hour), State: runstatus.StateReviewReady},
		{RunID: "20261124T090000Z-bbbb", StartedAt: started, State: runstatus.StateReviewReady, Source: "panel", Items: []shop.JournalItem{
			{ItemID: "1", Name: "milk", Quantity: 1, Status: shop.ItemDone, Result: &report.ItemResult{Outcome: report.OutcomeAdded, ProductName: "Natrel 2%"},
				Attempts: []shop.Attempt{{Query: "milk", Turns: 2, Trace: filepath.Join("20261124T090000Z-bbbb", "1-milk-1")}}},
			{ItemID: "2", Name: "kiwi", Quantity: 1, Status: shop.ItemDone, Result: &report.ItemResult{Outcome: report.OutcomeNotFound},
				Attempts: []shop.Attempt{{Query: "kiwi", Trace: filepath.Join("20261124T090000Z-bbbb", "2-kiwi-1")}}}, // its trace is gone
		}, Review: &shop.Review{Changes: []shop.LineChange{{Name: "Natrel 2%", Before: 0, After: 1}}}},
	} {
		if _, err := shop.NewJournal(shop.JournalDir(cfg.DataDir), rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(shop.JournalDir(cfg.DataDir), "zz-notes.json"), []byte(`{"not":"a journal"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(cfg.TraceDir, "20261124T090000Z-bbbb", "1-milk-1")
	if err := os.MkdirAll(trace, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{
		"turn-000.json": map[string]any{"goal": "Buy milk.", "screenshot": "turn-000.png"},
		"turn-001.json": map[string]any{"turn": 1, "model_ms": 900, "prompt_tokens": 1200, "output_tokens": 80, "screenshot": "turn-001.png",
			"calls": []map[string]any{{"name": "type_text_at", "args": map[string]any{"text": "milk", "press_enter": true}}}},
		"result.json": map[string]any{"tool": "report_item_added", "turns": 1, "duration_ms": 1500, "usage": map[string]any{"PromptTokens": 1200, "OutputTokens": 80, "CostUSD": 0.0012}},
	} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(trace, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(trace, "turn-001.png"), []byte("\x89PNG..."), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	runs, err := h.Runs(ctx)
	if err != nil || len(runs) != 2 || runs[0].ID != "20261124T090000Z-bbbb" || runs[0].Added != 1 || runs[0].NotFound != 1 || runs[0].Source != "panel" {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	d, err := h.Run(ctx, "20261124T090000Z-bbbb")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != 2 || d.Items[0].Attempts[0].Trace != "1-milk-1" || d.Items[1].Attempts[0].Trace != "" || len(d.Changes) != 1 || d.Changes[0] != "Natrel 2%: 0 → 1" {
		t.Fatalf("run %+v", d)
	}
	tr, err := h.Trace(ctx, d.ID, "1-milk-1")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Goal != "Buy milk." || len(tr.Turns) != 1 || tr.Turns[0].Actions[0] != "typed “milk” and pressed Enter" || tr.Turns[0].PromptTokens != 1200 ||
		tr.End == nil || tr.End.Usage.CostUSD != 0.0012 {
		t.Fatalf("trace %+v", tr)
	}
	if b, err := h.Screenshot(ctx, d.ID, "1-milk-1", "turn-001.png"); err != nil || len(b) == 0 {
		t.Fatalf("screenshot: %v", err)
	}
	for what, err := range map[string]error{
		"a run that is not there":        func() error { _, err := h.Run(ctx, "20200101T000000Z-cccc"); return err }(),
		"a trace that is not there":      func() error { _, err := h.Trace(ctx, d.ID, "2-kiwi-1"); return err }(),
		"a screenshot that is not there": func() error { _, err := h.Screenshot(ctx, d.ID, "1-milk-1", "turn-009.png"); return err }(),
		"traces off": func() error {
			_, err := History{JournalDir: h.JournalDir}.Trace(ctx, d.ID, "1-milk-1")
			return err
		}(),
	} {
		if !errors.Is(err, panel.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", what, err)
		}
	}
}

// A stopped run's History line counts the items it did not shop (issue 26:
// a cancelled run said "1 added, 0 not found, 0 failed" and nothing of the
// four items it never shopped): those with a not-shopped result, and, in an
// older journal, those left pending, in flight or interrupted.
func TestHistoryCountsNotShopped(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Config{DataDir: filepath.Join(dir, "data")}
	started := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	finished := started.Add(2 * time.Minute)
	rec := shop.JournalRecord{RunID: "20261124T090000Z-cccc", StartedAt: started, FinishedAt: &finished, State: runstatus.StateCancelled, Items: []shop.JournalItem{
		{ItemID: "1", Name: "bananas", Quantity: 1, Status: shop.ItemDone, Result: &report.ItemResult{Outcome: report.OutcomeAdded, ProductName: "Bananas"}},
		{ItemID: "2", Name: "milk", Quantity: 1, Status: shop.ItemDone, Result: &report.ItemResult{Outcome: report.OutcomeNotShopped}},
		{ItemID: "3", Name: "eggs", Quantity: 1, Status: shop.ItemInterrupted},
		{ItemID: "4", Name: "bread", Quantity: 1, Status: shop.ItemPending},
		{ItemID: "5", Name: "butter", Quantity: 1, Status: shop.ItemInFlight},
	}}
	if _, err := shop.NewJournal(shop.JournalDir(cfg.DataDir), rec); err != nil {
		t.Fatal(err)
	}
	runs, err := PanelHistory(cfg).Runs(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if r := runs[0]; r.State != string(runstatus.StateCancelled) || r.Items != 5 || r.Added != 1 || r.NotShopped != 4 || r.NotFound != 0 || r.Failed != 0 {
		t.Fatalf("the stopped run in History: %+v, want 1 added and 4 not shopped of 5", r)
	}
}

// The panel lists and forgets the runs' remembered products.
func TestPanelProducts(t *testing.T) {
	cfg := config.Config{DataDir: t.TempDir(), Store: "demo"}
	if PanelProducts(config.Config{}, nil) != nil {
		t.Fatal("products without a data directory")
	}
	m, err := products.Open(cfg.DataDir, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Added("2x Milk", products.Product{Name: "Natrel 2% Milk", Price: "$5.49"}); err != nil {
		t.Fatal(err)
	}
	p := PanelProducts(cfg, nil)
	ctx := context.Background()
	list, err := p.Products(ctx)
	if err != nil || len(list) != 1 || list[0].Key != "milk" || list[0].Name != "Natrel 2% Milk" {
		t.Fatalf("products %+v, %v", list, err)
	}
	if err := p.Forget(ctx, "bread"); !errors.Is(err, panel.ErrNotFound) {
		t.Fatalf("forget an unknown item: %v", err)
	}
	if err := p.Forget(ctx, "milk"); err != nil {
		t.Fatal(err)
	}
	if list, _ := p.Products(ctx); len(list) != 0 {
		t.Fatalf("after forget: %+v", list)
	}
}
