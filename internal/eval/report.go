package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// PrintTable writes the report for a terminal: a row per case and
// setting, what went wrong under a failed row, the totals per setting and,
// with several settings, the comparison.
func PrintTable(w io.Writer, rep Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tSETTING\tRESULT\tEXPECTED\tGOT\tTURNS\tTIME\tTOKENS\tCOST")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\n", caseRun(rep, r), r.Setting, r.Status, r.Expected, r.Got,
			r.Turns, seconds(r.Duration), r.Tokens, cost(r.CostUSD, r.CostUnknown))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rep.Results {
		if r.Status == StatusPass {
			continue
		}
		fmt.Fprintf(w, "\n%s %s (%s, item %q):\n", r.Status, caseRun(rep, r), r.Setting, r.Item)
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  - %s\n", p)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  · %s\n", n)
		}
	}
	fmt.Fprintln(w)
	for _, t := range rep.Totals {
		fmt.Fprintln(w, TotalLine(t, rep.Cases*rep.runs()))
		for _, l := range detailLines(t) {
			fmt.Fprintln(w, "  "+l)
		}
	}
	if len(rep.Settings) > 1 || rep.runs() > 1 {
		fmt.Fprintln(w)
		return printComparison(w, rep, "\t", "")
	}
	return nil
}

// caseRun names a result's case, with its run when there are several.
func caseRun(rep Report, r CaseResult) string {
	if rep.runs() > 1 {
		return fmt.Sprintf("%s #%d", r.Case, r.Run)
	}
	return r.Case
}

// detailLines say a setting's score by split and by group, its flaky
// cases and its cost per success.
func detailLines(t Total) []string {
	var split, group []string
	for _, r := range t.Splits {
		split = append(split, r.Name+" "+r.Short())
	}
	for _, r := range t.Groups {
		group = append(group, r.Name+" "+fmt.Sprintf("%d/%d", r.Passed, r.Runs))
	}
	out := []string{
		"by split: " + strings.Join(split, "; ") + " (test: held out, never used to tune the prompt or the offline planner)",
		"by group: " + strings.Join(group, ", "),
	}
	last := fmt.Sprintf("flaky cases: %d", t.Flaky)
	if t.Passed > 0 {
		last += ", cost per success: " + cost(t.CostPerSuccess, t.CostUnknown)
	} else {
		last += ", cost per success: none passed"
	}
	return append(out, last)
}

// TotalLine is a setting's one-line score: "scripted: 30/34 passed, 4
// failed as marked, 0 failed — 140 turns, 1200000 tokens, $0.0000, 3m10s of
// shopping" (the items' times added up).
func TotalLine(t Total, runs int) string {
	s := fmt.Sprintf("%s: %d/%d passed", t.Setting, t.Passed, runs)
	if t.Rate.Runs > 0 {
		s += fmt.Sprintf(" (%.0f %%, 95 %% interval %.0f–%.0f %%)", 100*float64(t.Passed)/float64(t.Rate.Runs), 100*t.Rate.Low, 100*t.Rate.High)
	}
	if t.ExpectedFailed > 0 {
		s += fmt.Sprintf(", %d failed as marked for the scripted planner", t.ExpectedFailed)
	}
	s += fmt.Sprintf(", %d failed — %d turns, %d tokens, %s, %s of shopping", t.Failed, t.Turns, t.Tokens, cost(t.CostUSD, t.CostUnknown), t.Duration.Round(time.Second))
	return s
}

// printComparison writes a row per case with each setting's result
// (sep separates the columns: a tab for the terminal, " | " for Markdown).
func printComparison(w io.Writer, rep Report, sep, edge string) error {
	var out io.Writer = w
	var tw *tabwriter.Writer
	if sep == "\t" {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		out = tw
	}
	fmt.Fprintf(out, "%sCASE%s%s%s\n", edge, sep, strings.Join(rep.Settings, sep), edge)
	if sep != "\t" {
		fmt.Fprintf(out, "%s---%s%s\n", edge, strings.Repeat(sep+"---", len(rep.Settings)), edge)
	}
	n := rep.Cases
	for ci := range n {
		cells := []string{rep.result(0, ci, 0).Case}
		for si := range rep.Settings {
			if rep.runs() > 1 {
				// The pass rate over the runs and its interval; a case
				// that passed some runs and failed others is flaky.
				cr := rep.rate(si, ci)
				cell := cr.Short()
				if cr.Flaky {
					cell += " flaky"
				}
				cells = append(cells, cell)
				continue
			}
			r := rep.result(si, ci, 0)
			cells = append(cells, fmt.Sprintf("%s %d turns %s", r.Status, r.Turns, seconds(r.Duration)))
		}
		fmt.Fprintf(out, "%s%s%s\n", edge, strings.Join(cells, sep), edge)
	}
	cells := []string{"passed"}
	for _, t := range rep.Totals {
		if rep.runs() > 1 {
			cells = append(cells, fmt.Sprintf("%s, %s per success", t.Rate.Short(), cost(t.CostPerSuccess, t.CostUnknown)))
			continue
		}
		cells = append(cells, fmt.Sprintf("%d/%d, %s", t.Passed, n, cost(t.CostUSD, t.CostUnknown)))
	}
	fmt.Fprintf(out, "%s%s%s\n", edge, strings.Join(cells, sep), edge)
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteMarkdown writes the report as a Markdown page: the totals, the
// comparison (several settings), a table per setting and what went wrong.
func WriteMarkdown(w io.Writer, rep Report) error {
	fmt.Fprintf(w, "# gemini-supply eval, %s\n\n", rep.StartedAt.UTC().Format("2006-01-02 15:04 UTC"))
	for _, t := range rep.Totals {
		fmt.Fprintf(w, "- %s\n", TotalLine(t, rep.Cases*rep.runs()))
		for _, l := range detailLines(t) {
			fmt.Fprintf(w, "  - %s\n", l)
		}
	}
	if len(rep.Settings) > 1 || rep.runs() > 1 {
		fmt.Fprintf(w, "\n## Comparison\n\n")
		if err := printComparison(w, rep, " | ", "| "); err != nil {
			return err
		}
	}
	n := rep.Cases * rep.runs()
	for si, s := range rep.Settings {
		fmt.Fprintf(w, "\n## %s\n\n", s)
		fmt.Fprintln(w, "| case | item | result | expected | got | turns | time | tokens | cost | what went wrong |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
		for _, r := range rep.Results[si*n : (si+1)*n] {
			why := strings.Join(append(append([]string(nil), r.Problems...), r.Notes...), "; ")
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %s | %d | %s | %s |\n", caseRun(rep, r), mdCell(r.Item), r.Status, mdCell(r.Expected),
				mdCell(r.Got), r.Turns, seconds(r.Duration), r.Tokens, cost(r.CostUSD, r.CostUnknown), mdCell(why))
		}
	}
	return nil
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func cost(usd float64, unknown bool) string {
	s := fmt.Sprintf("$%.4f", usd)
	if unknown {
		s += "+?"
	}
	return s
}
