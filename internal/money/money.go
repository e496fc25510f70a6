// Package money parses store price texts into integer cents and formats cents
// for people. Amounts are never held in floating point.
package money

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Cents is an amount of money in hundredths of the currency unit (CAD cents).
type Cents int64

// Price is a price text as the store shows it, with the price of one unit in
// cents when the text could be understood.
type Price struct {
	// Text is the store's text, kept verbatim ("2 for $5.00", "4,99 $").
	Text string
	// UnitCents is the price of one unit; meaningful only when Known.
	UnitCents Cents
	// Known reports whether Text could be parsed.
	Known bool
	// Per is what UnitCents is the price of when the text names it
	// ("kg" for "$4.99/kg", "100 g" for "$1.29 / 100 g"); empty for a price
	// per item. A total computed from a Per price is only an estimate.
	Per string
}

// String formats c as "$12.34" (see Format).
func (c Cents) String() string { return Format(c) }

// Times is c multiplied by quantity (a quantity below 1 counts as 1).
func (c Cents) Times(quantity int) Cents {
	if quantity < 1 {
		quantity = 1
	}
	return c * Cents(quantity)
}

// Format renders cents the way Canadian English store pages do: "$12.34",
// "$1,234.56", "-$0.50".
func Format(c Cents) string {
	neg := c < 0
	u := uint64(c)
	if neg {
		u = uint64(-c) // two's complement also handles math.MinInt64
	}
	dollars := strconv.FormatUint(u/100, 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteByte('$')
	for i, r := range dollars {
		if i > 0 && (len(dollars)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	b.WriteByte('.')
	frac := u % 100
	b.WriteByte(byte('0' + frac/10))
	b.WriteByte(byte('0' + frac%10))
	return b.String()
}

// FormatIn writes c the way lang writes money: French ("fr") as
// "1 234,56 $" (no-break spaces, as Québec writes it), any other language
// as Format ("$1,234.56").
func FormatIn(c Cents, lang string) string {
	if lang != "fr" {
		return Format(c)
	}
	en := strings.TrimPrefix(strings.Replace(Format(c), "$", "", 1), "-")
	fr := strings.NewReplacer(",", "\u00a0", ".", ",").Replace(en) + "\u00a0$"
	if c < 0 {
		return "-" + fr
	}
	return fr
}

// dollarAmount is an amount as English store pages write it: "$7.49",
// "$1,234.56", "$5".
var dollarAmount = regexp.MustCompile(`\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{2}))?\b`)

// TextIn is a price text (the store's or the model's: "$7.49", "2 for
// $5.00", "$4.99/kg") with every dollar amount written the way lang writes
// money (FormatIn): "7,49 $", "2 for 5,00 $", "4,99 $/kg". Other text, and
// any text in English, is kept as it is.
func TextIn(text, lang string) string {
	if lang != "fr" {
		return text
	}
	return dollarAmount.ReplaceAllStringFunc(text, func(m string) string {
		sub := dollarAmount.FindStringSubmatch(m)
		d, err := strconv.ParseInt(strings.ReplaceAll(sub[1], ",", ""), 10, 64)
		if err != nil || d > math.MaxInt64/100-100 {
			return m
		}
		c := d * 100
		if sub[2] != "" {
			f, _ := strconv.ParseInt(sub[2], 10, 64)
			c += f
		}
		return FormatIn(Cents(c), lang)
	})
}

// LineTotal is the price of quantity units at p. ok is false when p is not
// Known.
func LineTotal(p Price, quantity int) (total Cents, ok bool) {
	if !p.Known {
		return 0, false
	}
	return p.UnitCents.Times(quantity), true
}

// Line is one priced line of a cart or summary.
type Line struct {
	Price    Price
	Quantity int
}

// Total sums the known line totals. unknown counts the lines whose price is
// not Known (they are left out of total).
func Total(lines ...Line) (total Cents, unknown int) {
	for _, l := range lines {
		t, ok := LineTotal(l.Price, l.Quantity)
		if !ok {
			unknown++
			continue
		}
		total += t
	}
	return total, unknown
}

// Parse reads a price text. It understands the forms Canadian grocery sites
// use, in English and French:
//
//	"$12.34", "12,34 $", "$1,234.56", "1 234,56 $", "CA$3", "99¢",
//	"2 for $5.00" / "2 pour 5,00 $" / "2/$5" (UnitCents = one unit's share),
//	"$4.99/kg", "$1.29 / 100 g", "$2.50 ea" (Per holds the unit).
//
// Anything else (empty text, words, several prices) gives Known=false with
// Text kept. Parse never panics and never uses floating point.
func Parse(text string) Price {
	p := Price{Text: text}
	s := normalise(text)
	if s == "" {
		return p
	}

	count := int64(1)
	if n, rest, ok := multiBuy(s); ok {
		count, s = n, rest
	}

	cents, rest, ok := amount(s)
	if !ok {
		return p
	}
	per, ok := perUnit(rest)
	if !ok {
		return p
	}
	if count > 1 {
		if per != "" {
			return p // "2 for $5/kg" means nothing sensible
		}
		cents = (cents*2 + count) / (2 * count) // round half up
	}
	p.UnitCents = Cents(cents)
	p.Per = per
	p.Known = true
	return p
}

// normalise lower-cases, turns the spaces stores put in numbers (no-break,
// narrow no-break, thin) into plain ones and trims.
func normalise(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\u00a0', '\u202f', '\u2009', '\t':
			return ' '
		}
		return r
	}, s)
	return strings.ToLower(strings.TrimSpace(s))
}

// multiBuy recognises "N for …", "N pour …", "N/…" and returns N and the rest.
func multiBuy(s string) (n int64, rest string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 3 {
		return 0, "", false
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n < 1 {
		return 0, "", false
	}
	r := strings.TrimLeft(s[i:], " ")
	switch {
	case strings.HasPrefix(r, "for "):
		r = r[len("for "):]
	case strings.HasPrefix(r, "pour "):
		r = r[len("pour "):]
	case strings.HasPrefix(r, "/"):
		r = r[1:]
	default:
		return 0, "", false
	}
	r = strings.TrimSpace(r)
	// The rest must carry a currency sign: "2/3" is not a price.
	if !strings.ContainsAny(r, "$¢") && !strings.Contains(r, "cad") {
		return 0, "", false
	}
	return n, r, true
}

// currency prefixes, longest first.
var prefixes = []string{"ca$", "cad$", "cad", "c$", "$"}

// amount reads one amount at the start of s: an optional currency prefix, a
// number, an optional currency suffix. It returns the cents and what follows.
func amount(s string) (cents int64, rest string, ok bool) {
	prefixed := false
	for _, pre := range prefixes {
		if strings.HasPrefix(s, pre) {
			s = strings.TrimLeft(s[len(pre):], " ")
			prefixed = true
			break
		}
	}
	// The number: digits and the separators found inside numbers.
	end := 0
	for end < len(s) {
		c := s[end]
		if c >= '0' && c <= '9' {
			end++
			continue
		}
		if (c == ',' || c == '.' || c == ' ') && end+1 < len(s) && s[end+1] >= '0' && s[end+1] <= '9' && end > 0 {
			end++
			continue
		}
		break
	}
	if end == 0 {
		return 0, "", false
	}
	num, rest := s[:end], s[end:]
	after := strings.TrimLeft(rest, " ")
	switch {
	case strings.HasPrefix(after, "¢"):
		if prefixed {
			return 0, "", false
		}
		c, ok := wholeNumber(num)
		if !ok {
			return 0, "", false
		}
		return c, after[len("¢"):], true
	case strings.HasPrefix(after, "$"):
		if prefixed {
			return 0, "", false
		}
		rest = after[1:]
	case strings.HasPrefix(after, "cad") && !prefixed:
		rest = after[3:]
	}
	c, ok := dollars(num)
	if !ok {
		return 0, "", false
	}
	return c, rest, true
}

// wholeNumber parses digits with optional thousands grouping ("1 234").
func wholeNumber(num string) (int64, bool) {
	groups := strings.FieldsFunc(num, func(r rune) bool { return r == ' ' || r == ',' || r == '.' })
	if len(groups) == 0 {
		return 0, false
	}
	for i, g := range groups {
		if i == 0 && (len(g) < 1 || (len(groups) > 1 && len(g) > 3)) {
			return 0, false
		}
		if i > 0 && len(g) != 3 {
			return 0, false
		}
	}
	if len(groups) > 1 && groups[0][0] == '0' {
		return 0, false // "0.001" or "01,234" is no thousands grouping
	}
	if len(groups) > 1 && strings.Count(num, string(separatorOf(num))) != len(groups)-1 {
		return 0, false // mixed grouping separators
	}
	v, err := strconv.ParseInt(strings.Join(groups, ""), 10, 64)
	if err != nil || v > maxWhole {
		return 0, false
	}
	return v, true
}

// maxWhole keeps every amount far from int64 overflow (a trillion dollars).
const maxWhole = 1_000_000_000_000

func separatorOf(num string) byte {
	for i := 0; i < len(num); i++ {
		if num[i] < '0' || num[i] > '9' {
			return num[i]
		}
	}
	return 0
}

// dollars parses "12.34", "12,34", "1,234.56", "1 234,56", "1.234,56", "5"
// into cents. The decimal separator is a final '.' or ',' followed by one or
// two digits; every other separator must group thousands.
func dollars(num string) (int64, bool) {
	whole, frac := num, ""
	if i := strings.LastIndexAny(num, ".,"); i >= 0 {
		if d := len(num) - i - 1; d == 1 || d == 2 {
			whole, frac = num[:i], num[i+1:]
		}
	}
	w, ok := wholeNumber(whole)
	if !ok {
		return 0, false
	}
	if strings.ContainsAny(frac, " .,") {
		return 0, false
	}
	f := int64(0)
	switch len(frac) {
	case 1:
		f = int64(frac[0]-'0') * 10
	case 2:
		f = int64(frac[0]-'0')*10 + int64(frac[1]-'0')
	}
	return w*100 + f, true
}

// perUnit accepts what may follow a price: nothing, "/kg", "/ 100 g",
// "per lb", "ea", "each", "/ea", "ch.", "chacun", "le kg". It returns the
// unit ("" for a price per item).
func perUnit(rest string) (string, bool) {
	r := strings.TrimSpace(rest)
	if r == "" {
		return "", true
	}
	if rest[0] != ' ' && rest[0] != '/' {
		return "", false // "12.34abc"
	}
	switch r {
	case "ea", "ea.", "each", "/ea", "/ea.", "/each", "ch", "ch.", "chacun", "/un", "/unit", "l'unité", "/unité":
		return "", true
	}
	var unit string
	switch {
	case strings.HasPrefix(r, "/"):
		unit = r[1:]
	case strings.HasPrefix(r, "per "):
		unit = r[len("per "):]
	case strings.HasPrefix(r, "le "), strings.HasPrefix(r, "la "):
		unit = r[len("le "):]
	default:
		return "", false
	}
	unit = strings.Join(strings.Fields(unit), " ")
	if unit == "" || strings.ContainsAny(unit, "$¢/") {
		return "", false
	}
	return unit, true
}
