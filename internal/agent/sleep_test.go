package agent_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

// sleepyComputer is a fakeComputer whose page sleeps (agent.Sleeper): no
// action or screenshot may reach it asleep.
type sleepyComputer struct {
	*fakeComputer
	mu     sync.Mutex
	asleep bool
	log    []string
	misuse []string
}

func (s *sleepyComputer) Sleep(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asleep = true
	s.log = append(s.log, "sleep")
	return nil
}

func (s *sleepyComputer) Wake(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asleep = false
	s.log = append(s.log, "wake")
	return nil
}

func (s *sleepyComputer) note(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, op)
	if s.asleep {
		s.misuse = append(s.misuse, op)
	}
}

func (s *sleepyComputer) Screenshot(ctx context.Context) ([]byte, error) {
	s.note("screenshot")
	return s.fakeComputer.Screenshot(ctx)
}

func (s *sleepyComputer) Click(ctx context.Context, p agent.Point, b agent.Button, n int) error {
	s.note("click")
	return s.fakeComputer.Click(ctx, p, b, n)
}

// TestPageSleepsWhileTheModelThinks: the tab sleeps during every model call
// and is woken before the call's actions and their screenshot; a run that
// ends (here on a model error) leaves it awake.
func TestPageSleepsWhileTheModelThinks(t *testing.T) {
	c := &sleepyComputer{fakeComputer: newFakeComputer()}
	var unslept []int
	h := newHarness(t, func(req *gemini.Request) gemini.Reply {
		c.mu.Lock()
		if !c.asleep {
			unslept = append(unslept, req.Turn())
		}
		c.mu.Unlock()
		return walk(2)(req)
	})
	res := agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	if len(unslept) > 0 || len(c.misuse) > 0 {
		t.Errorf("the page was awake during model turns %v; acted on asleep: %v", unslept, c.misuse)
	}
	want := []string{"screenshot", "sleep", "wake", "click", "screenshot", "sleep", "wake"}
	if !slices.Equal(c.log, want) {
		t.Errorf("the tab saw\n%s\nwant\n%s", strings.Join(c.log, " "), strings.Join(want, " "))
	}

	// A failed model call still wakes the page.
	c = &sleepyComputer{fakeComputer: newFakeComputer()}
	h = newHarness(t, func(*gemini.Request) gemini.Reply {
		return gemini.Reply{Status: 400, Message: "bad request"}
	})
	res = agent.Run(context.Background(), h.config(), "goal", c, []agent.Tool{reportTool()})
	if res.OK() || res.Reason != agent.ReasonModelError {
		t.Fatalf("run = %v, want a model error", res.Reason)
	}
	if c.asleep {
		t.Errorf("the page is left asleep after a failed run: %v", c.log)
	}
}
