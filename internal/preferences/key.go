package preferences

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	tagRE = regexp.MustCompile(`#\S*`)
	// Quantities as people write them on lists: "2x milk", "2 x milk",
	// "x2 milk", "2 bananas", "milk x2", "milk ×2", "milk (2)".
	leadingQtyRE  = regexp.MustCompile(`^(?:\d+\s*[x×]\s*|[x×]\s*\d+\s+|\(\s*\d+\s*\)\s*)`)
	leadingNumRE  = regexp.MustCompile(`^(\d+)\s+(\S+)`)
	trailingQtyRE = regexp.MustCompile(`(?:\s+[x×]\s*\d+|\s+\d+\s*[x×]|\s*\(\s*\d+\s*\))$`)
)

// maxKeyInput bounds the text Key normalises (Key).
const maxKeyInput = 4 << 10

// units are words that make a leading number a size ("2 l milk", "500 g
// butter") rather than a quantity ("2 bananas").
var units = map[string]bool{
	"g": true, "gr": true, "kg": true, "mg": true, "l": true, "ml": true, "cl": true, "dl": true,
	"lb": true, "lbs": true, "oz": true, "litre": true, "litres": true, "liter": true, "liters": true,
	"%": true,
}

// Key is the normalised form of a list item name under which a product is
// remembered: lower case, #tags and the quantity removed, punctuation turned
// into single spaces, and every word folded to its singular ("2x Bananas
// #404" → "banana", "Cherry Tomatoes" → "cherry tomato"). Key is idempotent:
// Key(Key(s)) == Key(s).
//
// Qualifiers stay part of the key, so "organic milk" and "milk" are different
// keys; that is how a remembered product for "milk" is kept away from a list
// entry that names a brand or other qualifiers (see Store.Lookup).
//
// A text longer than maxKeyInput bytes has no key (""): no list item is
// that long (report.MaxNameRunes runes and a few #tags), and normalising a
// megabyte — a key written by hand into the product memory, say — costs
// seconds of regular-expression work for a key nothing can match.
func Key(itemName string) string {
	if len(itemName) > maxKeyInput {
		return ""
	}
	s := strings.ToLower(itemName)
	s = tagRE.ReplaceAllString(s, " ")
	// Each pass only removes text, so this reaches a fixed point quickly;
	// looping makes Key idempotent even for "2x 3 bananas" or "(2) milk".
	for range 8 {
		next := keyPass(s)
		if next == s {
			break
		}
		s = next
	}
	return s
}

func keyPass(s string) string {
	s = strings.TrimSpace(s)
	// Quantity first while the separators are intact ("2x", "(2)").
	s = strings.TrimSpace(leadingQtyRE.ReplaceAllString(s, ""))
	if m := leadingNumRE.FindStringSubmatch(s); m != nil && !units[strings.Trim(m[2], ".,;:")] {
		s = strings.TrimSpace(strings.TrimPrefix(s, m[1]))
	}
	s = strings.TrimSpace(trailingQtyRE.ReplaceAllString(s, ""))
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '%' || r == '.':
			b.WriteRune(r)
		case r == '\'' || r == '’':
			// "president's" → "presidents": apostrophes join, they do not split.
		default:
			b.WriteByte(' ')
		}
	}
	words := strings.Fields(b.String())
	out := words[:0]
	for _, w := range words {
		w = strings.Trim(w, ".")
		if w == "" {
			continue
		}
		out = append(out, singular(w))
	}
	return strings.Join(out, " ")
}

// irregular plurals of grocery words the suffix rules get wrong.
var irregular = map[string]string{
	"loaves":   "loaf",
	"leaves":   "leaf",
	"halves":   "half",
	"knives":   "knife",
	"calves":   "calf",
	"geese":    "goose",
	"mice":     "mouse",
	"children": "child",
}

// ieWords end in "ie" in the singular, so their plural is "…ies" but not
// "…y"+"ies".
var ieWords = map[string]bool{
	"cookies": true, "brownies": true, "smoothies": true, "veggies": true,
	"calories": true, "hoagies": true, "beanies": true, "pies": true,
	"goodies": true, "sweeties": true, "ties": true,
}

// esWords end in "e" after "ch"/"sh"/"x" in the singular ("quiche"), so their
// plural loses only the "s".
var esWords = map[string]bool{
	"quiches": true, "brioches": true, "ganaches": true, "pistaches": true, "caches": true,
}

// singular folds one lower-case word to its singular with the English suffix
// rules that matter for grocery names. Words with digits and short words are
// left alone. The result is never changed again by singular (idempotence).
func singular(w string) string {
	if s, ok := irregular[w]; ok {
		return s
	}
	if len([]rune(w)) <= 3 {
		return w
	}
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return w
		}
	}
	switch {
	case ieWords[w], esWords[w]:
		return strings.TrimSuffix(w, "s")
	case strings.HasSuffix(w, "ies"):
		return strings.TrimSuffix(w, "ies") + "y" // berries → berry
	case strings.HasSuffix(w, "oes"):
		return strings.TrimSuffix(w, "es") // tomatoes → tomato
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"),
		strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zzes"):
		return strings.TrimSuffix(w, "es") // glasses → glass, peaches → peach, boxes → box
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"):
		return w // glass, hummus, asparagus
	case strings.HasSuffix(w, "s"):
		return strings.TrimSuffix(w, "s") // bananas → banana, eggs → egg, olives → olive
	}
	return w
}
