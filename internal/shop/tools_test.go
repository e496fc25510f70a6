package shop

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// A question about a sold-out product is never read as "several match"
// (its answer would be learnt as the item's product): a missing or unknown
// reason is read from the context.
func TestQuestionReason(t *testing.T) {
	for _, tc := range []struct{ reason, context, want string }{
		{"out_of_stock", "", reasonOutOfStock},
		{" Several_Match ", "Every butter is out of stock", reasonSeveral},
		{"no_match", "", reasonNoMatch},
		{"", "Every product matching butter is out of stock.", reasonOutOfStock},
		{"because", "The Natrel milk is SOLD OUT", reasonOutOfStock},
		{"", "Currently unavailable in your area", reasonOutOfStock},
		{"", "Two sizes", reasonSeveral},
	} {
		if got := questionReason(tc.reason, tc.context); got != tc.want {
			t.Errorf("questionReason(%q, %q) = %q, want %q", tc.reason, tc.context, got, tc.want)
		}
	}
}

// The item's rules: "#ask" with nobody to ask is left on the list
// (skipped, no agent); "#nosub" ends a sold-out item not found when the
// model asks anyway, with no question put to the household.
func TestItemRules(t *testing.T) {
	soldOut := func(ctx context.Context, c *fakeCall) agent.Result {
		_, res, _ := c.use(ctx, ToolPresentOptions, map[string]any{"item_name": c.query, "reason": "out_of_stock",
			"options": []any{map[string]any{"name": "Becel Margarine", "price": "$7.49"}}, "context": "Every butter is out of stock."})
		return res
	}
	p := newFakeProvider("bananas #ask", "butter #nosub")
	a := newFakeAgent(map[string]behaviour{"bananas": added("Bananas", "$1.99"), "butter": soldOut})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeSkipped || it.Explanation != askNobody || a.attemptsFor("bananas") != 0 {
		t.Errorf("bananas #ask without a channel: %+v", it)
	}
	// With a channel: butter #nosub is not asked about.
	p = newFakeProvider("butter #nosub")
	r := &fakeResolver{answer: func(choice.Question) (choice.Answer, error) { return choice.Answer{Kind: choice.KindProduct}, nil }}
	cfg = baseConfig(t, p, &fakeHost{authed: true}, newFakeAgent(map[string]behaviour{"butter": soldOut}))
	cfg.Resolver = r
	if res, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeNotFound || !strings.Contains(p.notFound["id1"], "never substitute") || len(r.questions) != 0 {
		t.Errorf("butter #nosub: %+v, list %q, %d questions", it, p.notFound["id1"], len(r.questions))
	}
	// #ask with a channel, but the model adds without asking: the item
	// says so, typed not_asked in the review pack (not a cart problem).
	p = newFakeProvider("bananas #ask")
	r = &fakeResolver{answer: func(choice.Question) (choice.Answer, error) { return choice.Answer{Kind: choice.KindProduct}, nil }}
	cfg = baseConfig(t, p, &fakeHost{authed: true}, newFakeAgent(map[string]behaviour{"bananas": added("Bananas", "$1.99")}))
	cfg.Resolver = r
	if res, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeAdded || !it.NotAsked || len(it.Warnings) != 0 ||
		!slices.Contains(res.Summary.Warnings, "bananas: "+report.NotAskedWarning) {
		t.Errorf("bananas #ask added unasked: %+v, summary warnings %q", it, res.Summary.Warnings)
	}
	if res.Pack == nil || len(res.Pack.Items) != 1 || len(res.Pack.Items[0].Warnings) != 1 || res.Pack.Items[0].Warnings[0].Kind != reviewpack.WarnNotAsked {
		t.Errorf("review pack: %+v", res.Pack)
	}
	// The same rule written in the item's description, in French.
	p = newFakeProvider("butter")
	p.items[0].Description = "Pas de substitut, merci"
	r = &fakeResolver{answer: func(choice.Question) (choice.Answer, error) { return choice.Answer{Kind: choice.KindProduct}, nil }}
	cfg = baseConfig(t, p, &fakeHost{authed: true}, newFakeAgent(map[string]behaviour{"butter": soldOut}))
	cfg.Resolver = r
	if res, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeNotFound || !strings.Contains(p.notFound["id1"], "never substitute") || len(r.questions) != 0 {
		t.Errorf("butter described \"pas de substitut\": %+v, list %q, %d questions", it, p.notFound["id1"], len(r.questions))
	}
}

// Never substitute, where the add is reported: with a remembered product,
// another product reported added (the remembered one sold out and the agent
// added another directly) is refused and the agent told to report not
// found; the remembered product, the household's own choice, or any pick
// when nothing is remembered is recorded.
func TestReportAddedKeepsNeverSubstitute(t *testing.T) {
	butter := Remembered{Name: "Lactantia Salted Butter 454 g", URL: "https://store.test/p/butter-salted-454g?ref=x", ProductID: "butter-salted-454g"}
	margarine := map[string]any{"item_name": "Becel Margarine 907 g", "price_text": "$7.49", "url": "https://store.test/p/margarine-907g", "quantity": 1.0}
	tests := []struct {
		name       string
		nosub      bool
		remembered *Remembered
		pref       *PreferredProduct
		chosen     bool
		fromUser   bool
		args       map[string]any
		recorded   bool
	}{
		{"another product for a remembered one", true, &butter, nil, false, false, margarine, false},
		{"another product for a pinned one", true, nil, &PreferredProduct{Name: "Lactantia Salted Butter 454 g", URL: "https://store.test/p/butter-salted-454g"}, false, false, margarine, false},
		{"the remembered product, by its page", true, &butter, nil, false, false,
			map[string]any{"item_name": "Salted butter", "price_text": "$6.99", "url": "https://store.test/p/butter-salted-454g/", "quantity": 1.0}, true},
		{"the remembered product, by its name", true, &butter, nil, false, false,
			map[string]any{"item_name": "lactantia salted butter, 454 g", "price_text": "$6.99", "url": "https://store.test/search?q=butter", "quantity": 1.0}, true},
		{"nothing remembered: the agent's pick is the item's product", true, nil, nil, false, false, margarine, true},
		{"the household chose it", true, &butter, nil, true, false, margarine, true},
		{"the household typed it", true, &butter, nil, false, true, margarine, true},
		{"without the rule", false, &butter, nil, false, false, margarine, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{}
			if tt.pref != nil {
				cfg.Preferences = &fakePrefs{m: map[string]PreferredProduct{"butter": *tt.pref}}
			}
			it := &itemRun{r: &run{cfg: cfg, log: slog.New(slog.DiscardHandler)}, p: &planned{item: shoppinglist.Item{ID: "b", Name: "butter", Product: "butter", Quantity: 1}},
				query: "butter", policy: shoppinglist.Policy{NoSub: tt.nosub}, remembered: tt.remembered, fromUser: tt.fromUser}
			if tt.chosen {
				it.chosen = &chosenOption{opt: choice.Option{Name: "Becel Margarine 907 g"}, substitute: false}
			}
			ended := 0
			ts := &toolSet{item: it, att: &attempt{}, onEnd: func(context.Context, ending) { ended++ }}
			out, err := ts.reportAdded(context.Background(), tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := ended == 1 && out.End && ts.att.ending() != nil; got != tt.recorded {
				t.Fatalf("recorded %v, want %v: %v", got, tt.recorded, out.Response)
			}
			if !tt.recorded {
				msg, _ := out.Response["error"].(string)
				if out.End || !strings.Contains(msg, ToolReportNotFound) || !strings.Contains(msg, "Lactantia Salted Butter") {
					t.Errorf("refusal does not tell the agent to report not found: %+v", out)
				}
			}
		})
	}
}

// Any brand (#anybrand, or the item's description): a question between
// several matches is not put to the household the first time — the agent
// is told to add the ordinary choice itself; asked again in the same
// attempt (the products differ in more than brand), the household is
// asked. Other questions, and an item that also says always ask, are asked
// as usual.
func TestAnyBrandIsNotAskedWhichBrand(t *testing.T) {
	opts := []any{
		map[string]any{"name": "Natrel 2% Milk 2 L", "price": "$5.49"},
		map[string]any{"name": "Lactantia 2% Milk 2 L", "price": "$5.29"},
	}
	tests := []struct {
		name   string
		policy shoppinglist.Policy
		reason string
		asked  []bool // per call of present_options: was the household asked
	}{
		{"any brand, several match", shoppinglist.Policy{AnyBrand: true}, "several_match", []bool{false, true}},
		{"any brand, out of stock", shoppinglist.Policy{AnyBrand: true}, "out_of_stock", []bool{true}},
		{"any brand and always ask", shoppinglist.Policy{AnyBrand: true, Ask: true}, "several_match", []bool{true}},
		{"no rule", shoppinglist.Policy{}, "several_match", []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &fakeResolver{answer: func(choice.Question) (choice.Answer, error) {
				return choice.Answer{Kind: choice.KindProduct, Index: 1}, nil
			}}
			it := &itemRun{r: &run{log: slog.New(slog.DiscardHandler), now: time.Now}, p: &planned{item: shoppinglist.Item{ID: "m", Name: "milk", Product: "milk", Quantity: 1}},
				query: "milk", policy: tt.policy}
			ts := &toolSet{item: it, att: &attempt{}, resolver: res, onEnd: func(context.Context, ending) {}}
			for i, want := range tt.asked {
				before := len(res.questions)
				out, err := ts.presentOptions(context.Background(), map[string]any{"options": opts, "reason": tt.reason, "context": "Two 2% milks match."})
				if err != nil {
					t.Fatal(err)
				}
				if asked := len(res.questions) > before; asked != want {
					t.Fatalf("call %d: asked %v, want %v: %v", i+1, asked, want, out.Response)
				}
				if !want {
					if msg, _ := out.Response["error"].(string); out.End || !strings.Contains(msg, "any brand") {
						t.Errorf("call %d: the agent is not told to choose itself: %+v", i+1, out)
					}
				}
			}
		})
	}
}
