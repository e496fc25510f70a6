package shoppinglist

import (
	"strings"
	"unicode"
)

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

// Policy is the household's rule for one item, from its tags, its
// description (DescriptionPolicy) or the panel's Products tab (the product
// memory keeps that one).
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

// Policy is the policy the item's tags and its description set.
func (it Item) Policy() Policy {
	tags := Policy{NoSub: it.HasTag(TagNoSub), Ask: it.HasTag(TagAsk), AnyBrand: it.HasTag(TagAnyBrand)}
	return tags.Or(DescriptionPolicy(it.Description))
}

// The phrases of a description that set a rule, in English and French,
// written as normalised (lower case, accents and punctuation gone, one space
// between words: see normalisePhrase).
var policyPhrases = []struct {
	rule    Policy
	phrases []string
}{
	{Policy{NoSub: true}, []string{
		"nosub", "no sub", "no subs", "no substitute", "no substitutes", "no substitution", "no substitutions",
		"do not substitute", "don't substitute", "dont substitute", "never substitute",
		"pas de substitut", "pas de substituts", "pas de substitution", "pas de remplacement",
		"ne pas substituer", "ne pas remplacer", "sans substitut", "sans substitution", "sans remplacement",
		"aucun substitut", "aucune substitution", "jamais de substitut", "jamais de substitution",
	}},
	{Policy{Ask: true}, []string{
		"always ask", "ask first", "ask me first", "ask before", "always ask me",
		"toujours demander", "toujours me demander", "demander d'abord", "me demander d'abord", "demander avant",
	}},
	{Policy{AnyBrand: true}, []string{
		"anybrand", "any brand", "n'importe quelle marque", "toute marque", "toutes marques",
		"peu importe la marque", "marque indifferente",
	}},
}

// DescriptionPolicy is the policy a household's description of an item
// states: its #tags (#nosub, #ask, #anybrand) and phrases such as "no
// substitute", "always ask", "any brand" or, in French, "pas de substitut",
// "toujours demander", "n'importe quelle marque" — whole words, any case,
// accents and punctuation ignored. "" sets nothing.
func DescriptionPolicy(description string) Policy {
	var p Policy
	if strings.TrimSpace(description) == "" {
		return p
	}
	var words []string
	for _, w := range strings.Fields(description) {
		if isTag(strings.TrimRight(w, ".,;:!?)")) {
			switch strings.ToLower(strings.TrimRight(w, ".,;:!?)")) {
			case TagNoSub:
				p.NoSub = true
			case TagAsk:
				p.Ask = true
			case TagAnyBrand:
				p.AnyBrand = true
			}
			continue
		}
		words = append(words, w)
	}
	text := " " + normalisePhrase(strings.Join(words, " ")) + " "
	for _, r := range policyPhrases {
		for _, ph := range r.phrases {
			if strings.Contains(text, " "+ph+" ") {
				p = p.Or(r.rule)
				break
			}
		}
	}
	return p
}

// accents folds the accented letters of French to their plain letter.
var accents = strings.NewReplacer(
	"à", "a", "â", "a", "ä", "a", "ç", "c", "é", "e", "è", "e", "ê", "e", "ë", "e",
	"î", "i", "ï", "i", "ô", "o", "ö", "o", "ù", "u", "û", "u", "ü", "u", "ÿ", "y", "œ", "oe",
	"’", "'", "‘", "'", "ʼ", "'",
)

// normalisePhrase lower-cases s, folds accents, keeps apostrophes inside
// words and turns every other non-letter, non-digit into a space, with one
// space between words.
func normalisePhrase(s string) string {
	s = accents.Replace(strings.ToLower(s))
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case r == '\'' && i > 0 && i+1 < len(rs) && unicode.IsLetter(rs[i-1]) && unicode.IsLetter(rs[i+1]):
			b.WriteRune(r)
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
