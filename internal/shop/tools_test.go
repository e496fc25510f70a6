package shop

import (
	"context"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/report"
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
