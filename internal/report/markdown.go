package report

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
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

// Title is a one-line headline in English: "gemini-supply: 3 added, 1 not
// found", or for a stopped run "gemini-supply: stopped — 2 added, 3 not
// shopped".
func (s Summary) Title() string { return s.TitleIn(messages.Catalog{}) }

// TitleIn is Title in c's language.
func (s Summary) TitleIn(c messages.Catalog) string {
	if s.Cancelled {
		return c.T("summary.title_stopped", "counts", s.Counts().StringIn(c))
	}
	return c.T("summary.title", "counts", s.Counts().StringIn(c))
}

// String renders the counts as "3 added, 1 not found, 1 failed, 1 duplicate"
// (zero counts left out; "nothing to shop" when all are zero).
func (c Counts) String() string { return c.StringIn(messages.Catalog{}) }

// StringIn is String in m's language.
func (c Counts) StringIn(m messages.Catalog) string {
	var parts []string
	add := func(n int, key string) {
		switch {
		case n == 1:
			parts = append(parts, m.T(key+"_one"))
		case n > 1:
			parts = append(parts, m.T(key, "n", n))
		}
	}
	add(c.Added, "summary.added")
	add(c.NotFound, "summary.not_found")
	add(c.Failed, "summary.failed")
	add(c.Duplicate, "summary.duplicate")
	add(c.Skipped, "summary.skipped")
	add(c.NotShopped, "summary.not_shopped")
	if len(parts) == 0 {
		return m.T("summary.nothing")
	}
	return strings.Join(parts, ", ")
}

// Markdown is MarkdownIn in English.
func (s Summary) Markdown() string { return s.MarkdownIn(messages.Catalog{}) }

// MarkdownIn renders the summary people read, in m's language: when the
// run started and how long it took, the added items with product,
// quantity, price and link, the items not found with the agent's
// explanation, the failed ones with the reason, duplicates, review
// warnings, model use and cost, the estimated total, the next delivery
// window (when the slots were read) and the cart link.
// Text from the list, the store and the model is escaped so it cannot
// change the formatting, and only http(s) links become links. The
// product's own explanations (a skipped item's, a replay's) are said in
// m's language; the agent's and the review's stay as they were written.
func (s Summary) MarkdownIn(m messages.Catalog) string {
	var b strings.Builder
	c := s.Counts()

	b.WriteString(m.T("summary.heading") + "\n\n")
	if !s.StartedAt.IsZero() {
		b.WriteString(m.T("summary.started", "time", s.StartedAt.Format("2006-01-02 15:04 MST")))
		if d := s.Duration(); d > 0 {
			b.WriteString(m.T("summary.took", "duration", roundDuration(d)))
		}
		// No run id: a household has no use for it (the panel's history
		// and the journal carry it).
		b.WriteString(".\n\n")
	}
	if s.Cancelled {
		b.WriteString(m.T("summary.stopped", "counts", c.StringIn(m)) + "\n")
		b.WriteString("\n" + m.T("summary.stopped_note") + "\n")
	} else {
		fmt.Fprintf(&b, "**%s.**\n", capitalise(c.StringIn(m)))
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
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", m.T(title), len(lines))
		for _, l := range lines {
			b.WriteString("- " + l + "\n")
		}
	}

	section("summary.section_added", OutcomeAdded, func(it ItemResult) string {
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
		l += " — " + priceText(m, it.Price, q)
		if it.Replay != "" {
			l += " _(" + escape(said(m, it.Replay)) + ")_"
		}
		return l
	})
	section("summary.section_not_found", OutcomeNotFound, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(m, it.Explanation, "summary.no_explanation")
	})
	section("summary.section_failed", OutcomeFailed, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(m, it.Explanation, "summary.no_reason")
	})
	section("summary.section_duplicates", OutcomeDuplicate, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(m, it.Explanation, "summary.duplicate_reason")
	})
	section("summary.section_skipped", OutcomeSkipped, func(it ItemResult) string {
		return "**" + escape(nameOr(m, it)) + "**" + reason(m, it.Explanation, "summary.left_alone")
	})
	section("summary.section_not_shopped", OutcomeNotShopped, func(it ItemResult) string {
		return "**" + escape(it.ItemName) + "**" + reason(m, it.Explanation, "summary.stopped_first")
	})
	if len(s.UnappliedUpdates) > 0 {
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", m.T("summary.unapplied"), len(s.UnappliedUpdates))
		for _, u := range s.UnappliedUpdates {
			fmt.Fprintf(&b, "- **%s** (%s) — %s\n", escape(oneLine(u.ItemName)), escape(u.Update), escape(oneLine(u.Reason)))
		}
	}

	if len(s.Warnings) > 0 {
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", m.T("summary.warnings"), len(s.Warnings))
		for _, w := range s.WarningsIn(m) {
			b.WriteString("- " + escape(oneLine(w)) + "\n")
		}
	}

	b.WriteString("\n")
	if c.Added > 0 {
		total, unknown := s.EstimatedTotal()
		b.WriteString(m.T("summary.total", "total", money.FormatIn(total, m.Lang())))
		if unknown > 0 {
			b.WriteString(m.T("summary.total_unknown", "unknown", unknown, "added", c.Added))
		}
		b.WriteString("\n")
	}
	if s.Delivery != nil {
		b.WriteString(s.Delivery.Line(m) + "\n")
	}
	if u := s.Usage; u.TotalTokens > 0 || u.PromptTokens > 0 || u.OutputTokens > 0 {
		total := u.TotalTokens
		if total == 0 {
			total = u.PromptTokens + u.OutputTokens
		}
		cost := m.T("summary.cost", "cost", money.FormatIn(money.Cents(math.Round(u.CostUSD*100)), m.Lang()))
		if u.CostUnknown {
			cost = m.T("summary.cost_unknown")
		}
		b.WriteString(m.T("summary.model_use", "total", groupIn(m, total), "in", groupIn(m, u.PromptTokens), "out", groupIn(m, u.OutputTokens), "cost", cost) + "\n")
	}
	if s.CartURL != "" {
		b.WriteString(m.T("summary.cart", "link", link(m.T("summary.your_cart"), s.CartURL)) + "\n")
	}
	return b.String()
}

// fixedTexts are the explanations the product itself writes (in English,
// the language results are stored in), by their catalogue key: the
// summary says them in its own language.
var fixedTexts = map[string]string{
	SkippedRemoved:    "summary.skipped_removed",
	SkippedCheckedOff: "summary.skipped_checked_off",
	SkippedNoName:     "summary.skipped_no_name",
	messages.For("en").T("question.skip_explanation"): "question.skip_explanation",
	messages.For("en").T("summary.replayed"):          "summary.replayed",
	messages.For("en").T("summary.replayed_agent"):    "summary.replayed_agent",
}

// said is text in m's language when the product wrote it (fixedTexts, a
// replay that fell back), else text as written.
func said(m messages.Catalog, text string) string {
	if key, ok := fixedTexts[text]; ok {
		return m.T(key)
	}
	if why, ok := strings.CutPrefix(text, "replay fell back: "); ok {
		return m.T("summary.replay_fell_back", "why", why)
	}
	return text
}

// nameOr is the item's name, or a placeholder for an item without one.
func nameOr(m messages.Catalog, it ItemResult) string {
	if oneLine(it.ItemName) == "" {
		return m.T("summary.no_name")
	}
	return it.ItemName
}

func priceText(m messages.Catalog, p money.Price, quantity int) string {
	if !p.Known {
		if t := oneLine(p.Text); t != "" {
			return m.T("summary.price_unknown_text", "text", escape(t))
		}
		return m.T("summary.price_unknown")
	}
	per := ""
	if p.Per != "" {
		per = "/" + escape(p.Per)
	}
	unit := money.FormatIn(p.UnitCents, m.Lang()) + per
	if quantity <= 1 {
		return unit
	}
	total, _ := money.LineTotal(p, quantity)
	if p.Per != "" {
		return m.T("summary.price_about", "unit", unit, "total", money.FormatIn(total, m.Lang()))
	}
	return m.T("summary.price_each", "unit", unit, "total", money.FormatIn(total, m.Lang()))
}

// reason is " — " and the item's explanation (said in m's language when
// the product wrote it), or the text of fallbackKey without one.
func reason(m messages.Catalog, text, fallbackKey string) string {
	t := oneLine(text)
	if t == "" {
		return " — " + m.T(fallbackKey)
	}
	return " — " + escape(said(m, t))
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

// groupIn is group in m's language: "1 234 567" (no-break spaces) in French.
func groupIn(m messages.Catalog, n int64) string {
	if m.Lang() == "fr" {
		return strings.ReplaceAll(group(n), ",", "\u00a0")
	}
	return group(n)
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
