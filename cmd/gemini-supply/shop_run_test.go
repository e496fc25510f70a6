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
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
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
	for _, w := range []string{"✓ 2x bananas", "✗ butter", "out of stock", "✗ dragon fruit", "= Bananas", "# Shopping run", "Cart review", "No warnings.", "The demo's shopping list"} {
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
