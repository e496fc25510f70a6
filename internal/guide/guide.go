// Package guide is "Show me": the planner–grounder loop of
// shared/reference/planner-grounder-loop.md. Given the person's goal and a
// tab's screen, the planner returns ONE next task and the running task
// description (current_task, task_description, task_history,
// is_task_completed); the grounder returns that task's box on the screen
// (0–1000 coordinates). The guide never clicks: the person does, and asks
// for the next step on the new screen.
//
// Offline, the scripted planner reads the page's interactive elements
// (their roles, labels and boxes, as the accessibility tree gives them)
// and grounds the task on the element it chose.
package guide

import (
	"context"
	"fmt"
	"sync"
)

// Tab is the screen the guide reads (a take-over tab).
type Tab interface {
	Evaluate(ctx context.Context, script string, arg any) (any, error)
	Size() (width, height int)
}

// State is the loop's state for one tab and goal (the design's names).
type State struct {
	Goal            string   `json:"goal"`
	CurrentTask     string   `json:"current_task"`
	TaskDescription string   `json:"task_description"`
	TaskHistory     []string `json:"task_history"`
	IsTaskCompleted bool     `json:"is_task_completed"`
}

// Step is one answer: the task, the running description, the task's box
// in 0–1000 screen coordinates [x0,y0,x1,y1] (nil when there is nothing to
// point at) and whether the goal is reached.
type Step struct {
	Task        string `json:"task"`
	Description string `json:"description"`
	Box         []int  `json:"box"`
	Done        bool   `json:"done"`
}

// Guide keeps one State per tab.
type Guide struct {
	mu     sync.Mutex
	states map[string]*State
}

// New returns an offline (scripted) guide.
func New() *Guide { return &Guide{states: map[string]*State{}} }

// Next plans and grounds the next step of goal on tab (keyed by id). A new
// goal starts a new task history.
func (g *Guide) Next(ctx context.Context, id string, tab Tab, goal string) (Step, error) {
	g.mu.Lock()
	st := g.states[id]
	if st == nil || st.Goal != goal {
		st = &State{Goal: goal}
		g.states[id] = st
	}
	cur := *st
	cur.TaskHistory = append([]string(nil), st.TaskHistory...)
	g.mu.Unlock()

	els, err := readElements(ctx, tab)
	if err != nil {
		return Step{}, fmt.Errorf("guide: reading the page: %w", err)
	}
	step, target := plan(&cur, els)
	if target != nil {
		w, h := tab.Size()
		step.Box = target.box(w, h)
	}
	if cur.CurrentTask != "" && cur.CurrentTask != step.Task {
		cur.TaskHistory = append(cur.TaskHistory, cur.CurrentTask)
	}
	cur.CurrentTask, cur.TaskDescription, cur.IsTaskCompleted = step.Task, step.Description, step.Done
	g.mu.Lock()
	g.states[id] = &cur
	g.mu.Unlock()
	return step, nil
}

// Forget drops a tab's state (the tab was handed back).
func (g *Guide) Forget(id string) {
	g.mu.Lock()
	delete(g.states, id)
	g.mu.Unlock()
}

// element is one visible interactive element or marker of the page.
type element struct {
	Kind    string  `json:"kind"` // input | checkbox | button | link | code | signedin
	Label   string  `json:"label"`
	Auto    string  `json:"auto"` // autocomplete
	Type    string  `json:"type"`
	Filled  bool    `json:"filled"`
	Checked bool    `json:"checked"`
	X       float64 `json:"x"`
	Y       float64 `json:"y"`
	W       float64 `json:"w"`
	H       float64 `json:"h"`
}

func (e *element) box(w, h int) []int {
	if w <= 0 || h <= 0 {
		return nil
	}
	c := func(v float64, n int) int { return max(0, min(999, int(v*1000/float64(n)))) }
	return []int{c(e.X, w), c(e.Y, h), c(e.X+e.W, w), c(e.Y+e.H, h)}
}

// readScript lists the page's visible interactive elements with their
// accessible labels and boxes, and a shown one-time code (an inbox).
const readScript = `() => {
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden' && r.bottom > 0 && r.top < innerHeight; };
  const label = e => (e.getAttribute('aria-label') || (e.labels && e.labels[0] && e.labels[0].innerText) || e.innerText || e.value || e.placeholder || '').trim().slice(0, 80);
  const out = [];
  const add = (e, kind, extra) => { const r = e.getBoundingClientRect(); out.push(Object.assign({kind, label: label(e), x: r.left, y: r.top, w: r.width, h: r.height}, extra || {})); };
  for (const e of document.querySelectorAll('#authenticatedButton, .authenticatedButton')) if (shown(e)) add(e, 'signedin');
  for (const e of document.querySelectorAll('input, textarea, select, button, a[href], [role=button], [role=checkbox]')) {
    if (!shown(e)) continue;
    const t = (e.type || '').toLowerCase();
    if (e.tagName === 'INPUT' && t === 'checkbox') add(e, 'checkbox', {checked: e.checked});
    else if (e.tagName === 'INPUT' && (t === 'submit' || t === 'button')) add(e, 'button');
    else if (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA') add(e, 'input', {type: t, auto: (e.autocomplete || '').toLowerCase(), filled: e.value !== ''});
    else if (e.tagName === 'BUTTON' || e.getAttribute('role') === 'button') add(e, 'button');
    else if (e.tagName === 'A') add(e, 'link');
  }
  for (const e of document.querySelectorAll('strong, b, code, span, p')) {
    if (!shown(e) || e.children.length) continue;
    const m = (e.innerText || '').trim().match(/^\d{6}$/);
    if (m) add(e, 'code', {label: m[0]});
  }
  return JSON.stringify(out);
}`
