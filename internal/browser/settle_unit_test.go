package browser

import (
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// fakeRequest is a distinct request for the in-flight set's keys.
type fakeRequest struct {
	playwright.Request
	n int
}

// A tracked request keeps the page busy until it is answered (or stale),
// and an answered one only for its body's grace: a frame's fetch answered
// 403 by the policy never says it ended (no requestfinished, no
// requestfailed), and an action must not wait out the settle timeout for
// it. Requests past their bounds are forgotten.
func TestSettlingWaitsForAnswersNotEnds(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		req       inflightReq
		busy      bool
		forgotten bool
	}{
		{"sent, not answered", inflightReq{sent: now.Add(-2 * time.Second)}, true, false},
		{"sent long ago, never answered", inflightReq{sent: now.Add(-staleRequestAfter)}, false, true},
		{"answered a moment ago: its body", inflightReq{sent: now.Add(-2 * time.Second), answered: now.Add(-answeredGrace / 2)}, true, false},
		{"answered, never said to end", inflightReq{sent: now.Add(-2 * time.Second), answered: now.Add(-answeredGrace)}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &fakeRequest{n: 1}
			s := &pageState{inflight: map[playwright.Request]inflightReq{r: tc.req}}
			if got := s.requestsBusyLocked(now); got != tc.busy {
				t.Errorf("busy = %v, want %v", got, tc.busy)
			}
			if _, kept := s.inflight[r]; kept == tc.forgotten {
				t.Errorf("kept = %v, want %v", kept, !tc.forgotten)
			}
		})
	}
}
