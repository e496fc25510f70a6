package shoppinglist

import "strings"

// Tags the household writes on an item to set its policy (they are kept as
// written: a run only adds and removes #404 and #failed).
const (
	// TagNoSub: never substitute — a sold-out item ends not found, without
	// a question.
	TagNoSub = "#nosub"
	// TagAsk: always ask before adding, even with one match or a
	// remembered product.
	TagAsk = "#ask"
	// TagAnyBrand: any brand will do — no question between brands, and a
	// sold-out product may be replaced by the same product of another brand.
	TagAnyBrand = "#anybrand"
)

// Policy is the household's rule for one item, from its tags or from the
// panel's Products tab (the product memory keeps that one).
type Policy struct {
	NoSub    bool `json:"no_substitute,omitempty"`
	Ask      bool `json:"always_ask,omitempty"`
	AnyBrand bool `json:"any_brand,omitempty"`
}

// IsZero reports whether the policy sets nothing.
func (p Policy) IsZero() bool { return p == Policy{} }

// Or is the policy with every rule of q added.
func (p Policy) Or(q Policy) Policy {
	return Policy{NoSub: p.NoSub || q.NoSub, Ask: p.Ask || q.Ask, AnyBrand: p.AnyBrand || q.AnyBrand}
}

// String names the rules ("never substitute, always ask"); "" when none.
func (p Policy) String() string {
	var w []string
	if p.NoSub {
		w = append(w, "never substitute")
	}
	if p.Ask {
		w = append(w, "always ask")
	}
	if p.AnyBrand {
		w = append(w, "any brand")
	}
	return strings.Join(w, ", ")
}

// Policy is the policy the item's tags set.
func (it Item) Policy() Policy {
	return Policy{NoSub: it.HasTag(TagNoSub), Ask: it.HasTag(TagAsk), AnyBrand: it.HasTag(TagAnyBrand)}
}
