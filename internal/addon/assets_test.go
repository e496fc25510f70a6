package addon

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gemini-supply/gemini-supply/internal/messages"
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

// The Assist sentences and intent scripts, one pair per language the
// catalogue speaks: the same intents, each with an action and the spoken
// reply the catalogue says (voice.started, voice.stopped), and the actions
// of every language's script the same.
func TestAssistSentencesAndIntentScript(t *testing.T) {
	type intentScript struct {
		IntentScript map[string]struct {
			Action []map[string]any `yaml:"action"`
			Speech struct {
				Text string `yaml:"text"`
			} `yaml:"speech"`
		} `yaml:"intent_script"`
	}
	speech := map[string]string{"GeminiSupplyStart": "voice.started", "GeminiSupplyStop": "voice.stopped"}
	covers := map[string][]string{"en": {"grocery run", "grocery cart"}, "fr": {"épicerie", "panier"}}
	var english intentScript
	decodeYAML(t, "addon/intent_script.yaml", &english)
	for _, lang := range messages.Languages {
		var sentences struct {
			Language string `yaml:"language"`
			Intents  map[string]struct {
				Data []struct {
					Sentences []string `yaml:"sentences"`
				} `yaml:"data"`
			} `yaml:"intents"`
		}
		decodeYAML(t, "addon/custom_sentences/"+lang+"/gemini_supply.yaml", &sentences)
		if sentences.Language != lang {
			t.Errorf("custom sentences %s: language = %q", lang, sentences.Language)
		}
		file := "addon/intent_script.yaml"
		if lang != "en" {
			file = "addon/intent_script." + lang + ".yaml"
		}
		var script intentScript
		decodeYAML(t, file, &script)
		if len(sentences.Intents) != len(speech) || len(script.IntentScript) != len(speech) {
			t.Errorf("%s: %d intents, %d intent scripts, want %d", lang, len(sentences.Intents), len(script.IntentScript), len(speech))
		}
		var all []string
		for intent, def := range sentences.Intents {
			for _, d := range def.Data {
				all = append(all, d.Sentences...)
			}
			s, ok := script.IntentScript[intent]
			if !ok {
				t.Errorf("%s: intent %q has no intent_script", file, intent)
				continue
			}
			if len(s.Action) == 0 || s.Speech.Text == "" {
				t.Errorf("%s: intent_script %q needs an action and a spoken reply", file, intent)
			}
			if want := messages.For(lang).T(speech[intent]); s.Speech.Text != want {
				t.Errorf("%s: %s says %q, the catalogue's %s is %q", file, intent, s.Speech.Text, speech[intent], want)
			}
			if fmt.Sprint(s.Action) != fmt.Sprint(english.IntentScript[intent].Action) {
				t.Errorf("%s: %s does %v, the English script %v", file, intent, s.Action, english.IntentScript[intent].Action)
			}
		}
		joined := strings.Join(all, "\n")
		for _, want := range covers[lang] {
			if !strings.Contains(joined, want) {
				t.Errorf("custom sentences %s do not cover %q", lang, want)
			}
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
