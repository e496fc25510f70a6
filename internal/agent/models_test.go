package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
)

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestModelTableIsSourced: every price has a source page and the day it was
// read; every retirement its source; the default is a GA Computer Use model.
func TestModelTableIsSourced(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range agent.Models {
		if seen[m.Name] {
			t.Errorf("%s is in the table twice", m.Name)
		}
		seen[m.Name] = true
		for _, p := range m.Prices {
			if !strings.HasPrefix(p.Source, "https://") || p.Checked == "" || p.Input <= 0 || p.Output <= 0 {
				t.Errorf("%s: price %+v lacks a source, a date or a value", m.Name, p)
			}
			if _, err := time.Parse(time.DateOnly, p.Checked); err != nil {
				t.Errorf("%s: price checked %q: %v", m.Name, p.Checked, err)
			}
		}
		if !m.Retires.IsZero() && !strings.HasPrefix(m.RetireSource, "https://") {
			t.Errorf("%s: retirement without a source", m.Name)
		}
		if m.ComputerUse && m.Vocabulary == "" {
			t.Errorf("%s: a Computer Use model without a vocabulary", m.Name)
		}
	}
	m, ok := agent.LookupModel(agent.DefaultModel)
	if !ok || !m.GA || !m.ComputerUse || len(m.Prices) == 0 {
		t.Errorf("default %s: %+v", agent.DefaultModel, m)
	}
}

func TestModelPriceByDate(t *testing.T) {
	m, _ := agent.LookupModel("models/gemini-3.8-flash")
	for _, tc := range []struct {
		day     string
		in, out float64
	}{{"2026-11-23", 0.75, 3.75}, {"2026-12-31", 0.75, 3.75}, {"2027-01-01", 1.50, 7.50}} {
		p, ok := m.PriceAt(date(tc.day))
		if !ok || p.Input != tc.in || p.Output != tc.out {
			t.Errorf("%s: price %+v (%v), want %v/%v", tc.day, p, ok, tc.in, tc.out)
		}
	}
}

func TestModelWarnings(t *testing.T) {
	now := date("2026-11-23")
	tests := []struct {
		model, want string
	}{
		{agent.DefaultModel, ""},
		{"gemini-3.7-flash", ""},
		{"gemini-9-ultra", "not in the model table"},
		{"gemini-2.5-flash", "will be shut down on 2026-12-01"},
		{"gemini-2.5-computer-use-preview-10-2025", "preview"},
		{"gemini-3.5-flash", "deprecated: Gemini answers its requests with gemini-3.6-flash"},
	}
	for _, tc := range tests {
		got := agent.ModelWarning(tc.model, now)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("ModelWarning(%s) = %q, want %q", tc.model, got, tc.want)
		}
	}
	if got := agent.ModelWarning("gemini-2.5-flash", date("2026-12-01")); !strings.Contains(got, "was shut down on 2026-12-01") {
		t.Errorf("retired: %q", got)
	}
}

// TestCostOfUnknownModelIsUnknown: an unknown model still runs, and its cost
// is reported unknown, never a number from another model's price.
func TestCostOfUnknownModelIsUnknown(t *testing.T) {
	h := newHarness(t, walk(2))
	cfg := h.config()
	cfg.Model = "gemini-9-ultra"
	res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	if !res.OK() {
		t.Fatalf("run = %s", res.FailureText())
	}
	if !res.Usage.CostUnknown || res.Usage.CostUSD != 0 || res.Usage.TotalTokens == 0 {
		t.Errorf("usage = %+v, want tokens and an unknown cost", res.Usage)
	}
	if reqs := h.srv.Requests(); len(reqs) == 0 || reqs[0].Model != "gemini-9-ultra" {
		t.Errorf("the unknown model was not used as given")
	}

	// A known model is priced from the table, thinking included as output.
	cfg.Model = agent.DefaultModel
	res = agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
	p, _ := agent.Models[0].PriceAt(time.Now())
	want := float64(res.Usage.PromptTokens)*p.Input/1e6 + float64(res.Usage.OutputTokens)*p.Output/1e6
	if !res.OK() || res.Usage.CostUnknown || res.Usage.CostUSD != want || res.Usage.ThoughtTokens == 0 ||
		res.Usage.OutputTokens <= res.Usage.ThoughtTokens {
		t.Errorf("usage = %+v, want cost %v with thinking in the output", res.Usage, want)
	}
}

// TestCostControlsOnTheWire: thinking_level, media_resolution and the prompt
// injection flag reach the API as the REST JSON spells them, and the fake
// counts screenshots at the documented tokens per resolution.
func TestCostControlsOnTheWire(t *testing.T) {
	perImage := map[string]int{}
	for _, res := range []string{"low", "medium", "high"} {
		h := newHarness(t, walk(1))
		cfg := h.config()
		cfg.Model = agent.DefaultModel
		cfg.ThinkingLevel, cfg.MediaResolution = "low", res
		r := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
		if !r.OK() {
			t.Fatalf("%s: %s", res, r.FailureText())
		}
		req := h.srv.Requests()[0]
		raw := string(req.Raw)
		for _, want := range []string{`"thinkingLevel":"LOW"`, `"mediaResolution":"MEDIA_RESOLUTION_` + strings.ToUpper(res) + `"`, `"enablePromptInjectionDetection":true`} {
			if !strings.Contains(raw, want) {
				t.Errorf("%s: request lacks %s", res, want)
			}
		}
		perImage[res] = req.ImageTokens()
	}
	if perImage["low"] != 280 || perImage["medium"] != 560 || perImage["high"] != 1120 {
		t.Errorf("image tokens per resolution = %v", perImage)
	}

	// Unset: nothing is sent, and an unknown model gets no injection flag.
	h := newHarness(t, walk(1))
	if r := agent.Run(context.Background(), h.config(), "goal", newFakeComputer(), []agent.Tool{reportTool()}); !r.OK() {
		t.Fatal(r.FailureText())
	}
	raw := string(h.srv.Requests()[0].Raw)
	for _, not := range []string{"thinkingLevel", "mediaResolution", "enablePromptInjectionDetection"} {
		if strings.Contains(raw, not) {
			t.Errorf("unset, yet the request carries %s", not)
		}
	}

	cfg := h.config()
	cfg.MediaResolution = "ultra"
	if r := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), nil); r.Reason != agent.ReasonModelError {
		t.Errorf("a bad media resolution: %s", r.FailureText())
	}
}

// TestRunIsCostedOnItsDay: a run is costed with the table's price in force
// on Config.PriceDay (the shopping run's start), not on the day the agent
// happens to end: 3.8 Flash at $0.75/$3.75 through 2026-12-31 and
// $1.50/$7.50 from 2027-01-01.
func TestRunIsCostedOnItsDay(t *testing.T) {
	for _, tc := range []struct {
		day           string
		input, output float64
	}{{"2026-12-31", 0.75, 3.75}, {"2027-01-01", 1.50, 7.50}} {
		h := newHarness(t, walk(2))
		cfg := h.config()
		cfg.Model = "gemini-3.8-flash"
		d, err := time.Parse(time.DateOnly, tc.day)
		if err != nil {
			t.Fatal(err)
		}
		cfg.PriceDay = d.Add(23 * time.Hour)
		res := agent.Run(context.Background(), cfg, "goal", newFakeComputer(), []agent.Tool{reportTool()})
		if !res.OK() {
			t.Fatalf("%s: run = %s", tc.day, res.FailureText())
		}
		u := res.Usage
		want := float64(u.PromptTokens)*tc.input/1e6 + float64(u.OutputTokens)*tc.output/1e6
		if u.CostUnknown || u.CostUSD != want {
			t.Errorf("%s: cost = %v (unknown %v), want %v at $%.2f/$%.2f", tc.day, u.CostUSD, u.CostUnknown, want, tc.input, tc.output)
		}
	}
}
