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

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"

	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// browserEnv is the isolated environment of a test that runs the browser.
func browserEnv(t *testing.T) map[string]string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Chromium; skipped in -short mode")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("the browser or the Playwright driver is not set up: run make test (or eval \"$(scripts/setup.sh)\" first)")
	}
	return map[string]string{"GEMINI_SUPPLY_BROWSER_EXECUTABLE": exe}
}

func runLong(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	// Bounds a hang only: `demo` shops its list twice, and under a load
	// average of 40 the first run alone took 4 minutes (make test, #27).
	return runWithInput(t, "", args...)
}

// runWithInput runs a long command with in as its standard input.
func runWithInput(t *testing.T, in string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, stdio{in: strings.NewReader(in), out: &out, err: &errb})
	return code, out.String(), errb.String()
}

// TestShopDemoStoreScripted: `shop --store demo --model scripted` runs the
// real path on a user's YAML list and exits 0 with not-found items;
// --json prints the result.
func TestShopDemoStoreScripted(t *testing.T) {
	env := browserEnv(t)
	home := isolateConfig(t, env)
	list := filepath.Join(home, "list.yaml")
	if err := os.WriteFile(list, []byte("items:\n  - name: bananas\n  - name: dragon fruit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runLong(t, "shop", "--store", "demo", "--model", "scripted", "--shopping-list", list,
		"--data-dir", filepath.Join(home, "data"), "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	var res shop.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, out)
	}
	if c := res.Summary.Counts(); c.Added != 1 || c.NotFound != 1 || res.Review == nil {
		t.Errorf("counts %s, review %v", c, res.Review)
	}
	if !strings.Contains(errOut, "✓ bananas") || !strings.Contains(errOut, "✗ dragon fruit") {
		t.Errorf("live lines (on stderr with --json) missing:\n%s", errOut)
	}
	b, _ := os.ReadFile(list)
	if !strings.Contains(string(b), "completed") || !strings.Contains(string(b), "#404") {
		t.Errorf("the list was not updated:\n%s", b)
	}
}

// TestShopCannotRun: a run that cannot run exits 1 and says why.
func TestShopCannotRun(t *testing.T) {
	home := isolateConfig(t, map[string]string{})
	code, _, errOut := runLong(t, "shop", "--store", "demo", "--model", "scripted",
		"--shopping-list", filepath.Join(home, "missing.yaml"), "--data-dir", filepath.Join(home, "data"))
	if code != 1 || !strings.Contains(errOut, "missing.yaml") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestDemoCommand: `demo` shows added, not found (sold out and not sold)
// and a duplicate, with the summary and the review, in well under a minute.
func TestDemoCommand(t *testing.T) {
	env := browserEnv(t)
	isolateConfig(t, env)
	start := time.Now()
	code, out, errOut := runLong(t, "demo")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("demo took %v", time.Since(start))
	for _, w := range []string{"✓ 2x bananas", "✗ butter", "out of stock", "✗ dragon fruit", "= Bananas", "# Shopping run", "Cart review", "No warnings.", "The demo's shopping list", "same demo cart", "items shopped in"} {
		if !strings.Contains(out, w) {
			t.Errorf("demo output lacks %q:\n%s", w, out)
		}
	}
	i := strings.LastIndex(out, "are in ")
	if i < 0 {
		t.Fatal("no demo directory named")
	}
	dir := strings.TrimSpace(out[i+len("are in "):])
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	b, err := os.ReadFile(filepath.Join(dir, "shopping_list.yaml"))
	if err != nil || !strings.Contains(string(b), "#404") {
		t.Errorf("demo list not updated: %v\n%s", err, b)
	}
}

// TestShopStoppedSendsTelegramSummary: `shop` uses Telegram when it is
// configured (the run's notices go to the chat), and a run stopped mid-way
// (SIGTERM cancels the command's context) still delivers its summary there,
// although it is published after the context was cancelled; exit code 1.
func TestShopStoppedSendsTelegramSummary(t *testing.T) {
	env := browserEnv(t)
	fake := faketg.NewServer(cliToken)
	defer fake.Close()
	env["TELEGRAM_BOT_TOKEN"] = cliToken
	env["TELEGRAM_USER_CHAT_ID"] = "31337"
	env["GEMINI_SUPPLY_TELEGRAM_API_ENDPOINT"] = fake.Endpoint()
	home := isolateConfig(t, env)
	list := filepath.Join(home, "list.yaml")
	if err := os.WriteFile(list, []byte("items:\n  - name: bananas\n  - name: sourdough bread\n  - name: 2x eggs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx) // stop is the SIGTERM
	defer stop()
	out, errb := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(runCtx, []string{"shop", "--store", "demo", "--model", "scripted", "--shopping-list", list,
			"--data-dir", filepath.Join(home, "data"), "--concurrency", "1"}, stdio{in: strings.NewReader(""), out: out, err: errb})
	}()
	if _, err := fake.WaitMessage(ctx, func(m faketg.Message) bool { return strings.Contains(m.Text, "Shopping run started") }); err != nil {
		t.Fatalf("no run-started notice in Telegram: %v\nstderr:\n%s", err, errb.String())
	}
	// Stop once an item is being shopped.
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(out.String(), "started") {
		if time.Now().After(deadline) {
			t.Fatalf("no item started:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the output, bounded by the deadline
	}
	stop()
	var code int
	select {
	case code = <-done:
	case <-ctx.Done():
		t.Fatal("shop did not return after the stop")
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 for a stopped run\nstderr:\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), "The run was stopped.") {
		t.Errorf("stdout does not say the run was stopped:\n%s", out.String())
	}
	// shop returned: the bot was closed, which flushes the notices.
	var summary bool
	for _, m := range fake.Messages() {
		if strings.Contains(m.Text, "stopped before every item") {
			summary = true
		}
	}
	if !summary {
		var texts []string
		for _, m := range fake.Messages() {
			texts = append(texts, m.Text)
		}
		t.Errorf("the stopped run's summary did not reach Telegram; messages sent:\n%s", strings.Join(texts, "\n---\n"))
	}
}
