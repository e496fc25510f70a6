package addon

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	ha "github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// The add-on's Home Assistant files start (and stop) a run with no MQTT:
// the blueprint with its default inputs, the voice intent_script and the
// dashboard card (through addon/scripts.yaml) fire the events that serve's
// trigger listens for. Each file's actions are run by a small interpreter
// of the script steps they use; the events go through a fake Home
// Assistant to the real trigger. No MQTT broker or integration exists in
// the test, and a step that presses an MQTT button fails it.

const noMQTTWait = 60 * time.Second

// firedEvent is one event an action list fires.
type firedEvent struct {
	Type string
	Data map[string]any
}

var templateEq = regexp.MustCompile(`^\{\{\s*(\w+)\s*==\s*'([^']*)'\s*\}\}$`)

// runActions interprets the Home Assistant script steps the add-on files
// use: event (fire), if/then/else with a "{{ var == 'x' }}" template
// condition on vars, and perform script.turn_on of a script in scripts.
// Anything else — button.press of the MQTT button included — is an error.
func runActions(steps []any, vars map[string]any, scripts map[string][]any) ([]firedEvent, error) {
	var out []firedEvent
	for _, s := range steps {
		step, ok := s.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("step %v is not a mapping", s)
		}
		switch {
		case step["event"] != nil:
			data, _ := step["event_data"].(map[string]any)
			out = append(out, firedEvent{Type: fmt.Sprint(step["event"]), Data: data})
		case step["if"] != nil:
			conds, _ := step["if"].([]any)
			holds := true
			for _, c := range conds {
				cm, _ := c.(map[string]any)
				m := templateEq.FindStringSubmatch(fmt.Sprint(cm["value_template"]))
				if cm["condition"] != "template" || m == nil {
					return nil, fmt.Errorf("unsupported condition %v", c)
				}
				holds = holds && fmt.Sprint(vars[m[1]]) == m[2]
			}
			branch := step["else"]
			if holds {
				branch = step["then"]
			}
			list, _ := branch.([]any)
			ev, err := runActions(list, vars, scripts)
			if err != nil {
				return nil, err
			}
			out = append(out, ev...)
		case step["action"] == "script.turn_on":
			target, _ := step["target"].(map[string]any)
			id := fmt.Sprint(target["entity_id"])
			seq, ok := scripts[id]
			if !ok {
				return nil, fmt.Errorf("no script %s in addon/scripts.yaml", id)
			}
			ev, err := runActions(seq, vars, scripts)
			if err != nil {
				return nil, err
			}
			out = append(out, ev...)
		default:
			return nil, fmt.Errorf("step %v needs more than Home Assistant's event bus (MQTT?)", step)
		}
	}
	return out, nil
}

// loadScripts reads addon/scripts.yaml as entity id → sequence.
func loadScripts(t *testing.T) map[string][]any {
	var raw map[string]struct {
		Alias    string `yaml:"alias"`
		Sequence []any  `yaml:"sequence"`
	}
	decodeYAML(t, "addon/scripts.yaml", &raw)
	out := map[string][]any{}
	for id, s := range raw {
		if s.Alias == "" || len(s.Sequence) == 0 {
			t.Errorf("addon/scripts.yaml: script %s needs an alias and a sequence", id)
		}
		out["script."+id] = s.Sequence
	}
	return out
}

// triggerHarness is serve's Home Assistant trigger on a fake Home
// Assistant, recording the starts and stops it asks for.
type triggerHarness struct {
	f      *homeassistant.Server
	mu     sync.Mutex
	starts []runstatus.Request
	stops  int
}

func startTrigger(t *testing.T) *triggerHarness {
	t.Helper()
	f, err := homeassistant.Start(homeassistant.Options{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	ctx, cancel := context.WithTimeout(context.Background(), noMQTTWait)
	t.Cleanup(cancel)
	c, err := ha.Dial(ctx, ha.Options{URL: f.URL(), Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	h := &triggerHarness{f: f}
	trig := ha.NewEventTrigger(c, nil).WithStop(func(context.Context, string) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.stops++
		return nil
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = trig.Run(ctx, func(_ context.Context, r runstatus.Request) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.starts = append(h.starts, r)
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	testwait.Until(t, "the trigger to listen", noMQTTWait, func() bool {
		return f.Subscriptions(ha.EventStart) == 1 && f.Subscriptions(ha.EventStop) == 1
	})
	return h
}

// fire plays events as Home Assistant running the automation would, and
// waits for the trigger to start or stop.
func (h *triggerHarness) fire(t *testing.T, what string, events []firedEvent, wantStarts, wantStops int) {
	t.Helper()
	if len(events) == 0 {
		t.Fatalf("%s fires no event", what)
	}
	for _, e := range events {
		h.f.FireEvent(e.Type, e.Data)
	}
	testwait.Until(t, what+" to reach serve's trigger", noMQTTWait, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.starts) == wantStarts && h.stops == wantStops
	})
}

func TestStartWithoutMQTT(t *testing.T) {
	h := startTrigger(t)
	scripts := loadScripts(t)

	t.Run("blueprint with its default inputs", func(t *testing.T) {
		var bp struct {
			Blueprint struct {
				Input map[string]struct {
					Default any `yaml:"default"`
				} `yaml:"input"`
			} `yaml:"blueprint"`
			Variables map[string]any `yaml:"variables"`
			Actions   []any          `yaml:"actions"`
		}
		decodeYAML(t, "addon/blueprints/automation/gemini_supply/scheduled_grocery_run.yaml", &bp)
		vars := map[string]any{}
		for name, in := range bp.Blueprint.Input {
			vars[name] = in.Default
		}
		if vars["start_with"] != "event" {
			t.Errorf("blueprint: start_with defaults to %v, want event (works without MQTT)", vars["start_with"])
		}
		events, err := runActions(bp.Actions, vars, scripts)
		if err != nil {
			t.Fatalf("blueprint actions: %v", err)
		}
		h.fire(t, "the blueprint", events, 1, 0)

		// The MQTT choice still presses the button, and only then.
		vars["start_with"] = "button"
		if _, err := runActions(bp.Actions, vars, scripts); err == nil {
			t.Error("blueprint with start_with: button fires no button press")
		}
	})

	var is struct {
		IntentScript map[string]struct {
			Action []any `yaml:"action"`
		} `yaml:"intent_script"`
	}
	decodeYAML(t, "addon/intent_script.yaml", &is)
	t.Run("voice intent_script start", func(t *testing.T) {
		events, err := runActions(is.IntentScript["GeminiSupplyStart"].Action, nil, scripts)
		if err != nil {
			t.Fatalf("GeminiSupplyStart: %v", err)
		}
		h.fire(t, "GeminiSupplyStart", events, 2, 0)
	})
	t.Run("voice intent_script stop", func(t *testing.T) {
		events, err := runActions(is.IntentScript["GeminiSupplyStop"].Action, nil, scripts)
		if err != nil {
			t.Fatalf("GeminiSupplyStop: %v", err)
		}
		h.fire(t, "GeminiSupplyStop", events, 2, 1)
	})

	t.Run("dashboard card buttons", func(t *testing.T) {
		var card struct {
			Cards []struct {
				Cards []struct {
					Name      string         `yaml:"name"`
					TapAction map[string]any `yaml:"tap_action"`
				} `yaml:"cards"`
			} `yaml:"cards"`
		}
		decodeYAML(t, "addon/dashboard_card.yaml", &card)
		var starts, stops int
		for _, row := range card.Cards {
			for _, b := range row.Cards {
				tap := b.TapAction
				step := map[string]any{"action": tap["perform_action"], "target": tap["target"]}
				events, err := runActions([]any{step}, nil, scripts)
				if err != nil {
					t.Fatalf("button %q: %v", b.Name, err)
				}
				for _, e := range events {
					switch e.Type {
					case ha.EventStart:
						starts++
					case ha.EventStop:
						stops++
					}
				}
				h.fire(t, "the card's "+b.Name+" button", events, 2+starts, 1+stops)
			}
		}
		if starts != 1 || stops != 1 {
			t.Errorf("dashboard card: %d start and %d stop buttons, want one of each", starts, stops)
		}
	})
}
