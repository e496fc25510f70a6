package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

// A person watching a run (the panel) sees the first screen, then every
// turn in words with the screen after it; the trace read back says the
// same, with each turn's tokens.
func TestRunIsObservedAndItsTraceReadsBack(t *testing.T) {
	usage := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 1000, CandidatesTokenCount: 40, TotalTokenCount: 1040}
	h := newHarness(t, func(req *gemini.Request) gemini.Reply {
		var r gemini.Reply
		switch len(req.Contents) {
		case 1:
			r = gemini.Reply{Text: "Searching.", Calls: []*genai.FunctionCall{
				call("type_text_at", map[string]any{"x": 100.0, "y": 50.0, "text": "milk", "press_enter": true})}}
		case 3:
			r = gemini.Reply{Calls: []*genai.FunctionCall{call("click_at", map[string]any{"x": 412.0, "y": 310.0}), call("scroll_document", map[string]any{"direction": "down"})}}
		default:
			r = report("added")
		}
		r.Usage = usage
		return r
	})
	var seen []agent.Observation
	cfg := h.config()
	cfg.TraceDir = filepath.Join(t.TempDir(), "trace")
	cfg.Observe = func(o agent.Observation) { seen = append(seen, o) }
	res := agent.Run(context.Background(), cfg, "Buy milk.", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	if len(seen) != 4 {
		t.Fatalf("%d observations, want the start and 3 turns: %+v", len(seen), seen)
	}
	want := []string{"", `typed “milk” and pressed Enter`, "clicked at (412, 310), scrolled down", "report done"}
	for i, o := range seen {
		if o.Turn != i || strings.Join(o.Actions, ", ") != want[i] {
			t.Errorf("observation %d: turn %d, actions %q; want turn %d, %q", i, o.Turn, o.Actions, i, want[i])
		}
		if acted := i == 0 || i == 1 || i == 2; acted != (len(o.Screenshot) > 0) {
			t.Errorf("observation %d: screenshot %d bytes", i, len(o.Screenshot))
		}
	}
	if seen[1].Text[0] != "Searching." {
		t.Errorf("the model's words: %q", seen[1].Text)
	}

	tr, err := agent.ReadTrace(cfg.TraceDir)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Goal != "Buy milk." || tr.Screenshot != "turn-000.png" || len(tr.Turns) != 3 || tr.Result == nil {
		t.Fatalf("trace %+v", tr)
	}
	if tt := tr.Turns[1]; tt.Screenshot != "turn-002.png" || len(tt.Calls) != 2 || tt.Calls[0].Name != "click_at" || tt.PromptTokens < 1000 || tt.OutputTokens != 40 {
		t.Errorf("turn 2 = %+v", tt)
	}
	if r := tr.Result; r.Tool != "report_done" || r.Turns != 3 || r.Usage.OutputTokens != 120 {
		t.Errorf("result = %+v", r)
	}
	if _, err := agent.ReadTrace(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing trace read without error")
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"click_at", map[string]any{"x": 1.4, "y": 2.6}, "clicked at (1, 3)"},
		{"click_at", map[string]any{"x": "bad"}, "clicked"},
		{"type_text_at", map[string]any{"text": "2% milk"}, "typed “2% milk”"},
		{"type_text_at", map[string]any{"text": strings.Repeat("é", 200)}, "typed “" + strings.Repeat("é", 80) + "…”"},
		{"key_combination", map[string]any{"keys": "Control+A"}, "pressed Control+A"},
		{"hotkey", map[string]any{"keys": []any{"ctrl", "a"}}, "pressed ctrl+a"},
		{"navigate", map[string]any{"url": "https://www.metro.ca/"}, "went to https://www.metro.ca/"},
		{"scroll_at", map[string]any{"direction": "up"}, "scrolled up"},
		{"wait_5_seconds", nil, "waited"},
		{"go_back", nil, "went back"},
		{"present_options", map[string]any{"options": []any{}}, "present options"},
	} {
		if got := agent.Describe(tc.name, tc.args); got != tc.want {
			t.Errorf("Describe(%s, %v) = %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}

// With a requests-per-minute quota the watcher hears that the next turn
// waits for it, and about how long, before it waits (the panel shows it
// on the item's card); every observation of a turn carries its calls as
// data besides the words.
func TestQuotaWaitIsObserved(t *testing.T) {
	clock := gemini.NewFastClock(quotaSpeed)
	h := newHarnessWith(t, gemini.Config{Now: clock.Now, Script: walk(2)})
	cfg := h.config()
	cfg.Limiter = agent.NewQuota(1, 0, clock)
	var seen []agent.Observation
	cfg.Observe = func(o agent.Observation) { seen = append(seen, o) }
	res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	waits, calls := 0, 0
	for _, o := range seen {
		if o.QuotaWait > 0 {
			waits++
			if o.QuotaWait > agent.QuotaWindow || len(o.Screenshot) > 0 || len(o.Actions) > 0 {
				t.Errorf("a quota wait observation: %+v", o)
			}
		}
		if len(o.Calls) != len(o.Actions) {
			t.Errorf("turn %d: %d calls for %d actions", o.Turn, len(o.Calls), len(o.Actions))
		}
		calls += len(o.Calls)
	}
	if waits == 0 || calls == 0 {
		t.Fatalf("%d quota waits and %d calls observed in %d observations, want both", waits, calls, len(seen))
	}
	if d := agent.NewQuota(1, 0, clock).Wait(); d != 0 {
		t.Errorf("a fresh quota says a wait of %s", d)
	}
}

// namingComputer says what is at a point, and has a page text, like a
// browser tab.
type namingComputer struct {
	*fakeComputer
}

func (n namingComputer) ElementAt(_ context.Context, p agent.Point) (string, error) {
	return fmt.Sprintf("Add to cart at %d,%d", p.X, p.Y), nil
}

func (n namingComputer) DescribePage(context.Context) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return fmt.Sprintf("- document \"page %d\"\n", n.version), nil
}

// A click is named by what was under it (the trace and the panel say
// "clicked “Add to cart”"), and with DescribePage the page's text rides
// with the screenshot — the latest one only, never in the trace.
func TestTheTraceNamesWhatWasClickedAndThePageTextTravels(t *testing.T) {
	h := newHarness(t, func(req *gemini.Request) gemini.Reply {
		switch len(req.Contents) {
		case 1, 3:
			return calls(call("click_at", map[string]any{"x": 412.0, "y": 310.0}))
		default:
			return report("added")
		}
	})
	var seen []agent.Observation
	cfg := h.config()
	cfg.DescribePage = true
	cfg.Observe = func(o agent.Observation) { seen = append(seen, o) }
	res := agent.Run(context.Background(), cfg, "Buy milk.", namingComputer{newFakeComputer()}, []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	if len(seen) < 2 || len(seen[1].Calls) != 1 || seen[1].Calls[0].Target != "Add to cart at 412,310" {
		t.Fatalf("observed calls: %+v", seen)
	}
	if _, ok := seen[1].Calls[0].Response[agent.PageTreeKey]; ok {
		t.Error("the page text is in the observed (traced) response")
	}
	reqs := h.srv.Requests()
	last := reqs[len(reqs)-1]
	trees := 0
	for _, fr := range last.AllFunctionResponses() {
		if _, ok := fr.Response[agent.PageTreeKey]; ok {
			trees++
		}
	}
	first := last.Contents[0].Parts[len(last.Contents[0].Parts)-1].Text
	if trees != 1 || !strings.HasPrefix(first, agent.PageTreeIntro) || strings.Contains(first, "- document") {
		t.Errorf("the last request carries %d page texts in responses and a first one %q; want only the latest", trees, first)
	}
	if !strings.HasPrefix(reqs[0].Contents[0].Parts[len(reqs[0].Contents[0].Parts)-1].Text, agent.PageTreeIntro+"- document") {
		t.Errorf("the first request has no page text: %+v", reqs[0].Contents[0].Parts)
	}
}
