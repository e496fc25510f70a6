package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

// runTabs runs n agents at once with cfg, as the shopping run's tabs do.
func runTabs(n int, cfg agent.Config) []agent.Result {
	results := make([]agent.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
		}()
	}
	wg.Wait()
	return results
}

// quotaSpeed: the quota tests run the limiter's and the fake server's clock
// this many times faster than the wall clock (60 s of quota window take 2 s).
const quotaSpeed = 30

// TestQuotaKeepsEveryWindowUnderRPM: 4 tabs with model_rpm 10 against a
// server that enforces 10 requests per minute (429 beyond it, like the real
// service). Counted at the server, no 60-second window holds more than 10
// requests, no request is refused, and every tab finishes. A semaphore in
// place of the Quota fails this (24 requests in the first seconds).
func TestQuotaKeepsEveryWindowUnderRPM(t *testing.T) {
	const tabs, turns, rpm = 4, 6, 10
	clock := gemini.NewFastClock(quotaSpeed)
	h := newHarnessWith(t, gemini.Config{Script: walk(turns), RPM: rpm, Now: clock.Now})
	cfg := h.config()
	cfg.Limiter = agent.NewQuota(rpm, tabs, clock)
	for i, res := range runTabs(tabs, cfg) {
		if !res.OK() {
			t.Errorf("tab %d: %s", i, res.FailureText())
		}
	}
	arrivals := h.srv.Arrivals()
	if len(arrivals) != tabs*turns {
		t.Errorf("%d requests, want %d", len(arrivals), tabs*turns)
	}
	if most := gemini.MaxInWindow(arrivals, time.Minute); most > rpm {
		t.Errorf("the server saw %d requests in one 60 s window, limit %d", most, rpm)
	}
	if n := h.srv.RateLimited(); n != 0 {
		t.Errorf("the server refused %d requests for quota", n)
	}
	if span := arrivals[len(arrivals)-1].Sub(arrivals[0]); span < 2*time.Minute {
		t.Errorf("%d requests within %s of server time: the limit did not hold them back", len(arrivals), span)
	}
}

// TestQuotaConcurrency: model_concurrency bounds the requests in flight at
// the server, whatever the number of tabs.
func TestQuotaConcurrency(t *testing.T) {
	h := newHarness(t, func(req *gemini.Request) gemini.Reply {
		time.Sleep(5 * time.Millisecond) // requests overlap
		return walk(4)(req)
	})
	cfg := h.config()
	cfg.Limiter = agent.NewQuota(0, 2, nil)
	for i, res := range runTabs(6, cfg) {
		if !res.OK() {
			t.Errorf("tab %d: %s", i, res.FailureText())
		}
	}
	if got := h.srv.MaxInFlight(); got > 2 {
		t.Errorf("%d requests in flight at once, limit 2", got)
	}
}

// TestQuotaStorm: for 20 s (server time) every request gets 429. Every tab
// waits it out and finishes — no model_error (five tries of 1, 2, 4, 8 s
// would not outlast it). Because the first 429 pauses every tab, with
// RetryInfo the server refuses only the requests already in flight (at most
// model_concurrency, 2), not one per tab (4) as when each tab backs off alone.
func TestQuotaStorm(t *testing.T) {
	const tabs, inFlight = 4, 2
	for _, retryInfo := range []bool{true, false} {
		name := "without RetryInfo"
		if retryInfo {
			name = "with RetryInfo"
		}
		t.Run(name, func(t *testing.T) {
			clock := gemini.NewFastClock(quotaSpeed)
			h := newHarnessWith(t, gemini.Config{Script: walk(4), Now: clock.Now})
			stormEnd := clock.Now().Add(20 * time.Second)
			h.srv.RateLimitUntil(stormEnd, retryInfo)
			cfg := h.config()
			cfg.Backoff = nil // the default 1, 2, 4, 8 s: five tries would not outlast the storm
			q := agent.NewQuota(0, inFlight, clock)
			cfg.Limiter = q
			for i, res := range runTabs(tabs, cfg) {
				if !res.OK() || res.Reason == agent.ReasonModelError {
					t.Errorf("tab %d: %s", i, res.FailureText())
				}
			}
			refused := h.srv.RateLimited()
			if refused == 0 {
				t.Fatal("the storm refused nothing")
			}
			if retryInfo && refused > inFlight {
				t.Errorf("%d requests refused during the storm: the tabs did not all pause", refused)
			}
			switch {
			case q.PausedUntil().IsZero():
				t.Error("a 429 did not pause the quota")
			case retryInfo && q.PausedUntil().Before(stormEnd.Add(-time.Second)):
				// The advised delay is counted from when the 429 arrived, so the
				// pause reaches the storm's end. Without RetryInfo the last
				// doubling pause may end earlier: a request granted then can
				// reach the server after the storm on a loaded machine.
				t.Errorf("the quota paused until %s, the storm lasted until %s", q.PausedUntil(), stormEnd)
			}
		})
	}
}

// TestQuotaWaitIsNotDoubled: a 429 after a failed try is waited out once —
// in the paused quota, on its clock — not a second time as a backoff sleep
// on the wall clock (here 30 s of RetryInfo, beyond the 20 s time budget).
func TestQuotaWaitIsNotDoubled(t *testing.T) {
	clock := gemini.NewFastClock(quotaSpeed)
	var srv *gemini.Server
	var once sync.Once
	h := newHarnessWith(t, gemini.Config{Now: clock.Now, Script: func(req *gemini.Request) gemini.Reply {
		failed := false
		once.Do(func() { // the first try fails with 503 and a 30 s quota storm begins
			srv.RateLimitUntil(clock.Now().Add(30*time.Second), true)
			failed = true
		})
		if failed {
			return gemini.Reply{Status: 503}
		}
		return walk(2)(req)
	}})
	srv = h.srv
	cfg := h.config()
	cfg.Limiter = agent.NewQuota(0, 1, clock)
	cfg.TimeBudget = 20 * time.Second
	res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	if h.srv.RateLimited() != 1 {
		t.Errorf("%d requests refused, want the one 429", h.srv.RateLimited())
	}
}
