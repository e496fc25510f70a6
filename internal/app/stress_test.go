package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestStress is `make stress` (skipped unless GEMINI_SUPPLY_STRESS_RUNS is
// set): the 12-item bench list shopped GEMINI_SUPPLY_STRESS_RUNS times in a
// row at GEMINI_SUPPLY_STRESS_TABS tabs (default 4) while two CPU hogs
// compete for the cores, with the fake model's answer delay of the
// benchmarks. Every run gets a fresh demo store, so every login after the
// first of a run is a spurious re-login (the demo store's session never
// expires here), and every cart unit no item reported is counted from the
// store's own cart. It prints one line:
//
//	stress: R runs × 12 items at 4 tabs under load: A added, F failed, S spurious re-logins, U unreported cart units
//
// and fails unless F, S and U are all 0. GEMINI_SUPPLY_STRESS_DIR keeps each
// run's debug log, journal and traces there for a post-mortem.
func TestStress(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("GEMINI_SUPPLY_STRESS_RUNS"))
	if runs <= 0 {
		t.Skip("set GEMINI_SUPPLY_STRESS_RUNS (make stress)")
	}
	exe := requireBrowser(t)
	tabs := 4
	if v, err := strconv.Atoi(os.Getenv("GEMINI_SUPPLY_STRESS_TABS")); err == nil && v > 0 {
		tabs = v
	}
	delay := time.Second
	if v := os.Getenv("GEMINI_SUPPLY_BENCH_MODEL_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("GEMINI_SUPPLY_BENCH_MODEL_DELAY=%q: %v", v, err)
		}
		delay = d
	}
	keep := os.Getenv("GEMINI_SUPPLY_STRESS_DIR")
	startHogs(t, 2)

	var added, failed, relogins, unreported int
	for i := range runs {
		dir := t.TempDir()
		if keep != "" {
			dir = filepath.Join(keep, fmt.Sprintf("run-%02d", i+1))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		list := filepath.Join(dir, "list.yaml")
		if err := os.WriteFile(list, listYAML(benchItems...), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := newE2EConfig(exe, list, filepath.Join(dir, "data"))
		cfg.Concurrency = tabs
		cfg.TimeBudget = 5 * time.Minute
		logger := slog.New(slog.DiscardHandler)
		if keep != "" {
			cfg.TraceDir = filepath.Join(dir, "traces")
			f, err := os.Create(filepath.Join(dir, "run.log"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			logger = debugLogger(f)
		}
		r, err := NewRunner(cfg, Deps{Logger: logger, Scripted: ScriptedOptions{Wrap: modelLatency(delay)}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		res, err := r.Shop(ctx, runstatus.Request{Source: "stress"})
		cancel()
		if err != nil {
			_ = r.Close(context.Background())
			t.Fatalf("run %d: %v", i+1, err)
		}
		c := res.Summary.Counts()
		added += c.Added
		failed += c.Failed + c.NotFound
		relogins += max(res.Logins-1, 0)
		u := unreportedUnits(r, res)
		unreported += u
		if c.Added != len(benchItems) || res.Logins > 1 || u > 0 {
			t.Logf("run %d: %s, %d logins, %d unreported units\n%s", i+1, c, res.Logins, u, res.Summary.Markdown())
		}
		_ = r.Close(context.Background())
	}
	line := fmt.Sprintf("stress: %d runs × %d items at %d tabs under load: %d added, %d failed, %d spurious re-logins, %d unreported cart units",
		runs, len(benchItems), tabs, added, failed, relogins, unreported)
	fmt.Println(line)
	if failed > 0 || relogins > 0 || unreported > 0 {
		t.Error(line)
	}
}

// unreportedUnits counts the units in the demo store's cart beyond what the
// run's items reported (the run starts with an empty cart).
func unreportedUnits(r *Runner, res shop.Result) int {
	reported := map[string]int{}
	for _, it := range res.Summary.Items {
		if it.URL != "" {
			reported[store.ProductID(it.URL)] += max(it.Quantity, 1)
		}
	}
	extra := 0
	for _, l := range r.DemoStore().Cart() {
		if d := l.Quantity - reported[l.ProductID]; d > 0 {
			extra += d
		}
	}
	return extra
}

// startHogs runs n busy loops (each a separate process, as other work on a
// Home Assistant host would be) until the test ends.
func startHogs(t *testing.T, n int) {
	t.Helper()
	for range n {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("start a CPU hog: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}
