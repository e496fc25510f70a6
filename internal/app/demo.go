package app

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/report"
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
	if cfg.PostalCode == "" {
		cfg.PostalCode = "H2X 1Y4" // the demo store's delivery dialog
	}
	return cfg, nil
}

// AgentCalls is how many model calls the agents of a run made (one per
// turn); the cart review's call is not counted.
func AgentCalls(s report.Summary) int {
	n := 0
	for _, it := range s.Items {
		n += it.Turns
	}
	return n
}

// ReplayLine compares a run of a list with the run before it: "replay:
// second run 0 model calls (first run 21), 6.3x faster (4.1 s vs 25.8 s)".
func ReplayLine(first, second report.Summary) string {
	d1, d2 := first.FinishedAt.Sub(first.StartedAt), second.FinishedAt.Sub(second.StartedAt)
	speed := "not faster"
	if d2 > 0 && d1 > d2 {
		speed = fmt.Sprintf("%.1fx faster", d1.Seconds()/d2.Seconds())
	}
	return fmt.Sprintf("replay: second run %d model calls (first run %d), %s (%.1f s vs %.1f s)",
		AgentCalls(second), AgentCalls(first), speed, d2.Seconds(), d1.Seconds())
}
