package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

var demoCommand = command{
	name:    "demo",
	summary: "shop an example list in the embedded demo store (offline)",
	run:     runDemo,
}

const demoAbout = `Runs the real shopping run offline: an example shopping list (copied to a
new temporary directory) is shopped in the embedded demo store — a local
imitation of metro.ca — by the scripted model behind a local Gemini API
server, in a real headless Chromium. It is 'gemini-supply shop --store demo
--model scripted' on that copy. No account, no API key, no network.

The run shows every outcome: items added, one the store does not sell (not
found), one sold out (a question in Telegram when Telegram is configured,
otherwise not found) and a duplicate. The summary and the cart review are
printed. Then the same list is shopped a second time, as next week: the
products the first run found are replayed from the product memory without
a model call, and a last line compares the two runs (--once skips it).
The updated list, the product memory and the journals stay in the
directory named at the end.`

func runDemo(ctx context.Context, args []string, s stdio) int {
	fs := newFlagSet("demo", "[flags]", demoAbout)
	concurrency := fs.Int("concurrency", app.DefaultDemoConcurrency, "tabs shopping at once")
	jsonOut := fs.Bool("json", false, "print the result as JSON on stdout (one run: implies --once)")
	once := fs.Bool("once", false, "shop the list once (no second run replaying the first one's products)")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return exitCode(err)
	}
	if *concurrency < 1 || *concurrency > config.MaxConcurrency {
		return exitCode(usageFailure("demo", s.err, fmt.Errorf("--concurrency %d is not between 1 and %d", *concurrency, config.MaxConcurrency)))
	}
	// The user's settings still apply where they make sense (browser
	// executable, Telegram, log level); the store, model and list are the demo's.
	cfg, err := loadConfig(loadOptions, s.err)
	if err != nil {
		return exitCode(configFailure("demo", s.err, err))
	}
	dir, err := os.MkdirTemp("", "gemini-supply-demo-")
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply demo: create a directory for the demo: %v\n", err)
		return 1
	}
	cfg.Concurrency = *concurrency
	if cfg, err = app.DemoConfig(cfg, dir); err != nil {
		fmt.Fprintf(s.err, "gemini-supply demo: %v\n", err)
		return 1
	}
	if err := cfg.ValidateFor(config.NeedAll); err != nil {
		return exitCode(configFailure("demo", s.err, err))
	}
	code, first := shopRun(ctx, "demo", cfg, *jsonOut, "", s)
	if code == 0 && !*once && !*jsonOut && ctx.Err() == nil {
		// The same list next week: what the first run found is replayed.
		fmt.Fprintf(s.out, "\nThe same list again, as next week: the second run replays the products the first one found, and adds them\n"+
			"to the same demo cart, which then holds both runs' units (a real week starts from the cart you checked out).\n\n")
		if cfg, err = app.DemoConfig(cfg, dir); err != nil {
			fmt.Fprintf(s.err, "gemini-supply demo: %v\n", err)
			return 1
		}
		var second shop.Result
		if code, second = shopRun(ctx, "demo", cfg, false, "", s); code == 0 {
			fmt.Fprintf(s.out, "\n%s\n", app.ReplayLine(first.Summary, second.Summary, true))
		}
	}
	if !*jsonOut {
		fmt.Fprintf(s.out, "\nThe demo's shopping list (updated by the run) and the runs' records are in %s\n", dir)
	}
	return code
}
