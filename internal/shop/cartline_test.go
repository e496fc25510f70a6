package shop

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/agent"
)

// TestAgentCartLine: for a store without a described cart operation
// (metro), the agent changes the line on the cart page (signed in first)
// and its report decides: the quantity asked for is success, a missing
// line is ErrNotInCart, anything else an error.
func TestAgentCartLine(t *testing.T) {
	st := Store{Name: "metro", DisplayName: "metro.ca", HomeURL: "https://www.metro.ca/en", CartURL: "https://www.metro.ca/en/online-grocery/cart"}
	for _, tc := range []struct {
		name     string
		qty      int
		report   map[string]any // nil: the agent ends without a report
		wantErr  error
		wantText string
		goal     string
	}{
		{"removed", 0, map[string]any{"found": true, "quantity": 0.0}, nil, "", "Remove it from the cart"},
		{"set to 3", 3, map[string]any{"found": true, "quantity": 3.0}, nil, "", "Set its quantity to 3"},
		{"not in the cart", 0, map[string]any{"found": false, "quantity": 0.0}, ErrNotInCart, "", ""},
		{"left at 2", 3, map[string]any{"found": true, "quantity": 2.0}, nil, "left the line at 2, not 3", ""},
		{"no report", 1, nil, nil, "could not change the cart", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &fakeHost{}
			var goal string
			var cfgSeen agent.Config
			run := func(ctx context.Context, cfg agent.Config, g string, _ agent.Computer, tools []agent.Tool) agent.Result {
				goal, cfgSeen = g, cfg
				if tc.report == nil {
					return agent.Result{Reason: "max_turns", Err: errors.New("15 turns")}
				}
				for _, tl := range tools {
					if tl.Name == ToolReportCartChanged {
						out, err := tl.Handler(ctx, tc.report)
						if err != nil {
							t.Fatal(err)
						}
						return agent.Result{Tool: tl.Name, Args: tc.report, Payload: out.Payload}
					}
				}
				t.Fatalf("no %s tool", ToolReportCartChanged)
				return agent.Result{}
			}
			err := AgentCartLine(context.Background(), h, st, run, agent.Config{MaxTurns: 40, TraceDir: "/traces"}, "Natrel 2% Milk 2 L", tc.qty)
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			case tc.wantText != "" && (err == nil || !strings.Contains(err.Error(), tc.wantText)):
				t.Fatalf("err %v, want %q", err, tc.wantText)
			case tc.wantErr == nil && tc.wantText == "" && err != nil:
				t.Fatal(err)
			}
			if h.loginCount() != 1 {
				t.Errorf("signed out: %d logins, want 1", h.loginCount())
			}
			if !strings.Contains(goal, `"Natrel 2% Milk 2 L"`) || !strings.Contains(goal, tc.goal) || !strings.Contains(goal, "no checkout") {
				t.Errorf("goal:\n%s", goal)
			}
			if cfgSeen.MaxTurns != cartAgentTurns || cfgSeen.TraceDir != "" || cfgSeen.HomeURL != st.HomeURL {
				t.Errorf("agent config: turns %d, trace %q, home %q", cfgSeen.MaxTurns, cfgSeen.TraceDir, cfgSeen.HomeURL)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.open != 0 {
				t.Errorf("%d tabs left open", h.open)
			}
		})
	}
}
