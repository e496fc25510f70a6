package agent_test

import (
	"context"
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
