package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

func TestRunExecutesCallsAndEndsOnTerminalTool(t *testing.T) {
	h := newHarness(t, gemini.Sequence(
		gemini.Reply{Text: "Searching.", Calls: []*genai.FunctionCall{
			call("click_at", map[string]any{"x": 500, "y": 300}),
			call("type_text_at", map[string]any{"x": 100, "y": 50, "text": "milk"}),
		}},
		report("added"),
	))
	c := newFakeComputer()
	cfg := h.config()
	cfg.SystemInstruction = "You shop."
	cfg.ExcludedFunctions = []string{"drag_and_drop"}
	res := agent.Run(context.Background(), cfg, "Buy milk.", c, []agent.Tool{reportTool()})

	if !res.OK() || res.Tool != "report_done" || res.Payload != "payload:added" || res.Args["status"] != "added" {
		t.Fatalf("result = %+v (%s), want report_done with payload", res, res.FailureText())
	}
	if !strings.Contains(h.logs.String(), "agent turn") {
		t.Errorf("no per-turn debug log: %s", h.logs.String())
	}
	if res.Turns != 2 || res.FailureText() != "" {
		t.Errorf("turns = %d, failure text %q", res.Turns, res.FailureText())
	}
	want := []string{`click 500,300 left x1`, `typeat 100,50 "milk" enter=false clear=true`}
	if got := c.Ops(); !slices.Equal(got, want) {
		t.Errorf("ops = %q, want %q", got, want)
	}

	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	first := reqs[0]
	if first.Goal() != "Buy milk." || first.ImageCount() != 1 {
		t.Errorf("first request goal %q images %d, want the goal and one screenshot", first.Goal(), first.ImageCount())
	}
	if first.SystemInstruction == nil || first.SystemInstruction.Parts[0].Text != "You shop." {
		t.Errorf("system instruction not sent: %+v", first.SystemInstruction)
	}
	cu := first.ComputerUse()
	if cu == nil || cu.Environment != genai.EnvironmentBrowser || !slices.Equal(cu.ExcludedPredefinedFunctions, []string{"drag_and_drop"}) {
		t.Errorf("computer use tool = %+v", cu)
	}
	if d := first.Declaration("report_done"); d == nil || d.Parameters == nil || d.Parameters.Properties["status"] == nil {
		t.Errorf("custom declaration missing or without schema: %+v", d)
	}
	// Turn 2 carries one user content answering both calls, in order, each
	// with the URL and the screenshot on the last one.
	rs := responsesOf(t, reqs, 1)
	if len(rs) != 2 || rs[0].Name != "click_at" || rs[1].Name != "type_text_at" {
		t.Fatalf("responses = %+v", rs)
	}
	for _, r := range rs {
		if r.Response["url"] != "https://shop.example/" {
			t.Errorf("%s response url = %v", r.Name, r.Response["url"])
		}
	}
	if imageParts(rs[0]) != 0 || imageParts(rs[1]) != 1 {
		t.Errorf("images per response = %d, %d; want the screenshot on the last action only", imageParts(rs[0]), imageParts(rs[1]))
	}
	// The model's turn went back unchanged (text part kept; the fake rejects
	// missing thought signatures).
	mt := reqs[1].ModelTurns()
	if len(mt) != 1 || mt[0].Parts[0].Text != "Searching." || len(mt[0].Parts[1].ThoughtSignature) == 0 {
		t.Errorf("model turn not echoed unchanged: %+v", mt)
	}
}

func TestRunDispatchesBothVocabularies(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		// Older vocabulary.
		{"click_at", map[string]any{"x": 10, "y": 20}, []string{"click 10,20 left x1"}},
		{"hover_at", map[string]any{"x": 10, "y": 20}, []string{"move 10,20"}},
		{"type_text_at", map[string]any{"x": 1, "y": 2, "text": "a b", "press_enter": true, "clear_before_typing": false}, []string{`typeat 1,2 "a b" enter=true clear=false`}},
		{"type_text_at", map[string]any{"x": 1, "y": 2, "text": "x"}, []string{`typeat 1,2 "x" enter=false clear=true`}},
		{"key_combination", map[string]any{"keys": "Control+a"}, []string{"keys Control+a"}},
		{"scroll_document", map[string]any{"direction": "DOWN"}, []string{"scrolldoc down"}},
		{"scroll_at", map[string]any{"x": 500, "y": 500, "direction": "up"}, []string{"scrollat 500,500 up 800"}},
		{"scroll_at", map[string]any{"x": 500, "y": 500, "direction": "left", "magnitude": 200}, []string{"scrollat 500,500 left 200"}},
		{"wait_5_seconds", nil, []string{"wait 5s"}},
		{"go_back", nil, []string{"back "}},
		{"go_forward", nil, []string{"forward "}},
		{"search", nil, []string{"navigate https://home.example/"}},
		{"navigate", map[string]any{"url": "https://shop.example/a"}, []string{"navigate https://shop.example/a"}},
		{"drag_and_drop", map[string]any{"x": 1, "y": 2, "destination_x": 3, "destination_y": 4}, []string{"drag 1,2->3,4"}},
		{"open_web_browser", nil, nil},
		{"click_at", map[string]any{"x": 1500, "y": -3}, []string{"click 999,0 left x1"}}, // clamped
		{"click_at", map[string]any{"x": "250", "y": 12.6}, []string{"click 250,13 left x1"}},
		// Newer vocabulary.
		{"click", map[string]any{"x": 10, "y": 20}, []string{"click 10,20 left x1"}},
		{"double_click", map[string]any{"x": 10, "y": 20}, []string{"click 10,20 left x2"}},
		{"triple_click", map[string]any{"x": 10, "y": 20}, []string{"click 10,20 left x3"}},
		{"middle_click", map[string]any{"x": 10, "y": 20}, []string{"click 10,20 middle x1"}},
		{"right_click", map[string]any{"x": 10, "y": 20}, []string{"click 10,20 right x1"}},
		{"mouse_down", map[string]any{"x": 5, "y": 6}, []string{"move 5,6", "mousedown left"}},
		{"mouse_up", map[string]any{"button": "right"}, []string{"mouseup right"}},
		{"move", map[string]any{"x": 7, "y": 8}, []string{"move 7,8"}},
		{"type", map[string]any{"text": "eggs", "press_enter": true}, []string{`type "eggs" enter=true`}},
		{"scroll", map[string]any{"x": 100, "y": 200, "direction": "down", "magnitude": 300}, []string{"scrollat 100,200 down 300"}},
		{"scroll", map[string]any{"direction": "down"}, []string{"scrolldoc down"}},
		{"wait", map[string]any{"seconds": 2}, []string{"wait 2s"}},
		{"wait", nil, []string{"wait 5s"}},
		{"press_key", map[string]any{"key": "Enter"}, []string{"keys Enter"}},
		{"key_down", map[string]any{"key": "Shift"}, []string{"keydown Shift"}},
		{"key_up", map[string]any{"key": "Shift"}, []string{"keyup Shift"}},
		{"hotkey", map[string]any{"keys": []any{"Control", "c"}}, []string{"keys Control+c"}},
		{"take_screenshot", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, gemini.Sequence(calls(call(tc.name, tc.args)), report("ok")))
			c := newFakeComputer()
			cfg := h.config()
			cfg.HomeURL = "https://home.example/"
			res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
			if !res.OK() {
				t.Fatalf("run failed: %s", res.FailureText())
			}
			if got := c.Ops(); !slices.Equal(got, tc.want) {
				t.Errorf("ops = %q, want %q", got, tc.want)
			}
			rs := responsesOf(t, h.srv.Requests(), 1)
			if len(rs) != 1 || rs[0].Response["error"] != nil || rs[0].Response["url"] == nil || imageParts(rs[0]) != 1 {
				t.Errorf("response = %+v, want url + screenshot and no error", rs[0])
			}
		})
	}
}

func TestRunReportsBadCallsToTheModel(t *testing.T) {
	cases := []struct {
		name, fn  string
		args      map[string]any
		wantError string
	}{
		{"missing coordinate", "click_at", map[string]any{"x": 10}, `missing argument "y"`},
		{"non-numeric coordinate", "click_at", map[string]any{"x": "left", "y": 10}, `"x" must be a number`},
		{"wrong direction", "scroll_document", map[string]any{"direction": "sideways"}, "direction must be up, down, left or right"},
		{"missing text", "type_text_at", map[string]any{"x": 1, "y": 1}, `missing argument "text"`},
		{"bad press_enter", "type_text_at", map[string]any{"x": 1, "y": 1, "text": "a", "press_enter": "maybe"}, "press_enter"},
		{"unknown function", "teleport", map[string]any{"to": "moon"}, `unknown function "teleport"`},
		{"excluded function", "drag_and_drop", map[string]any{"x": 1, "y": 1, "destination_x": 2, "destination_y": 2}, "not available"},
		{"search without home", "search", nil, "search is not available"},
		{"custom tool error", "report_done", map[string]any{}, "status is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Value
			h := newHarness(t, func(req *gemini.Request) gemini.Reply {
				if req.Turn() == 1 {
					return calls(call(tc.fn, tc.args))
				}
				rs := req.FunctionResponses()
				if len(rs) == 1 {
					seen.Store(fmt.Sprint(rs[0].Response["error"]))
				}
				return report("corrected")
			})
			c := newFakeComputer()
			cfg := h.config()
			cfg.ExcludedFunctions = []string{"drag_and_drop"}
			res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
			if !res.OK() || res.Turns != 2 {
				t.Fatalf("run = %s after %d turns; the model should have been able to correct itself", res.FailureText(), res.Turns)
			}
			if got, _ := seen.Load().(string); !strings.Contains(got, tc.wantError) {
				t.Errorf("error response = %q, want it to contain %q", got, tc.wantError)
			}
			if ops := c.Ops(); len(ops) != 0 {
				t.Errorf("the computer was driven: %q", ops)
			}
		})
	}
}

func TestRunRejectedActionIsReportedAndOtherBrowserErrorsEndTheRun(t *testing.T) {
	t.Run("rejected", func(t *testing.T) {
		h := newHarness(t, gemini.Sequence(calls(call("navigate", map[string]any{"url": "https://shop.example/checkout"})), report("ok")))
		c := newFakeComputer()
		c.errs = map[string]error{"navigate": &policyError{url: "https://shop.example/checkout"}}
		res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
		if !res.OK() {
			t.Fatalf("run = %s", res.FailureText())
		}
		r := responsesOf(t, h.srv.Requests(), 1)[0]
		if !strings.Contains(fmt.Sprint(r.Response["error"]), "blocked by the store policy") {
			t.Errorf("response error = %v", r.Response["error"])
		}
		if n, _ := r.Response["notices"].([]any); len(n) != 1 || !strings.Contains(fmt.Sprint(n[0]), "blocked by policy") {
			t.Errorf("notices = %v", r.Response["notices"])
		}
	})
	t.Run("browser error", func(t *testing.T) {
		crash := errors.New("target crashed")
		h := newHarness(t, gemini.Sequence(calls(call("click_at", map[string]any{"x": 1, "y": 1})), report("ok")))
		c := newFakeComputer()
		c.errs = map[string]error{"click": crash}
		res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
		if res.Reason != agent.ReasonBrowserError || !errors.Is(res.Err, crash) {
			t.Fatalf("result = %s, want browser_error wrapping the cause", res.FailureText())
		}
		if !strings.HasPrefix(res.FailureText(), "browser_error: click_at: ") {
			t.Errorf("failure text = %q", res.FailureText())
		}
	})
	t.Run("screenshot error", func(t *testing.T) {
		broken := errors.New("page closed")
		h := newHarness(t, gemini.Sequence(report("ok")))
		c := newFakeComputer()
		c.errs = map[string]error{"screenshot": broken}
		res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
		if res.Reason != agent.ReasonBrowserError || !errors.Is(res.Err, broken) || h.srv.Calls() != 0 {
			t.Fatalf("result = %s after %d calls", res.FailureText(), h.srv.Calls())
		}
	})
}

// walk returns a script that moves the mouse to a different spot every turn
// and reports on turn n.
func walk(n int) gemini.Script {
	return func(req *gemini.Request) gemini.Reply {
		t := req.Turn()
		if t >= n {
			return report("done")
		}
		return calls(call("click_at", map[string]any{"x": t % 1000, "y": (t * 7) % 1000}))
	}
}

func TestRunKeepsOnlyRecentScreenshots(t *testing.T) {
	h := newHarness(t, walk(12))
	res := agent.Run(context.Background(), h.config(), "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() || res.Turns != 12 {
		t.Fatalf("run = %s after %d turns", res.FailureText(), res.Turns)
	}
	for _, r := range h.srv.Requests() {
		want := min(r.Turn(), 3)
		if got := r.ImageCount(); got != want {
			t.Errorf("turn %d request carries %d images, want %d", r.Turn(), got, want)
		}
		// Every older action response keeps its URL.
		for _, fr := range r.AllFunctionResponses() {
			if fr.Response["url"] == nil {
				t.Errorf("turn %d: a %s response lost its url", r.Turn(), fr.Name)
			}
		}
	}
}

func TestRunRequestSizeStaysFlat(t *testing.T) {
	h := newHarness(t, walk(41))
	c := newFakeComputer()
	c.shotSize = 120 << 10 // a 1440x900 page screenshot is 100–300 KiB
	cfg := h.config()
	cfg.MaxTurns = 41
	res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	size := map[int]int{}
	for _, r := range h.srv.Requests() {
		size[r.Turn()] = len(r.Raw)
	}
	if size[5] == 0 || size[40] == 0 {
		t.Fatalf("missing turn 5 or 40 request: %v", size)
	}
	if ratio := float64(size[40]) / float64(size[5]); ratio > 1.3 {
		t.Errorf("turn-40 request is %d bytes, %.2f× the turn-5 request (%d bytes); want ≤ 1.3×", size[40], ratio, size[5])
	}
}

func TestRunRetriesTransientFailures(t *testing.T) {
	cases := []struct {
		name   string
		faults []gemini.Fault
	}{
		{"429", []gemini.Fault{gemini.FaultRateLimit}},
		{"503", []gemini.Fault{gemini.FaultUnavailable}},
		{"429 then 503", []gemini.Fault{gemini.FaultRateLimit, gemini.FaultUnavailable}},
		{"500 four times", []gemini.Fault{gemini.FaultInternal, gemini.FaultInternal, gemini.FaultInternal, gemini.FaultInternal}},
		{"malformed function call", []gemini.Fault{gemini.FaultMalformed}},
		{"call timeout", []gemini.Fault{gemini.FaultHang}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, gemini.Sequence(calls(call("click_at", map[string]any{"x": 1, "y": 2})), report("ok")))
			h.srv.Inject(tc.faults...)
			cfg := h.config()
			cfg.CallTimeout = 300 * time.Millisecond
			res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
			if !res.OK() || res.Turns != 2 {
				t.Fatalf("run = %s after %d turns", res.FailureText(), res.Turns)
			}
			if got, want := h.srv.Calls(), 2+len(tc.faults); got != want {
				t.Errorf("%d model calls, want %d", got, want)
			}
		})
	}
}

func TestRunGivesUpOnPersistentOrPermanentModelErrors(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		wantCalls int
	}{
		{"persistent 500", 500, 5},
		{"bad request is not retried", 400, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(*gemini.Request) gemini.Reply { return gemini.Reply{Status: tc.status, Message: "boom"} })
			res := agent.Run(context.Background(), h.config(), "goal", newFakeComputer(), []agent.Tool{reportTool()})
			var apiErr genai.APIError
			if res.Reason != agent.ReasonModelError || !errors.As(res.Err, &apiErr) || apiErr.Code != tc.status {
				t.Fatalf("result = %s, want model_error wrapping the API error %d", res.FailureText(), tc.status)
			}
			if !strings.HasPrefix(res.FailureText(), "model_error: ") {
				t.Errorf("failure text = %q", res.FailureText())
			}
			if got := h.srv.Calls(); got != tc.wantCalls {
				t.Errorf("%d calls, want %d", got, tc.wantCalls)
			}
		})
	}
	t.Run("persistent malformed", func(t *testing.T) {
		h := newHarness(t, func(*gemini.Request) gemini.Reply { return gemini.Reply{Malformed: true} })
		res := agent.Run(context.Background(), h.config(), "goal", newFakeComputer(), nil)
		if res.Reason != agent.ReasonModelError || h.srv.Calls() != 5 || !strings.Contains(res.FailureText(), "MALFORMED_FUNCTION_CALL") {
			t.Fatalf("result = %s after %d calls", res.FailureText(), h.srv.Calls())
		}
	})
}

func TestRunRetriesMalformedCallThatCameWithText(t *testing.T) {
	// The service may return MALFORMED_FUNCTION_CALL with the model's text
	// (or thoughts) but no call: that is a broken call to retry, not a
	// model that stopped without reporting.
	var n atomic.Int32
	h := newHarness(t, func(*gemini.Request) gemini.Reply {
		if n.Add(1) == 1 {
			return gemini.Reply{Text: "I will click the button.", FinishReason: genai.FinishReasonMalformedFunctionCall}
		}
		return report("ok")
	})
	res := agent.Run(context.Background(), h.config(), "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() || res.Turns != 1 || h.srv.Calls() != 2 {
		t.Fatalf("run = %q after %d turns and %d calls, want the malformed reply retried", res.FailureText(), res.Turns, h.srv.Calls())
	}
}

func TestRunLabelsScreenshotsWithTheirFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		jpeg bool
		want string
	}{{"png", false, "image/png"}, {"jpeg", true, "image/jpeg"}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, gemini.Sequence(calls(call("click_at", map[string]any{"x": 1, "y": 2})), report("ok")))
			c := newFakeComputer()
			c.jpeg = tc.jpeg
			if res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()}); !res.OK() {
				t.Fatalf("run = %s", res.FailureText())
			}
			reqs := h.srv.Requests()
			var got []string
			for _, p := range reqs[1].Contents[0].Parts {
				if p.InlineData != nil {
					got = append(got, p.InlineData.MIMEType)
				}
			}
			for _, r := range responsesOf(t, reqs, 1) {
				for _, fp := range r.Parts {
					if fp.InlineData != nil {
						got = append(got, fp.InlineData.MIMEType)
					}
				}
			}
			if !slices.Equal(got, []string{tc.want, tc.want}) {
				t.Errorf("image media types = %v, want the first screenshot and the click's both %s", got, tc.want)
			}
		})
	}
}

// sleepyTool blocks for d or until its context ends, then asks to be called
// no more.
func sleepyTool(d time.Duration, waitsForUser bool) agent.Tool {
	return agent.Tool{
		Name:         "ask_user",
		Description:  "Ask the user.",
		WaitsForUser: waitsForUser,
		Handler: func(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return agent.ToolOutput{Response: map[string]any{"answer": "yes"}}, nil
			case <-ctx.Done():
				return agent.ToolOutput{}, ctx.Err()
			}
		},
	}
}

func TestRunTimeBudgetExcludesWaitingForTheUser(t *testing.T) {
	// Budget 1 s, a tool that takes 2 s. Waiting for the user does not count
	// (and restarts the budget); the same wait in an ordinary tool exhausts it.
	script := gemini.Sequence(calls(call("ask_user", nil)), report("ok"))
	t.Run("waits for user", func(t *testing.T) {
		h := newHarness(t, script)
		cfg := h.config()
		cfg.TimeBudget = time.Second
		res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{sleepyTool(2*time.Second, true), reportTool()})
		if !res.OK() {
			t.Fatalf("run = %s", res.FailureText())
		}
		if rs := responsesOf(t, h.srv.Requests(), 1); rs[0].Response["answer"] != "yes" {
			t.Errorf("tool response = %+v", rs[0].Response)
		}
	})
	t.Run("ordinary tool", func(t *testing.T) {
		h := newHarness(t, script)
		cfg := h.config()
		cfg.TimeBudget = time.Second
		res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{sleepyTool(2*time.Second, false), reportTool()})
		if res.Reason != agent.ReasonTimeBudget {
			t.Fatalf("result = %s, want time_budget_exceeded", res.FailureText())
		}
	})
}

type fakeConfirmer struct {
	ok                  bool
	err                 error
	explanation, action string
	asked               int
}

func (f *fakeConfirmer) Confirm(ctx context.Context, explanation, action string) (bool, error) {
	f.asked++
	f.explanation, f.action = explanation, action
	return f.ok, f.err
}

func TestRunSafetyDecisions(t *testing.T) {
	risky := call("click_at", map[string]any{"x": 10, "y": 20, "safety_decision": map[string]any{
		"decision": "require_confirmation", "explanation": "This accepts the terms.",
	}})
	refused := errors.New("user said no")
	cases := []struct {
		name      string
		confirmer *fakeConfirmer
		wantOK    bool
	}{
		{"confirmed", &fakeConfirmer{ok: true}, true},
		{"denied", &fakeConfirmer{ok: false}, false},
		{"confirmer error", &fakeConfirmer{err: refused}, false},
		{"no confirmer", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, gemini.Sequence(calls(risky), report("ok")))
			c := newFakeComputer()
			cfg := h.config()
			if tc.confirmer != nil {
				cfg.Confirmer = tc.confirmer
			}
			res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
			if tc.confirmer != nil {
				if tc.confirmer.asked != 1 || tc.confirmer.explanation != "This accepts the terms." || !strings.HasPrefix(tc.confirmer.action, "click_at ") {
					t.Errorf("confirmer asked %d times with %q / %q", tc.confirmer.asked, tc.confirmer.explanation, tc.confirmer.action)
				}
			}
			if !tc.wantOK {
				if res.Reason != agent.ReasonSafetyDenied || len(c.Ops()) != 0 || h.srv.Calls() != 1 {
					t.Fatalf("result = %s, ops %q, %d calls; want safety_denied and nothing executed", res.FailureText(), c.Ops(), h.srv.Calls())
				}
				if tc.confirmer != nil && tc.confirmer.err != nil && !errors.Is(res.Err, refused) {
					t.Errorf("err = %v, want it to wrap the confirmer's error", res.Err)
				}
				return
			}
			if !res.OK() || !slices.Equal(c.Ops(), []string{"click 10,20 left x1"}) {
				t.Fatalf("result = %s, ops %q", res.FailureText(), c.Ops())
			}
			if r := responsesOf(t, h.srv.Requests(), 1)[0]; r.Response["safety_acknowledgement"] != "true" {
				t.Errorf("response = %+v, want safety_acknowledgement \"true\"", r.Response)
			}
		})
	}
	t.Run("no acknowledgement without a decision", func(t *testing.T) {
		h := newHarness(t, gemini.Sequence(calls(call("click_at", map[string]any{"x": 1, "y": 1})), report("ok")))
		conf := &fakeConfirmer{ok: true}
		cfg := h.config()
		cfg.Confirmer = conf
		res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
		if !res.OK() || conf.asked != 0 {
			t.Fatalf("result %s, asked %d", res.FailureText(), conf.asked)
		}
		if r := responsesOf(t, h.srv.Requests(), 1)[0]; r.Response["safety_acknowledgement"] != nil {
			t.Errorf("acknowledged automatically: %+v", r.Response)
		}
	})
}

func TestRunDetectsLoops(t *testing.T) {
	same := func(*gemini.Request) gemini.Reply { return calls(call("click_at", map[string]any{"x": 40, "y": 40})) }
	t.Run("unchanged screen", func(t *testing.T) {
		h := newHarness(t, same)
		c := newFakeComputer()
		c.static = true
		res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
		if res.Reason != agent.ReasonStuck || res.Turns != 8 {
			t.Fatalf("result = %s after %d turns, want stuck after 8", res.FailureText(), res.Turns)
		}
		for _, r := range h.srv.Requests() {
			if r.Turn() == 1 {
				continue
			}
			warned := r.FunctionResponses()[0].Response["warning"] != nil
			// The response to the 4th…7th identical turn carries the nudge.
			if want := r.Turn()-1 >= 4; warned != want {
				t.Errorf("turn %d request: nudge = %t, want %t", r.Turn(), warned, want)
			}
		}
	})
	t.Run("new wording, same action", func(t *testing.T) {
		// A newer model rephrases its intent on every turn; the action is
		// the same and the screen does not change: still stuck.
		reworded := func(req *gemini.Request) gemini.Reply {
			return calls(call("click", map[string]any{"x": 40, "y": 40,
				"intent": fmt.Sprintf("Attempt %d: click the Add button to put the milk in the cart", req.Turn())}))
		}
		h := newHarness(t, reworded)
		c := newFakeComputer()
		c.static = true
		res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
		if res.Reason != agent.ReasonStuck || res.Turns != 8 {
			t.Fatalf("result = %s after %d turns, want stuck after 8", res.FailureText(), res.Turns)
		}
	})
	t.Run("a different action is not a repeat", func(t *testing.T) {
		moving := func(req *gemini.Request) gemini.Reply {
			return calls(call("click", map[string]any{"x": req.Turn() % 2, "y": 40, "intent": "same words"}))
		}
		h := newHarness(t, moving)
		c := newFakeComputer()
		c.static = true
		cfg := h.config()
		cfg.MaxTurns = 10
		res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
		if res.Reason != agent.ReasonMaxTurns {
			t.Fatalf("result = %s after %d turns, want max_turns_exceeded", res.FailureText(), res.Turns)
		}
	})
	t.Run("screen changes", func(t *testing.T) {
		h := newHarness(t, same)
		cfg := h.config()
		cfg.MaxTurns = 10
		res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
		if res.Reason != agent.ReasonMaxTurns || res.Turns != 10 {
			t.Fatalf("result = %s after %d turns, want max_turns_exceeded after 10", res.FailureText(), res.Turns)
		}
		for _, r := range h.srv.Requests() {
			for _, fr := range r.FunctionResponses() {
				if fr.Response["warning"] != nil {
					t.Errorf("turn %d: nudged although the screen changed", r.Turn())
				}
			}
		}
	})
}

func TestRunSumsUsage(t *testing.T) {
	usage := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1000, CandidatesTokenCount: 40, ThoughtsTokenCount: 10, TotalTokenCount: 1050}
	h := newHarness(t, func(req *gemini.Request) gemini.Reply {
		r := walk(3)(req)
		r.Usage = usage
		return r
	})
	h.srv.Inject(gemini.FaultMalformed) // a malformed reply costs tokens too
	cfg := h.config()
	cfg.Price = &agent.Price{Input: 0.5, Output: 4}
	res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	// 3 scripted replies with the given usage; the malformed one has the
	// fake's estimate, so compare against the estimate separately.
	reqs := h.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	u := res.Usage
	if u.OutputTokens != 3*50+1 || u.PromptTokens < 3*1000 || u.TotalTokens != u.PromptTokens+u.OutputTokens {
		t.Errorf("usage = %+v", u)
	}
	wantCost := float64(u.PromptTokens)*0.5/1e6 + float64(u.OutputTokens)*4/1e6
	if diff := u.CostUSD - wantCost; diff > 1e-12 || diff < -1e-12 {
		t.Errorf("cost = %v, want %v", u.CostUSD, wantCost)
	}
}

func TestRunEndsWithoutAFunctionCall(t *testing.T) {
	h := newHarness(t, gemini.Sequence(gemini.Reply{Text: "I think I am done."}))
	res := agent.Run(context.Background(), h.config(), "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if res.Reason != agent.ReasonNoReport || !strings.Contains(res.FailureText(), "I think I am done.") {
		t.Fatalf("result = %s", res.FailureText())
	}
}

func TestRunToolEndFlag(t *testing.T) {
	end := agent.Tool{Name: "give_up", Handler: func(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
		return agent.ToolOutput{End: true, Payload: 42}, nil
	}}
	h := newHarness(t, gemini.Sequence(calls(call("give_up", nil), call("click_at", map[string]any{"x": 1, "y": 1}))))
	c := newFakeComputer()
	res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{end})
	if !res.OK() || res.Tool != "give_up" || res.Payload != 42 || len(c.Ops()) != 0 {
		t.Fatalf("result = %+v, ops %q; want the run to end at give_up before the click", res, c.Ops())
	}
}

func TestRunCancellationStopsPromptly(t *testing.T) {
	h := newHarness(t, gemini.Sequence(calls(call("wait", map[string]any{"seconds": 60}))))
	c := newFakeComputer()
	c.waitStarted = make(chan struct{})
	c.blockWait = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan agent.Result, 1)
	go func() { done <- agent.Run(ctx, h.config(), "goal", c, nil) }()
	select {
	case <-c.waitStarted:
	case <-time.After(30 * time.Second):
		t.Fatal("the wait action never started")
	}
	cancel()
	select {
	case res := <-done:
		if res.Reason != agent.ReasonCancelled || !errors.Is(res.Err, context.Canceled) {
			t.Fatalf("result = %s, want cancelled", res.FailureText())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
}

func TestRunMaxTurns(t *testing.T) {
	h := newHarness(t, walk(100))
	cfg := h.config()
	cfg.MaxTurns = 3
	res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if res.Reason != agent.ReasonMaxTurns || res.Turns != 3 || h.srv.Calls() != 3 {
		t.Fatalf("result = %s, %d turns, %d calls", res.FailureText(), res.Turns, h.srv.Calls())
	}
}

func TestRunWritesTrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "trace")
	h := newHarness(t, walk(2))
	cfg := h.config()
	cfg.TraceDir = dir
	res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	for _, f := range []string{"turn-000.json", "turn-000.png", "turn-001.json", "turn-001.png", "turn-002.json", "result.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("trace file: %v", err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "turn-001.json"))
	if err != nil || !strings.Contains(string(b), `"click_at"`) || !strings.Contains(string(b), `"url"`) {
		t.Errorf("turn trace = %s (%v)", b, err)
	}
}

type countingLimiter struct{ held, max, total atomic.Int64 }

func (l *countingLimiter) Acquire(ctx context.Context, n int64) error {
	h := l.held.Add(n)
	l.total.Add(n)
	for {
		m := l.max.Load()
		if h <= m || l.max.CompareAndSwap(m, h) {
			return nil
		}
	}
}
func (l *countingLimiter) Release(n int64) { l.held.Add(-n) }

func TestRunHoldsTheLimiterAroundModelCalls(t *testing.T) {
	h := newHarness(t, walk(3))
	h.srv.Inject(gemini.FaultRateLimit)
	lim := &countingLimiter{}
	cfg := h.config()
	cfg.Limiter = lim
	res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	if lim.total.Load() != 4 || lim.held.Load() != 0 || lim.max.Load() != 1 {
		t.Errorf("limiter total %d held %d max %d; want 4 acquisitions, all released", lim.total.Load(), lim.held.Load(), lim.max.Load())
	}
}

func TestRunRejectsInvalidConfiguration(t *testing.T) {
	h := newHarness(t, walk(1))
	cases := []struct {
		name  string
		cfg   func() agent.Config
		tools []agent.Tool
	}{
		{"no client", func() agent.Config { return agent.Config{} }, nil},
		{"tool without handler", h.config, []agent.Tool{{Name: "x"}}},
		{"duplicate tool", h.config, []agent.Tool{reportTool(), reportTool()}},
		{"shadows predefined", h.config, []agent.Tool{{Name: "click_at", Handler: reportTool().Handler}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := agent.Run(context.Background(), tc.cfg(), "goal", newFakeComputer(), tc.tools)
			if res.OK() || res.Err == nil {
				t.Fatalf("result = %+v, want a failure", res)
			}
		})
	}
	if h.srv.Calls() != 0 {
		t.Errorf("%d model calls with an invalid configuration", h.srv.Calls())
	}
}
