// Package testwait holds the one way tests wait for something another
// goroutine or process does: poll a condition until it holds or a deadline
// passes. Never a bare sleep, never an unbounded wait.
package testwait

import (
	"strings"
	"testing"
	"time"
)

// firstInterval is the first pause between two polls; each pause doubles
// up to maxInterval. Many conditions ask a browser page (a locator's text,
// an evaluation): each poll is a round trip through the Playwright driver,
// Chromium's browser process and the page's renderer, about 5 ms of CPU
// under -race, so a 10 ms poll kept up over a minute's wait cost a third of
// a core doing nothing but asking (#35, round three). The back-off keeps a
// condition that already holds or soon holds answered within milliseconds
// and a long wait at ten polls a second.
const (
	firstInterval = 10 * time.Millisecond
	maxInterval   = 100 * time.Millisecond
)

// Until polls cond until it holds, failing t (with what, and the text of
// every details func, e.g. a captured log) once limit has passed.
func Until(t testing.TB, what string, limit time.Duration, cond func() bool, details ...func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	interval := firstInterval
	for !cond() {
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, d := range details {
				b.WriteString("\n")
				b.WriteString(d())
			}
			t.Fatalf("timed out after %v waiting for %s%s", limit, what, b.String())
		}
		time.Sleep(interval)
		interval = min(2*interval, maxInterval)
	}
}
