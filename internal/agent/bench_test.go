package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
)

// benchShot is the screenshot size used by the benchmarks: a 1440x900 PNG of
// a store page is 100–300 KiB.
const benchShot = 120 << 10

// BenchmarkTurnOverhead measures what the agent adds to every turn besides
// the model's own time: building and encoding the request (history pruning,
// base64 screenshots), decoding the reply, dispatching the actions and
// answering. The fake server's handling time is subtracted; the Computer is
// an instant fake.
func BenchmarkTurnOverhead(b *testing.B) {
	const turns = 10
	h := newHarness(b, walk(turns))
	cfg := h.config()
	c := newFakeComputer()
	c.shotSize = benchShot
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
		elapsed += time.Since(start)
		if !res.OK() {
			b.Fatalf("run = %s", res.FailureText())
		}
	}
	overhead := elapsed - h.srv.HandlerTime()
	b.ReportMetric(float64(overhead.Nanoseconds())/float64(b.N*turns), "ns-overhead/turn")
	b.ReportMetric(float64(h.srv.HandlerTime().Nanoseconds())/float64(b.N*turns), "ns-fake-model/turn")
}

// BenchmarkRequestBytes reports the size of the request at turn 5 and at
// turn 40 of one conversation (screenshots of benchShot bytes).
func BenchmarkRequestBytes(b *testing.B) {
	var at5, at40 int
	for range b.N {
		h := newHarness(b, walk(41))
		cfg := h.config()
		cfg.MaxTurns = 41
		c := newFakeComputer()
		c.shotSize = benchShot
		if res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()}); !res.OK() {
			b.Fatalf("run = %s", res.FailureText())
		}
		for _, r := range h.srv.Requests() {
			switch r.Turn() {
			case 5:
				at5 = len(r.Raw)
			case 40:
				at40 = len(r.Raw)
			}
		}
	}
	b.ReportMetric(float64(at5), "bytes-turn5/request")
	b.ReportMetric(float64(at40), "bytes-turn40/request")
	b.ReportMetric(float64(at40)/float64(at5), "turn40/turn5")
}
