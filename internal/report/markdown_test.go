package report

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/money"
)

var start = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

func fullSummary() Summary {
	return Summary{
		RunID:      "r-42",
		StartedAt:  start,
		FinishedAt: start.Add(4*time.Minute + 5*time.Second + 300*time.Millisecond),
		Items: []ItemResult{
			{ItemID: "a", ItemName: "2x milk 2%", Quantity: 2, Outcome: OutcomeAdded,
				ProductName: "Québon 2% milk, 2 L", Price: money.Parse("$5.49"), URL: "https://www.metro.ca/en/online-grocery/aisles/dairy/milk-2l/p/055872"},
			{ItemID: "b", ItemName: "bread", Quantity: 1, Outcome: OutcomeAdded,
				ProductName: "POM white bread", Price: money.Parse("2 for $7.00"), URL: "https://www.metro.ca/p/1"},
			{ItemID: "c", ItemName: "bananas", Quantity: 1, Outcome: OutcomeAdded,
				ProductName: "Bananas", Price: money.Parse("$1.74/kg"), URL: "https://www.metro.ca/p/2"},
			{ItemID: "d", ItemName: "12 eggs", Quantity: 12, Outcome: OutcomeAdded,
				ProductName: "Large eggs, 12", Price: money.Parse("see store"), URL: "javascript:alert(1)"},
			{ItemID: "e", ItemName: "saffron", Quantity: 1, Outcome: OutcomeNotFound,
				Explanation: "Searched \"saffron\" and \"safran\";\nno spice matched."},
			{ItemID: "f", ItemName: "butter", Quantity: 1, Outcome: OutcomeFailed,
				Explanation: "time budget of 5m0s exceeded"},
			{ItemID: "g", ItemName: "Milk **now**", Quantity: 1, Outcome: OutcomeDuplicate},
		},
		Warnings: []string{"Cart has 1 × Bananas but 2 were reported"},
		CartURL:  "https://www.metro.ca/en/cart",
		Usage:    Usage{PromptTokens: 1234567, OutputTokens: 8910, TotalTokens: 1243477, CostUSD: 1.6324},
	}
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name string
		s    Summary
		want string
	}{
		{
			name: "full run",
			s:    fullSummary(),
			want: `# Shopping run

Started 2026-03-14 09:30 UTC, took 4m5s.

**4 added, 1 not found, 1 failed, 1 duplicate.**

## Added (4)

- **2x milk 2%** → [Québon 2% milk, 2 L](https://www.metro.ca/en/online-grocery/aisles/dairy/milk-2l/p/055872) × 2 — $5.49 each, $10.98
- **bread** → [POM white bread](https://www.metro.ca/p/1) — $3.50
- **bananas** → [Bananas](https://www.metro.ca/p/2) — $1.74/kg
- **12 eggs** → Large eggs, 12 × 12 — price unknown (“see store”)

## Not found (1)

- **saffron** — Searched "saffron" and "safran"; no spice matched.

## Failed (1)

- **butter** — time budget of 5m0s exceeded

## Duplicates (1)

- **Milk \*\*now\*\*** — already on the list; shopped once

## Review warnings (1)

- Cart has 1 × Bananas but 2 were reported

**Estimated total: $16.22** (1 of 4 added items have no readable price and are not included)
Model use: 1,243,477 tokens (1,234,567 in, 8,910 out), about $1.63.
Review and check out: [your cart](https://www.metro.ca/en/cart)
`,
		},
		{
			name: "nothing to shop",
			s:    Summary{StartedAt: start, FinishedAt: start.Add(1500 * time.Millisecond)},
			want: `# Shopping run

Started 2026-03-14 09:30 UTC, took 2s.

**Nothing to shop.**

`,
		},
		{
			name: "cancelled, all known prices, per-unit quantity, no usage",
			s: Summary{
				StartedAt: start, FinishedAt: start.Add(90 * time.Minute), Cancelled: true,
				Items: []ItemResult{
					{ItemName: "apples", Quantity: 3, Outcome: OutcomeAdded, ProductName: "Gala [bag]", Price: money.Parse("$2.20/lb"), URL: "https://x.test/a b(1)"},
					{ItemName: "rice", Quantity: 0, Outcome: OutcomeAdded, Price: money.Parse("$9")},
					{ItemName: "flour #404", Outcome: OutcomeNotFound},
					{ItemName: "yeast", Outcome: OutcomeFailed},
					{ItemName: "salt", Outcome: OutcomeNotShopped},
					{ItemName: "", Outcome: OutcomeSkipped, Explanation: SkippedNoName},
				},
				UnappliedUpdates: []UnappliedUpdate{{ItemName: "rice", Update: "mark completed", Reason: "Home Assistant\ndid not answer"}},
			},
			want: `# Shopping run

Started 2026-03-14 09:30 UTC, took 1h30m0s.

**Stopped: 2 added, 1 not found, 1 failed, 1 skipped, 1 not shopped.**

The run was stopped before every item was shopped; the items it did not finish are unchanged on the list.

## Added (2)

- **apples** → [Gala \[bag\]](https://x.test/a%20b%281%29) × 3 — $2.20/lb, about $6.60
- **rice** — $9.00

## Not found (1)

- **flour \#404** — no explanation given

## Failed (1)

- **yeast** — no reason recorded

## Skipped (1)

- **(no name)** — its name is only tags or empty: nothing to search for (left as written)

## Not shopped (1)

- **salt** — the run was stopped first; unchanged on the list

## List updates that could not be applied (1)

- **rice** (mark completed) — Home Assistant did not answer

**Estimated total: $15.60**
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s.Markdown()
			if got != tt.want {
				t.Errorf("Markdown() mismatch\n--- got ---\n%s\n--- want ---\n%s\n--- first difference at byte %d", got, tt.want, firstDiff(got, tt.want))
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestCountsAndTotal(t *testing.T) {
	s := fullSummary()
	got := s.Counts()
	want := Counts{Added: 4, NotFound: 1, Failed: 1, Duplicate: 1, Total: 7}
	if got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
	total, unknown := s.EstimatedTotal()
	// 2 × 5.49 + 3.50 + 1.74 (per kg, counted once); the eggs have no price.
	if total != 1098+350+174 || unknown != 1 {
		t.Errorf("EstimatedTotal() = %d, %d; want %d, 1", total, unknown, 1098+350+174)
	}
	if d := s.Duration(); d != 4*time.Minute+5*time.Second+300*time.Millisecond {
		t.Errorf("Duration() = %v", d)
	}
	if (Summary{StartedAt: start}).Duration() != 0 {
		t.Error("Duration of an unfinished run should be 0")
	}
	if got := s.Title(); got != "gemini-supply: 4 added, 1 not found, 1 failed, 1 duplicate" {
		t.Errorf("Title() = %q", got)
	}
	stopped := Summary{Cancelled: true, Items: []ItemResult{
		{Outcome: OutcomeAdded}, {Outcome: OutcomeAdded}, {Outcome: OutcomeNotShopped}, {Outcome: OutcomeNotShopped}, {Outcome: OutcomeNotShopped},
	}}
	if got := stopped.Title(); got != "gemini-supply: stopped — 2 added, 3 not shopped" {
		t.Errorf("Title() of a stopped run = %q", got)
	}
}

func TestMarkdownEscapesHostileText(t *testing.T) {
	s := Summary{Items: []ItemResult{
		{ItemName: "[click](https://evil.test)", Outcome: OutcomeNotFound, Explanation: "# heading\n<script>"},
		{ItemName: "x", Outcome: OutcomeAdded, ProductName: "y", URL: "javascript:alert(1)", Price: money.Parse("$1")},
	}}
	md := s.Markdown()
	for _, bad := range []string{"[click](", "\n# heading", "<script>", "](javascript:"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown contains %q unescaped:\n%s", bad, md)
		}
	}
}

func BenchmarkMarkdown(b *testing.B) {
	s := fullSummary()
	for i := 0; i < 6; i++ {
		s.Items = append(s.Items, s.Items...)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = s.Markdown()
	}
}

// TestMarkdownUnknownCost: a usage without a known price shows tokens and
// says the cost is unknown, never "$0.00".
func TestMarkdownUnknownCost(t *testing.T) {
	s := Summary{StartedAt: start, FinishedAt: start.Add(time.Minute),
		Items: []ItemResult{{ItemName: "milk", Quantity: 1, Outcome: OutcomeAdded, Price: money.Parse("$5")}},
		Usage: Usage{PromptTokens: 1000, OutputTokens: 50, TotalTokens: 1050, CostUnknown: true}}
	md := s.Markdown()
	if !strings.Contains(md, "Model use: 1,050 tokens (1,000 in, 50 out), cost unknown") || strings.Contains(md, "$0.00") {
		t.Errorf("markdown:\n%s", md)
	}
}
