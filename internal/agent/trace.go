package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// tracer writes a run's trace: turn-000.json/png for the start, one JSON file
// (and screenshot) per turn, and result.json. A nil tracer does nothing.
// Write failures are logged once and stop the trace; they never fail the run.
type tracer struct {
	dir    string
	log    *slog.Logger
	made   bool
	broken bool
}

// TraceTurn is one turn of a trace (turn-NNN.json): the model call, what
// the model said, its calls with their answers, the screen after them.
type TraceTurn struct {
	Turn        int       `json:"turn"`
	Started     time.Time `json:"started"`
	ModelMillis int64     `json:"model_ms"`
	Attempts    int       `json:"attempts"`
	// PromptTokens and OutputTokens are the turn's model use (every attempt).
	PromptTokens int64       `json:"prompt_tokens,omitempty"`
	OutputTokens int64       `json:"output_tokens,omitempty"`
	FinishReason string      `json:"finish_reason,omitempty"`
	Text         []string    `json:"text,omitempty"`
	Calls        []TraceCall `json:"calls,omitempty"`
	URL          string      `json:"url,omitempty"`
	Screenshot   string      `json:"screenshot,omitempty"`
	Nudged       bool        `json:"nudged,omitempty"`
}

// TraceCall is one call of a turn, with its answer and how long it took.
type TraceCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args,omitempty"`
	// Target is what was at the action's point before it ran (a button's
	// or link's text), when the Computer can say (ElementNamer).
	Target   string         `json:"target,omitempty"`
	Response map[string]any `json:"response,omitempty"`
	Millis   int64          `json:"ms"`
}

func newTracer(dir string, log *slog.Logger) *tracer {
	if dir == "" {
		return nil
	}
	return &tracer{dir: dir, log: log}
}

func (t *tracer) start(goal, url string, shot []byte) {
	if t == nil {
		return
	}
	t.write("turn-000.png", shot)
	t.json("turn-000.json", map[string]any{"goal": goal, "url": url, "screenshot": "turn-000.png", "started": time.Now()})
}

func (t *tracer) turn(tt TraceTurn, shot []byte) {
	if t == nil {
		return
	}
	if len(shot) > 0 {
		tt.Screenshot = fmt.Sprintf("turn-%03d.png", tt.Turn)
		t.write(tt.Screenshot, shot)
	}
	t.json(fmt.Sprintf("turn-%03d.json", tt.Turn), tt)
}

func (t *tracer) result(res Result) {
	if t == nil {
		return
	}
	errText := ""
	if res.Err != nil {
		errText = res.Err.Error()
	}
	t.json("result.json", map[string]any{
		"tool": res.Tool, "args": res.Args, "reason": res.Reason, "error": errText,
		"turns": res.Turns, "usage": res.Usage, "duration_ms": res.Duration.Milliseconds(),
	})
}

func (t *tracer) json(name string, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.fail(fmt.Errorf("encode %s: %w", name, err))
		return
	}
	t.write(name, b)
}

func (t *tracer) write(name string, b []byte) {
	if t.broken {
		return
	}
	if !t.made {
		if err := os.MkdirAll(t.dir, 0o750); err != nil {
			t.fail(err)
			return
		}
		t.made = true
	}
	if err := os.WriteFile(filepath.Join(t.dir, name), b, 0o640); err != nil {
		t.fail(err)
	}
}

func (t *tracer) fail(err error) {
	if !t.broken {
		t.log.Warn("agent trace disabled: cannot write the trace directory; check trace_dir", "dir", t.dir, "err", err)
	}
	t.broken = true
}

// Trace is a run's trace as ReadTrace reads it back from its directory.
type Trace struct {
	Goal    string    `json:"goal"`
	URL     string    `json:"url,omitempty"`
	Started time.Time `json:"started"`
	// Screenshot is the first screen's file in the directory.
	Screenshot string      `json:"screenshot,omitempty"`
	Turns      []TraceTurn `json:"turns"`
	// Result is the run's end; nil when the run did not end (killed).
	Result *TraceResult `json:"result,omitempty"`
}

// TraceResult is result.json: how the run ended.
type TraceResult struct {
	Tool       string `json:"tool,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"`
	Turns      int    `json:"turns"`
	Usage      Usage  `json:"usage"`
	DurationMS int64  `json:"duration_ms"`
}

// ReadTrace reads the trace a run with Config.TraceDir = dir wrote: the
// start, every turn in order, the result. A turn file that cannot be read
// ends the turns there (a run killed while writing it).
func ReadTrace(dir string) (Trace, error) {
	var tr Trace
	b, err := os.ReadFile(filepath.Join(dir, "turn-000.json"))
	if err != nil {
		return Trace{}, fmt.Errorf("read the trace in %s: %w", dir, err)
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		return Trace{}, fmt.Errorf("read the trace in %s: turn-000.json: %w", dir, err)
	}
	tr.Turns = []TraceTurn{}
	for n := 1; ; n++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("turn-%03d.json", n)))
		if err != nil {
			break
		}
		var tt TraceTurn
		if json.Unmarshal(b, &tt) != nil {
			break
		}
		tr.Turns = append(tr.Turns, tt)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "result.json")); err == nil {
		var res TraceResult
		if json.Unmarshal(b, &res) == nil {
			tr.Result = &res
		}
	}
	return tr, nil
}
