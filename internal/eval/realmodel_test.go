package eval

import (
	"context"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// The path of a real model: a model name, a key and the service's address
// (gemini_base_url), here the fake Gemini server answered by a "model"
// that always says not found — a real genai client calls it as it would
// call Google's API. The eval judges what that model does: right for
// saffron, wrong for olive oil.
func TestEvalRealModelPath(t *testing.T) {
	cfg := baseConfig(t)
	var mu sync.Mutex
	models := map[string]bool{}
	fake := gemini.New(gemini.Config{APIKey: "eval-test-key", Script: func(req *gemini.Request) gemini.Reply {
		mu.Lock()
		models[req.Model] = true
		mu.Unlock()
		item := "it"
		if _, rest, ok := strings.Cut(req.Goal(), "Item: "); ok {
			item, _, _ = strings.Cut(rest, "\n")
		}
		return gemini.Reply{Text: "The store does not sell it.", Calls: []*genai.FunctionCall{
			gemini.Call(shop.ToolReportNotFound, map[string]any{"item_name": item, "explanation": "The store does not sell it."}),
		}}
	}})
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	cfg.GeminiAPIKey = config.Secret("eval-test-key")
	cfg.GeminiBaseURL = fake.URL()
	suite, err := ParseSuite([]byte(`cases:
  - name: saffron
    tests: not sold
    item: saffron
    expect: {outcome: not_found, asked: false}
  - name: olive-oil
    tests: sold, but this model says not found
    item: olive oil
    expect: {outcome: added, product: olive-oil-1l}
    scripted_fails: a mark for the scripted planner only
`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), suite.Cases, Options{Base: cfg, Settings: []Setting{{Model: "gemini-3.8-flash"}}, Concurrency: 2, Logger: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, o := rep.Results[0], rep.Results[1]
	if s.Status != StatusPass || s.Turns != 1 || s.Tokens == 0 || s.CostUSD <= 0 || s.CostUnknown {
		t.Errorf("saffron: %+v; want a pass in 1 turn with tokens and a known cost", s)
	}
	// The scripted planner's mark does not apply to another model.
	// Judged by the store's cart (the model's "not found" is shown, never trusted).
	if o.Status != StatusFail || !strings.Contains(strings.Join(o.Problems, "\n"), "the cart is empty; expected 1 × olive-oil-1l") {
		t.Errorf("olive oil: %s %q; want a failure saying the cart holds no olive oil", o.Status, o.Problems)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(models) != 1 || !strings.Contains(strings.Join(keys(models), ""), "gemini-3.8-flash") {
		t.Errorf("the model was called as %v, want gemini-3.8-flash", keys(models))
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
