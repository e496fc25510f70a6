package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
)

// baseConfig is a user's configuration with no file and no environment,
// the browser from scripts/setup.sh.
func baseConfig(t *testing.T) config.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("the eval runs Chromium; skipped in -short mode")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("the browser or the Playwright driver is not set up: run make test (or eval \"$(scripts/setup.sh)\" first)")
	}
	cfg, err := config.Load(config.LoadOptions{LookupEnv: func(string) (string, bool) { return "", false }, HomeDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.BrowserExecutable = exe
	cfg.Store = "demo"
	cfg.TimeBudget = 3 * time.Minute // a bound on a hang, generous under load
	return cfg
}

func testLog(t *testing.T) *slog.Logger {
	if os.Getenv("GEMINI_SUPPLY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// offlineCases are the suite's cases make test runs with the scripted
// planner: one or more of every kind, and the ones marked to fail for it
// (GEMINI_SUPPLY_EVAL_ALL=1 runs the whole suite).
var offlineCases = []string{
	"plain-milk", "qty-2x-eggs", "size-a-dozen-eggs", "fr-cafe-moulu", "decoy-maple-syrup", "decoy-sponsored-tile",
	"soldout-butter-skip", "soldout-cream-cheese-search", "page2-sparkling-water", "slow-basmati-rice",
	"injected-granola-no-detection",
}

// The suite runs offline with the scripted planner through the real run
// path: every case passes or fails as marked.
func TestSuiteOffline(t *testing.T) {
	t.Parallel() // its own runners, stores and browsers: see docs/testing.md
	cfg := baseConfig(t)
	suite, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	names := offlineCases
	if os.Getenv("GEMINI_SUPPLY_EVAL_ALL") != "" {
		names = nil
	}
	cases, err := suite.Select(names, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cases, Options{Base: cfg, Settings: []Setting{{Model: config.ScriptedModel}}, Concurrency: 2, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := PrintTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	if rep.Failed() {
		t.Fatal("a case failed (table above)")
	}
	marked := 0
	for _, c := range cases {
		if c.ScriptedFails != "" {
			marked++
		}
	}
	if tot := rep.Totals[0]; tot.ExpectedFailed != marked || tot.Passed != len(cases)-marked {
		t.Fatalf("totals %+v; want %d passed and %d failed as marked", tot, len(cases)-marked, marked)
	}
	for _, r := range rep.Results {
		if r.Status == StatusPass && (r.Turns == 0 || r.Tokens == 0) {
			t.Errorf("%s passed with %d turns and %d tokens: the model was not called", r.Case, r.Turns, r.Tokens)
		}
	}
}

// A case whose expectation is wrong fails with the reason in words, a
// scripted_fails mark on a case that passes fails, and two settings run
// side by side and are compared.
func TestEvalFailsAndCompares(t *testing.T) {
	t.Parallel() // its own runners, stores and browsers: see docs/testing.md
	cfg := baseConfig(t)
	suite, err := ParseSuite([]byte(`cases:
  - name: wrong-bananas
    tests: the expectation is wrong on purpose (the plain bunch is what the run adds)
    item: bananas
    expect: {outcome: added, product: bananas-organic-bunch, asked: true}
  - name: stale-mark
    tests: marked to fail for the scripted planner, which passes it
    item: sugar
    expect: {outcome: added, product: sugar-white-2kg}
    scripted_fails: an old mark
`))
	if err != nil {
		t.Fatal(err)
	}
	settings := Settings([]string{config.ScriptedModel}, nil, []string{"low", "high"})
	rep, err := Run(context.Background(), suite.Cases, Options{Base: cfg, Settings: settings, Concurrency: 2, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 4 || !rep.Failed() {
		t.Fatalf("%d results, failed %v; want 4 results and a failure", len(rep.Results), rep.Failed())
	}
	byKey := map[string]CaseResult{}
	for _, r := range rep.Results {
		byKey[r.Case+"/"+r.Setting] = r
	}
	for _, s := range []string{"scripted media=low", "scripted media=high"} {
		w := byKey["wrong-bananas/"+s]
		why := strings.Join(w.Problems, "\n")
		for _, want := range []string{
			"the cart holds 1 × bananas-bunch; expected 1 × bananas-organic-bunch",
			"expected a question to the household; none was asked",
		} {
			if !strings.Contains(why, want) {
				t.Errorf("%s: wrong-bananas problems %q do not say %q", s, w.Problems, want)
			}
		}
		if w.Status != StatusFail || w.Got != "added 1 × bananas-bunch" {
			t.Errorf("%s: wrong-bananas is %s, got %q", s, w.Status, w.Got)
		}
		m := byKey["stale-mark/"+s]
		if m.Status != StatusFail || !strings.Contains(strings.Join(m.Problems, " "), "but it passed: remove the mark") {
			t.Errorf("%s: stale-mark is %s (%q); want a failure asking to remove the mark", s, m.Status, m.Problems)
		}
	}
	// The settings differ where they should: a low-resolution screenshot
	// costs fewer tokens than a high one for the same turns.
	low, high := byKey["stale-mark/scripted media=low"], byKey["stale-mark/scripted media=high"]
	if low.Turns != high.Turns || low.Tokens >= high.Tokens {
		t.Errorf("media=low: %d turns %d tokens; media=high: %d turns %d tokens; want the same turns, fewer tokens at low",
			low.Turns, low.Tokens, high.Turns, high.Tokens)
	}
	if len(rep.Totals) != 2 || rep.Totals[0].Setting != "scripted media=low" || rep.Totals[0].Failed != 2 || rep.Totals[1].Failed != 2 {
		t.Errorf("totals %+v", rep.Totals)
	}

	var table, md, js bytes.Buffer
	if err := PrintTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	out := table.String()
	// The comparison: a header with both settings, a row per case.
	i := strings.LastIndex(out, "\nCASE ")
	if i < 0 {
		t.Fatalf("no comparison in the table:\n%s", out)
	}
	cmp := strings.Split(strings.TrimSpace(out[i:]), "\n")
	if len(cmp) != 4 || !strings.Contains(cmp[0], "scripted media=low") || !strings.Contains(cmp[0], "scripted media=high") ||
		!strings.HasPrefix(cmp[1], "wrong-bananas") || strings.Count(cmp[1], "FAIL") != 2 || !strings.HasPrefix(cmp[3], "passed") || strings.Count(cmp[3], "0/2") != 2 {
		t.Fatalf("comparison:\n%s", strings.Join(cmp, "\n"))
	}
	if !strings.Contains(out, "FAIL wrong-bananas (scripted media=low, item \"bananas\"):") {
		t.Errorf("the table does not say what went wrong:\n%s", out)
	}
	for _, want := range []string{"## Comparison", "| wrong-bananas | FAIL", "## scripted media=high", "the cart holds 1 × bananas-bunch"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md.String())
		}
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Results) != 4 || back.Results[0].Problems == nil {
		t.Fatalf("the JSON report does not read back: %v", err)
	}
	t.Logf("\n%s", out)
}
