package app

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// TestReplayLine pins the comparison line `make demo` and `make bench`
// print: its exact format, the model calls (every agent turn and the
// review's), the shopping time (first item's start to last item's end),
// "faster", "as fast" within 5 % either way, "slower", the median of the
// replayed items and the scripted model's note. It never says "not
// faster".
func TestReplayLine(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	s := func(d time.Duration) time.Duration { return d * time.Second }
	// item starts at sec seconds after t0 and takes dur seconds.
	item := func(sec, dur float64, turns int, replay string) report.ItemResult {
		return report.ItemResult{ItemName: "x", StartedAt: t0.Add(time.Duration(sec * float64(time.Second))),
			Duration: time.Duration(dur * float64(time.Second)), Turns: turns, Replay: replay}
	}
	sum := func(calls int, items ...report.ItemResult) report.Summary {
		return report.Summary{StartedAt: t0.Add(-s(30)), FinishedAt: t0.Add(s(300)), Usage: report.Usage{Calls: calls}, Items: items}
	}
	// The first run: 2 review calls and 5 + 4 agent turns, 10 s of shopping.
	first := sum(2, item(0, 10, 5, ""), item(1, 9, 4, ""))
	const note = " — the demo's scripted model answers at once; with a real model each of the first run's calls takes seconds"
	for _, tc := range []struct {
		name          string
		first, second report.Summary
		instant       bool
		want          string
	}{
		{"faster, even count: the upper median", first,
			sum(0, item(0, 1, 0, shop.ReplayedDirect), item(0.5, 1.5, 0, shop.ReplayedDirect)), false,
			"replay: second run 0 model calls (first run 11), 5.0x faster (items shopped in 2.0 s vs 10.0 s); replayed 2/2 items, median 1.5 s per item"},
		{"faster, odd count, one item by the agent", first,
			sum(2, item(0, 3, 0, shop.ReplayedDirect), item(0, 1, 0, shop.ReplayedDirect), item(0, 4, 3, "replay fell back: it is out of stock"), item(1, 2, 0, shop.ReplayedDirect)), false,
			"replay: second run 5 model calls (first run 11), 2.5x faster (items shopped in 4.0 s vs 10.0 s); replayed 3/4 items, median 2.0 s per item"},
		{"the scripted model's note", first,
			sum(0, item(0, 1, 0, shop.ReplayedDirect), item(0, 1, 0, shop.ReplayedDirect)), true,
			"replay: second run 0 model calls (first run 11), 10.0x faster (items shopped in 1.0 s vs 10.0 s); replayed 2/2 items, median 1.0 s per item" + note},
		{"just over 5 % faster", first, sum(0, item(0, 9.5, 0, shop.ReplayedDirect)), false,
			"replay: second run 0 model calls (first run 11), 1.1x faster (items shopped in 9.5 s vs 10.0 s); replayed 1/1 items, median 9.5 s per item"},
		{"exactly 5 % faster is as fast", sum(0, item(0, 10.5, 1, "")), sum(0, item(0, 10, 0, shop.ReplayedDirect)), false,
			"replay: second run 0 model calls (first run 1), as fast (items shopped in 10.0 s vs 10.5 s); replayed 1/1 items, median 10.0 s per item"},
		{"within 5 % slower is as fast", first, sum(1, item(0, 10.4, 2, "")), false,
			"replay: second run 3 model calls (first run 11), as fast (items shopped in 10.4 s vs 10.0 s); replayed 0/1 items"},
		{"slower", first, sum(0, item(0, 12, 0, shop.ReplayedDirect)), false,
			"replay: second run 0 model calls (first run 11), 1.2x slower (items shopped in 12.0 s vs 10.0 s); replayed 1/1 items, median 12.0 s per item"},
		{"slower, with the note", first, sum(4, item(0, 25, 3, "")), true,
			"replay: second run 7 model calls (first run 11), 2.5x slower (items shopped in 25.0 s vs 10.0 s); replayed 0/1 items" + note},
		{"items without times: the whole runs", report.Summary{StartedAt: t0, FinishedAt: t0.Add(s(40)), Items: []report.ItemResult{{Turns: 6}}},
			report.Summary{StartedAt: t0, FinishedAt: t0.Add(s(10)), Items: []report.ItemResult{{Replay: shop.ReplayedDirect}}}, false,
			"replay: second run 0 model calls (first run 6), 4.0x faster (items shopped in 10.0 s vs 40.0 s); replayed 1/1 items, median 0.0 s per item"},
		{"nothing to compare", report.Summary{}, report.Summary{}, false,
			"replay: second run 0 model calls (first run 0), as fast (items shopped in 0.0 s vs 0.0 s); replayed 0/0 items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ReplayLine(tc.first, tc.second, tc.instant)
			if got != tc.want {
				t.Errorf("ReplayLine =\n  %q\nwant\n  %q", got, tc.want)
			}
			if strings.Contains(got, "not faster") {
				t.Errorf("ReplayLine says %q", got)
			}
		})
	}
}

// TestShoppingTimeAndModelCalls pins the two figures the line compares.
func TestShoppingTimeAndModelCalls(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		sum   report.Summary
		time  time.Duration
		calls int
	}{
		{"first start to last end, whatever the order",
			report.Summary{StartedAt: t0.Add(-time.Minute), FinishedAt: t0.Add(time.Hour), Usage: report.Usage{Calls: 2}, Items: []report.ItemResult{
				{StartedAt: t0.Add(3 * time.Second), Duration: 2 * time.Second, Turns: 4},
				{StartedAt: t0.Add(time.Second), Duration: 10 * time.Second, Turns: 1},
				{StartedAt: t0.Add(2 * time.Second), Duration: time.Second},
			}}, 10 * time.Second, 7},
		{"an item without a start is left out of the time, not of the calls",
			report.Summary{StartedAt: t0, FinishedAt: t0.Add(time.Hour), Items: []report.ItemResult{
				{StartedAt: t0, Duration: 5 * time.Second, Turns: 2},
				{Duration: time.Hour, Turns: 3},
			}}, 5 * time.Second, 5},
		{"no item times: the whole run",
			report.Summary{StartedAt: t0, FinishedAt: t0.Add(42 * time.Second), Usage: report.Usage{Calls: 2}, Items: []report.ItemResult{{}}},
			42 * time.Second, 2},
	} {
		if got := shoppingTime(tc.sum); got != tc.time {
			t.Errorf("%s: shoppingTime = %v, want %v", tc.name, got, tc.time)
		}
		if got := ModelCalls(tc.sum); got != tc.calls {
			t.Errorf("%s: ModelCalls = %d, want %d", tc.name, got, tc.calls)
		}
	}
}
