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

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
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

	m messages.Catalog // the household's language (English by default)

	mu      sync.Mutex
	barUp   bool
	last    runstatus.Event
	started time.Time
}

// NewTerminal prints to w; tty enables the progress bar and in-place redraws.
func NewTerminal(w io.Writer, tty bool) *Terminal { return &Terminal{w: w, tty: tty} }

// In makes t speak m's language (the `language` option); it returns t.
func (t *Terminal) In(m messages.Catalog) *Terminal {
	t.m = m
	return t
}

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
		t.line(pluralT(t.m, "terminal.shopping", ev.Progress.Total))
	case runstatus.KindStateChanged:
		switch ev.State {
		case runstatus.StateAuthenticating:
			t.line(t.m.T("terminal.checking_session"))
		case runstatus.StateReviewing:
			t.line(t.m.T("terminal.reviewing"))
		case runstatus.StateFailed:
			// Its reason is the command's own last line (said once).
			t.line(t.m.T("terminal.run_failed"))
		case runstatus.StateCancelled:
			t.line(t.m.T("terminal.run_stopped"))
		}
	case runstatus.KindItemStarted:
		if ev.Item != nil {
			t.line(itemLine("…", ev.Item.ItemName, t.m.T("terminal.started")))
		}
	case runstatus.KindWaitingForUser:
		if ev.Item != nil {
			t.line(itemLine("?", ev.Item.ItemName, t.m.T("terminal.waiting", "question", oneLine(ev.Message))))
		}
	case runstatus.KindUserAnswered:
		if ev.Item != nil {
			t.line(itemLine("?", ev.Item.ItemName, t.m.T("terminal.answered", "answer", oneLine(ev.Message))))
		}
	case runstatus.KindItemFinished:
		if ev.Item != nil {
			t.line(finishedLine(t.m, *ev.Item))
		}
	case runstatus.KindRunFinished:
		t.clearBarLocked()
		p := ev.Progress
		switch ev.State {
		case runstatus.StateFailed: // said by the state change
		case runstatus.StateCancelled:
			t.line(t.m.T("terminal.stopped_after", "done", p.Done, "total", p.Total, "added", p.Added, "not_found", p.NotFound, "failed", p.Failed))
		default:
			if ev.Message != "" {
				t.line(ev.Message) // "Nothing to shop: …"
				return
			}
			t.line(t.m.T("terminal.done", "added", p.Added, "not_found", p.NotFound, "failed", p.Failed, "total", p.Total))
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

func finishedLine(m messages.Catalog, it report.ItemResult) string {
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
			parts = append(parts, money.TextIn(it.Price.Text, m.Lang()))
		}
	case report.OutcomeNotFound:
		mark = "✗"
		parts = append(parts, m.T("terminal.not_found", "why", oneLine(it.Explanation)))
	case report.OutcomeFailed:
		mark = "!"
		parts = append(parts, m.T("terminal.failed", "why", oneLine(it.Explanation)))
	case report.OutcomeDuplicate:
		mark = "="
		parts = append(parts, oneLine(it.Explanation))
	case report.OutcomeSkipped:
		mark = "-"
		parts = append(parts, m.T("terminal.skipped", "why", oneLine(it.Explanation)))
	default:
		// Not shopped (the run stopped or never started): no tick for an
		// item nothing was done for.
		mark = "·"
		parts = append(parts, m.T("terminal.not_shopped"))
		if it.Explanation != "" {
			parts = append(parts, oneLine(it.Explanation))
		}
	}
	if it.Turns > 0 {
		parts = append(parts, pluralT(m, "terminal.turns", it.Turns))
	}
	if it.Attempts > 1 {
		parts = append(parts, m.T("terminal.attempts", "n", it.Attempts))
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

// PrintResult prints the run's summary (markdown) and the cart review in
// English.
func PrintResult(w io.Writer, res Result) { PrintResultIn(w, res, messages.Catalog{}) }

// PrintResultIn prints the run's summary (markdown) and the cart review in
// m's language.
func PrintResultIn(w io.Writer, res Result, m messages.Catalog) {
	fmt.Fprintln(w)
	fmt.Fprint(w, res.Summary.MarkdownIn(m))
	if res.Review != nil {
		fmt.Fprintln(w)
		fmt.Fprint(w, res.Review.TextIn(m))
	}
	if res.JournalPath != "" {
		fmt.Fprintln(w)
		fmt.Fprintln(w, m.T("terminal.journal", "path", res.JournalPath))
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

// Text renders the review for a terminal, in English.
func (r Review) Text() string { return r.TextIn(messages.Catalog{}) }

// TextIn renders the review for a terminal in m's language.
func (r Review) TextIn(m messages.Catalog) string {
	var b strings.Builder
	b.WriteString(m.T("terminal.review") + "\n")
	if r.Before != nil && r.After != nil {
		b.WriteString("  " + m.T("terminal.review_units", "before", r.Before.Units(), "units", pluralT(m, "terminal.units", r.Before.Units()), "after", r.After.Units()) + "\n")
	}
	if len(r.Changes) > 0 {
		b.WriteString("  " + m.T("terminal.review_changes") + "\n")
		for _, c := range r.Changes {
			note := ""
			if len(c.Items) > 0 {
				note = " (" + m.T("terminal.review_for", "items", strings.Join(c.Items, ", ")) + ")"
			}
			price := ""
			if c.Price.Text != "" {
				price = " " + m.T("terminal.review_at", "price", money.TextIn(c.Price.Text, m.Lang()))
			}
			b.WriteString("    " + m.T("terminal.review_change", "name", c.Name, "price", price, "before", c.Before, "after", c.After, "note", note) + "\n")
		}
	} else if r.After != nil {
		b.WriteString("  " + m.T("terminal.review_no_change") + "\n")
	}
	if len(r.Warnings) > 0 {
		b.WriteString("  " + m.T("terminal.review_warnings") + "\n")
		for _, w := range r.Warnings {
			msg := m.Say(w.Text, w.Message)
			if w.Key != "" { // said in m's language: its prices too
				msg = money.TextIn(msg, m.Lang())
			}
			fmt.Fprintf(&b, "    ⚠ %s\n", msg)
		}
	} else {
		b.WriteString("  " + m.T("terminal.review_no_warnings") + "\n")
	}
	if len(r.UnappliedUpdates) > 0 {
		b.WriteString("  " + m.T("terminal.review_unapplied") + "\n")
		for _, u := range r.UnappliedUpdates {
			fmt.Fprintf(&b, "    ⚠ %s (%s): %s\n", u.ItemName, u.Update, oneLine(u.Reason))
		}
	}
	if r.CartURL != "" {
		b.WriteString("  " + m.T("terminal.review_check_out", "url", r.CartURL) + "\n")
	}
	return b.String()
}

// plural is one or many by n.
// pluralT is key's text for n: key+"_one" for 1, else key with {n}.
func pluralT(m messages.Catalog, key string, n int) string {
	if n == 1 {
		return m.T(key + "_one")
	}
	return m.T(key, "n", n)
}
