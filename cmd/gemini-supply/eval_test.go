package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/eval"
)

func TestEvalCommandLine(t *testing.T) {
	isolateConfig(t, nil)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: added, product: milk-9pct}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a real store", []string{"eval", "--store", "metro"}, 2, "the eval runs only on the demo store"},
		{"unknown case", []string{"eval", "--case", "no-such-case"}, 2, `no case named "no-such-case"`},
		{"bad suite", []string{"eval", "--suite", bad}, 2, `expected product "milk-9pct" is not in the demo store's catalogue`},
		{"concurrency", []string{"eval", "--concurrency", "0"}, 2, "--concurrency 0"},
		{"a real model without a key", []string{"eval", "--model", "scripted,gemini-3.8-flash", "--case", "plain-milk"}, 2, "gemini_api_key"},
		{"bad thinking level", []string{"eval", "--thinking-level", "huge", "--case", "plain-milk"}, 2, "thinking_level"},
		{"list", []string{"eval", "--list", "--filter", "soldout"}, 0, "soldout-butter-skip"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runInProcess(t, tc.args...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("%v: exit %d (want %d), output does not say %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
			}
		})
	}
}

// One eval end to end from the command line: a right case and a wrong
// one; exit 1, the table, JSON and Markdown say which and why.
func TestEvalCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("the browser or the Playwright driver is not set up: run make test (or eval \"$(scripts/setup.sh)\" first)")
	}
	isolateConfig(t, map[string]string{"GEMINI_SUPPLY_BROWSER_EXECUTABLE": exe})
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(suite, []byte(`cases:
  - name: right
    tests: a right expectation
    item: saffron
    expect: {outcome: not_found, asked: false}
  - name: wrong
    tests: a wrong expectation
    item: olive oil
    expect: {outcome: added, product: olive-oil-1l, quantity: 2}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	jsonPath, mdPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.md")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // bounds a hang only
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"eval", "--suite", suite, "--json", jsonPath, "--markdown", mdPath}, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a case failed)\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"scripted: 1/2 passed", "FAIL wrong (scripted, item \"olive oil\"):", "the cart holds 1 × olive-oil-1l; expected 2 × olive-oil-1l"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep eval.Report
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Results) != 4 || rep.Results[0].Status != eval.StatusPass || rep.Results[1].Status != eval.StatusFail ||
		rep.Settings[1] != eval.BaselineModel { // the baseline is always compared
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	md, err := os.ReadFile(mdPath)
	if err != nil || !strings.Contains(string(md), "| wrong | olive oil | FAIL |") {
		t.Fatalf("Markdown report: %v\n%s", err, md)
	}
}
