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

	"github.com/gemini-supply/gemini-supply/internal/config"
)

// isolateConfig points the config sources at a fake environment and an empty home
// directory for the duration of the test.
func isolateConfig(t *testing.T, env map[string]string) string {
	t.Helper()
	home := t.TempDir()
	old := loadOptions
	loadOptions = config.LoadOptions{
		HomeDir:          home,
		LookupEnv:        func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		AddonOptionsPath: filepath.Join(home, "options.json"),
	}
	t.Cleanup(func() { loadOptions = old })
	return home
}

func runInProcess(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second) // bounds a hang only
	defer cancel()
	var out, errb bytes.Buffer
	code = run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

const testList = `# test list
items:
  - {id: a, name: 2x milk 2%}
  - {id: b, name: bread}
  - {id: c, name: butter, tags: ["#404"], explanation: none left}
  - {id: d, name: "MILK  2%"}
  - {id: e, name: eggs, status: completed}
  - {id: f, name: "12 eggs #organic"}
  - {id: g, name: "saffron #failed"}
`

func writeTestList(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "list.yaml")
	if err := os.WriteFile(p, []byte(testList), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	creds := map[string]string{"GEMINI_API_KEY": "SECRET-key-123", "GEMINI_SUPPLY_METRO_USERNAME": "me@example.com", "GEMINI_SUPPLY_METRO_PASSWORD": "SECRET-pw-456"}
	list := writeTestList(t)
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		code       int
		stdout     []string
		stderr     []string
		notStderr  []string
		emptyOut   bool
		emptyErr   bool
		stderrLine int // exact number of lines on stderr, when > 0
	}{
		{name: "no command", args: nil, code: 2, stderr: []string{"Usage: gemini-supply <command>"}},
		{name: "help", args: []string{"help"}, code: 0, stdout: []string{"shop", "version", "help <command>"}, emptyErr: true},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: []string{"Commands:"}},
		{name: "unknown command", args: []string{"shpo"}, code: 2, stderr: []string{`unknown command "shpo"`, "gemini-supply help"}, stderrLine: 1},
		{name: "help shop", args: []string{"help", "shop"}, code: 0, stderr: []string{"Usage: gemini-supply shop", "-dry-run", "-shopping-list"}},
		{name: "shop -h", args: []string{"shop", "-h"}, code: 0, stderr: []string{"Usage: gemini-supply shop", "-concurrency", "(default 1)", "-time-budget", "(default 5m0s)", "-max-turns", "(default 40)", "-retry-tagged", "-config", "-store", "-model", "-json", "-log-level"}, emptyOut: true},
		{name: "shop --help", args: []string{"shop", "--help"}, code: 0, stderr: []string{"Usage: gemini-supply shop"}},
		{name: "shop unknown flag", args: []string{"shop", "--bogus"}, code: 2, stderr: []string{"-bogus", "run 'gemini-supply shop -h' for usage"}, notStderr: []string{"Usage:"}, stderrLine: 2},
		{name: "shop bad duration", args: []string{"shop", "--time-budget", "soon"}, code: 2, stderr: []string{"time-budget", "run 'gemini-supply shop -h'"}, stderrLine: 2},
		{name: "shop bad number", args: []string{"shop", "--concurrency", "two"}, code: 2, stderr: []string{"concurrency", "run 'gemini-supply shop -h'"}},
		{name: "shop positional argument", args: []string{"shop", "list.yaml"}, code: 2, stderr: []string{`unexpected argument "list.yaml"`, "run 'gemini-supply shop -h'"}},
		{name: "shop invalid config lists every problem, no secrets", env: creds, args: []string{"shop", "--concurrency", "20", "--max-turns", "0", "--store", "costco"}, code: 2,
			stderr: []string{"3 problems", "concurrency: 20 is not between 1 and 8", "max_turns", "store", "docs/configuration.md"}, notStderr: []string{"SECRET"}},
		{name: "shop needs credentials", args: []string{"shop"}, code: 2, stderr: []string{"gemini_api_key", "metro_username", "metro_password"}},
		{name: "shop that cannot start the browser exits 1", env: withEnv(creds, "GEMINI_SUPPLY_BROWSER_EXECUTABLE", "/nonexistent/chromium"), args: []string{"shop", "--shopping-list", list}, code: 1, stderr: []string{"start the browser", "/nonexistent/chromium"}, notStderr: []string{"SECRET"}},
		{name: "dry run needs no credentials", args: []string{"shop", "--dry-run", "--shopping-list", list}, code: 0, stdout: []string{"Would shop"}, emptyErr: true},
		{name: "dry run without a list", args: []string{"shop", "--dry-run"}, code: 2, stderr: []string{"no shopping list", "run 'gemini-supply shop -h'"}},
		{name: "dry run of a missing list", args: []string{"shop", "--dry-run", "--shopping-list", "/nonexistent/list.yaml"}, code: 1, stderr: []string{"does not exist"}},
		{name: "dry run list from env", env: map[string]string{"GEMINI_SUPPLY_SHOPPING_LIST": list}, args: []string{"shop", "--dry-run"}, code: 0, stdout: []string{list}},
		{name: "serve -h", args: []string{"serve", "-h"}, code: 0, stderr: []string{"Usage: gemini-supply serve", "-mqtt-cleanup"}},
		{name: "serve bad flag", args: []string{"serve", "--nope"}, code: 2, stderr: []string{"run 'gemini-supply serve -h'"}},
		{name: "serve extra argument", args: []string{"serve", "now"}, code: 2, stderr: []string{"unexpected argument", "run 'gemini-supply serve -h'"}},
		{name: "serve invalid config lists the problems", env: creds, args: []string{"serve", "--concurrency", "20", "--store", "costco"}, code: 2,
			stderr: []string{"concurrency: 20 is not between 1 and 8", "store", "docs/configuration.md"}, notStderr: []string{"SECRET"}},
		{name: "version", args: []string{"version"}, code: 0, stdout: []string{"gemini-supply dev (go"}, emptyErr: true},
		{name: "version -h", args: []string{"version", "-h"}, code: 0, stderr: []string{"Usage: gemini-supply version"}},
		{name: "version extra argument", args: []string{"version", "now"}, code: 2, stderr: []string{"run 'gemini-supply version -h'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			if env == nil {
				env = map[string]string{}
			}
			isolateConfig(t, env)
			code, out, errs := runInProcess(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			for _, w := range tt.notStderr {
				if strings.Contains(errs, w) {
					t.Errorf("stderr contains %q:\n%s", w, errs)
				}
			}
			if tt.emptyOut && out != "" {
				t.Errorf("stdout should be empty:\n%s", out)
			}
			if tt.emptyErr && errs != "" {
				t.Errorf("stderr should be empty:\n%s", errs)
			}
			if tt.stderrLine > 0 && strings.Count(errs, "\n") != tt.stderrLine {
				t.Errorf("stderr has %d lines, want %d:\n%s", strings.Count(errs, "\n"), tt.stderrLine, errs)
			}
		})
	}
}

func TestShopDryRun(t *testing.T) {
	isolateConfig(t, map[string]string{})
	list := writeTestList(t)
	resolved, _ := filepath.EvalSymlinks(list)

	code, out, errs := runInProcess(t, "shop", "--dry-run", "--shopping-list", list)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "Shopping list: " + resolved + `
Would shop 3 items at metro (concurrency 1, time budget 5m0s, at most 40 turns per item):
   2 × milk 2%  ("2x milk 2%")
   1 × bread
  12 × eggs     ("12 eggs") #organic
Skipped:
  butter — tagged #404 by an earlier run (--retry-tagged shops it again)
  saffron — tagged #failed by an earlier run (--retry-tagged shops it again)
  MILK 2% — duplicate of "2x milk 2%"
Already completed: 1
`
	if out != want {
		t.Errorf("dry run output:\n%s\nwant:\n%s", out, want)
	}

	code, out, _ = runInProcess(t, "shop", "--dry-run", "--retry-tagged", "--concurrency", "3", "--time-budget", "90s", "--shopping-list", list)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"Would shop 5 items", "concurrency 3, time budget 1m30s", "1 × butter", "1 × saffron"} {
		if !strings.Contains(out, w) {
			t.Errorf("retry dry run lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "tagged #") {
		t.Errorf("retry dry run still skips tagged items:\n%s", out)
	}

	if b, _ := os.ReadFile(list); string(b) != testList {
		t.Errorf("dry run changed the list:\n%s", b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(list)); len(entries) != 1 {
		t.Errorf("dry run created files next to the list: %v", entries)
	}
}

func TestShopDryRunJSON(t *testing.T) {
	isolateConfig(t, map[string]string{})
	list := writeTestList(t)
	code, out, errs := runInProcess(t, "shop", "--dry-run", "--json", "--shopping-list", list)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var plan struct {
		ToShop     []planItem `json:"to_shop"`
		Tagged     []planItem `json:"skipped_tagged"`
		Duplicates []planItem `json:"skipped_duplicates"`
		Completed  int        `json:"completed"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(plan.ToShop) != 3 || plan.ToShop[0].ID != "a" || plan.ToShop[0].Quantity != 2 || plan.ToShop[0].Product != "milk 2%" ||
		plan.ToShop[2].Quantity != 12 || len(plan.Tagged) != 2 || len(plan.Duplicates) != 1 || plan.Duplicates[0].DuplicateOf != "a" || plan.Completed != 1 {
		t.Errorf("plan = %+v", plan)
	}
}

// TestExampleList checks the shipped example: it parses, every item is
// open, and a dry run leaves it untouched.
func TestExampleList(t *testing.T) {
	isolateConfig(t, map[string]string{})
	path := filepath.Join("..", "..", "examples", "shopping_list.yaml")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runInProcess(t, "shop", "--shopping-list", path, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"Would shop 6 items", "2 × milk 2%", "1 × eggs", "1 × 500 g butter", "1 × bread", "3 × apples", "1 × saffron"} {
		if !strings.Contains(out, w) {
			t.Errorf("example dry run lacks %q:\n%s", w, out)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("dry run changed examples/shopping_list.yaml")
	}
}

// withEnv returns a copy of env with k=v added.
func withEnv(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range env {
		out[key] = val
	}
	return out
}

// TestRunThatCannotStartLeavesNothing: a shop run whose browser does not
// start prints the error, not a summary of "not shopped" items with a cart
// link, and leaves no summary file beside the list and no journal.
func TestRunThatCannotStartLeavesNothing(t *testing.T) {
	list := writeTestList(t)
	data := filepath.Join(t.TempDir(), "data")
	isolateConfig(t, map[string]string{"GEMINI_SUPPLY_BROWSER_EXECUTABLE": "/nonexistent/chromium", "PLAYWRIGHT_DRIVER_PATH": t.TempDir()})
	code, out, errs := runInProcess(t, "shop", "--store", "demo", "--model", "scripted", "--shopping-list", list, "--data-dir", data)
	if code != 1 || !strings.Contains(errs, "start the browser") {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	for _, w := range []string{"not shopped", "Not shopped", "Review and check out", "Journal", "record (for troubleshooting)", "Done:"} {
		if strings.Contains(out, w) {
			t.Errorf("stdout says %q for a run that never started:\n%s", w, out)
		}
	}
	if runs, _ := os.ReadDir(filepath.Join(data, "runs")); len(runs) != 0 {
		t.Errorf("a journal was left: %v", runs)
	}
	files, _ := os.ReadDir(filepath.Dir(list))
	for _, f := range files {
		if n := f.Name(); n != "list.yaml" && n != "list.yaml.lock" {
			t.Errorf("beside the list: %s; want no summary file", n)
		}
	}
}

// TestDryRunShowsWhatIsSkipped: the dry run (text and --json) reports the
// empty, tag-only and over-long entries as skipped, as the panel's preview
// and the run do; a list with nothing left says why, in the dry run and in
// the run itself.
func TestDryRunShowsWhatIsSkipped(t *testing.T) {
	isolateConfig(t, map[string]string{})
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yaml")
	long := strings.Repeat("x", 250)
	if err := os.WriteFile(list, []byte("items:\n  - milk\n  - \"\"\n  - name:\n  - \"#404\"\n  - bread\n  - "+long+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runInProcess(t, "shop", "--dry-run", "--shopping-list", list)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Count(out, "only tags or empty") != 3 || !strings.Contains(out, "#404 — ") || !strings.Contains(out, "250 characters") || !strings.Contains(out, "Would shop 2 items") {
		t.Errorf("the dry run does not show the skipped entries:\n%s", out)
	}
	code, out, errs = runInProcess(t, "shop", "--dry-run", "--json", "--shopping-list", list)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var plan struct {
		ToShop  []json.RawMessage `json:"to_shop"`
		Unnamed []json.RawMessage `json:"skipped_unnamed"`
		TooLong []json.RawMessage `json:"skipped_too_long"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || len(plan.ToShop) != 2 || len(plan.Unnamed) != 3 || len(plan.TooLong) != 1 {
		t.Errorf("--json plan: %v\n%s", err, out)
	}

	done := filepath.Join(dir, "done.yaml")
	if err := os.WriteFile(done, []byte("items:\n  - {id: a, name: milk, status: completed}\n  - {id: b, name: saffron, tags: [\"#404\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runInProcess(t, "shop", "--dry-run", "--shopping-list", done)
	want := "Nothing to shop: the list has no open item to shop (1 completed; 1 tagged #404 or #failed by an earlier run (--retry-tagged shops it again))."
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("dry run of a done list:\n%s\nwant %q", out, want)
	}
	code, out, errs = runInProcess(t, "shop", "--store", "demo", "--model", "scripted", "--shopping-list", done, "--data-dir", filepath.Join(dir, "data"))
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("the run of a done list (exit %d):\n%s\n%s\nwant %q", code, out, errs, want)
	}
}
