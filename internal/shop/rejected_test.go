package shop

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

type fakeRejections map[string][]WrongProduct

func (f fakeRejections) Rejected(item string) []WrongProduct { return f[item] }

// TestTabRefusesAProductMarkedWrong: the item's tab refuses an add of a
// product the household marked wrong for it before the store sees it
// (whatever the model does), lets another product through, and the item's
// result says so.
func TestTabRefusesAProductMarkedWrong(t *testing.T) {
	p := newFakeProvider("a")
	h, tabs := recordingHost()
	a := newFakeAgent(map[string]behaviour{"a": addsThen("b", 1, addsThen("a", 1, added("A", "$1")))})
	cfg := baseConfig(t, p, h, a)
	cfg.Rejections = fakeRejections{"a": {{Name: "Product B", URL: "https://store.test/p/b"}}}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	units, refused := cartOf(tabs())
	if units["b"] != 0 || units["a"] != 1 || refused != 1 {
		t.Errorf("the store accepted %v with %d refused; want 1 × a, b refused", units, refused)
	}
	if w := strings.Join(res.Summary.Items[0].Warnings, " "); !strings.Contains(w, "Product B") || !strings.Contains(w, "marked wrong") {
		t.Errorf("the result does not say the wrong product was refused: %q", w)
	}
}

// TestWrongProductIsNeverTheItems: a report_item_added of a product marked
// wrong (by id, address or name) is not recorded, and a question never
// offers one.
func TestWrongProductIsNeverTheItems(t *testing.T) {
	juice := WrongProduct{Name: "Tropicana Orange Juice", URL: "https://store.test/p/orange-juice-1540ml"}
	newItem := func() *itemRun {
		return &itemRun{r: &run{log: slog.New(slog.DiscardHandler)}, p: &planned{item: shoppinglist.Item{ID: "o", Name: "oranges", Product: "oranges", Quantity: 1}},
			query: "oranges", rejected: []WrongProduct{juice}}
	}
	for _, tc := range []struct {
		name     string
		args     map[string]any
		recorded bool
	}{
		{"by its page", map[string]any{"item_name": "Orange Juice No Pulp", "price_text": "$5.49", "url": "https://store.test/p/orange-juice-1540ml/"}, false},
		{"by its name", map[string]any{"item_name": "tropicana orange juice", "price_text": "$5.49"}, false},
		{"by its name, on a search page", map[string]any{"item_name": "Tropicana Orange Juice", "price_text": "$5.49", "url": "https://store.test/search?q=oranges"}, false},
		{"another product", map[string]any{"item_name": "Navel Oranges", "price_text": "$3.99", "url": "https://store.test/p/oranges-navel"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := newItem()
			ts := &toolSet{item: it, att: &attempt{}, onEnd: func(context.Context, ending) {}}
			out, err := ts.reportAdded(context.Background(), tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := out.End && ts.att.ending() != nil; got != tc.recorded {
				t.Fatalf("recorded %v, want %v: %v", got, tc.recorded, out.Response)
			}
			if msg, _ := out.Response["error"].(string); !tc.recorded && !strings.Contains(msg, "marked") {
				t.Errorf("the refusal does not say why: %v", out.Response)
			}
		})
	}

	res := &fakeResolver{answer: func(choice.Question) (choice.Answer, error) {
		return choice.Answer{Kind: choice.KindProduct, Index: 0}, nil
	}}
	it := newItem()
	it.r.now = time.Now
	ts := &toolSet{item: it, att: &attempt{}, resolver: res, onEnd: func(context.Context, ending) {}}
	juiceOpt := map[string]any{"name": "Tropicana Orange Juice", "price": "$5.49", "url": juice.URL}
	out, err := ts.presentOptions(context.Background(), map[string]any{"options": []any{juiceOpt}, "reason": "no_match", "context": "No oranges."})
	if err != nil {
		t.Fatal(err)
	}
	if msg, _ := out.Response["error"].(string); len(res.questions) != 0 || !strings.Contains(msg, "marked wrong") {
		t.Fatalf("only the wrong product offered: asked %d, %v", len(res.questions), out.Response)
	}
	navel := map[string]any{"name": "Navel Oranges", "price": "$3.99", "url": "https://store.test/p/oranges-navel"}
	if _, err := ts.presentOptions(context.Background(), map[string]any{"options": []any{juiceOpt, navel}, "reason": "several_match", "context": "Two."}); err != nil {
		t.Fatal(err)
	}
	if len(res.questions) != 1 || len(res.questions[0].Options) != 1 || res.questions[0].Options[0].Name != "Navel Oranges" {
		t.Errorf("the question offered %+v", res.questions)
	}
}

// TestGoalNamesEveryWrongProduct: the goal names each product marked wrong.
func TestGoalNamesEveryWrongProduct(t *testing.T) {
	p, err := LoadPrompts()
	if err != nil {
		t.Fatal(err)
	}
	goal, err := p.Goal("demo", PromptData{ItemName: "oranges", Query: "oranges", Quantity: 1, CanAsk: true,
		Wrong: []WrongProduct{{Name: "Orange Juice", URL: "https://s.test/p/oj"}, {Name: "Orange Soda"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Wrong product: https://s.test/p/oj\n", "Wrong product: Orange Soda\n", `"Orange Juice" is the wrong product`, "An add of a wrong product is refused"} {
		if !strings.Contains(goal, want) {
			t.Errorf("the goal lacks %q:\n%s", want, goal)
		}
	}
}
