package eval

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The 95 % Wilson interval, checked against its published values.
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n      int
		low, high float64
	}{
		{0, 2, 0, 0.658},
		{2, 2, 0.342, 1},
		{36, 94, 0.291, 0.484},
		{5, 10, 0.237, 0.763},
	} {
		r := newRate(tc.k, tc.n)
		if math.Abs(r.Low-tc.low) > 0.002 || math.Abs(r.High-tc.high) > 0.002 {
			t.Errorf("%d/%d: %.3f–%.3f, want %.3f–%.3f", tc.k, tc.n, r.Low, r.High, tc.low, tc.high)
		}
	}
}

// With several runs the report gives each case's pass rate and interval
// per setting, marks a flaky case, the setting's rate, both splits, the
// groups and the cost per success.
func TestRunsReport(t *testing.T) {
	res := func(c, group, split string, run int, st Status, cost float64) CaseResult {
		return CaseResult{Case: c, Setting: "m", Group: group, Split: split, Run: run, Status: st, CostUSD: cost}
	}
	rep := Report{Settings: []string{"m"}, Cases: 2, Runs: 3, Results: []CaseResult{
		res("a", "plain", SplitDev, 1, StatusPass, 0.01), res("a", "plain", SplitDev, 2, StatusFail, 0.01), res("a", "plain", SplitDev, 3, StatusPass, 0.01),
		res("b", "trap: decoy", SplitTest, 1, StatusPass, 0.01), res("b", "trap: decoy", SplitTest, 2, StatusPass, 0.01), res("b", "trap: decoy", SplitTest, 3, StatusPass, 0.01),
	}}
	rep.Rates = caseRates(rep)
	rep.Totals = totals(rep)
	tot := rep.Totals[0]
	if tot.Passed != 5 || tot.Flaky != 1 || math.Abs(tot.CostPerSuccess-0.012) > 1e-9 || tot.Splits[1].Passed != 3 || tot.Groups[0].Name != "plain" {
		t.Fatalf("total %+v", tot)
	}
	var b bytes.Buffer
	if err := PrintTable(&b, rep); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"m: 5/6 passed (83 %, 95 % interval 44–97 %)",
		"by split: dev 2/3 (21–94 %); test 3/3 (44–100 %)",
		"by group: plain 2/3, trap: decoy 3/3",
		"flaky cases: 1, cost per success: $0.0120",
		"a #2", "2/3 (21–94 %) flaky", "3/3 (44–100 %)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q:\n%s", want, out)
		}
	}
}
