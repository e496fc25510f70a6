package agent

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Observation is one moment of a run as a person watching it sees it: the
// screen after the agent's turn and what the agent did in it. Config.Observe
// gets one when the run starts (Turn 0: the first screenshot) and one after
// every turn.
type Observation struct {
	// Turn is the model turn just done; 0 is the start.
	Turn int
	// Actions are the turn's calls in words ("clicked at (412, 310)");
	// Calls the same calls as data (name and arguments), for a page that
	// says them in its own language.
	Actions []string
	Calls   []TraceCall
	// Text is what the model said in the turn (not its thoughts).
	Text []string
	// URL is the tab's address after the turn.
	URL string
	// Screenshot is the screen after the turn as the Computer returned it
	// (PNG or JPEG); nil when the turn did not act on the browser. It is
	// the run's own buffer: read it, never change it.
	Screenshot []byte
	// QuotaWait, when set, is the only news: the agent is about to wait
	// about this long for the model's quota (requests per minute, or a
	// 429's pause) before its next turn.
	QuotaWait time.Duration
}

// Observer receives a run's observations, on the run's goroutine: it must
// return at once (keep what it needs, convert elsewhere).
type Observer func(Observation)

// Describe says a call of the model in words, for people watching a run:
// "typed “milk” and pressed Enter", "went to https://…". Unknown calls
// (the orchestrator's tools) read as their name.
func Describe(name string, args map[string]any) string {
	at := func() string {
		x, xok := args["x"].(float64)
		y, yok := args["y"].(float64)
		if !xok || !yok {
			return ""
		}
		return fmt.Sprintf(" at (%.0f, %.0f)", x, y)
	}
	str := func(k string) string {
		s, _ := args[k].(string)
		return shorten(s, 80)
	}
	switch name {
	case "open_web_browser":
		return "opened the browser"
	case "click_at", "click":
		return "clicked" + at()
	case "double_click":
		return "double-clicked" + at()
	case "triple_click":
		return "triple-clicked" + at()
	case "middle_click":
		return "middle-clicked" + at()
	case "right_click":
		return "right-clicked" + at()
	case "hover_at", "move":
		return "pointed" + at()
	case "mouse_down":
		return "pressed the mouse button" + at()
	case "mouse_up":
		return "released the mouse button" + at()
	case "type_text_at", "type":
		s := fmt.Sprintf("typed “%s”", str("text"))
		if enter, _ := args["press_enter"].(bool); enter {
			s += " and pressed Enter"
		}
		return s
	case "key_combination", "press_key", "hotkey", "key_down", "key_up":
		keys := str("keys")
		if keys == "" {
			keys = str("key")
		}
		if l, ok := args["keys"].([]any); ok {
			parts := make([]string, 0, len(l))
			for _, k := range l {
				parts = append(parts, fmt.Sprint(k))
			}
			keys = shorten(strings.Join(parts, "+"), 80)
		}
		return "pressed " + keys
	case "scroll_document", "scroll_at", "scroll":
		if d := str("direction"); d != "" {
			return "scrolled " + d
		}
		return "scrolled"
	case "go_back":
		return "went back"
	case "go_forward":
		return "went forward"
	case "search":
		return "went to the search page"
	case "navigate":
		return "went to " + str("url")
	case "drag_and_drop":
		return "dragged and dropped"
	case "wait", "wait_5_seconds":
		return "waited"
	case "take_screenshot":
		return "looked at the screen"
	}
	return strings.ReplaceAll(name, "_", " ")
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// observe tells the Observer, if any, about the turn just done.
func (r *run) observe(tt TraceTurn, shot []byte) {
	if r.cfg.Observe == nil {
		return
	}
	o := Observation{Turn: tt.Turn, Text: tt.Text, URL: r.c.URL(), Screenshot: shot}
	for _, c := range tt.Calls {
		o.Actions = append(o.Actions, Describe(c.Name, c.Args))
		o.Calls = append(o.Calls, TraceCall{Name: c.Name, Args: c.Args, Target: c.Target})
	}
	r.cfg.Observe(o)
}

// quotaWaiter is a Limiter that can say how long a call would wait now
// (*Quota).
type quotaWaiter interface{ Wait() time.Duration }

// observeQuotaWait tells the Observer, if any, that the next model call
// waits for the quota (at least a second), before it waits.
func (r *run) observeQuotaWait() {
	q, ok := r.cfg.Limiter.(quotaWaiter)
	if r.cfg.Observe == nil || !ok {
		return
	}
	if d := q.Wait(); d >= time.Second {
		r.cfg.Observe(Observation{Turn: r.turns, URL: r.c.URL(), QuotaWait: d})
	}
}
