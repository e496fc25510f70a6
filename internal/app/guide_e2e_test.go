package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/guide"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// seenPlanner is the Gemini planner that keeps the state and the page it
// was last asked about: what the fake model reads its answer from (a
// real model reads it from the screenshot).
type seenPlanner struct {
	guide.Planner
	mu sync.Mutex
	st guide.State
	p  guide.Page
}

func (s *seenPlanner) Plan(ctx context.Context, st guide.State, p guide.Page) (guide.Plan, error) {
	s.mu.Lock()
	s.st, s.p = st, p
	s.mu.Unlock()
	return s.Planner.Plan(ctx, st, p)
}

// TestTakeOverSignInChallengeGeminiGuide is the sign-in take-over with
// "Show me" as Gemini calls (with a key): the real genai client, against
// the fake Gemini, is sent the live tab's JPEG screenshot for each
// planner and grounder call; the fake answers what the offline planner
// reads on that page, its box as Gemini's box_2d, which the guide turns
// back into the 0–999 box whose centre the person clicks. The run signs
// in and adds its items, and its usage counts the guide's calls.
func TestTakeOverSignInChallengeGeminiGuide(t *testing.T) {
	const key = "guide-test-key"
	var srv *gemini.Server
	res := takeOverSignIn(t, func(t *testing.T, log *slog.Logger) *shop.Desk {
		seen := &seenPlanner{}
		srv = gemini.New(gemini.Config{APIKey: key, Script: gemini.GuideFunc(func(req *gemini.Request) (gemini.GuideScreen, bool) {
			seen.mu.Lock()
			st, p := seen.st, seen.p
			seen.mu.Unlock()
			img, mime := req.LastImage()
			if mime != "image/jpeg" || len(img) == 0 || !bytes.Equal(img, p.Screenshot) {
				return gemini.GuideScreen{}, false // not the tab's screen
			}
			plan, err := guide.Scripted{}.Plan(context.Background(), st, p)
			if err != nil {
				return gemini.GuideScreen{}, false
			}
			s := gemini.GuideScreen{Task: plan.Task, Description: plan.Description, Done: plan.Done}
			if b := plan.Box; b != nil {
				s.Box = []int{b[1], b[0], b[3], b[2]} // [ymin, xmin, ymax, xmax]
			}
			return s, true
		})})
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		cfg := config.Config{GeminiAPIKey: key, GeminiBaseURL: srv.URL(), GeminiModel: config.DefaultModel}
		gm, err := geminiGuide(context.Background(), cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		gm.Backoff = []time.Duration{10 * time.Millisecond}
		seen.Planner = gm
		return shop.NewDesk(log, seen, gm)
	})

	var plans, grounds int
	for _, r := range srv.Requests() {
		switch {
		case r.SchemaHas("current_task"):
			plans++
		case r.SchemaHas("box_2d"):
			grounds++
		}
		if r.ImageCount() != 1 || r.Model != agent.DefaultModel {
			t.Errorf("request %d: %d images, model %s", r.Call, r.ImageCount(), r.Model)
		}
		if text := strings.Join(r.Texts(), "\n"); strings.Contains(text, "https://") {
			t.Errorf("request %d sends a URL:\n%s", r.Call, text)
		}
	}
	if plans < 4 || grounds != plans-1 {
		t.Fatalf("%d planner and %d grounder calls", plans, grounds)
	}
	if u := res.Summary.Usage; u.Calls != plans+grounds || u.CostUnknown || u.CostUSD <= 0 {
		t.Fatalf("the run's usage %+v does not count the guide's %d calls", u, plans+grounds)
	}
}

// The guide's model reads screenshots into structured output: the
// agent's model unless it cannot (the Computer-Use-only preview) or is
// retired.
func TestGuideModel(t *testing.T) {
	before := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	after := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) // gemini-2.5-flash's shutdown day
	tests := []struct {
		model string
		now   time.Time
		want  string
	}{
		{"gemini-3.8-flash", before, "gemini-3.8-flash"},
		{"gemini-3.6-flash", before, "gemini-3.6-flash"},
		{"gemini-2.5-computer-use-preview-10-2025", before, agent.DefaultModel},
		{"gemini-2.5-flash", before, "gemini-2.5-flash"},
		{"gemini-2.5-flash", after, agent.DefaultModel},
		{"gemini-9-flash", before, "gemini-9-flash"},
		{"", before, agent.DefaultModel},
	}
	for _, tc := range tests {
		if got := GuideModel(tc.model, tc.now); got != tc.want {
			t.Errorf("GuideModel(%q, %s) = %q, want %q", tc.model, tc.now.Format(time.DateOnly), got, tc.want)
		}
	}
}
