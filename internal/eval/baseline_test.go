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
