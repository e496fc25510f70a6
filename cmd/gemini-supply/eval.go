package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/eval"
)

var evalCommand = command{
	name:    "eval",
	summary: "measure how well a model shops: the eval suite on the demo store",
	run:     runEval,
}

const evalAbout = `Runs the eval suite (docs/eval.md): each case shops one list item in a
fresh embedded demo store, in a real headless Chromium, through the real
run path, and is judged against the product, quantity and question it
expects. It prints a table (pass/fail, turns, time, tokens, cost and what
went wrong) and, with several models or settings, their comparison.

--model scripted (the default) runs offline; a real Gemini model needs
GEMINI_API_KEY. It never touches a real store: only --store demo.
Exit 0 when every case passed (or failed as marked for the scripted
planner), 1 when a case failed or the eval could not run, 2 for a bad
command line, configuration or suite.`

func runEval(ctx context.Context, args []string, s stdio) int {
	fs := newFlagSet("eval", "[flags]", evalAbout)
	models := fs.String("model", config.ScriptedModel, "comma-separated models to compare (scripted: the offline planner; baseline: the first in-stock result, always compared)")
	thinking := fs.String("thinking-level", "", "comma-separated thinking levels to compare (low, medium, high; empty: configured)")
	media := fs.String("media-resolution", "", "comma-separated screenshot resolutions to compare (low, medium, high; empty: configured)")
	runs := fs.Int("runs", 1, "run every case this many times: pass rates with 95 % intervals, flaky cases marked")
	concurrency := fs.Int("concurrency", 2, "cases run at once, each in its own demo store and browser")
	names := fs.String("case", "", "comma-separated case names to run (default: all)")
	filter := fs.String("filter", "", "run only the cases whose name, item or description contains this text")
	suitePath := fs.String("suite", "", "a suite YAML file (default: the suite built in, internal/eval/suite.yaml)")
	jsonPath := fs.String("json", "", "write the report as JSON to this file")
	mdPath := fs.String("markdown", "", "write the report as Markdown to this file")
	storeName := fs.String("store", "demo", "the store: only demo (the eval never touches a real store)")
	list := fs.Bool("list", false, "list the cases and exit")
	configPath := fs.String("config", "", "the configuration file (the API key, browser, max_turns, time_budget…)")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return exitCode(err)
	}
	if !strings.EqualFold(*storeName, "demo") {
		return exitCode(usageFailure("eval", s.err, fmt.Errorf("--store %s: %w", *storeName, eval.ErrNotDemo)))
	}
	if *runs < 1 || *runs > 100 {
		return exitCode(usageFailure("eval", s.err, fmt.Errorf("--runs %d is not between 1 and 100", *runs)))
	}
	if *concurrency < 1 || *concurrency > config.MaxConcurrency {
		return exitCode(usageFailure("eval", s.err, fmt.Errorf("--concurrency %d is not between 1 and %d", *concurrency, config.MaxConcurrency)))
	}
	suite, err := loadSuite(*suitePath)
	if err != nil {
		return exitCode(usageFailure("eval", s.err, err))
	}
	cases, err := suite.Select(splitList(*names), *filter)
	if err != nil {
		return exitCode(usageFailure("eval", s.err, err))
	}
	if *list {
		for _, c := range cases {
			fmt.Fprintf(s.out, "%-32s %-4s %-28q %s\n", c.Name, c.Split, c.Item, c.Tests)
			if c.Trap != "" {
				fmt.Fprintf(s.out, "%-37s trap: %s\n", "", c.Trap)
			}
		}
		return 0
	}
	load := loadOptions
	if *configPath != "" {
		load.ConfigPath = *configPath
	}
	cfg, err := loadConfig(load, s.err)
	if err != nil {
		return exitCode(configFailure("eval", s.err, err))
	}
	settings := eval.Settings(splitList(*models), splitList(*thinking), splitList(*media))
	if len(settings) == 0 {
		return exitCode(usageFailure("eval", s.err, errors.New("--model names no model")))
	}
	cfg.Store = "demo"
	settings = eval.WithBaseline(settings)
	for _, st := range settings {
		if st.Model == eval.BaselineModel {
			continue // no model: nothing to configure
		}
		c := cfg
		c.GeminiModel = st.Model
		if st.ThinkingLevel != "" {
			c.ThinkingLevel = st.ThinkingLevel
		}
		if st.MediaResolution != "" {
			c.MediaResolution = st.MediaResolution
		}
		if err := c.ValidateFor(config.NeedModel); err != nil {
			return exitCode(configFailure("eval", s.err, err))
		}
	}
	level := cfg.SlogLevel()
	if level == slog.LevelInfo {
		level = slog.LevelWarn // the live lines tell the story
	}
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: s.err}, &slog.HandlerOptions{Level: level}))
	fmt.Fprintf(s.out, "eval: %d cases × %d settings × %d runs, %d at once\n", len(cases), len(settings), *runs, *concurrency)
	rep, err := eval.Run(ctx, cases, eval.Options{
		Base: cfg, Settings: settings, Runs: *runs, Concurrency: *concurrency, Logger: logger,
		Done: func(r eval.CaseResult) {
			fmt.Fprintf(s.out, "  %-5s %-32s %s #%d — %s (%d turns, %.1fs)\n", r.Status, r.Case, r.Setting, r.Run, r.Got, r.Turns, r.Duration.Seconds())
		},
	})
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply eval: %v\n", err)
		return 1
	}
	fmt.Fprintln(s.out)
	if err := eval.PrintTable(s.out, rep); err != nil {
		fmt.Fprintf(s.err, "gemini-supply eval: %v\n", err)
		return 1
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer, eval.Report) error
	}{{*jsonPath, eval.WriteJSON}, {*mdPath, eval.WriteMarkdown}} {
		if out.path == "" {
			continue
		}
		if err := writeReport(out.path, rep, out.write); err != nil {
			fmt.Fprintf(s.err, "gemini-supply eval: %v\n", err)
			return 1
		}
	}
	if rep.Failed() {
		return 1
	}
	return 0
}

func loadSuite(path string) (eval.Suite, error) {
	if path == "" {
		return eval.DefaultSuite()
	}
	return eval.LoadSuite(path)
}

func writeReport(path string, rep eval.Report, write func(io.Writer, eval.Report) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if err := write(f, rep); err != nil {
		_ = f.Close()
		return fmt.Errorf("write the report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the report %s: %w", path, err)
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
