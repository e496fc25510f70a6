// Package report holds the results of a shopping run — one ItemResult per list
// item — and renders them as the run summary people read (markdown).
package report

import (
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// Outcome is how one list item ended.
type Outcome string

const (
	// OutcomeAdded: the product is in the cart.
	OutcomeAdded Outcome = "added"
	// OutcomeNotFound: the agent looked and reported that nothing suitable exists.
	OutcomeNotFound Outcome = "not_found"
	// OutcomeFailed: the agent could not finish (limits, errors, timeouts).
	OutcomeFailed Outcome = "failed"
	// OutcomeDuplicate: the same item appears earlier in the list; shopped once.
	OutcomeDuplicate Outcome = "duplicate"
	// OutcomeSkipped: not shopped because of the list itself — a person
	// removed it or checked it off during the run, or its name is only tags
	// or empty. Explanation says which; the list is not changed.
	OutcomeSkipped Outcome = "skipped"
	// OutcomeNotShopped: the run was stopped before it finished the item;
	// it was left unchanged on the list.
	OutcomeNotShopped Outcome = "not_shopped"
)

// Explanations of skipped items.
const (
	SkippedRemoved    = "removed from the list during the run"
	SkippedCheckedOff = "checked off by someone during the run"
	SkippedNoName     = "its name is only tags or empty: nothing to search for (left as written)"
)

// UnappliedUpdate is a list update a run could not apply: the cart is as
// reported, the list does not say so.
type UnappliedUpdate struct {
	ItemID   string `json:"item_id"`
	ItemName string `json:"item_name"`
	// Update is what the list should have been told ("mark completed").
	Update string `json:"update"`
	// Reason is why it could not be applied.
	Reason string `json:"reason"`
}

// ItemResult is the result of one list item.
type ItemResult struct {
	ItemID   string  `json:"item_id"`
	ItemName string  `json:"item_name"`
	Quantity int     `json:"quantity"`
	Outcome  Outcome `json:"outcome"`

	// Set when Outcome is OutcomeAdded.
	ProductName string      `json:"product_name,omitempty"`
	Price       money.Price `json:"price"`
	URL         string      `json:"url,omitempty"`

	// Explanation is the agent's explanation (not found) or the failure reason.
	Explanation string `json:"explanation,omitempty"`

	Turns    int           `json:"turns,omitempty"`
	Attempts int           `json:"attempts,omitempty"`
	Duration time.Duration `json:"duration_ns,omitempty"`
	// StartedAt is when the item started (Duration runs from it).
	StartedAt time.Time `json:"started_at,omitzero"`

	// Replay says how a remembered product was used: "replayed" (added
	// without a model), "replay fell back: <why>" (then the agent), or
	// "remembered product, by the agent"; empty when none was remembered.
	Replay string `json:"replay,omitempty"`
	// ReplayChanged says a replay fell back because the product had
	// changed (renamed, repriced, gone, out of stock), not because the
	// store did not take the add or the cart could not be read.
	ReplayChanged bool `json:"replay_changed,omitempty"`

	// Warnings are what the item's own cart changes say against its result
	// (a unit of another product, more units than reported, units added by
	// an item that ended without a product), found when it finished.
	Warnings []string `json:"warnings,omitempty"`
	// WarningTexts are Warnings as catalogue keys and values, index for
	// index (AddWarning keeps them so), to say them in the reader's
	// language; a result from before keys has none (its Warnings are said).
	WarningTexts []messages.Text `json:"warning_texts,omitempty"`

	// For the review pack (internal/reviewpack): Matches is how many
	// products the agent said matched the item about equally well (0:
	// not said); ChosenBy says the household chose the product
	// (ChosenByHousehold) or typed what to look for instead
	// (ChosenByHouseholdQuery); PreviousPrice is the price the same product
	// had when it was last bought (from the product memory).
	Matches       int         `json:"matches,omitempty"`
	ChosenBy      string      `json:"chosen_by,omitempty"`
	PreviousPrice money.Price `json:"previous_price,omitzero"`
	// NotAsked: added without the household's answer although the item
	// says always ask (#ask) — the summary warns with NotAskedWarning.
	NotAsked bool `json:"not_asked,omitempty"`
}

// NotAskedWarning is the warning of an item added without asking although
// it says always ask (ItemResult.NotAsked).
const NotAskedWarning = "added without asking, although the item says always ask (#ask)"

// NotAskedKey is NotAskedWarning's catalogue key.
const NotAskedKey = "warning.not_asked"

// AddWarning adds a warning said by the catalogue (its English text to
// Warnings, the key and values to WarningTexts at the same index).
func (r *ItemResult) AddWarning(t messages.Text) {
	r.WarningTexts = padTexts(r.WarningTexts, len(r.Warnings))
	r.Warnings = append(r.Warnings, t.English())
	r.WarningTexts = append(r.WarningTexts, t)
}

// WarningText is the key and values of Warnings[i] (none: say Warnings[i]).
func (r ItemResult) WarningText(i int) messages.Text {
	if i < len(r.WarningTexts) {
		return r.WarningTexts[i]
	}
	return messages.Text{}
}

// padTexts makes ts n long (keyless texts for warnings added as plain
// strings), so that a keyed warning added next lands at its own index.
func padTexts(ts []messages.Text, n int) []messages.Text {
	for len(ts) < n {
		ts = append(ts, messages.Text{})
	}
	return ts
}

// How the household chose an item's product (ItemResult.ChosenBy).
const (
	ChosenByHousehold      = "household"
	ChosenByHouseholdQuery = "household_query"
	// ChosenBySubstitute: the household chose it in place of a product
	// that could not be bought (a sold-out item's question).
	ChosenBySubstitute = "household_substitute"
)

// Warn adds a warning said by the catalogue (its English text to Warnings,
// the key and values to WarningTexts at the same index).
func (s *Summary) Warn(t messages.Text) { s.WarnAs(t.English(), t) }

// WarnAs adds a warning whose English text is english (a text made before
// the catalogue said it, kept as it was).
func (s *Summary) WarnAs(english string, t messages.Text) {
	s.WarningTexts = padTexts(s.WarningTexts, len(s.Warnings))
	s.Warnings = append(s.Warnings, english)
	s.WarningTexts = append(s.WarningTexts, t)
}

// WarningsIn is the warnings said in m's language (a warning without a key
// as written).
func (s Summary) WarningsIn(m messages.Catalog) []string {
	out := make([]string, len(s.Warnings))
	for i, w := range s.Warnings {
		t := messages.Text{}
		if i < len(s.WarningTexts) {
			t = s.WarningTexts[i]
		}
		out[i] = m.Say(t, w)
		if t.Key != "" { // said in m's language: its prices too ("3,99 $")
			out[i] = money.TextIn(out[i], m.Lang())
		}
	}
	return out
}

// Usage is model token use and its estimated cost.
type Usage struct {
	PromptTokens int64   `json:"prompt_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	TotalTokens  int64   `json:"total_tokens"`
	CostUSD      float64 `json:"cost_usd"` // an estimate from the model's published price, for display only
	// CostUnknown: some of the use has no known price; CostUSD leaves it out.
	CostUnknown bool `json:"cost_unknown,omitempty"`
	// Calls counts the model requests made outside the agents' turns (the
	// cart review's, the "Show me" guide's); an item's agent calls are its Turns.
	Calls int `json:"calls,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	u.PromptTokens += o.PromptTokens
	u.OutputTokens += o.OutputTokens
	u.TotalTokens += o.TotalTokens
	u.CostUSD += o.CostUSD
	u.CostUnknown = u.CostUnknown || o.CostUnknown
	u.Calls += o.Calls
	return u
}

// Summary is everything the user is told at the end of a run.
type Summary struct {
	RunID      string       `json:"run_id"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt time.Time    `json:"finished_at"`
	Items      []ItemResult `json:"items"`
	// Warnings come from the cart review (missing lines, price differences…).
	Warnings []string `json:"warnings,omitempty"`
	// WarningTexts are Warnings as catalogue keys and values, index for
	// index (Warn keeps them so; a warning appended as a plain string has
	// none and is said as written).
	WarningTexts []messages.Text `json:"warning_texts,omitempty"`
	CartURL      string          `json:"cart_url,omitempty"`
	Usage        Usage           `json:"usage"`
	// Cancelled is set when the run was stopped before every item was shopped.
	Cancelled bool `json:"cancelled,omitempty"`
	// UnappliedUpdates are the list updates that could not be applied.
	UnappliedUpdates []UnappliedUpdate `json:"unapplied_updates,omitempty"`
	// Delivery is the next delivery window as the store's slots were read
	// after the run ("Next delivery: Saturday 10:00–12:00, $4.99"); nil
	// when they were not read (the store has no slots page, the run did
	// not reach its review, or the page could not be read).
	Delivery *slots.Next `json:"delivery,omitempty"`
}
