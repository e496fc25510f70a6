package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Terminal prints a run's events for a person: a line per item as it starts
// and finishes (product, price, turns, time or the reason), the run's
// phases, and — when the output is a terminal — a progress bar kept on the
// last line.
type Terminal struct {
	w   io.Writer
	tty bool

	mu      sync.Mutex
	barUp   bool
	last    runstatus.Event
	started time.Time
}

// NewTerminal prints to w; tty enables the progress bar and in-place redraws.
func NewTerminal(w io.Writer, tty bool) *Terminal { return &Terminal{w: w, tty: tty} }

// IsTTY reports whether f is a terminal (a character device).
func IsTTY(f *os.File) bool {
	if f == nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Follow prints events from sub until the run finishes, sub closes or ctx
// ends. It returns once the run_finished event was printed (or on close).
func (t *Terminal) Follow(ctx context.Context, sub *runstatus.Subscription) {
	for {
		select {
		case <-ctx.Done():
			t.clearBar()
			return
		case ev, ok := <-sub.C:
			if !ok {
				t.clearBar()
				return
			}
			t.Handle(ev)
			if ev.Kind == runstatus.KindRunFinished {
				return
			}
		}
	}
}

// Handle prints one event.
func (t *Terminal) Handle(ev runstatus.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last = ev
	switch ev.Kind {
	case runstatus.KindRunStarted:
		t.started = ev.Time
		t.line(fmt.Sprintf("Shopping %d %s…", ev.Progress.Total, plural(ev.Progress.Total, "item", "items")))
	case runstatus.KindStateChanged:
		switch ev.State {
		case runstatus.StateAuthenticating:
			t.line("Checking the store session…")
		case runstatus.StateReviewing:
			t.line("Reviewing the cart…")
		case runstatus.StateFailed:
			// Its reason is the command's own last line (said once).
			t.line("The run failed.")
		case runstatus.StateCancelled:
			t.line("The run was stopped.")
		}
	case runstatus.KindItemStarted:
		if ev.Item != nil {
			t.line(itemLine("…", ev.Item.ItemName, "started"))
		}
	case runstatus.KindWaitingForUser:
		if ev.Item != nil {
			t.line(itemLine("?", ev.Item.ItemName, "waiting for your answer: "+oneLine(ev.Message)))
		}
	case runstatus.KindUserAnswered:
		if ev.Item != nil {
			t.line(itemLine("?", ev.Item.ItemName, "answered: "+oneLine(ev.Message)))
		}
	case runstatus.KindItemFinished:
		if ev.Item != nil {
			t.line(finishedLine(*ev.Item))
		}
	case runstatus.KindRunFinished:
		t.clearBarLocked()
		p := ev.Progress
		switch ev.State {
		case runstatus.StateFailed: // said by the state change
		case runstatus.StateCancelled:
			t.line(fmt.Sprintf("Stopped after %d of %d: %d added, %d not found, %d failed.", p.Done, p.Total, p.Added, p.NotFound, p.Failed))
		default:
			if ev.Message != "" {
				t.line(ev.Message) // "Nothing to shop: …"
				return
			}
			t.line(fmt.Sprintf("Done: %d added, %d not found, %d failed of %d.", p.Added, p.NotFound, p.Failed, p.Total))
		}
		return
	}
	t.drawBarLocked()
}

func (t *Terminal) clearBar() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearBarLocked()
}

func (t *Terminal) clearBarLocked() {
	if t.barUp {
		fmt.Fprint(t.w, "\r\x1b[K")
		t.barUp = false
	}
}

// line prints s on its own line, above the bar.
func (t *Terminal) line(s string) {
	t.clearBarLocked()
	fmt.Fprintln(t.w, s)
}

func (t *Terminal) drawBarLocked() {
	if !t.tty || t.last.Progress.Total == 0 {
		return
	}
	p := t.last.Progress
	const width = 24
	filled := width * p.Done / p.Total
	bar := strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
	fmt.Fprintf(t.w, "\r\x1b[K[%s] %d/%d %s", bar, p.Done, p.Total, t.last.State)
	t.barUp = true
}

const nameWidth = 24

func itemLine(mark, name, rest string) string {
	return fmt.Sprintf("  %s %s %s", mark, pad(name, nameWidth), rest)
}

func finishedLine(it report.ItemResult) string {
	var parts []string
	var mark string
	switch it.Outcome {
	case report.OutcomeAdded:
		mark = "✓"
		s := it.ProductName
		if it.Quantity > 1 {
			s = fmt.Sprintf("%d × %s", it.Quantity, s)
		}
		parts = append(parts, s)
		if it.Price.Text != "" {
			parts = append(parts, it.Price.Text)
		}
	case report.OutcomeNotFound:
		mark = "✗"
		parts = append(parts, "not found: "+oneLine(it.Explanation))
	case report.OutcomeFailed:
		mark = "!"
		parts = append(parts, "failed: "+oneLine(it.Explanation))
	case report.OutcomeDuplicate:
		mark = "="
		parts = append(parts, oneLine(it.Explanation))
	case report.OutcomeSkipped:
		mark = "-"
		parts = append(parts, "skipped: "+oneLine(it.Explanation))
	default:
		// Not shopped (the run stopped or never started): no tick for an
		// item nothing was done for.
		mark = "·"
		parts = append(parts, "not shopped")
		if it.Explanation != "" {
			parts = append(parts, oneLine(it.Explanation))
		}
	}
	if it.Turns > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", it.Turns, plural(it.Turns, "model call", "model calls")))
	}
	if it.Attempts > 1 {
		parts = append(parts, fmt.Sprintf("%d attempts", it.Attempts))
	}
	if it.Duration > 0 {
		parts = append(parts, it.Duration.Round(100*time.Millisecond).String())
	}
	return itemLine(mark, it.ItemName, strings.Join(parts, " · "))
}

func pad(s string, n int) string {
	if c := utf8.RuneCountInString(s); c < n {
		return s + strings.Repeat(" ", n-c)
	}
	return s
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 160 {
		r := []rune(s)
		s = string(r[:157]) + "…"
	}
	return s
}

// PrintResult prints the run's summary (markdown) and the cart review.
func PrintResult(w io.Writer, res Result) {
	fmt.Fprintln(w)
	fmt.Fprint(w, res.Summary.Markdown())
	if res.Review != nil {
		fmt.Fprintln(w)
		fmt.Fprint(w, res.Review.Text())
	}
	if res.JournalPath != "" {
		fmt.Fprintf(w, "\nThe run's record (for troubleshooting): %s\n", res.JournalPath)
	}
}

// PrintJSON writes the result as indented JSON. The summary's items are
// always a list ([] for a run that could not start), so a script can iterate
// them without checking for null.
func PrintJSON(w io.Writer, res Result) error {
	if res.Summary.Items == nil {
		res.Summary.Items = []report.ItemResult{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// Text renders the review for a terminal.
func (r Review) Text() string {
	var b strings.Builder
	b.WriteString("Cart review\n")
	if r.Before != nil && r.After != nil {
		fmt.Fprintf(&b, "  The cart held %d %s before the run and %d after.\n", r.Before.Units(), plural(r.Before.Units(), "unit", "units"), r.After.Units())
	}
	if len(r.Changes) > 0 {
		b.WriteString("  Changes:\n")
		for _, c := range r.Changes {
			note := ""
			if len(c.Items) > 0 {
				note = " (for " + strings.Join(c.Items, ", ") + ")"
			}
			price := ""
			if c.Price.Text != "" {
				price = " at " + c.Price.Text
			}
			fmt.Fprintf(&b, "    %s%s: %d → %d%s\n", c.Name, price, c.Before, c.After, note)
		}
	} else if r.After != nil {
		b.WriteString("  No cart line changed.\n")
	}
	if len(r.Warnings) > 0 {
		b.WriteString("  Warnings:\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "    ⚠ %s\n", w.Message)
		}
	} else {
		b.WriteString("  No warnings.\n")
	}
	if len(r.UnappliedUpdates) > 0 {
		b.WriteString("  List updates that could not be applied:\n")
		for _, u := range r.UnappliedUpdates {
			fmt.Fprintf(&b, "    ⚠ %s (%s): %s\n", u.ItemName, u.Update, oneLine(u.Reason))
		}
	}
	if r.CartURL != "" {
		fmt.Fprintf(&b, "  Check the cart and check out yourself: %s\n", r.CartURL)
	}
	return b.String()
}

// plural is one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
