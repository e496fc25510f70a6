package browser

import (
	"testing"
	"time"
)

// TestSleptTabRunsNoTimers: a tab put to sleep (while its agent waits for
// the model) runs none of its page's timers, and once woken runs them
// again on the same page: the model's next screenshot is of the page as
// it was, alive.
func TestSleptTabRunsNoTimers(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/keys"))
	before := tab.URL()
	// The page notes the time of every tick of a 10 ms timer.
	eval(t, tab, `() => { window.__ticks = []; setInterval(() => window.__ticks.push(Date.now()), 10); }`)
	ticks := func() []float64 {
		var out []float64
		for _, v := range eval(t, tab, `() => window.__ticks`).([]any) {
			out = append(out, toFloat(v))
		}
		return out
	}
	waitFor(t, "the page's timer to tick", patience, func() bool { return len(ticks()) > 0 })

	mustDo(t, "sleep", tab.Sleep(ctx))
	asleep := time.Now()
	time.Sleep(time.Second) // the model thinks
	woken := time.Now()
	mustDo(t, "wake", tab.Wake(ctx))

	// Margins for a tick that ran while Sleep or Wake was on its way.
	from, to := float64(asleep.Add(100*time.Millisecond).UnixMilli()), float64(woken.Add(-100*time.Millisecond).UnixMilli())
	var in []float64
	for _, at := range ticks() {
		if at > from && at < to {
			in = append(in, at-float64(asleep.UnixMilli()))
		}
	}
	if len(in) > 0 {
		t.Fatalf("the slept page's timer ticked %d times while asleep, at %v ms", len(in), in)
	}
	n := len(ticks())
	waitFor(t, "the woken page's timer to tick", patience, func() bool { return len(ticks()) > n })
	if tab.URL() != before {
		t.Errorf("the tab is at %s after waking, was at %s", tab.URL(), before)
	}
	if _, err := tab.Screenshot(ctx); err != nil {
		t.Errorf("screenshot of the woken tab: %v", err)
	}
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	}
	return 0
}
