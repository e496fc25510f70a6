package addon

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// inputRefs returns the names used with the !input tag anywhere under n.
func inputRefs(n *yaml.Node) []string {
	var refs []string
	if n.Tag == "!input" {
		refs = append(refs, n.Value)
	}
	for _, c := range n.Content {
		refs = append(refs, inputRefs(c)...)
	}
	return refs
}

func TestBlueprint(t *testing.T) {
	const rel = "addon/blueprints/automation/gemini_supply/scheduled_grocery_run.yaml"
	var doc yaml.Node
	if err := yaml.Unmarshal(readFile(t, rel), &doc); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	var bp struct {
		Blueprint struct {
			Name   string                    `yaml:"name"`
			Domain string                    `yaml:"domain"`
			Input  map[string]map[string]any `yaml:"input"`
		} `yaml:"blueprint"`
		Triggers []map[string]any `yaml:"triggers"`
		Actions  []map[string]any `yaml:"actions"`
	}
	if err := doc.Decode(&bp); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	if bp.Blueprint.Name == "" || bp.Blueprint.Domain != "automation" {
		t.Errorf("%s: blueprint needs a name and domain automation", rel)
	}
	if len(bp.Triggers) == 0 || len(bp.Actions) == 0 {
		t.Errorf("%s: an automation blueprint needs triggers and actions", rel)
	}
	for name, in := range bp.Blueprint.Input {
		if in["name"] == nil || in["selector"] == nil {
			t.Errorf("%s: input %q needs a name and a selector", rel, name)
		}
	}
	refs := inputRefs(&doc)
	if len(refs) == 0 {
		t.Errorf("%s: no !input references", rel)
	}
	for _, r := range refs {
		if _, ok := bp.Blueprint.Input[r]; !ok {
			t.Errorf("%s: !input %q is not declared under blueprint.input", rel, r)
		}
	}
	for name := range bp.Blueprint.Input {
		if !slices.Contains(refs, name) {
			t.Errorf("%s: input %q is declared but never used", rel, name)
		}
	}
}

func TestAssistSentencesAndIntentScript(t *testing.T) {
	var sentences struct {
		Language string `yaml:"language"`
		Intents  map[string]struct {
			Data []struct {
				Sentences []string `yaml:"sentences"`
			} `yaml:"data"`
		} `yaml:"intents"`
	}
	decodeYAML(t, "addon/custom_sentences/en/gemini_supply.yaml", &sentences)
	if sentences.Language != "en" {
		t.Errorf("custom sentences: language = %q, want en", sentences.Language)
	}
	var script struct {
		IntentScript map[string]struct {
			Action []map[string]any `yaml:"action"`
			Speech struct {
				Text string `yaml:"text"`
			} `yaml:"speech"`
		} `yaml:"intent_script"`
	}
	decodeYAML(t, "addon/intent_script.yaml", &script)
	if len(sentences.Intents) == 0 {
		t.Fatal("custom sentences: no intents")
	}
	var all []string
	for intent, def := range sentences.Intents {
		for _, d := range def.Data {
			all = append(all, d.Sentences...)
		}
		s, ok := script.IntentScript[intent]
		if !ok {
			t.Errorf("intent %q has no intent_script", intent)
			continue
		}
		if len(s.Action) == 0 || s.Speech.Text == "" {
			t.Errorf("intent_script %q needs an action and a spoken reply", intent)
		}
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"grocery run", "grocery cart"} {
		if !strings.Contains(joined, want) {
			t.Errorf("custom sentences do not cover %q", want)
		}
	}
}

func TestDashboardCard(t *testing.T) {
	var card struct {
		Type  string           `yaml:"type"`
		Cards []map[string]any `yaml:"cards"`
	}
	decodeYAML(t, "addon/dashboard_card.yaml", &card)
	if card.Type == "" || len(card.Cards) == 0 {
		t.Errorf("dashboard card: needs a type and cards, got %+v", card)
	}
}
