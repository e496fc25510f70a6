package guide

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

// screen is a small real PNG of one colour: one screen of the tab.
func screen(t *testing.T, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 10))
	for y := range 10 {
		for x := range 16 {
			img.SetRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// newGemini starts the fake Gemini with the guide's screens and returns
// the guide's Gemini planner/grounder on the real genai client.
func newGemini(t *testing.T, screens map[string]gemini.GuideScreen) (*Gemini, *gemini.Server) {
	t.Helper()
	srv := gemini.New(gemini.Config{APIKey: "test-key", Script: gemini.Guide(screens)})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := srv.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	return &Gemini{Client: c, Model: agent.DefaultModel, Backoff: []time.Duration{time.Millisecond, time.Millisecond},
		Now: func() time.Time { return day }}, srv
}

// With a Gemini key the planner and the grounder are Gemini calls: the
// loop goes goal → task and box → the next screenshot → … → complete.
// Each planner request carries the screenshot, the goal, the running
// description and a history one task longer than the last; each grounder
// request the screenshot and the task. Awkward answers are read: a fenced
// JSON plan, a plan without task_description (the description is kept), a
// list of boxes; a 429 is retried. The calls' usage is counted and priced.
func TestGeminiGuideWalksTheSignIn(t *testing.T) {
	challenge := screen(t, color.RGBA{200, 0, 0, 255})
	inbox := screen(t, color.RGBA{0, 200, 0, 255})
	ticked := screen(t, color.RGBA{0, 0, 200, 255})
	home := screen(t, color.RGBA{200, 200, 0, 255})
	steps := []struct {
		shot []byte
		s    gemini.GuideScreen
		box  [4]int
		desc string
	}{
		{challenge, gemini.GuideScreen{Task: "Tap “Open your inbox”.", Description: "The store asks for a code sent by e-mail.",
			Box: []int{350, 500, 370, 580}, Quirk: gemini.QuirkBoxList}, [4]int{500, 350, 580, 370}, "The store asks for a code sent by e-mail."},
		{inbox, gemini.GuideScreen{Task: "Tap “Back to sign-in”.", Description: "The code is 042917; back to the sign-in.",
			Box: []int{200, 30, 240, 140}, Quirk: gemini.QuirkFenced}, [4]int{30, 200, 140, 240}, "The code is 042917; back to the sign-in."},
		{ticked, gemini.GuideScreen{Task: "Tap the “Code” field and type 042917.",
			Box: []int{440, 350, 490, 640}, Quirk: gemini.QuirkNoDescription}, [4]int{350, 440, 640, 490}, "The code is 042917; back to the sign-in."},
		{home, gemini.GuideScreen{Task: "You are signed in.", Description: "Signed in.", Done: true},
			[4]int{}, "Signed in."},
	}
	screens := map[string]gemini.GuideScreen{}
	for _, s := range steps {
		screens[string(s.shot)] = s.s
	}
	gm, srv := newGemini(t, screens)
	g := &Guide{Planner: gm, Grounder: gm}
	ctx := context.Background()
	for i, s := range steps {
		if i == 1 {
			srv.Inject(gemini.FaultRateLimit) // the planner's call: 429, then it is answered
		}
		got, st, err := g.Next(ctx, "sign-in", "sign in", Page{Screenshot: s.shot, Text: "secret page text", URL: "https://auth.example/x?token=t"})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got.Task != s.s.Task || got.Box != s.box || got.Done != s.s.Done || got.Description != s.desc {
			t.Fatalf("step %d = %+v, want %q %v done=%v %q", i, got, s.s.Task, s.box, s.s.Done, s.desc)
		}
		if len(st.TaskHistory) != i || st.CurrentTask != s.s.Task {
			t.Fatalf("step %d state = %+v", i, st)
		}
	}

	// What was sent: planner and grounder requests, one each per step
	// (none to ground the last), the 429'd one repeated.
	var plans, grounds []gemini.Request
	for _, r := range srv.Requests() {
		if r.SchemaHas("current_task") {
			plans = append(plans, r)
		} else if r.SchemaHas("box_2d") {
			grounds = append(grounds, r)
		}
	}
	if len(plans) != 5 || len(grounds) != 3 {
		t.Fatalf("%d planner and %d grounder requests, want 5 (one retried) and 3", len(plans), len(grounds))
	}
	plans = append(plans[:1], plans[2:]...) // the retried one is the same request
	for i, r := range plans {
		img, mime := r.LastImage()
		text := strings.Join(r.Texts(), "\n")
		if !bytes.Equal(img, steps[i].shot) || mime != "image/png" || r.ImageCount() != 1 {
			t.Errorf("planner request %d: not the step's screenshot (%s, %d images)", i, mime, r.ImageCount())
		}
		if r.ResponseMIMEType() != "application/json" || !r.SchemaHas("task_description") || !r.SchemaHas("task_history") || !r.SchemaHas("is_task_completed") {
			t.Errorf("planner request %d: not the design's structured output: %v", i, r.GenerationConfig)
		}
		if !strings.Contains(text, "goal: sign in") {
			t.Errorf("planner request %d does not carry the goal:\n%s", i, text)
		}
		if i > 0 && !strings.Contains(text, steps[i-1].desc) {
			t.Errorf("planner request %d does not carry the running description %q:\n%s", i, steps[i-1].desc, text)
		}
		for j := range i {
			if !strings.Contains(text, steps[j].s.Task) {
				t.Errorf("planner request %d: the history lacks task %d %q:\n%s", i, j, steps[j].s.Task, text)
			}
		}
		if strings.Contains(string(r.Raw), "secret page text") || strings.Contains(string(r.Raw), "token=t") {
			t.Errorf("planner request %d sends the page's text or URL", i)
		}
		sys := r.System()
		for _, rule := range []string{"one task", "never you", "checkout, payment", "password"} {
			if !strings.Contains(sys, rule) {
				t.Errorf("the planner's instructions lack %q", rule)
			}
		}
	}
	for i, r := range grounds {
		img, _ := r.LastImage()
		if !bytes.Equal(img, steps[i].shot) || !strings.Contains(strings.Join(r.Texts(), "\n"), steps[i].s.Task) {
			t.Errorf("grounder request %d: not the step's screenshot and task: %q", i, r.Texts())
		}
		if !strings.Contains(r.System(), "[ymin, xmin, ymax, xmax]") {
			t.Errorf("the grounder's instructions do not ask for box_2d as Gemini gives it")
		}
	}

	u := g.TakeUsage()
	if u.Calls != 7 || u.PromptTokens == 0 || u.OutputTokens == 0 || u.CostUSD <= 0 || u.CostUnknown {
		t.Fatalf("usage = %+v, want 7 priced calls", u)
	}
	if again := g.TakeUsage(); again.Calls != 0 || again.CostUSD != 0 {
		t.Fatalf("usage taken twice: %+v", again)
	}
}

// A bad answer is an error the step says, not a crash and not a box at
// 0,0: a box outside the screen, an inverted one, an element not found, a
// plan without a task, a model error that is not retried.
func TestGeminiGuideRefusesBadAnswers(t *testing.T) {
	shot := func(i uint8) []byte { return screen(t, color.RGBA{i, i, i, 255}) }
	tests := []struct {
		name string
		s    gemini.GuideScreen
		want error
	}{
		{"box outside the screen", gemini.GuideScreen{Task: "Tap Verify.", Box: []int{0, 200, 1200, 300}}, ErrBadBox},
		{"box inverted", gemini.GuideScreen{Task: "Tap Verify.", Box: []int{500, 600, 400, 700}}, ErrBadBox},
		{"box of three numbers", gemini.GuideScreen{Task: "Tap Verify.", Box: []int{1, 2, 3}}, ErrBadBox},
		{"no task", gemini.GuideScreen{Description: "d", Quirk: gemini.QuirkNoTask}, ErrBadAnswer},
		{"not found", gemini.GuideScreen{Task: "Tap Verify."}, nil},
	}
	screens := map[string]gemini.GuideScreen{}
	for i, tc := range tests {
		screens[string(shot(uint8(i)))] = tc.s
	}
	gm, srv := newGemini(t, screens)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := &Guide{Planner: gm, Grounder: gm}
			s, _, err := g.Next(context.Background(), "t", "sign in", Page{Screenshot: shot(uint8(i))})
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("step = %+v, err = %v, want %v", s, err, tc.want)
			}
		})
	}
	t.Run("an unknown screen is a 400, not retried", func(t *testing.T) {
		before := srv.Calls()
		_, _, err := (&Guide{Planner: gm, Grounder: gm}).Next(context.Background(), "t", "sign in", Page{Screenshot: shot(200)})
		if err == nil || srv.Calls() != before+1 {
			t.Fatalf("err = %v after %d calls", err, srv.Calls()-before)
		}
	})
	t.Run("no screenshot", func(t *testing.T) {
		if _, _, err := (&Guide{Planner: gm, Grounder: gm}).Next(context.Background(), "t", "sign in", Page{}); err == nil {
			t.Fatal("planned without a screenshot")
		}
	})
}

// Gemini's box_2d is [ymin, xmin, ymax, xmax] in 0–1000; the panel's box
// is [x0, y0, x1, y1] in 0–999 (coordinate×size/1000, so 1000 is 999).
func TestBoxFromGemini(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want [4]int
		err  bool
	}{
		{"axes swapped", []float64{100, 200, 300, 400}, [4]int{200, 100, 400, 300}, false},
		{"whole screen: 1000 is the last pixel", []float64{0, 0, 1000, 1000}, [4]int{0, 0, 999, 999}, false},
		{"fractions rounded", []float64{10.4, 20.6, 30.5, 40.49}, [4]int{21, 10, 40, 31}, false},
		{"a point", []float64{500, 500, 500, 500}, [4]int{500, 500, 500, 500}, false},
		{"beyond 1000", []float64{0, 0, 1001, 10}, [4]int{}, true},
		{"negative", []float64{-1, 0, 10, 10}, [4]int{}, true},
		{"inverted y", []float64{300, 0, 200, 10}, [4]int{}, true},
		{"inverted x", []float64{0, 300, 10, 200}, [4]int{}, true},
		{"too short", []float64{0, 0, 10}, [4]int{}, true},
		{"empty", nil, [4]int{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BoxFromGemini(tc.in)
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("BoxFromGemini(%v) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
			}
			if err != nil && !errors.Is(err, ErrBadBox) {
				t.Fatalf("error %v is not ErrBadBox", err)
			}
		})
	}
}

// A call that hangs is given up after CallTimeout and tried again; in
// French the tasks are asked for in French.
func TestGeminiGuideRetriesAHangAndSpeaksFrench(t *testing.T) {
	shot := screen(t, color.RGBA{1, 2, 3, 255})
	gm, srv := newGemini(t, map[string]gemini.GuideScreen{string(shot): {Task: "Touchez « Vérifier ».", Description: "d", Box: []int{1, 2, 3, 4}}})
	gm.CallTimeout, gm.Language = time.Second, "fr"
	gm.Backoff = []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	srv.Inject(gemini.FaultHang)
	s, _, err := (&Guide{Planner: gm, Grounder: gm}).Next(context.Background(), "t", "se connecter", Page{Screenshot: shot})
	if err != nil || s.Box != [4]int{2, 1, 4, 3} {
		t.Fatalf("step = %+v, %v", s, err)
	}
	reqs := srv.Requests()
	if len(reqs) < 3 || !strings.Contains(reqs[0].System(), "in French") {
		t.Fatalf("%d requests; the planner's instructions: %q", len(reqs), reqs[0].System())
	}
	if u := gm.TakeUsage(); u.Calls != 2 {
		t.Fatalf("usage counts %d calls, want the 2 answered", u.Calls)
	}
}

// countingLimiter counts the units taken and given back.
type countingLimiter struct {
	mu                 sync.Mutex
	acquired, released int64
}

func (l *countingLimiter) Acquire(context.Context, int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acquired++
	return nil
}

func (l *countingLimiter) Release(int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.released++
}

// Each attempt of a guide call, a retried one too, holds a unit of the
// runs' model-call limiter and gives it back.
func TestGeminiGuideSharesTheModelQuota(t *testing.T) {
	shot := screen(t, color.RGBA{9, 9, 9, 255})
	gm, srv := newGemini(t, map[string]gemini.GuideScreen{string(shot): {Task: "Tap Verify.", Description: "d", Box: []int{1, 2, 3, 4}}})
	l := &countingLimiter{}
	gm.Limiter = func() agent.Limiter { return l }
	srv.Inject(gemini.FaultUnavailable)
	if _, _, err := (&Guide{Planner: gm, Grounder: gm}).Next(context.Background(), "t", "sign in", Page{Screenshot: shot}); err != nil {
		t.Fatal(err)
	}
	if n := int64(srv.Calls()); l.acquired != n || l.released != n {
		t.Fatalf("%d requests, %d units taken, %d given back", n, l.acquired, l.released)
	}
}
