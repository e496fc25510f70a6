// Package guide is "Show me": the planner–grounder loop that tells a person,
// one step at a time, what to do on a tab they have taken over. For a goal
// ("sign in") the planner reads the page and the running task description
// and returns one task and the updated description (current_task,
// task_description, task_history, is_task_completed); the grounder finds
// that task's box on the screen (0–999 coordinates). The guide never
// clicks: the person does, and asks again on the new screen.
//
// Offline, the Scripted planner reads the page's elements (an
// accessibility-tree-like reading of the tab) and grounds its task itself.
package guide

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gemini-supply/gemini-supply/internal/report"
)

// Element is one visible element of the page, as the tab's reader gives
// it: never a field's value, only whether it has one.
type Element struct {
	Tag, Type, ID, Label, Autocomplete string
	Checked, Filled                    bool
	Box                                [4]int // x0, y0, x1, y1 in 0–999
}

// Page is what the planner sees of the tab.
type Page struct {
	URL        string
	SignedIn   bool   // the store shows the shopper signed in
	Text       string // the page's visible text (bounded)
	Elements   []Element
	Screenshot []byte // JPEG, for a model planner and grounder
}

// State is the loop's state, as the design names it.
type State struct {
	Goal            string   `json:"user_query"`
	CurrentTask     string   `json:"current_task"`
	TaskDescription string   `json:"task_description"`
	TaskHistory     []string `json:"task_history"`
	IsTaskCompleted bool     `json:"is_task_completed"`
}

// Plan is a planner's answer: one task, the updated description, whether
// the goal is complete, and the task's box when the planner knows it
// (the scripted one); otherwise the grounder finds it.
type Plan struct {
	Task, Description string
	Done              bool
	Box               *[4]int
}

// Planner chooses the next task.
type Planner interface {
	Plan(ctx context.Context, st State, p Page) (Plan, error)
}

// Grounder finds a task's box on the screenshot (0–999 coordinates).
type Grounder interface {
	Ground(ctx context.Context, task string, screenshot []byte) ([4]int, error)
}

// Step is one answer of /api/guide.
type Step struct {
	Task        string `json:"task"`
	Description string `json:"description"`
	Box         [4]int `json:"box"`
	Done        bool   `json:"done"`
}

// Guide keeps one loop per tab.
type Guide struct {
	Planner  Planner
	Grounder Grounder // nil: only plans with a box are answered

	mu     sync.Mutex
	states map[string]*State
}

// ErrNoBox means the planner gave a task without a box and there is no
// grounder to find it.
var ErrNoBox = errors.New("guide: the task has no box and no grounder finds one")

// Next runs one turn of the loop for tab: a new goal starts a new state.
func (g *Guide) Next(ctx context.Context, tab, goal string, p Page) (Step, State, error) {
	goal = strings.TrimSpace(goal)
	g.mu.Lock()
	if g.states == nil {
		g.states = map[string]*State{}
	}
	st := g.states[tab]
	if st == nil || st.Goal != goal {
		st = &State{Goal: goal}
		g.states[tab] = st
	}
	cur := *st
	g.mu.Unlock()

	plan, err := g.Planner.Plan(ctx, cur, p)
	if err != nil {
		return Step{}, cur, fmt.Errorf("guide: planning: %w", err)
	}
	step := Step{Task: plan.Task, Description: plan.Description, Done: plan.Done}
	if !plan.Done {
		switch {
		case plan.Box != nil:
			step.Box = *plan.Box
		case g.Grounder != nil:
			b, err := g.Grounder.Ground(ctx, plan.Task, p.Screenshot)
			if err != nil {
				return Step{}, cur, fmt.Errorf("guide: grounding %q: %w", plan.Task, err)
			}
			step.Box = b
		default:
			return Step{}, cur, ErrNoBox
		}
	}
	g.mu.Lock()
	if st.CurrentTask != "" {
		st.TaskHistory = append(st.TaskHistory, st.CurrentTask)
	}
	st.CurrentTask, st.TaskDescription, st.IsTaskCompleted = plan.Task, plan.Description, plan.Done
	out := *st
	out.TaskHistory = append([]string(nil), st.TaskHistory...)
	g.mu.Unlock()
	return step, out, nil
}

// Forget drops tab's loop (the tab was handed back).
func (g *Guide) Forget(tab string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.states, tab)
}

// TakeUsage returns the model use of the planner and the grounder since
// the last TakeUsage (zero for the scripted planner, which calls no
// model), for the run whose tab was guided to count.
func (g *Guide) TakeUsage() report.Usage {
	var u report.Usage
	seen := map[usageTaker]bool{}
	for _, x := range []any{g.Planner, g.Grounder} {
		t, ok := x.(usageTaker)
		if !ok || seen[t] {
			continue
		}
		seen[t] = true
		u = u.Add(t.TakeUsage())
	}
	return u
}

type usageTaker interface{ TakeUsage() report.Usage }
