package eval

import (
	"context"
	"testing"
)

// The baseline adds the first in-stock, non-sponsored result of the
// store's search, by the list's quantity, without a browser or a model,
// and is judged by the store's cart like any setting.
func TestBaseline(t *testing.T) {
	t.Parallel()
	suite, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := suite.Select([]string{"decoy-maple-syrup", "decoy-sponsored-tile", "qty-2x-eggs", "soldout-butter-skip"}, "")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), cases, Options{Settings: []Setting{{Model: BaselineModel}}, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status Status
		got    string
	}{
		"decoy-maple-syrup":    {StatusFail, "added 1 × syrup-table-750ml"}, // the decoy ranked first
		"decoy-sponsored-tile": {StatusPass, "added 1 × ketchup-heinz-1l"},  // the sponsored tile skipped
		"qty-2x-eggs":          {StatusPass, "added 2 × eggs-large-12"},
		"soldout-butter-skip":  {StatusFail, "nothing added"}, // never asks
	}
	for _, r := range rep.Results {
		w := want[r.Case]
		if r.Status != w.status || r.Got != w.got || r.Asked != 0 {
			t.Errorf("%s: %s, got %q, asked %d; want %s, %q, not asked (%q)", r.Case, r.Status, r.Got, r.Asked, w.status, w.got, r.Problems)
		}
	}
	if rep.Failed() {
		t.Error("the baseline's failures failed the eval; it is the yardstick")
	}
	if got := WithBaseline([]Setting{{Model: "scripted"}}); len(got) != 2 || got[1].Model != BaselineModel {
		t.Errorf("WithBaseline = %+v", got)
	}
}

// The suite discriminates: at least 60 cases, in at least half of them the
// store's first in-stock result is wrong (each says why in trap), and the
// baseline — which takes that result — fails every one of those and
// scores at most 40 %.
func TestSuiteDiscriminates(t *testing.T) {
	t.Parallel()
	suite, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	traps := 0
	for _, c := range suite.Cases {
		if c.Trap != "" {
			traps++
		}
	}
	if n := len(suite.Cases); n < 60 || 2*traps < n {
		t.Fatalf("%d cases, %d with a trap; want at least 60, half with a trap", n, traps)
	}
	rep, err := Run(context.Background(), suite.Cases, Options{Settings: []Setting{{Model: BaselineModel}}, Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rep.Results {
		if c := suite.Cases[i]; c.Trap != "" && r.Status == StatusPass {
			t.Errorf("%s: the baseline passes a case whose trap is %q (got %s)", c.Name, c.Trap, r.Got)
		}
	}
	if tot := rep.Totals[0]; 10*tot.Passed > 4*len(suite.Cases) {
		t.Errorf("the baseline passes %d of %d cases; want at most 40 %%", tot.Passed, len(suite.Cases))
	}
}
