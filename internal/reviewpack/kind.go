package reviewpack

import (
	"strings"
	"unicode"
)

// OtherKind says whether an added product is another kind of thing than
// the item names — juice for a fruit — and names that kind ("juice"). It
// reads the product's name the way each language builds a name of a thing
// made from another (no list of products or of kinds):
//
//   - English puts the modifier first and in the singular: "orange juice",
//     "apple sauce", "egg noodles". So an item that names a thing in the
//     plural ("oranges") whose product has it in the singular followed by
//     another word the item does not have ("Orange Juice") got that other
//     word's kind. The thing itself keeps the plural ("Navel Oranges"), or
//     ends its name ("Gala Apple").
//   - French puts the kind first and the thing after a preposition: "jus
//     d'orange", "compote de pommes", "lait au chocolat". So an item word
//     after de/d'/du/des/à/au/aux whose product names first a word the
//     item does not have got that kind; the thing itself comes first
//     ("Lait au chocolat" is milk).
//
// Numbers, sizes and punctuation never name a kind; a comma, a dash or a
// parenthesis ends the part of the name that is read. A product whose name
// has every word of the item in it the same way ("orange juice" →
// "Tropicana Orange Juice") is the item's kind.
func OtherKind(item, product string) (string, bool) {
	words := itemWords(item)
	if len(words) == 0 {
		return "", false
	}
	has := map[string]bool{}
	for _, w := range words {
		has[w], has[singular(w)] = true, true
	}
	for _, seg := range segments(product) {
		for i, tok := range seg {
			for _, w := range words {
				s := singular(w)
				if singular(tok) != s {
					continue
				}
				// French: the item's word after a preposition, the kind
				// before it (read first: "jus d'orange sans pulpe").
				if i >= 1 && frenchOf[seg[i-1]] {
					if i >= 2 && isWord(seg[i-2]) && !has[seg[i-2]] && !has[singular(seg[i-2])] && !frenchOf[seg[i-2]] {
						return seg[i-2], true
					}
					continue
				}
				// English: the item's plural as the singular modifier of
				// the next word.
				if w != s && tok == s && i+1 < len(seg) && isWord(seg[i+1]) && !has[seg[i+1]] && !has[singular(seg[i+1])] {
					return seg[i+1], true
				}
			}
		}
	}
	return "", false
}

// frenchOf are the prepositions of a French name of a thing made from
// another ("jus d'orange", "lait au chocolat").
var frenchOf = map[string]bool{"de": true, "d": true, "du": true, "des": true, "à": true, "au": true, "aux": true}

// itemWords are the words of an item's name: no #tags, no numbers.
func itemWords(item string) []string {
	var out []string
	for _, f := range strings.Fields(item) {
		if strings.HasPrefix(f, "#") {
			continue
		}
		for _, w := range tokens(f) {
			if isWord(w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// segments are the parts of a product's name between commas, dashes,
// parentheses and slashes, each as its tokens.
func segments(name string) [][]string {
	parts := strings.FieldsFunc(name, func(r rune) bool {
		return strings.ContainsRune(",;()[]/|–—", r)
	})
	var out [][]string
	for _, p := range parts {
		// A dash between spaces ends a part; one inside a word does not.
		for _, q := range strings.Split(p, " - ") {
			if t := tokens(q); len(t) > 0 {
				out = append(out, t)
			}
		}
	}
	return out
}

// tokens are the lower-case words and numbers of s (an apostrophe splits
// "d'orange"; œ is written oe).
func tokens(s string) []string {
	s = strings.NewReplacer("œ", "oe", "Œ", "oe", "æ", "ae", "Æ", "ae").Replace(strings.ToLower(s))
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '%' && r != '.'
	})
}

// isWord: letters only (a number, a size or a percentage names no kind),
// at least two of them.
func isWord(t string) bool {
	n := 0
	for _, r := range t {
		if !unicode.IsLetter(r) {
			return false
		}
		n++
	}
	return n >= 2
}

// singular is a word without its plural ending (English and French):
// berries → berry, tomatoes → tomato, boxes → box, apples → apple,
// pommes → pomme; other words as they are.
func singular(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return strings.TrimSuffix(w, "ies") + "y"
	case len(w) > 4 && strings.HasSuffix(w, "oes"):
		return strings.TrimSuffix(w, "es")
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses")):
		return strings.TrimSuffix(w, "es")
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return strings.TrimSuffix(w, "s")
	}
	return w
}
