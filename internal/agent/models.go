package agent

import (
	"fmt"
	"strings"
	"time"
)

// DefaultModel is the Computer Use model used when Config.Model is empty: the
// newest generally available (GA) model the Gemini API documents with
// Computer Use (see docs/agent.md, "Models", for the pages and dates).
const DefaultModel = "gemini-3.8-flash"

// Vocabulary is the set of predefined Computer Use actions a model speaks.
type Vocabulary string

// Vocabularies (docs/agent.md, "Action vocabularies").
const (
	VocabularyOlder Vocabulary = "older" // click_at, type_text_at, key_combination, …
	VocabularyNewer Vocabulary = "newer" // click, type, hotkey, …; actions may carry an "intent"
)

// Price is a model's list price in USD per million tokens, output including
// thinking tokens (the Gemini API bills thoughts as output), from a day on.
type Price struct {
	// From is the first day the price applies (zero: since the model's release).
	From          time.Time
	Input, Output float64
	// Source is the page the price was read from, Checked the day it was read.
	Source  string
	Checked string
}

// ModelInfo is what the agent knows about one Gemini model.
type ModelInfo struct {
	Name string
	// ComputerUse: the model accepts the Computer Use tool (it can drive a tab).
	ComputerUse bool
	// ReadsPages: a general model that can read screenshots into structured
	// output (the cart review); false for the Computer-Use-only preview model.
	ReadsPages bool
	GA         bool
	Vocabulary Vocabulary
	// ThinkingLevels the model accepts (empty: thinking_level is not sent).
	ThinkingLevels []string
	// PromptInjectionDetection: the ComputerUse tool's
	// enablePromptInjectionDetection flag is documented for this model.
	PromptInjectionDetection bool
	// Prices, oldest first; empty when no official price was found.
	Prices []Price
	// Retires is the announced shutdown day (zero: none announced), and
	// RetireSource the page that says so.
	Retires      time.Time
	RetireSource string
	// RoutedTo is the model Gemini answers a deprecated model's requests
	// with (RoutedSource says so): the name still works, another model
	// drives the tab.
	RoutedTo, RoutedSource string
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

const (
	srcPricing      = "https://ai.google.dev/gemini-api/docs/pricing"
	srcDeprecations = "https://ai.google.dev/gemini-api/docs/deprecations"
	srcModel35Flash = "https://ai.google.dev/gemini-api/docs/models/gemini-3.5-flash"
)

var gemini3Levels = []string{"low", "medium", "high"}

// promoThenList: the introductory price of the 3.6–3.8 Flash models through
// 2026-12-31, then the list price from 2027-01-01 (see docs/agent.md for the sources).
func promoThenList(checked string) []Price {
	return []Price{
		{Input: 0.75, Output: 3.75, Source: srcPricing, Checked: checked},
		{From: day("2027-01-01"), Input: 1.50, Output: 7.50, Source: srcPricing, Checked: checked},
	}
}

// Models is the model table. Prices and dates come from the official pages
// named in each entry; docs/agent.md lists them with the day they were read.
var Models = []ModelInfo{
	{
		Name: "gemini-3.8-flash", ComputerUse: true, ReadsPages: true, GA: true, Vocabulary: VocabularyNewer,
		ThinkingLevels: gemini3Levels, PromptInjectionDetection: true,
		Prices: promoThenList("2026-11-23"),
	},
	{
		Name: "gemini-3.7-flash", ComputerUse: true, ReadsPages: true, GA: true, Vocabulary: VocabularyNewer,
		ThinkingLevels: gemini3Levels, PromptInjectionDetection: true,
		Prices: promoThenList("2026-11-23"),
	},
	{
		Name: "gemini-3.6-flash", ComputerUse: true, ReadsPages: true, GA: true, Vocabulary: VocabularyNewer,
		ThinkingLevels: []string{"minimal", "low", "medium", "high"}, PromptInjectionDetection: true,
		Prices: promoThenList("2026-11-23"),
	},
	{
		Name: "gemini-3.5-flash", ComputerUse: true, ReadsPages: true, GA: true, Vocabulary: VocabularyNewer,
		ThinkingLevels: []string{"minimal", "low", "medium", "high"},
		RoutedTo:       "gemini-3.6-flash", RoutedSource: srcModel35Flash,
	},
	{
		Name: "gemini-3-flash-preview", ComputerUse: true, ReadsPages: true, Vocabulary: VocabularyOlder,
		ThinkingLevels: []string{"minimal", "low", "medium", "high"},
	},
	{
		Name: "gemini-3.1-pro-preview", ComputerUse: true, ReadsPages: true, Vocabulary: VocabularyOlder,
		ThinkingLevels: gemini3Levels,
	},
	{
		Name: "gemini-2.5-computer-use-preview-10-2025", ComputerUse: true, Vocabulary: VocabularyOlder,
	},
	{
		Name: "gemini-2.5-flash", ReadsPages: true, GA: true,
		Retires: day("2026-12-01"), RetireSource: srcDeprecations,
	},
	{
		Name: "gemini-2.5-pro", ReadsPages: true, GA: true,
		Retires: day("2026-12-01"), RetireSource: srcDeprecations,
	},
}

// LookupModel returns the table entry of a model ("models/" prefix allowed).
func LookupModel(name string) (ModelInfo, bool) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "models/")
	for _, m := range Models {
		if m.Name == name {
			return m, true
		}
	}
	return ModelInfo{}, false
}

// PriceAt is the model's price on day t; ok is false when the table has no
// price for it (the cost is then unknown, never guessed).
func (m ModelInfo) PriceAt(t time.Time) (Price, bool) {
	var p Price
	ok := false
	for _, q := range m.Prices {
		if q.From.IsZero() || !t.Before(q.From) {
			p, ok = q, true
		}
	}
	return p, ok
}

// SoonWindow is how long before a model's shutdown it is called "soon retired".
const SoonWindow = 60 * 24 * time.Hour

// Retired reports whether the model's announced shutdown day has come.
func (m ModelInfo) Retired(now time.Time) bool {
	return !m.Retires.IsZero() && !now.Before(m.Retires)
}

// ModelWarning is the warning to log about using model for Computer Use on
// day now, or "" when there is nothing to say.
func ModelWarning(model string, now time.Time) string {
	m, ok := LookupModel(model)
	switch {
	case !ok:
		return fmt.Sprintf("model %q is not in the model table: it is used as asked, but its action vocabulary is guessed and its cost is unknown unless prices are configured; the default is %s", model, DefaultModel)
	case m.Retired(now):
		return fmt.Sprintf("model %s was shut down on %s (%s): calls will fail; use %s", model, m.Retires.Format(time.DateOnly), m.RetireSource, DefaultModel)
	case !m.Retires.IsZero() && m.Retires.Sub(now) < SoonWindow:
		return fmt.Sprintf("model %s will be shut down on %s (%s): switch to %s before then", model, m.Retires.Format(time.DateOnly), m.RetireSource, DefaultModel)
	case m.RoutedTo != "":
		return fmt.Sprintf("model %s is deprecated: Gemini answers its requests with %s (%s); its cost is unknown; use %s", model, m.RoutedTo, m.RoutedSource, DefaultModel)
	case !m.ComputerUse:
		return fmt.Sprintf("model %s does not support the Computer Use tool; use %s", model, DefaultModel)
	case !m.GA:
		return fmt.Sprintf("model %s is a preview model: it may change or be shut down at short notice; the default %s is generally available", model, DefaultModel)
	}
	return ""
}

// modelSupports reports whether a flag is on in the table for model; unknown
// models get false (nothing is sent that the model might reject).
func modelSupports(model string, f func(ModelInfo) bool) bool {
	m, ok := LookupModel(model)
	return ok && f(m)
}
