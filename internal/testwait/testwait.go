// Package testwait holds the one way tests wait for something another
// goroutine or process does: poll a condition until it holds or a deadline
// passes. Never a bare sleep, never an unbounded wait.
package testwait

import (
	"strings"
	"testing"
	"time"
)

// interval is how often the condition is polled.
const interval = 10 * time.Millisecond

// Until polls cond until it holds, failing t (with what, and the text of
// every details func, e.g. a captured log) once limit has passed.
func Until(t testing.TB, what string, limit time.Duration, cond func() bool, details ...func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
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
	}
}
