package eval

import (
	"fmt"
	"math"
)

// Rate is a pass rate with its 95 % Wilson score interval: how sure the
// rate is with this many runs (3 of 3 passed is 44–100 %).
type Rate struct {
	Passed int     `json:"passed"`
	Runs   int     `json:"runs"`
	Low    float64 `json:"low"`  // 0…1
	High   float64 `json:"high"` // 0…1
}

// NamedRate is a rate of a part of the suite (a split, a group).
type NamedRate struct {
	Name string `json:"name"`
	Rate
}

// CaseRate is one case's pass rate with one setting over the runs.
type CaseRate struct {
	Case    string `json:"case"`
	Setting string `json:"setting"`
	Rate
	// Flaky: some runs passed, others failed.
	Flaky bool `json:"flaky,omitempty"`
}

// wilsonZ is the normal quantile of a 95 % interval.
const wilsonZ = 1.959964

// newRate is k passes of n runs with its 95 % Wilson interval.
func newRate(k, n int) Rate {
	r := Rate{Passed: k, Runs: n}
	if n == 0 {
		return r
	}
	p, fn, z2 := float64(k)/float64(n), float64(n), wilsonZ*wilsonZ
	den := 1 + z2/fn
	mid := (p + z2/(2*fn)) / den
	half := wilsonZ * math.Sqrt(p*(1-p)/fn+z2/(4*fn*fn)) / den
	r.Low, r.High = math.Max(0, mid-half), math.Min(1, mid+half)
	return r
}

// String: "36/94 (38 %, 95 % interval 29–48 %)".
func (r Rate) String() string {
	if r.Runs == 0 {
		return "0/0"
	}
	return fmt.Sprintf("%d/%d (%.0f %%, 95 %% interval %.0f–%.0f %%)", r.Passed, r.Runs, 100*float64(r.Passed)/float64(r.Runs), 100*r.Low, 100*r.High)
}

// Short: "2/3 (21–94 %)".
func (r Rate) Short() string {
	return fmt.Sprintf("%d/%d (%.0f–%.0f %%)", r.Passed, r.Runs, 100*r.Low, 100*r.High)
}

// caseRates is every case's pass rate per setting, setting by setting.
func caseRates(rep Report) []CaseRate {
	var out []CaseRate
	for si, s := range rep.Settings {
		for ci := range rep.Cases {
			k := 0
			for ri := range rep.runs() {
				if rep.result(si, ci, ri).Status == StatusPass {
					k++
				}
			}
			out = append(out, CaseRate{Case: rep.result(si, ci, 0).Case, Setting: s, Rate: newRate(k, rep.runs()), Flaky: k > 0 && k < rep.runs()})
		}
	}
	return out
}

// partRates sums the results by a part of the suite (split, group), in
// the order the parts first appear.
func partRates(results []CaseResult, part func(CaseResult) string) []NamedRate {
	var names []string
	k, n := map[string]int{}, map[string]int{}
	for _, r := range results {
		p := part(r)
		if _, seen := n[p]; !seen {
			names = append(names, p)
		}
		n[p]++
		if r.Status == StatusPass {
			k[p]++
		}
	}
	out := make([]NamedRate, len(names))
	for i, p := range names {
		out[i] = NamedRate{Name: p, Rate: newRate(k[p], n[p])}
	}
	return out
}

// splitRates is the rate of the dev cases and of the test cases (both,
// even when one has none).
func splitRates(results []CaseResult) []NamedRate {
	out := []NamedRate{{Name: SplitDev}, {Name: SplitTest}}
	for _, r := range partRates(results, func(r CaseResult) string { return r.Split }) {
		for i := range out {
			if out[i].Name == r.Name {
				out[i].Rate = r.Rate
			}
		}
	}
	return out
}
