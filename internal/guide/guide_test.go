package guide

import (
	"context"
	"errors"
	"strings"
	"testing"
)

var (
	inboxLink = Element{Tag: "a", Label: "Open your inbox", Box: [4]int{500, 350, 580, 370}}
	robot     = Element{Tag: "input", Type: "checkbox", Label: "I'm not a robot", Box: [4]int{370, 290, 380, 310}}
	codeField = Element{Tag: "input", Type: "text", Label: "Code", Autocomplete: "one-time-code", Box: [4]int{350, 440, 640, 490}}
	verify    = Element{Tag: "button", Type: "submit", Label: "Verify", Box: [4]int{350, 530, 640, 580}}
	inboxBack = Element{Tag: "a", Label: "Back to sign-in", Box: [4]int{30, 200, 140, 240}}
	challenge = func(checked, filled bool) Page {
		r, c := robot, codeField
		r.Checked, c.Filled = checked, filled
		return Page{URL: "https://auth.moiid.ca/x", Elements: []Element{r, inboxLink, c, verify}}
	}
)

// The scripted planner walks a sign-in challenge one step at a time: the
// inbox for the code (kept in the running description), back, the box,
// the code to type, Verify, and done once the store shows the shopper
// signed in. Each step but the last has the chosen element's box; the
// history grows by one task a turn; a new goal starts afresh.
func TestScriptedSignInChallenge(t *testing.T) {
	g := &Guide{Planner: Scripted{}}
	ctx := context.Background()
	steps := []struct {
		page    Page
		task    string
		box     [4]int
		done    bool
		inDesc  string
		history int
	}{
		{challenge(false, false), "Tap “Open your inbox” to read the code you were sent.", inboxLink.Box, false, "sign in", 0},
		{Page{URL: "https://www.metro.ca/demo/inbox", Text: "Demo inbox\nYour MOI iD sign-in code\nYour code is 042917.", Elements: []Element{inboxBack}},
			"Tap “Back to sign-in”.", inboxBack.Box, false, "the code is 042917", 1},
		{challenge(false, false), "Tick “I'm not a robot”.", robot.Box, false, "the code is 042917", 2},
		{challenge(true, false), "Tap the “Code” field and type 042917.", codeField.Box, false, "", 3},
		{challenge(true, true), "Tap “Verify”.", verify.Box, false, "", 4},
		{Page{URL: "https://www.metro.ca/en", SignedIn: true}, "You are signed in: press Done.", [4]int{}, true, "", 5},
	}
	for i, s := range steps {
		got, st, err := g.Next(ctx, "sign-in", "sign in", s.page)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got.Task != s.task || got.Box != s.box || got.Done != s.done {
			t.Fatalf("step %d = %+v, want %q %v done=%v", i, got, s.task, s.box, s.done)
		}
		if !strings.Contains(got.Description, s.inDesc) || len(st.TaskHistory) != s.history || st.CurrentTask != s.task || st.IsTaskCompleted != s.done {
			t.Fatalf("step %d state = %+v", i, st)
		}
	}
	if _, st, _ := g.Next(ctx, "sign-in", "find the milk", challenge(false, false)); len(st.TaskHistory) != 0 || strings.Contains(st.TaskDescription, "042917") {
		t.Fatalf("a new goal keeps the old state: %+v", st)
	}
}

// A planner's task without a box goes to the grounder; without one the
// step is an error, not a box at 0,0.
func TestGrounderFindsTheBox(t *testing.T) {
	noBox := plannerFunc(func(context.Context, State, Page) (Plan, error) {
		return Plan{Task: "Tap Sign in", Description: "d"}, nil
	})
	if _, _, err := (&Guide{Planner: noBox}).Next(context.Background(), "t", "sign in", Page{}); !errors.Is(err, ErrNoBox) {
		t.Fatalf("without a grounder: %v", err)
	}
	g := &Guide{Planner: noBox, Grounder: grounderFunc(func(_ context.Context, task string, _ []byte) ([4]int, error) {
		return [4]int{1, 2, 3, 4}, nil
	})}
	if s, _, err := g.Next(context.Background(), "t", "sign in", Page{}); err != nil || s.Box != [4]int{1, 2, 3, 4} {
		t.Fatalf("with a grounder: %+v %v", s, err)
	}
}

type plannerFunc func(context.Context, State, Page) (Plan, error)

func (f plannerFunc) Plan(ctx context.Context, st State, p Page) (Plan, error) { return f(ctx, st, p) }

type grounderFunc func(context.Context, string, []byte) ([4]int, error)

func (f grounderFunc) Ground(ctx context.Context, task string, b []byte) ([4]int, error) {
	return f(ctx, task, b)
}
