// Package eval measures how well a model shops: a suite of cases (YAML),
// each one list item shopped in a fresh demo store through the real run
// path (app.Runner: real Chromium, the store policy, the genai client), with
// the household's answers scripted per case, judged against the case's
// expected outcome. It never touches a real store.
package eval

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
)

//go:embed suite.yaml
var defaultSuite []byte

// Outcome is what a case expects an item to end as.
type Outcome string

// The outcomes a case can expect.
const (
	OutcomeAdded    Outcome = "added"
	OutcomeNotFound Outcome = "not_found"
)

// The splits of a suite.
const (
	// SplitDev cases may be used to tune the prompt and the offline planner.
	SplitDev = "dev"
	// SplitTest cases are held out: never used to tune either; their
	// score says how the agent does on what it was not tuned on.
	SplitTest = "test"
)

// Case is one scenario: one list item, the household's answer, what must
// happen.
type Case struct {
	// Name identifies the case (--case, the reports): lower case, digits, '-'.
	Name string `yaml:"name" json:"name"`
	// Tests says in words what the case tests.
	Tests string `yaml:"tests" json:"tests"`
	// Item is the list entry as the household wrote it ("2x eggs").
	Item string `yaml:"item" json:"item"`
	// Household is the household's answer to a question (present_options):
	// "skip" (the default: chooses nothing), "choose PRODUCT-ID" (the
	// offered option showing that product — by its id when the option
	// gives one, else by its name as the store shows it), "choose N" (the
	// Nth option offered); nothing when it is not offered; "search TEXT" (search again for TEXT), "absent" (no question
	// channel: the agent cannot ask).
	Household string `yaml:"household,omitempty" json:"household,omitempty"`
	// Trap says why the store's first in-stock result is wrong for this
	// item (a decoy ranked first, another size, an unsold item sharing a
	// word…); empty when it is right.
	Trap string `yaml:"trap,omitempty" json:"trap,omitempty"`
	// Group is the kind of case the results are summed by (default: the
	// name's first word, "trap" of "trap-crab").
	Group string `yaml:"group,omitempty" json:"group,omitempty"`
	// Split is "dev" (the default: cases the prompt and the offline planner
	// may be tuned on) or "test" (held out: never used to tune either).
	Split string `yaml:"split,omitempty" json:"split,omitempty"`
	// PromptInjectionDetection, when set, overrides the setting.
	PromptInjectionDetection *bool `yaml:"prompt_injection_detection,omitempty" json:"prompt_injection_detection,omitempty"`
	// Expect is the outcome the case requires.
	Expect Expect `yaml:"expect" json:"expect"`
	// ScriptedFails: the offline scripted planner fails this case, and why
	// (it reads the store's catalogue instead of the page). With
	// --model scripted the case is expected to fail; a pass is reported
	// as a failure so the mark is removed.
	ScriptedFails string `yaml:"scripted_fails,omitempty" json:"scripted_fails,omitempty"`
	// ScriptedProvesNothing: the scripted planner passes, but only because
	// it reads the store's internals; a real model's pass is what counts.
	ScriptedProvesNothing string `yaml:"scripted_proves_nothing,omitempty" json:"scripted_proves_nothing,omitempty"`
}

// Expect is a case's expected outcome.
type Expect struct {
	Outcome Outcome `yaml:"outcome" json:"outcome"`
	// Product is the product id the cart must hold (added); Products lists
	// several acceptable ones instead.
	Product  string   `yaml:"product,omitempty" json:"product,omitempty"`
	Products []string `yaml:"products,omitempty" json:"products,omitempty"`
	// Quantity is how many units of it the cart must hold (added; default 1).
	Quantity int `yaml:"quantity,omitempty" json:"quantity,omitempty"`
	// Asked, when set, says whether the household must be asked.
	Asked *bool `yaml:"asked,omitempty" json:"asked,omitempty"`
}

// acceptable lists the product ids an added outcome accepts.
func (e Expect) acceptable() []string {
	if e.Product != "" {
		return append([]string{e.Product}, e.Products...)
	}
	return e.Products
}

// Suite is a list of cases.
type Suite struct {
	Cases []Case `yaml:"cases" json:"cases"`
}

// DefaultSuite is the suite in the repository (internal/eval/suite.yaml).
func DefaultSuite() (Suite, error) {
	return ParseSuite(defaultSuite)
}

// LoadSuite reads a suite file.
func LoadSuite(path string) (Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Suite{}, fmt.Errorf("read the eval suite: %w", err)
	}
	s, err := ParseSuite(b)
	if err != nil {
		return Suite{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

var caseName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// ParseSuite reads a suite and checks it: unknown fields, duplicate names,
// product ids the demo store does not sell, expectations that cannot be
// judged. Every problem is reported, one a line.
func ParseSuite(b []byte) (Suite, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s Suite
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return Suite{}, errors.New("the eval suite is empty")
		}
		return Suite{}, fmt.Errorf("the eval suite: %w", err)
	}
	var problems []string
	bad := func(i int, c Case, format string, args ...any) {
		who := fmt.Sprintf("case %d", i+1)
		if c.Name != "" {
			who += fmt.Sprintf(" (%s)", c.Name)
		}
		problems = append(problems, who+": "+fmt.Sprintf(format, args...))
	}
	if len(s.Cases) == 0 {
		problems = append(problems, "no cases")
	}
	seen := map[string]int{}
	for i := range s.Cases {
		c := &s.Cases[i]
		switch {
		case c.Name == "":
			bad(i, *c, "no name")
		case !caseName.MatchString(c.Name):
			bad(i, *c, "the name %q is not lower case letters, digits and '-'", c.Name)
		}
		if j, dup := seen[c.Name]; dup && c.Name != "" {
			bad(i, *c, "the name is also case %d's", j+1)
		} else {
			seen[c.Name] = i
		}
		if strings.TrimSpace(c.Item) == "" {
			bad(i, *c, "no item")
		}
		if strings.TrimSpace(c.Tests) == "" {
			bad(i, *c, "no tests (say what the case tests)")
		}
		if _, err := parseHousehold(c.Household); err != nil {
			bad(i, *c, "%v", err)
		}
		if h, _ := parseHousehold(c.Household); h.kind == answerChoose {
			if n, err := strconv.Atoi(h.arg); err == nil {
				if n < 1 {
					bad(i, *c, "household chooses option %d; positions start at 1", n)
				}
			} else if _, ok := demostore.ProductByID(h.arg); !ok {
				bad(i, *c, "household chooses %q, which the demo store does not sell", h.arg)
			}
		}
		switch c.Split {
		case "":
			c.Split = SplitDev
		case SplitDev, SplitTest:
		default:
			bad(i, *c, "split %q is not dev or test", c.Split)
		}
		if c.Group == "" {
			c.Group = defaultGroup(*c)
		}
		if c.ScriptedFails != "" && c.ScriptedProvesNothing != "" {
			bad(i, *c, "scripted_fails and scripted_proves_nothing exclude each other")
		}
		e := &c.Expect
		switch e.Outcome {
		case OutcomeAdded:
			if len(e.acceptable()) == 0 {
				bad(i, *c, "expect added needs a product (or products)")
			}
			for _, id := range e.acceptable() {
				if _, ok := demostore.ProductByID(id); !ok {
					bad(i, *c, "expected product %q is not in the demo store's catalogue", id)
				}
			}
			if e.Quantity < 0 {
				bad(i, *c, "expected quantity %d is negative", e.Quantity)
			}
			if e.Quantity == 0 {
				e.Quantity = 1
			}
		case OutcomeNotFound:
			if len(e.acceptable()) > 0 || e.Quantity != 0 {
				bad(i, *c, "expect not_found takes no product or quantity")
			}
		case "":
			bad(i, *c, "no expect.outcome (added or not_found)")
		default:
			bad(i, *c, "expect.outcome %q is not added or not_found", e.Outcome)
		}
	}
	if len(problems) > 0 {
		return Suite{}, fmt.Errorf("the eval suite is not valid:\n  %s", strings.Join(problems, "\n  "))
	}
	return s, nil
}

// Select returns the cases named in names (every one must exist) that
// contain filter in their name or item (case-insensitive); all when both
// are empty.
func (s Suite) Select(names []string, filter string) ([]Case, error) {
	byName := map[string]Case{}
	for _, c := range s.Cases {
		byName[c.Name] = c
	}
	var out []Case
	if len(names) > 0 {
		for _, n := range names {
			c, ok := byName[n]
			if !ok {
				return nil, fmt.Errorf("no case named %q in the suite", n)
			}
			out = append(out, c)
		}
	} else {
		out = append(out, s.Cases...)
	}
	if f := strings.ToLower(strings.TrimSpace(filter)); f != "" {
		var kept []Case
		for _, c := range out {
			if strings.Contains(c.Name, f) || strings.Contains(strings.ToLower(c.Item), f) || strings.Contains(strings.ToLower(c.Tests), f) {
				kept = append(kept, c)
			}
		}
		out = kept
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no case matches --filter %q", filter)
	}
	return out, nil
}

// defaultGroup is a case's group when it names none: the kind of its trap
// ("decoy", "wrong kind", "unit price": the trap's words before ':'), else
// the name's first word ("plain" of "plain-milk").
func defaultGroup(c Case) string {
	if kind, _, ok := strings.Cut(c.Trap, ":"); ok && len(kind) <= 40 {
		return "trap: " + strings.TrimSpace(kind)
	}
	g, _, _ := strings.Cut(c.Name, "-")
	return g
}
