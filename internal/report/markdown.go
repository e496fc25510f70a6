package report

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/money"
)

// Counts is how many items ended each way.
type Counts struct {
	Added, NotFound, Failed, Duplicate, Skipped, NotShopped int
	// Total is the number of results.
	Total int
}

// Counts counts the results by outcome.
func (s Summary) Counts() Counts {
	var c Counts
	for _, it := range s.Items {
		switch it.Outcome {
		case OutcomeAdded:
			c.Added++
		case OutcomeNotFound:
			c.NotFound++
		case OutcomeFailed:
			c.Failed++
		case OutcomeDuplicate:
			c.Duplicate++
		case OutcomeSkipped:
			c.Skipped++
		case OutcomeNotShopped:
			c.NotShopped++
		}
	}
	c.Total = len(s.Items)
	return c
}

// Duration is how long the run took (zero while FinishedAt is unset).
func (s Summary) Duration() time.Duration {
	if s.StartedAt.IsZero() || s.FinishedAt.IsZero() || s.FinishedAt.Before(s.StartedAt) {
		return 0
	}
	return s.FinishedAt.Sub(s.StartedAt)
}

// EstimatedTotal sums unit price × quantity over the added items whose price
// is known. unknown counts the added items left out because their price text
// could not be read.
func (s Summary) EstimatedTotal() (total money.Cents, unknown int) {
	var lines []money.Line
	for _, it := range s.Items {
		if it.Outcome == OutcomeAdded {
			lines = append(lines, money.Line{Price: it.Price, Quantity: it.Quantity})
		}
	}
	return money.Total(lines...)
}

// Title is a one-line headline: "gemini-supply: 3 added, 1 not found", or
// for a stopped run "gemini-supply: stopped — 2 added, 3 not shopped".
func (s Summary) Title() string {
	if s.Cancelled {
		return "gemini-supply: stopped — " + s.Counts().String()
	}
	return "gemini-supply: " + s.Counts().String()
}

// String renders the counts as "3 added, 1 not found, 1 failed, 1 duplicate"
// (zero counts left out; "nothing to shop" when all are zero).
func (c Counts) String() string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, strconv.Itoa(n)+" "+many)
		}
	}
	add(c.Added, "added", "added")
	add(c.NotFound, "not found", "not found")
	add(c.Failed, "failed", "failed")
	add(c.Duplicate, "duplicate", "duplicates")
	add(c.Skipped, "skipped", "skipped")
	add(c.NotShopped, "not shopped", "not shopped")
	if len(parts) == 0 {
		return "nothing to shop"
	}
	return strings.Join(parts, ", ")
}

// Markdown renders the summary people read: when the run started and how
// long it took, the added items with product, quantity, price and link, the
// items not found with the agent's explanation, the failed ones with the
// reason, duplicates, review warnings, model use and cost, the estimated total
// and the cart link. Text from the list, the store and the model is escaped so
// it cannot change the formatting, and only http(s) links become links.
func (s Summary) Markdown() string {
	var b strings.Builder
	c := s.Counts()

	b.WriteString("# Shopping run\n\n")
	if !s.StartedAt.IsZero() {
		fmt.Fprintf(&b, "Started %s", s.StartedAt.Format("2006-01-02 15:04 MST"))
		if d := s.Duration(); d > 0 {
			fmt.Fprintf(&b, ", took %s", roundDuration(d))
		}
		b.WriteString(".")
		if s.RunID != "" {
			fmt.Fprintf(&b, " Run `%s`.", strings.ReplaceAll(s.RunID, "`", "'"))
		}
		b.WriteString("\n\n")
	}
	if s.Cancelled {
		fmt.Fprintf(&b, "**Stopped: %s.**\n", c.String())
		b.WriteString("\nThe run was stopped before every item was shopped; the items it did not finish are unchanged on the list.\n")
	} else {
		fmt.Fprintf(&b, "**%s.**\n", capitalise(c.String()))
	}

	section := func(title string, o Outcome, line func(ItemResult) string) {
		var lines []string
		for _, it := range s.Items {
			if it.Outcome == o {
				lines = append(lines, line(it))
			}
		}
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", title, len(lines))
		for _, l := range lines {
			b.WriteString("- " + l + "\n")
		}
	}

	section("Added", OutcomeAdded, func(it ItemResult) string {
		l := "**" + escape(it.ItemName) + "**"
		if it.ProductName != "" || it.URL != "" {
			l += " → " + link(it.ProductName, it.URL)
		}
		q := it.Quantity
		if q < 1 {
			q = 1
		}
		if q > 1 {
			l += fmt.Sprintf(" × %d", q)
		}
		l += " — " + priceText(it.Price, q)
		if it.Replay != "" {
			l += " _(" + escape(it.Replay) + ")_"
		}
		return l
	})
	section("Not found", OutcomeNotFound, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(it.Explanation, "no explanation given")
	})
	section("Failed", OutcomeFailed, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(it.Explanation, "no reason recorded")
	})
	section("Duplicates", OutcomeDuplicate, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(it.Explanation, "already on the list; shopped once")
	})
	section("Skipped", OutcomeSkipped, func(it ItemResult) string {
		return "**" + escape(nameOr(it)) + "**" + reason(it.Explanation, "left alone")
	})
	section("Not shopped", OutcomeNotShopped, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(it.Explanation, "the run was stopped first; unchanged on the list")
	})
	if len(s.UnappliedUpdates) > 0 {
		fmt.Fprintf(&b, "\n## List updates that could not be applied (%d)\n\n", len(s.UnappliedUpdates))
		for _, u := range s.UnappliedUpdates {
			fmt.Fprintf(&b, "- **%s** (%s) — %s\n", escape(oneLine(u.ItemName)), escape(u.Update), escape(oneLine(u.Reason)))
		}
	}

	if len(s.Warnings) > 0 {
		fmt.Fprintf(&b, "\n## Review warnings (%d)\n\n", len(s.Warnings))
		for _, w := range s.Warnings {
			b.WriteString("- " + escape(oneLine(w)) + "\n")
		}
	}

	b.WriteString("\n")
	if c.Added > 0 {
		total, unknown := s.EstimatedTotal()
		fmt.Fprintf(&b, "**Estimated total: %s**", money.Format(total))
		if unknown > 0 {
			fmt.Fprintf(&b, " (%d of %d added items have no readable price and are not included)", unknown, c.Added)
		}
		b.WriteString("\n")
	}
	if u := s.Usage; u.TotalTokens > 0 || u.PromptTokens > 0 || u.OutputTokens > 0 {
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.OutputTokens
		}
		cost := fmt.Sprintf("about $%.2f", u.CostUSD)
		if u.CostUnknown {
			cost = "cost unknown (the model has no known price)"
		}
		fmt.Fprintf(&b, "Model use: %s tokens (%s in, %s out), %s.\n",
			group(total), group(u.PromptTokens), group(u.OutputTokens), cost)
	}
	if s.CartURL != "" {
		b.WriteString("Review and check out: " + link("your cart", s.CartURL) + "\n")
	}
	return b.String()
}

// nameOr is the item's name, or a placeholder for an item without one.
func nameOr(it ItemResult) string {
	if oneLine(it.ItemName) == "" {
		return "(no name)"
	}
	return it.ItemName
}

func priceText(p money.Price, quantity int) string {
	if !p.Known {
		if t := oneLine(p.Text); t != "" {
			return "price unknown (“" + escape(t) + "”)"
		}
		return "price unknown"
	}
	per := ""
	if p.Per != "" {
		per = "/" + escape(p.Per)
	}
	unit := money.Format(p.UnitCents) + per
	if quantity <= 1 {
		return unit
	}
	total, _ := money.LineTotal(p, quantity)
	if p.Per != "" {
		return fmt.Sprintf("%s, about %s", unit, money.Format(total))
	}
	return fmt.Sprintf("%s each, %s", unit, money.Format(total))
}

func reason(text, fallback string) string {
	t := oneLine(text)
	if t == "" {
		return " — " + fallback
	}
	return " — " + escape(t)
}

// link renders [text](url) for http(s) URLs, plain escaped text otherwise.
func link(text, raw string) string {
	text = oneLine(text)
	u, err := url.Parse(strings.TrimSpace(raw))
	ok := err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	if text == "" {
		if ok {
			text = u.Host
		} else {
			return ""
		}
	}
	if !ok {
		return escape(text)
	}
	return "[" + escape(text) + "](" + escapeURL(u.String()) + ")"
}

// escapeURL keeps a URL from closing the markdown link.
func escapeURL(s string) string {
	r := strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E")
	return r.Replace(s)
}

// escape backslash-escapes the characters markdown gives meaning to.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '#', '|', '~':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// oneLine collapses whitespace, newlines included, so text stays on its line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// roundDuration shows seconds for runs under an hour, minutes above.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Hour {
		return d.Round(time.Minute)
	}
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// group writes 1234567 as "1,234,567".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
