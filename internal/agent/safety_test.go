package agent_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

// A safety decision that is not exactly a well-formed proceed (or absent)
// must reach the person: a model, or a page talking to it, cannot get an
// action run unconfirmed by bending the decision's shape.
func TestRunMalformedSafetyDecisionsAskThePerson(t *testing.T) {
	cases := []struct {
		name string
		key  string // the argument name; "" means safety_decision
		sd   any
		// wantExplanation is a substring of what the person is shown.
		wantExplanation string
	}{
		{"well-formed require_confirmation", "", map[string]any{"decision": "require_confirmation", "explanation": "This accepts the terms."}, "This accepts the terms."},
		{"capitals", "", map[string]any{"decision": "REQUIRE_CONFIRMATION", "explanation": "Checkout."}, "Checkout."},
		{"plain string", "", "require_confirmation", "malformed"},
		{"plain string proceed", "", "proceed", "malformed"},
		{"capitalised proceed", "", map[string]any{"decision": "Proceed"}, "malformed"},
		{"proceed with spaces", "", map[string]any{"decision": " proceed "}, "malformed"},
		{"unknown decision", "", map[string]any{"decision": "allow_once", "explanation": "Pay now."}, "Pay now."},
		{"decision of the wrong type", "", map[string]any{"decision": true}, "malformed"},
		{"decision as a number", "", map[string]any{"decision": 1}, "malformed"},
		{"require_confirmation without explanation", "", map[string]any{"decision": "require_confirmation"}, "malformed"},
		{"require_confirmation with empty explanation", "", map[string]any{"decision": "require_confirmation", "explanation": " "}, "malformed"},
		{"object missing decision", "", map[string]any{"explanation": "Place the order."}, "Place the order."},
		{"empty object", "", map[string]any{}, "malformed"},
		{"proceed with extra fields", "", map[string]any{"decision": "proceed", "override": "true"}, "malformed"},
		{"proceed with a non-string explanation", "", map[string]any{"decision": "proceed", "explanation": 7}, "malformed"},
		{"null", "", nil, "malformed"},
		{"a list", "", []any{"proceed"}, "malformed"},
		{"a boolean", "", false, "malformed"},
		{"camelCase key", "safetyDecision", map[string]any{"decision": "require_confirmation", "explanation": "Buy now."}, "Buy now."},
		{"capitalised key", "SAFETY_DECISION", "REQUIRE_CONFIRMATION", "malformed"},
		{"dotted key", "safety.decision", map[string]any{"decision": "require_confirmation", "explanation": "Pay."}, "Pay."},
		{"plural key", "safety_decisions", map[string]any{"decision": "require_confirmation", "explanation": "Order."}, "Order."},
		{"key with a zero-width space", "safety\u200bdecision", map[string]any{"decision": "require_confirmation", "explanation": "Submit."}, "Submit."},
		{"key with a trailing tab", "safety_decision\t", map[string]any{"decision": "require_confirmation", "explanation": "Confirm."}, "Confirm."},
		{"doubled separators", "SAFETY__DECISION", "require_confirmation", "malformed"},
	}
	for _, tc := range cases {
		for _, confirm := range []bool{false, true} {
			name := tc.name + "/refused"
			if confirm {
				name = tc.name + "/confirmed"
			}
			t.Run(name, func(t *testing.T) {
				key := tc.key
				if key == "" {
					key = "safety_decision"
				}
				risky := call("click_at", map[string]any{"x": 10, "y": 20, key: tc.sd})
				h := newHarness(t, gemini.Sequence(calls(risky), report("ok")))
				c := newFakeComputer()
				conf := &fakeConfirmer{ok: confirm}
				cfg := h.config()
				cfg.Confirmer = conf
				res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})

				if conf.asked != 1 {
					t.Fatalf("the person was asked %d times, want once (result %s, ops %q)", conf.asked, res.FailureText(), c.Ops())
				}
				if !strings.Contains(conf.explanation, tc.wantExplanation) || !strings.HasPrefix(conf.action, "click_at ") {
					t.Errorf("asked with %q / %q, want the explanation to contain %q", conf.explanation, conf.action, tc.wantExplanation)
				}
				if strings.Contains(strings.ToLower(conf.action), "safety") {
					t.Errorf("the action shown still carries the safety decision: %q", conf.action)
				}
				if !confirm {
					if res.Reason != agent.ReasonSafetyDenied || len(c.Ops()) != 0 || h.srv.Calls() != 1 {
						t.Fatalf("result = %s, ops %q, %d model calls; want safety_denied and nothing executed", res.FailureText(), c.Ops(), h.srv.Calls())
					}
					return
				}
				if !res.OK() || !slices.Equal(c.Ops(), []string{"click 10,20 left x1"}) {
					t.Fatalf("result = %s, ops %q; want the confirmed click", res.FailureText(), c.Ops())
				}
				if r := responsesOf(t, h.srv.Requests(), 1)[0]; r.Response["safety_acknowledgement"] != "true" {
					t.Errorf("response = %+v, want safety_acknowledgement \"true\"", r.Response)
				}
			})
		}
	}
}

// A well-formed proceed, or no decision at all, runs without asking and
// without an acknowledgement.
func TestRunProceedRunsUnasked(t *testing.T) {
	cases := []struct {
		name string
		args map[string]any
	}{
		{"absent", map[string]any{"x": 10, "y": 20}},
		{"proceed", map[string]any{"x": 10, "y": 20, "safety_decision": map[string]any{"decision": "proceed"}}},
		{"proceed with explanation", map[string]any{"x": 10, "y": 20, "safety_decision": map[string]any{"decision": "proceed", "explanation": "Regular click."}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, gemini.Sequence(calls(call("click_at", tc.args)), report("ok")))
			c := newFakeComputer()
			conf := &fakeConfirmer{ok: false}
			cfg := h.config()
			cfg.Confirmer = conf
			res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
			if !res.OK() || conf.asked != 0 || !slices.Equal(c.Ops(), []string{"click 10,20 left x1"}) {
				t.Fatalf("result %s, asked %d, ops %q; want the click run unasked", res.FailureText(), conf.asked, c.Ops())
			}
			if r := responsesOf(t, h.srv.Requests(), 1)[0]; r.Response["safety_acknowledgement"] != nil {
				t.Errorf("acknowledged without asking: %+v", r.Response)
			}
		})
	}
}

// A turn with a flagged action after a regular one: the regular action runs,
// the flagged one does not, and the refusal ends the run before anything else.
func TestRunRefusalStopsTheRestOfTheTurn(t *testing.T) {
	h := newHarness(t, gemini.Sequence(calls(
		call("click_at", map[string]any{"x": 1, "y": 1}),
		call("click_at", map[string]any{"x": 2, "y": 2, "safety_decision": "REQUIRE_CONFIRMATION"}),
		call("click_at", map[string]any{"x": 3, "y": 3}),
	), report("ok")))
	c := newFakeComputer()
	conf := &fakeConfirmer{ok: false}
	cfg := h.config()
	cfg.Confirmer = conf
	res := agent.Run(context.Background(), cfg, "goal", c, []agent.Tool{reportTool()})
	if res.Reason != agent.ReasonSafetyDenied || conf.asked != 1 || !slices.Equal(c.Ops(), []string{"click 1,1 left x1"}) {
		t.Fatalf("result %s, asked %d, ops %q; want safety_denied after the first click only", res.FailureText(), conf.asked, c.Ops())
	}
}
