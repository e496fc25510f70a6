package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// costRun shops benchItems in the demo store with the scripted model and
// returns the summary and the fake server's requests.
func costRun(b *testing.B, mutate func(*config.Config, *Deps, func() *Runner), items []string) (report.Summary, *Runner) {
	b.Helper()
	if os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE") == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		b.Fatal("the browser or the Playwright driver is not set up: run make bench (or eval \"$(scripts/setup.sh)\" first)")
	}
	dir := b.TempDir()
	list := dir + "/list.yaml"
	if err := os.WriteFile(list, listYAML(items...), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg := newE2EConfig(os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE"), list, dir+"/data")
	deps := Deps{}
	var r *Runner
	mutate(&cfg, &deps, func() *Runner { return r })
	r, err := NewRunner(cfg, deps)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := r.Shop(ctx, runstatus.Request{Source: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return res.Summary, r
}

// BenchmarkMediaResolution shops the demo list once per media_resolution
// (and the model's default) and prints the tokens and the estimated cost
// per item, priced at the default model's table price of today. The fake
// Gemini counts each screenshot at the documented tokens of its resolution
// and reports thinking tokens at the default level (medium).
func BenchmarkMediaResolution(b *testing.B) {
	model, _ := agent.LookupModel(agent.DefaultModel)
	price, _ := model.PriceAt(time.Now())
	for _, res := range []string{"", "low", "medium", "high"} {
		name := res
		if name == "" {
			name = "unset"
		}
		b.Run("media_resolution="+name, func(b *testing.B) {
			var s report.Summary
			for range b.N {
				s, _ = costRun(b, func(c *config.Config, _ *Deps, _ func() *Runner) { c.MediaResolution = res }, benchItems)
				if c := s.Counts(); c.Added != len(benchItems) {
					b.Fatalf("%s\n%s", c, s.Markdown())
				}
			}
			n := float64(len(benchItems))
			u := s.Usage
			cost := (float64(u.PromptTokens)*price.Input + float64(u.OutputTokens)*price.Output) / 1e6
			b.ReportMetric(float64(u.TotalTokens)/n, "tokens/item")
			fmt.Printf("media_resolution=%-6s %d items: %.0f tokens/item (%.0f in, %.0f out incl. thinking), $%.4f/item at %s prices ($%.2f/$%.2f per 1M, %s)\n",
				name, len(benchItems), float64(u.TotalTokens)/n, float64(u.PromptTokens)/n, float64(u.OutputTokens)/n,
				cost/n, agent.DefaultModel, price.Input, price.Output, price.Source)
		})
	}
}

// quotaBenchSpeed runs the quota bench's clocks (limiter and fake server)
// ten times faster than the wall clock.
const quotaBenchSpeed = 10

// BenchmarkQuota shops the demo list in 4 tabs with model_rpm 10 against a
// fake server that enforces 10 requests per minute, and prints the most
// requests the server saw in any 60 s window; then shops the first 4 items
// through a 20 s 429 storm (with RetryInfo) in real time and prints what
// the storm refused and how the items ended.
func BenchmarkQuota(b *testing.B) {
	const rpm, tabs = 10, 4
	for range b.N {
		clock := gemini.NewFastClock(quotaBenchSpeed)
		s, r := costRun(b, func(c *config.Config, d *Deps, _ func() *Runner) {
			c.Concurrency, c.ModelRPM = tabs, rpm
			c.TimeBudget = 10 * time.Minute
			d.QuotaClock = clock
			d.Scripted.RPM, d.Scripted.Now = rpm, clock.Now
		}, benchItems)
		if c := s.Counts(); c.Added != len(benchItems) {
			b.Fatalf("%s\n%s", c, s.Markdown())
		}
		srv := r.FakeGemini()
		fmt.Printf("quota: max %d requests in any 60 s window (limit %d); %d requests, %d refused with 429, %d tabs\n",
			gemini.MaxInWindow(srv.Arrivals(), time.Minute), rpm, len(srv.Arrivals()), srv.RateLimited(), tabs)

		var storm sync.Once
		s, runner := costRun(b, func(c *config.Config, d *Deps, runner func() *Runner) {
			c.Concurrency = tabs
			d.Scripted.Wrap = func(next gemini.Script) gemini.Script {
				return func(req *gemini.Request) gemini.Reply {
					storm.Do(func() { // the first answered request starts the storm
						runner().FakeGemini().RateLimitUntil(time.Now().Add(20*time.Second), true)
					})
					return next(req)
				}
			}
		}, benchItems[:tabs])
		failed := 0
		for _, it := range s.Items {
			if strings.Contains(it.Explanation, string(agent.ReasonModelError)) {
				failed++
			}
		}
		c := s.Counts()
		fmt.Printf("429 storm of 20 s (RetryInfo) in %d tabs: %d/%d items added, %d model_error, %d requests refused with 429\n",
			tabs, c.Added, c.Total, failed, runner.FakeGemini().RateLimited())
		if c.Added != tabs || failed != 0 {
			b.Fatalf("after the storm: %s\n%s", c, s.Markdown())
		}
	}
}
