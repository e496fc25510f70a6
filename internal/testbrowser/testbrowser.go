// Package testbrowser launches the headless Chromium that tests drive with
// playwright-go: the browser scripts/setup.sh installed, through its
// Playwright driver, closed when the test ends. Test support only.
package testbrowser

import (
	"os"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Launch starts the Playwright driver and Chromium with args (extra
// command-line flags), both stopped by t.Cleanup. Without the environment
// make test sets up it fails the test, saying how to set it up; in -short
// mode it skips.
func Launch(t testing.TB, args ...string) playwright.Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test (skipped with -short)")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" || exe == "" {
		t.Fatal("PLAYWRIGHT_DRIVER_PATH / GEMINI_SUPPLY_BROWSER_EXECUTABLE are not set: run `make test`, or `eval \"$(bash scripts/setup.sh)\"` first")
	}
	pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true})
	if err != nil {
		t.Fatalf("starting the Playwright driver (run scripts/setup.sh): %v", err)
	}
	t.Cleanup(func() { _ = pw.Stop() })
	browser, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(exe), Headless: playwright.Bool(true), Args: args,
		Timeout: playwright.Float(60000), // bounds a hang only (a loaded machine)
	})
	if err != nil {
		t.Fatalf("launching Chromium %s: %v", exe, err)
	}
	t.Cleanup(func() { _ = browser.Close() })
	return browser
}
