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

type traceTurn struct {
	Turn         int         `json:"turn"`
	Started      time.Time   `json:"started"`
	ModelMillis  int64       `json:"model_ms"`
	Attempts     int         `json:"attempts"`
	FinishReason string      `json:"finish_reason,omitempty"`
	Text         []string    `json:"text,omitempty"`
	Calls        []traceCall `json:"calls,omitempty"`
	URL          string      `json:"url,omitempty"`
	Screenshot   string      `json:"screenshot,omitempty"`
	Nudged       bool        `json:"nudged,omitempty"`
}

type traceCall struct {
	Name     string         `json:"name"`
	Args     map[string]any `json:"args,omitempty"`
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

func (t *tracer) turn(tt traceTurn, shot []byte) {
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
