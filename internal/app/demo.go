package app

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

//go:embed demo/shopping_list.yaml
var demoList []byte

// DefaultDemoConcurrency is how many tabs `demo` shops with.
const DefaultDemoConcurrency = 2

// DemoConfig turns cfg (the user's configuration: browser, Telegram,
// logging) into the demo's: the embedded demo store, the scripted model,
// and a copy of the example list in dir, which also holds the run's data
// (journal, preferences). Nothing of the user's list or data is touched.
func DemoConfig(cfg config.Config, dir string) (config.Config, error) {
	list := filepath.Join(dir, "shopping_list.yaml")
	if err := os.WriteFile(list, demoList, 0o644); err != nil {
		return cfg, fmt.Errorf("write the demo shopping list: %w", err)
	}
	cfg.Store = "demo"
	cfg.GeminiModel = config.ScriptedModel
	cfg.ShoppingList = list
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.BrowserProfileDir = filepath.Join(dir, "data", "browser-profile")
	cfg.BrowserRemoteURL = ""
	cfg.BrowserHeadless = true
	cfg.RetryTagged = false
	cfg.TraceDir = ""
	if cfg.Concurrency < 1 {
		cfg.Concurrency = DefaultDemoConcurrency
	}
	return cfg, nil
}

// ModelCalls is how many model requests a run made: every agent turn and
// the cart review's reads.
func ModelCalls(s report.Summary) int {
	n := s.Usage.Calls
	for _, it := range s.Items {
		n += it.Turns
	}
	return n
}

// ReplayLine compares a run of a list with the run before it:
// "replay: second run 0 model calls (first run 21), 6.3x faster (items
// shopped in 4.1 s vs 25.8 s); replayed 12/12 items, median 0.6 s per
// item". The times are the
// shopping of the items (first item started to last item finished: the
// browser's start, the sign-in and the cart review sit outside, the same
// on both sides). instantModel says the first run's model answered at once
// (the demo's scripted one), so the line says a real model's seconds per
// call are not in the comparison.
func ReplayLine(first, second report.Summary, instantModel bool) string {
	d1, d2 := shoppingTime(first), shoppingTime(second)
	speed := "as fast"
	switch {
	case d2 > 0 && d1 > d2*21/20:
		speed = fmt.Sprintf("%.1fx faster", d1.Seconds()/d2.Seconds())
	case d1 > 0 && d2 > d1*21/20:
		speed = fmt.Sprintf("%.1fx slower", d2.Seconds()/d1.Seconds())
	}
	var replayed []time.Duration
	for _, it := range second.Items {
		if it.Replay == shop.ReplayedDirect {
			replayed = append(replayed, it.Duration)
		}
	}
	median := ""
	if len(replayed) > 0 {
		slices.Sort(replayed)
		median = fmt.Sprintf(", median %.1f s per item", replayed[len(replayed)/2].Seconds())
	}
	line := fmt.Sprintf("replay: second run %d model calls (first run %d), %s (items shopped in %.1f s vs %.1f s); replayed %d/%d items%s",
		ModelCalls(second), ModelCalls(first), speed, d2.Seconds(), d1.Seconds(), len(replayed), len(second.Items), median)
	if instantModel {
		line += " — the demo's scripted model answers at once; with a real model each of the first run's calls takes seconds"
	}
	return line
}

// shoppingTime is how long a run shopped its items: from the first item's
// start to the last one's end; the whole run when the items carry no times.
func shoppingTime(s report.Summary) time.Duration {
	var first, last time.Time
	for _, it := range s.Items {
		if it.StartedAt.IsZero() {
			continue
		}
		if first.IsZero() || it.StartedAt.Before(first) {
			first = it.StartedAt
		}
		if end := it.StartedAt.Add(it.Duration); end.After(last) {
			last = end
		}
	}
	if first.IsZero() {
		return s.FinishedAt.Sub(s.StartedAt)
	}
	return last.Sub(first)
}
