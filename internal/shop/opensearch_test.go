package shop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
)

// TestAgentStartsOnTheSearchResults: the run opens the item's search
// results in the agent's tab before the model's first call, and the goal
// says the tab is there (the model's first turn is a choice, not a
// navigation); when the run cannot open them, the goal tells the model to.
func TestAgentStartsOnTheSearchResults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		navErr error
		onPage bool // the goal says the tab is on the results
	}{
		{name: "opened by the run", onPage: true},
		{name: "the run could not open them", navErr: errors.New("navigation refused")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakeProvider("milk")
			h := &fakeHost{authed: true, navErr: tc.navErr}
			var navsAtStart []string
			a := newFakeAgent(map[string]behaviour{"milk": func(ctx context.Context, c *fakeCall) agent.Result {
				c.tab.mu.Lock()
				navsAtStart = slices.Clone(c.tab.navs)
				c.tab.mu.Unlock()
				return notFound("out of stock")(ctx, c)
			}})
			if _, err := Run(context.Background(), baseConfig(t, p, h, a)); err != nil {
				t.Fatal(err)
			}
			search := testStore.SearchURL("milk")
			if want := []string{search}; !slices.Equal(navsAtStart, want) {
				t.Errorf("the tab opened %q before the model's first call, want %q", navsAtStart, want)
			}
			g := a.goals[0]
			says := strings.Contains(g, "This tab is on the store's search results for \"milk\" now ("+search+")")
			asks := strings.Contains(g, "Open the search results directly: "+search)
			if says != tc.onPage || asks == tc.onPage {
				t.Errorf("goal says the tab is on the results: %v, tells the model to open them: %v; want %v, %v:\n%s", says, asks, tc.onPage, !tc.onPage, g)
			}
		})
	}
}

// TestAgentsArePricedOnTheRunsDay: every agent of a run is costed with the
// price in force on the day the run started (a run that starts on
// 2026-12-31 and whose items end after midnight pays 2026's price for all
// of them, as its summary and the panel say).
func TestAgentsArePricedOnTheRunsDay(t *testing.T) {
	start := time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC)
	clock := start
	var mu sync.Mutex
	p := newFakeProvider("milk", "eggs")
	h := &fakeHost{authed: true}
	var days []time.Time
	a := newFakeAgent(map[string]behaviour{})
	run := a.run
	cfg := baseConfig(t, p, h, a)
	cfg.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	cfg.RunAgent = func(ctx context.Context, ac agent.Config, goal string, c agent.Computer, tools []agent.Tool) agent.Result {
		mu.Lock()
		days = append(days, ac.PriceDay)
		clock = clock.Add(2 * time.Minute) // the item ends in 2027
		mu.Unlock()
		return run(ctx, ac, goal, c, tools)
	}
	a.by["milk"], a.by["eggs"] = notFound("none"), notFound("none")
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(days) != 2 {
		t.Fatalf("%d agent runs, want 2", len(days))
	}
	for _, d := range days {
		if !d.Equal(start) {
			t.Errorf("an agent is priced on %v, want the run's start %v", d, start)
		}
	}
}
