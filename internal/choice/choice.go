// Package choice holds the question an agent asks the user when a product
// choice is ambiguous, and the user's answer. The shopping run asks; a
// resolver (Telegram) answers.
package choice

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

// Kind is what the user decided.
type Kind string

const (
	// KindProduct: buy Options[Index].
	KindProduct Kind = "product"
	// KindNothing: skip the item (reported as not found).
	KindNothing Kind = "nothing"
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
}

// ReasonTimeout is the Reason of a KindNothing answer given because nobody
// answered in time. The run marks such an item failed, not "not found".
const ReasonTimeout = "timeout"
