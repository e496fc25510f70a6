package browser

import (
	"fmt"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// driverShare is the Playwright driver every Host of a test binary
// launches through (see runDriver).
var driverShare struct {
	mu     sync.Mutex
	pw     *playwright.Playwright // nil until the first launch
	dir    string                 // its driver directory
	starts int                    // drivers runDriver started (shared or not)
}

// runDriver starts a Playwright driver from dir for one launch of a Host;
// shared reports that it is the process's shared driver instead, which the
// caller must not stop.
//
// In a test binary (go test) every Host, and every relaunch of one, starts
// its browser through one driver started at the first launch: starting and
// stopping a driver costs about 0.8 s of CPU, and a test package launches
// dozens of Hosts (docs/testing.md). Each Host still launches its own
// Chromium with its own profile, proxy and policy; only the Node process
// that speaks to the browsers is shared. It ends with the test binary (or
// StopSharedDriver). A program keeps one driver per Host generation: a
// driver that dies takes only its own browser with it, and a relaunch
// starts a new one.
func runDriver(dir string) (pw *playwright.Playwright, shared bool, err error) {
	driverShare.mu.Lock()
	defer driverShare.mu.Unlock()
	share := testing.Testing()
	if share && driverShare.pw != nil && driverShare.dir == dir {
		return driverShare.pw, true, nil
	}
	pw, err = playwright.Run(&playwright.RunOptions{DriverDirectory: dir, SkipInstallBrowsers: true})
	if err != nil {
		return nil, false, fmt.Errorf("browser: starting the Playwright driver from %s: %w (run scripts/setup.sh)", dir, err)
	}
	driverShare.starts++
	if share && driverShare.pw == nil {
		driverShare.pw, driverShare.dir = pw, dir
		return pw, true, nil
	}
	return pw, false, nil
}

// dropSharedDriver forgets the shared driver pw after a launch through it
// found it closed (the driver died): the next launch starts a new one.
func dropSharedDriver(pw *playwright.Playwright) {
	driverShare.mu.Lock()
	defer driverShare.mu.Unlock()
	if driverShare.pw == pw {
		driverShare.pw = nil
		go func() { _ = pw.Stop() }() // reaps the dead process; bounded by its exit
	}
}

// StopSharedDriver stops the shared driver of a test binary, if one was
// started; a later launch starts a new one. TestMain calls it after the
// tests, once every Host is closed.
func StopSharedDriver() {
	driverShare.mu.Lock()
	defer driverShare.mu.Unlock()
	if driverShare.pw != nil {
		_ = driverShare.pw.Stop()
		driverShare.pw = nil
	}
}

// DriverStarts is how many Playwright drivers this process's Hosts have
// started (the shared one counts once).
func DriverStarts() int {
	driverShare.mu.Lock()
	defer driverShare.mu.Unlock()
	return driverShare.starts
}
