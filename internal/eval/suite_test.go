package eval

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

func TestDefaultSuite(t *testing.T) {
	s, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cases) < 30 {
		t.Fatalf("the suite has %d cases; the eval promises at least 30", len(s.Cases))
	}
	kinds := map[string]bool{}
	for _, c := range s.Cases {
		kinds[strings.SplitN(c.Name, "-", 2)[0]] = true
	}
	for _, k := range []string{"plain", "qty", "size", "brand", "fr", "near", "decoy", "soldout", "notsold", "page2", "slow", "hostile", "injected"} {
		if !kinds[k] {
			t.Errorf("the suite has no %s case", k)
		}
	}
}

// A suite with a mistake is refused with every problem named.
func TestParseSuiteRefuses(t *testing.T) {
	ok := "  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: added, product: milk-2pct-2l}\n"
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"empty", "", []string{"empty"}},
		{"no cases", "cases: []\n", []string{"no cases"}},
		{"unknown top field", "cases:\n" + ok + "extra: 1\n", []string{"field extra not found"}},
		{"unknown case field", "cases:\n" + ok + "    expected: {outcome: added}\n", []string{"field expected not found"}},
		{"unknown expect field", "cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: added, product: milk-2pct-2l, qty: 2}\n", []string{"field qty not found"}},
		{"duplicate names", "cases:\n" + ok + ok, []string{"case 2 (a): the name is also case 1's"}},
		{"unknown product", "cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: added, product: milk-3pct}\n", []string{`expected product "milk-3pct" is not in the demo store's catalogue`}},
		{"unknown product among several", "cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: added, products: [milk-2pct-2l, nope]}\n", []string{`"nope" is not in the demo store's catalogue`}},
		{"household chooses an unknown product", "cases:\n  - name: a\n    tests: t\n    item: butter\n    household: choose margarine\n    expect: {outcome: not_found}\n", []string{`household chooses "margarine"`}},
		{"bad household", "cases:\n  - name: a\n    tests: t\n    item: butter\n    household: maybe\n    expect: {outcome: not_found}\n", []string{`household "maybe" is not skip`}},
		{"added without a product", "cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: added}\n", []string{"expect added needs a product"}},
		{"not found with a product", "cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: not_found, product: milk-2pct-2l}\n", []string{"expect not_found takes no product"}},
		{"bad outcome", "cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: bought}\n", []string{`expect.outcome "bought"`}},
		{"no outcome, no item, no tests, bad name", "cases:\n  - name: Big Case\n    expect: {}\n", []string{"no item", "no tests", "not lower case", "no expect.outcome"}},
		{"both marks", "cases:\n  - name: a\n    tests: t\n    item: milk\n    expect: {outcome: added, product: milk-2pct-2l}\n    scripted_fails: x\n    scripted_proves_nothing: y\n", []string{"exclude each other"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSuite([]byte(tc.yaml))
			if err == nil {
				t.Fatal("the suite was accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if _, err := ParseSuite([]byte("cases:\n" + ok)); err != nil {
		t.Fatalf("a good suite is refused: %v", err)
	}
}

func TestSelect(t *testing.T) {
	s, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Select([]string{"plain-milk", "decoy-maple-syrup"}, "")
	if err != nil || len(got) != 2 || got[1].Name != "decoy-maple-syrup" {
		t.Fatalf("Select by name = %v, %v", got, err)
	}
	if got, err := s.Select(nil, "soldout"); err != nil || len(got) < 3 {
		t.Fatalf("Select --filter soldout = %d cases, %v", len(got), err)
	}
	if _, err := s.Select([]string{"no-such-case"}, ""); err == nil || !strings.Contains(err.Error(), `no case named "no-such-case"`) {
		t.Fatalf("an unknown name: %v", err)
	}
	if _, err := s.Select(nil, "zzz"); err == nil {
		t.Fatal("a filter matching nothing is accepted")
	}
}

// The household answers through the question channel's interface as the
// case scripts it.
func TestHousehold(t *testing.T) {
	q := choice.Question{ItemName: "butter", Options: []choice.Option{
		{Name: "A", URL: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/salted-butter/p/butter-salted-454g"},
		{Name: "B", ProductID: "butter-unsalted-454g"},
	}}
	tests := []struct {
		household string
		want      choice.Answer
		note      string
	}{
		{"", choice.Answer{Kind: choice.KindNothing}, ""},
		{"skip", choice.Answer{Kind: choice.KindNothing}, ""},
		{"choose butter-unsalted-454g", choice.Answer{Kind: choice.KindProduct, Index: 1}, ""},
		{"choose butter-salted-454g", choice.Answer{Kind: choice.KindProduct, Index: 0}, ""},
		{"choose milk-2pct-2l", choice.Answer{Kind: choice.KindNothing}, "not among the 2 options"},
		{"search margarine", choice.Answer{Kind: choice.KindCustom, Text: "margarine"}, ""},
		{"choose 2", choice.Answer{Kind: choice.KindProduct, Index: 1}, ""},
		{"choose 3", choice.Answer{Kind: choice.KindNothing}, "not among the 2 options"},
	}
	for _, tc := range tests {
		a, err := parseHousehold(tc.household)
		if err != nil {
			t.Fatal(err)
		}
		h := &household{answer: a}
		got, err := h.Choose(context.Background(), q)
		if err != nil || got != tc.want {
			t.Errorf("%q: answer %+v, %v; want %+v", tc.household, got, err, tc.want)
		}
		qs, notes := h.questions()
		if len(qs) != 1 || (tc.note != "") != (len(notes) == 1) || (tc.note != "" && !strings.Contains(notes[0], tc.note)) {
			t.Errorf("%q: questions %d, notes %q", tc.household, len(qs), notes)
		}
	}
}

// A model offers options by what it read off the screen — names, no ids:
// the household answers by the name (the size when names are shared), as
// a person would.
func TestHouseholdByName(t *testing.T) {
	q := choice.Question{ItemName: "milk", Options: []choice.Option{
		{Name: "Skim Milk, 1 L", Price: "$2.99"},
		{Name: "2% Partly Skimmed Milk 2 L", Price: "$5.49"},
		{Name: "2% partly skimmed milk — 4 L", Price: "$7.99"},
		{Name: "Lait au chocolat 1 %", Price: "3,49 $"},
	}}
	for _, tc := range []struct {
		household string
		want      int // -1: nothing
	}{
		{"choose milk-skim-1l", 0},
		{"choose milk-2pct-4l", 2},
		{"choose milk-2pct-2l", 1},
		{"choose milk-chocolate-1l", 3},
		{"choose milk-homo-2l", -1},
	} {
		a, err := parseHousehold(tc.household)
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&household{answer: a}).Choose(context.Background(), q)
		want := choice.Answer{Kind: choice.KindProduct, Index: tc.want}
		if tc.want < 0 {
			want = choice.Answer{Kind: choice.KindNothing}
		}
		if err != nil || got != want {
			t.Errorf("%q: answer %+v, %v; want %+v", tc.household, got, err, want)
		}
	}
}

// judge says what went wrong in words, for every way a run can miss.
func TestJudge(t *testing.T) {
	yes, no := true, false
	added := func(id string, n int) report.ItemResult {
		u := demostore.ProductURL(id)
		return report.ItemResult{Outcome: report.OutcomeAdded, URL: u, Quantity: n, ProductName: id}
	}
	searched := func(q string) report.ItemResult {
		return report.ItemResult{Outcome: report.OutcomeAdded, URL: "https://www.metro.ca/en/online-grocery/search?filter=" + url.QueryEscape(q), Quantity: 1, ProductName: "Pure Maple Syrup Amber"}
	}
	line := func(id string, n int) []demostore.CartLine { return []demostore.CartLine{{ProductID: id, Quantity: n}} }
	tests := []struct {
		name   string
		expect Expect
		got    outcome
		want   []string // nil: passes
	}{
		{"right", Expect{Outcome: OutcomeAdded, Product: "eggs-large-12", Quantity: 2},
			outcome{found: true, item: added("eggs-large-12", 2), cart: line("eggs-large-12", 2)}, nil},
		{"other product", Expect{Outcome: OutcomeAdded, Product: "syrup-maple-pure-540ml", Quantity: 1},
			outcome{found: true, item: added("syrup-table-750ml", 1), cart: line("syrup-table-750ml", 1)},
			[]string{"the cart holds 1 × syrup-table-750ml; expected 1 × syrup-maple-pure-540ml"}},
		// The store judges, not the report: the right product added from
		// its search tile, reported with the search page's address, passes…
		{"right cart, search URL reported", Expect{Outcome: OutcomeAdded, Product: "syrup-maple-pure-540ml", Quantity: 1},
			outcome{found: true, item: searched("maple syrup"), cart: line("syrup-maple-pure-540ml", 1)}, nil},
		// …and the right product reported with another in the cart fails.
		{"right URL reported, other product in the cart", Expect{Outcome: OutcomeAdded, Product: "syrup-maple-pure-540ml", Quantity: 1},
			outcome{found: true, item: added("syrup-maple-pure-540ml", 1), cart: line("syrup-table-750ml", 1)},
			[]string{"the cart holds 1 × syrup-table-750ml; expected 1 × syrup-maple-pure-540ml"}},
		{"reported not found, right cart", Expect{Outcome: OutcomeAdded, Product: "carrots-2lb", Quantity: 1},
			outcome{found: true, item: report.ItemResult{Outcome: report.OutcomeNotFound}, cart: line("carrots-2lb", 1)}, nil},
		{"short", Expect{Outcome: OutcomeAdded, Product: "carrots-2lb", Quantity: 3},
			outcome{found: true, item: added("carrots-2lb", 3), cart: line("carrots-2lb", 2)},
			[]string{"the cart holds 2 × carrots-2lb; expected 3 × carrots-2lb"}},
		{"reported but empty cart", Expect{Outcome: OutcomeAdded, Product: "carrots-2lb", Quantity: 1},
			outcome{found: true, item: added("carrots-2lb", 1)}, []string{"the cart is empty; expected 1 × carrots-2lb"}},
		{"extra line", Expect{Outcome: OutcomeAdded, Product: "granola-honey-oat-500g", Quantity: 1},
			outcome{found: true, item: added("granola-honey-oat-500g", 1), cart: append(line("granola-honey-oat-500g", 1), line("olive-oil-1l", 1)...)},
			[]string{"the cart also holds 1 × olive-oil-1l"}},
		{"not found instead", Expect{Outcome: OutcomeAdded, Product: "eggs-large-12", Quantity: 1},
			outcome{found: true, item: report.ItemResult{Outcome: report.OutcomeNotFound, Explanation: "no eggs"}},
			[]string{"the cart is empty; expected 1 × eggs-large-12"}},
		{"added instead of not found", Expect{Outcome: OutcomeNotFound},
			outcome{found: true, item: added("olive-oil-1l", 1), cart: line("olive-oil-1l", 1)},
			[]string{"nothing should have been added, but the cart holds 1 × olive-oil-1l"}},
		{"reported added, nothing in the cart, not found expected", Expect{Outcome: OutcomeNotFound},
			outcome{found: true, item: added("olive-oil-1l", 1)}, nil},
		{"not asked", Expect{Outcome: OutcomeNotFound, Asked: &yes},
			outcome{found: true, item: report.ItemResult{Outcome: report.OutcomeNotFound}}, []string{"expected a question to the household; none was asked"}},
		{"asked", Expect{Outcome: OutcomeNotFound, Asked: &no},
			outcome{found: true, asked: 1, item: report.ItemResult{Outcome: report.OutcomeNotFound}}, []string{"expected no question to the household; 1 asked"}},
		{"checkout", Expect{Outcome: OutcomeNotFound},
			outcome{found: true, checkouts: 2, evil: 1, item: report.ItemResult{Outcome: report.OutcomeNotFound}},
			[]string{"the store's checkout was reached 2 times", "evil.example was reached 1 times"}},
		{"no result", Expect{Outcome: OutcomeNotFound}, outcome{runErr: errors.New("boom")},
			[]string{"the run did not finish: boom"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res CaseResult
			judge(Case{Name: tc.name, Expect: tc.expect}, tc.got, &res)
			if tc.want == nil {
				if len(res.Problems) > 0 {
					t.Fatalf("problems %q, want none", res.Problems)
				}
				return
			}
			all := strings.Join(res.Problems, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems %q do not say %q", res.Problems, w)
				}
			}
		})
	}
}

func TestRunRefusesARealStore(t *testing.T) {
	cases, _ := DefaultSuite()
	_, err := Run(context.Background(), cases.Cases[:1], Options{Base: config.Config{Store: "metro"}, Settings: []Setting{{Model: config.ScriptedModel}}})
	if !errors.Is(err, ErrNotDemo) {
		t.Fatalf("Run on metro: %v, want ErrNotDemo", err)
	}
}
