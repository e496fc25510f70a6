package app

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gemini-supply/gemini-supply/internal/config"
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
