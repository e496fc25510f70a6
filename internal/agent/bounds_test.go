package agent_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

// Coordinates and magnitudes are clamped as floats, before any conversion to
// int: a huge value lands on the edge it points at, never wraps around.
func TestRunClampsHugeNumbers(t *testing.T) {
	cases := []struct {
		name string
		fn   string
		args map[string]any
		want []string
	}{
		{"1e19", "click_at", map[string]any{"x": 1e19, "y": -1e19}, []string{"click 999,0 left x1"}},
		{"1e300", "click", map[string]any{"x": -1e300, "y": 1e300}, []string{"click 0,999 left x1"}},
		{"just past the int range", "hover_at", map[string]any{"x": 9.3e18, "y": 9.2e18}, []string{"move 999,999"}},
		{"numeric strings", "click_at", map[string]any{"x": "1e19", "y": "-4e30"}, []string{"click 999,0 left x1"}},
		{"fractions", "click_at", map[string]any{"x": 998.6, "y": -0.4}, []string{"click 999,0 left x1"}},
		{"drag destination", "drag_and_drop", map[string]any{"x": 1, "y": 2, "destination_x": 1e19, "destination_y": 1e19}, []string{"drag 1,2->999,999"}},
		{"huge magnitude", "scroll_at", map[string]any{"x": 500, "y": 500, "direction": "down", "magnitude": 1e19}, []string{"scrollat 500,500 down 999"}},
		{"tiny magnitude", "scroll", map[string]any{"direction": "up", "magnitude": 0.2}, []string{"scrollat 500,500 up 1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, gemini.Sequence(calls(call(tc.fn, tc.args)), report("ok")))
			c := newFakeComputer()
			res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
			if !res.OK() {
				t.Fatalf("run failed: %s", res.FailureText())
			}
			if got := c.Ops(); !slices.Equal(got, tc.want) {
				t.Errorf("ops = %q, want %q", got, tc.want)
			}
		})
	}
}

// Non-finite numbers and over-long strings are refused with an error the
// model reads in its function response; the computer is never driven.
func TestRunRefusesUnboundedArguments(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []struct {
		name, fn  string
		args      map[string]any
		wantError string
	}{
		{"NaN coordinate", "click_at", map[string]any{"x": "NaN", "y": 1}, `"x" must be a finite number`},
		{"Inf coordinate", "click_at", map[string]any{"x": 1, "y": "Inf"}, `"y" must be a finite number`},
		{"-Infinity coordinate", "click", map[string]any{"x": "-Infinity", "y": 1}, `"x" must be a finite number`},
		{"overflowing string", "click_at", map[string]any{"x": "1e400", "y": 1}, `"x" must be a number`},
		{"NaN magnitude", "scroll_at", map[string]any{"x": 1, "y": 1, "direction": "up", "magnitude": "nan"}, `"magnitude" must be a finite number`},
		{"negative magnitude", "scroll_at", map[string]any{"x": 1, "y": 1, "direction": "up", "magnitude": -1e19}, "magnitude must be positive"},
		{"huge wait", "wait", map[string]any{"seconds": 1e19}, "seconds must be between 0 and 60"},
		{"NaN wait", "wait", map[string]any{"seconds": "NaN"}, `"seconds" must be a finite number`},
		{"20000 characters to type", "type_text_at", map[string]any{"x": 1, "y": 1, "text": long(20000)}, `"text" is 20000 characters long; at most 1000`},
		{"long text, newer vocabulary", "type", map[string]any{"text": long(1001)}, `"text" is 1001 characters long`},
		{"long text counted in characters", "type", map[string]any{"text": strings.Repeat("é", 1001)}, `"text" is 1001 characters long`},
		{"long URL", "navigate", map[string]any{"url": "https://shop.example/" + long(3000)}, `"url" is 3021 characters long; at most 2048`},
		{"long key combination", "key_combination", map[string]any{"keys": long(101)}, `"keys" is 101 characters long; at most 100`},
		{"many keys", "hotkey", map[string]any{"keys": slices.Repeat([]any{"a"}, 51)}, `"keys" is 101 characters long`},
		{"too many keys", "hotkey", map[string]any{"keys": slices.Repeat([]any{"a"}, 1000)}, `"keys" has 1000 keys`},
		{"long direction", "scroll_document", map[string]any{"direction": long(5000)}, `"direction" is 5000 characters long`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Value
			h := newHarness(t, func(req *gemini.Request) gemini.Reply {
				if req.Turn() == 1 {
					return calls(call(tc.fn, tc.args))
				}
				if rs := req.FunctionResponses(); len(rs) == 1 {
					seen.Store(fmt.Sprint(rs[0].Response["error"]))
				}
				return report("corrected")
			})
			c := newFakeComputer()
			res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
			if !res.OK() || res.Turns != 2 {
				t.Fatalf("run = %s after %d turns; the model should have been able to correct itself", res.FailureText(), res.Turns)
			}
			if got, _ := seen.Load().(string); !strings.Contains(got, tc.wantError) {
				t.Errorf("error response = %q, want it to contain %q", got, tc.wantError)
			}
			if ops := c.Ops(); len(ops) != 0 {
				t.Errorf("the computer was driven: %.200q", ops)
			}
		})
	}
}

// The caps let ordinary arguments through at their limits.
func TestRunAcceptsArgumentsAtTheirLimits(t *testing.T) {
	text := strings.Repeat("é", 1000)
	h := newHarness(t, gemini.Sequence(calls(call("type", map[string]any{"text": text})), report("ok")))
	c := newFakeComputer()
	res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
	if !res.OK() || !slices.Equal(c.Ops(), []string{fmt.Sprintf("type %q enter=false", text)}) {
		t.Fatalf("result %s, ops %.80q", res.FailureText(), c.Ops())
	}
}
