// Package choice holds the question an agent asks the user when a product
// choice is ambiguous, and the user's answer. The shopping run asks; a
// resolver (Telegram) answers.
package choice

import "github.com/gemini-supply/gemini-supply/internal/report"

// Option is one candidate product.
type Option struct {
	Name      string `json:"name"`
	Price     string `json:"price"`
	URL       string `json:"url,omitempty"`
	ProductID string `json:"product_id,omitempty"`
}

// Question is one ambiguous choice for one list item.
type Question struct {
	ItemName string   `json:"item_name"`
	Context  string   `json:"context"` // the agent's explanation of why it asks
	Options  []Option `json:"options"`
}

// Bounded returns the question with every text clipped to the bounds of
// package report (item name, product names, addresses, the agent's
// explanation): every channel shows it as it is.
func (q Question) Bounded() Question {
	q.ItemName = report.Clip(q.ItemName, report.MaxNameRunes)
	q.Context = report.Clip(q.Context, report.MaxTextRunes)
	opts := make([]Option, len(q.Options))
	for i, o := range q.Options {
		o.Name = report.Clip(o.Name, report.MaxProductRunes)
		o.Price = report.Clip(o.Price, 50)
		o.ProductID = report.Clip(o.ProductID, report.MaxNameRunes)
		if len(o.URL) > report.MaxURLBytes {
			o.URL = ""
		}
		opts[i] = o
	}
	q.Options = opts
	return q
}

// Kind is what the user decided.
type Kind string

const (
	// KindProduct: buy Options[Index].
	KindProduct Kind = "product"
	// KindNothing: nothing fits (the item is reported as not found and
	// tagged #404).
	KindNothing Kind = "nothing"
	// KindSkip: not this week (the item is reported as skipped and left
	// open on the list, untagged, for the next run).
	KindSkip Kind = "skip"
	// KindCustom: search again for Text instead.
	KindCustom Kind = "custom"
)

// Answer is the user's decision.
type Answer struct {
	Kind Kind `json:"kind"`
	// Index into Question.Options, for KindProduct.
	Index int `json:"index"`
	// Remember asks for the choice to be remembered for this item (⭐).
	Remember bool `json:"remember,omitempty"`
	// Text is the user's free text, for KindCustom.
	Text string `json:"text,omitempty"`
	// Reason explains a KindNothing that the user did not choose (ReasonTimeout).
	Reason string `json:"reason,omitempty"`
	// By is the Home Assistant user who answered (the panel behind ingress,
	// a phone); "" when not known.
	By string `json:"by,omitempty"`
}

// ReasonTimeout is the Reason of a KindNothing answer given because nobody
// answered in time. The run marks such an item failed, not "not found".
const ReasonTimeout = "timeout"
