// Package testbrowser launches the headless Chromium that tests drive with
// playwright-go: the browser scripts/setup.sh installed, through its
// Playwright driver. Test support only.
//
// One driver and one Chromium (per set of command-line flags) serve every
// test of a test binary: starting them costs about 1.5 s of CPU, opening a
// context in a running browser almost nothing. Each test gets its own
// browser contexts (cookies, storage, viewport), closed when it ends; a
// test that needs a browser of its own (a crash, a restart, a profile)
// calls LaunchIsolated. docs/testing.md says more.
package testbrowser

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// shared is the driver and the browsers of this test binary, kept until
// it exits (the driver ends when its pipe from this process closes, and
// Chromium with it).
var shared struct {
	mu       sync.Mutex
	pw       *playwright.Playwright
	browsers map[string]playwright.Browser // by their flags
	launches int
}

// Launch returns the Chromium of this test binary started with args (extra
// command-line flags), starting it and the Playwright driver at the first
// call. Pages and contexts the test opens through it are closed by
// t.Cleanup; Close on it closes them too, never the browser other tests
// use. Without the environment make test sets up it fails the test, saying
// how to set it up; in -short mode it skips.
func Launch(t testing.TB, args ...string) playwright.Browser {
	t.Helper()
	exe := requireEnv(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.pw == nil {
		pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true})
		if err != nil {
			t.Fatalf("starting the Playwright driver (run scripts/setup.sh): %v", err)
		}
		shared.pw, shared.browsers = pw, map[string]playwright.Browser{}
	}
	key := strings.Join(args, "\x00")
	b := shared.browsers[key]
	if b == nil || !b.IsConnected() {
		var err error
		b, err = launch(shared.pw, exe, args)
		if err != nil {
			t.Fatalf("launching Chromium %s: %v", exe, err)
		}
		shared.browsers[key] = b
		shared.launches++
	}
	return newTestBrowser(t, b)
}

// LaunchIsolated starts a Playwright driver and a Chromium of the test's
// own, both stopped by t.Cleanup: for a test that kills, restarts or
// otherwise changes the browser itself.
func LaunchIsolated(t testing.TB, args ...string) playwright.Browser {
	t.Helper()
	exe := requireEnv(t)
	pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true})
	if err != nil {
		t.Fatalf("starting the Playwright driver (run scripts/setup.sh): %v", err)
	}
	t.Cleanup(func() { _ = pw.Stop() })
	b, err := launch(pw, exe, args)
	if err != nil {
		t.Fatalf("launching Chromium %s: %v", exe, err)
	}
	shared.mu.Lock()
	shared.launches++
	shared.mu.Unlock()
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Launches is how many Chromium processes this test binary has launched
// through Launch and LaunchIsolated.
func Launches() int {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	return shared.launches
}

func requireEnv(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test (skipped with -short)")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" || exe == "" {
		t.Fatal("PLAYWRIGHT_DRIVER_PATH / GEMINI_SUPPLY_BROWSER_EXECUTABLE are not set: run `make test`, or `eval \"$(bash scripts/setup.sh)\"` first")
	}
	return exe
}

func launch(pw *playwright.Playwright, exe string, args []string) (playwright.Browser, error) {
	return pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(exe), Headless: playwright.Bool(true), Args: args,
		Timeout: playwright.Float(60000), // bounds a hang only (a loaded machine)
	})
}

// testBrowser is the shared browser as one test sees it: what the test
// opens is closed when it ends (or when it calls Close).
type testBrowser struct {
	playwright.Browser
	mu     sync.Mutex
	closes []func() error
}

func newTestBrowser(t testing.TB, b playwright.Browser) *testBrowser {
	tb := &testBrowser{Browser: b}
	t.Cleanup(func() { _ = tb.Close() })
	return tb
}

func (b *testBrowser) track(close func() error) {
	b.mu.Lock()
	b.closes = append(b.closes, close)
	b.mu.Unlock()
}

// NewContext opens a context of the test's own in the shared browser.
func (b *testBrowser) NewContext(options ...playwright.BrowserNewContextOptions) (playwright.BrowserContext, error) {
	c, err := b.Browser.NewContext(options...)
	if err == nil {
		b.track(func() error { return c.Close() })
	}
	return c, err
}

// NewPage opens a page in a new context of the test's own (closing the
// page closes the context).
func (b *testBrowser) NewPage(options ...playwright.BrowserNewPageOptions) (playwright.Page, error) {
	p, err := b.Browser.NewPage(options...)
	if err == nil {
		b.track(func() error { return p.Close() })
	}
	return p, err
}

// Close closes what the test opened, newest first; the shared browser
// stays up for the other tests.
func (b *testBrowser) Close(...playwright.BrowserCloseOptions) error {
	b.mu.Lock()
	closes := b.closes
	b.closes = nil
	b.mu.Unlock()
	for i := len(closes) - 1; i >= 0; i-- {
		_ = closes[i]()
	}
	return nil
}
