package shoppinglist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/report"
)

// MaxNameRunes is the longest item name a run shops (200 characters): a
// longer one is refused before shopping (Plan.TooLong) and left as written.
// A name is a search and the agent's goal; nobody writes a 200-character
// grocery item, and an unbounded one fills the summary, the journal, the
// events and the panel.
const MaxNameRunes = report.MaxNameRunes

// MaxQuantity is the largest count read from a name. A bigger leading number
// is taken as part of the product ("100 napkins" is one pack of napkins).
const MaxQuantity = 99

// Parsed is what a raw list entry says.
type Parsed struct {
	// Name is the entry with its #tags removed and whitespace collapsed.
	Name string
	// Tags are the #tags of the entry, lower case, with the '#', in order,
	// without repeats.
	Tags []string
	// Quantity is the number asked for (1 when the entry names none): of
	// packages, or of pieces when Pieces is set.
	Quantity int
	// Pieces: Quantity counts pieces ("12 eggs", "three apples", "a dozen
	// eggs"), not packages ("2x milk", "2 milk"): the packages that cover
	// it depend on the product (Packages, quantity.go).
	Pieces bool
	// Product is Name without its quantity.
	Product string
}

// Parse reads a raw list entry such as "2x milk 2% #404".
//
// Tags: every whitespace-separated word starting with '#' ("#404", "#failed",
// "#costco") is a tag; tags are matched case-insensitively and removed from
// the name.
//
// Quantity: "2x milk", "2 x milk", "2× milk", "milk x2", "milk x 2",
// "milk 2x" count packages. A bare leading count ("3 apples", "12 eggs",
// "2 milk"; in words too: "two milk", "three apples", "deux baguettes",
// "trois pommes") and an amount in words ("a dozen eggs", "half a dozen
// bagels", "2 dozen eggs", "a couple of avocados", "une douzaine d'œufs",
// "une demi-douzaine de bagels") give a quantity that counts pieces when
// its noun is plural and not a container ("12 eggs", "3 apples"; not "2
// milk", "2 bags of apples"): see quantity.go for the rule and its table.
// A number followed by a unit is a size, not a quantity: "1.5 kg flour",
// "500 g butter", "2L milk", "2 litres of milk", "2 % milk" are quantity 1
// with the whole text as the product. Counts above MaxQuantity, zero and
// decimals are not quantities either.
func Parse(raw string) Parsed {
	var words, tags []string
	for _, w := range strings.Fields(raw) {
		if isTag(w) {
			t := strings.ToLower(w)
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
			continue
		}
		words = append(words, w)
	}
	p := Parsed{Name: strings.Join(words, " "), Tags: tags, Quantity: 1}
	q, pieces, product := quantity(words)
	p.Quantity, p.Pieces = q, pieces && q > 1
	p.Product = strings.Join(product, " ")
	return p
}

// isTag reports whether w is a #tag: '#' then letters, digits, '_' or '-'.
func isTag(w string) bool {
	if len(w) < 2 || w[0] != '#' {
		return false
	}
	for _, r := range w[1:] {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' {
			return false
		}
	}
	return true
}

// quantity finds the count in words and returns it, whether it counts
// pieces rather than packages, and the remaining words.
func quantity(words []string) (int, bool, []string) {
	n := len(words)
	if n == 0 {
		return 1, false, words
	}
	first := words[0]

	// "2x milk", "2×milk" glued on the left.
	if c, rest, ok := countWithX(first, true); ok && (rest != "" || n > 1) {
		if rest == "" {
			return c, false, words[1:]
		}
		return c, false, append([]string{rest}, words[1:]...)
	}
	if n < 2 {
		return 1, false, words
	}
	second := words[1]
	// "2 x milk", "2 × milk".
	if c, ok := count(first); ok && isX(second) && n >= 3 {
		return c, false, words[2:]
	}
	// "milk x2", "milk 2x" at the end.
	last := words[n-1]
	if c, rest, ok := countWithX(last, false); ok && rest == "" {
		return c, false, words[:n-1]
	}
	if c, rest, ok := countWithX(last, true); ok && rest == "" {
		return c, false, words[:n-1]
	}
	// "milk x 2".
	if n >= 3 && isX(words[n-2]) {
		if c, ok := count(last); ok {
			return c, false, words[:n-2]
		}
	}
	// An amount in words: "a dozen eggs", "half a dozen bagels", "a
	// couple of avocados", "une douzaine d'œufs".
	if c, pieces, rest, ok := amount(words); ok && c <= MaxQuantity {
		return c, pieces, rest
	}
	// A bare leading count: "3 apples", "12 eggs", "two milk", unless a
	// unit follows ("2 litres of milk") or the word is part of a name
	// ("three cheese pizza").
	if c, ok := count(first); ok && !isUnit(second) && !(isWord(first) && notCountedAfterWord[strings.ToLower(second)]) {
		return c, countsPieces(words[1:]), words[1:]
	}
	return 1, false, words
}

// isWord: w is a count in words, not digits.
func isWord(w string) bool { return w != "" && (w[0] < '0' || w[0] > '9') }

func isX(w string) bool { return w == "x" || w == "X" || w == "×" || w == "*" }

// countWords are the counts a French list writes in words ("deux
// baguettes"; "douze œufs" counts pieces: one box of twelve where the
// store sells twelve, quantity.go). "un"/"une" are left alone: one is the
// default, and "une" starts names ("Une tranche de…").
var countWords = map[string]int{
	"deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8, "neuf": 9, "dix": 10,
	"onze": 11, "douze": 12,
}

// count parses a whole number in 1..MaxQuantity, in digits or (French or
// English) words.
func count(w string) (int, bool) {
	if c, ok := countWords[strings.ToLower(w)]; ok {
		return c, true
	}
	if c, ok := englishCounts[strings.ToLower(w)]; ok {
		return c, true
	}
	if w == "" || len(w) > 3 {
		return 0, false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	c, err := strconv.Atoi(w)
	if err != nil || c < 1 || c > MaxQuantity {
		return 0, false
	}
	return c, true
}

// countWithX reads "2x" (numberFirst) or "x2" (!numberFirst) at the start of
// w and returns the count and what follows it in the same word ("2xmilk" →
// "milk"; only for numberFirst).
func countWithX(w string, numberFirst bool) (int, string, bool) {
	if numberFirst {
		i := 0
		for i < len(w) && w[i] >= '0' && w[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, "", false
		}
		rest, ok := trimX(w[i:])
		if !ok {
			return 0, "", false
		}
		c, ok := count(w[:i])
		if !ok {
			return 0, "", false
		}
		return c, rest, true
	}
	rest, ok := trimX(w)
	if !ok {
		return 0, "", false
	}
	c, ok := count(rest)
	return c, "", ok
}

// trimX removes a leading x, X or × and reports whether there was one.
func trimX(s string) (string, bool) {
	for _, x := range []string{"x", "X", "×"} {
		if strings.HasPrefix(s, x) {
			return s[len(x):], true
		}
	}
	return s, false
}

// units that make a leading number a size rather than a count.
var units = map[string]bool{
	"g": true, "gr": true, "gram": true, "grams": true, "gramme": true, "grammes": true,
	"kg": true, "kgs": true, "kilo": true, "kilos": true, "kilogram": true, "kilograms": true,
	"mg": true, "lb": true, "lbs": true, "pound": true, "pounds": true, "oz": true, "ounce": true, "ounces": true,
	"l": true, "liter": true, "liters": true, "litre": true, "litres": true, "livre": true, "livres": true,
	"ml": true, "cl": true, "dl": true, "%": true,
	"cm": true, "m": true, "mm": true, "in": true, "ft": true,
}

func isUnit(w string) bool {
	return units[strings.ToLower(strings.TrimRight(w, ".,"))]
}

// Key is the duplicate-detection key of a product: lower case, whitespace
// collapsed. "Milk" and " milk " share a key.
func Key(product string) string {
	return strings.ToLower(strings.Join(strings.Fields(product), " "))
}

// SetName fills Name, Tags, Quantity and Product of an item from a raw entry,
// keeping tags the item already has.
func (it *Item) SetName(raw string) {
	p := Parse(raw)
	it.Name = p.Name
	it.Product = p.Product
	it.Quantity = p.Quantity
	it.Pieces = p.Pieces
	for _, t := range p.Tags {
		if !it.HasTag(t) {
			it.Tags = append(it.Tags, t)
		}
	}
}

// Key is the item's duplicate-detection key (see Key).
func (it Item) Key() string {
	if it.Product != "" {
		return Key(it.Product)
	}
	return Key(Parse(it.Name).Product)
}

// HasTag reports whether the item carries tag (case-insensitive; the '#' is
// optional).
func (it Item) HasTag(tag string) bool {
	tag = normaliseTag(tag)
	for _, t := range it.Tags {
		if normaliseTag(t) == tag {
			return true
		}
	}
	return false
}

// OnlyTagged keeps the open items an earlier run tagged #404 or #failed:
// what "Retry failed" shops.
func OnlyTagged(items []Item) []Item {
	var out []Item
	for _, it := range items {
		if it.Status != StatusCompleted && it.RunTagged() {
			out = append(out, it)
		}
	}
	return out
}

// PlanRetry is the plan of "Retry failed": only the open items an earlier
// run tagged #404 or #failed (OnlyTagged, retried), with the open untagged
// items it leaves out counted in Untagged and the completed ones in
// Completed.
func PlanRetry(items []Item) Plan {
	p := PlanRun(OnlyTagged(items), true)
	for _, it := range items {
		switch {
		case it.Status == StatusCompleted:
			p.Completed++
		case !it.RunTagged():
			p.Untagged++
		}
	}
	return p
}

// RunTagged reports whether an earlier run tagged the item #404 or #failed.
func (it Item) RunTagged() bool {
	return it.HasTag(TagNotFound) || it.HasTag(TagFailed)
}

// IsRunTag reports whether tag is one a run writes (#404, #failed).
func IsRunTag(tag string) bool {
	t := normaliseTag(tag)
	return t == TagNotFound || t == TagFailed
}

func normaliseTag(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	if !strings.HasPrefix(t, "#") {
		t = "#" + t
	}
	return t
}

// Duplicate is an open item whose product is already on the list.
type Duplicate struct {
	Item Item
	// Of is the item that is shopped instead.
	Of Item
}

// Plan is how a run treats the items of a list.
type Plan struct {
	// ToShop are the open items to shop, in list order, duplicates folded in.
	ToShop []Item
	// Duplicates are open items whose product appears earlier in ToShop.
	Duplicates []Duplicate
	// Tagged are open items an earlier run tagged #404 or #failed; they are
	// left alone unless the run retries tagged items.
	Tagged []Item
	// Unnamed are open items whose name is empty or only tags ("#404"):
	// nothing to search for. They are never shopped or changed, also when
	// the run retries tagged items.
	Unnamed []Item
	// TooLong are open items whose name is longer than MaxNameRunes: never
	// shopped or changed, also when the run retries tagged items.
	TooLong []Item
	// Completed counts the items already completed.
	Completed int
	// Untagged counts the open items a retry of the tagged items leaves
	// out (not tagged #404 or #failed: an ordinary run shops them); 0 for
	// an ordinary run's plan (PlanRetry).
	Untagged int
}

// NothingToShop says why a plan with nothing to shop has nothing: "the
// list has no open item (2 completed; 1 tagged #404 or #failed by an
// earlier run: --retry-tagged shops it again; 1 with no name)".
func NothingToShop(p Plan) string {
	var why []string
	n := func(k int, one, many string) {
		if k == 1 {
			why = append(why, "1 "+one)
		} else if k > 1 {
			why = append(why, fmt.Sprintf("%d %s", k, many))
		}
	}
	n(p.Completed, "completed", "completed")
	n(len(p.Tagged), "tagged #404 or #failed by an earlier run (--retry-tagged shops it again)", "tagged #404 or #failed by an earlier run (--retry-tagged shops them again)")
	n(len(p.Unnamed), "with no name (empty or only tags)", "with no name (empty or only tags)")
	n(len(p.TooLong), fmt.Sprintf("with a name longer than %d characters", MaxNameRunes), fmt.Sprintf("with a name longer than %d characters", MaxNameRunes))
	n(p.Untagged, "not tagged (a retry shops only tagged items)", "not tagged (a retry shops only tagged items)")
	if len(why) == 0 {
		return "the list has no item"
	}
	return "the list has no open item to shop (" + strings.Join(why, "; ") + ")"
}

// NameTooLong reports whether an item name is over MaxNameRunes (spaces
// around it not counted).
func NameTooLong(name string) bool {
	return utf8.RuneCountInString(strings.TrimSpace(name)) > MaxNameRunes
}

// PlanRun splits items into what a run shops, what it skips as duplicates,
// what it leaves alone because an earlier run tagged it and what it refuses
// because it names nothing. Completed items are
// only counted. Duplicates share a Key; the first in list order is shopped
// with the largest quantity any of them asks for ("milk" then "2x Milk" shops
// 2 milk once).
func PlanRun(items []Item, retryTagged bool) Plan {
	var p Plan
	first := map[string]int{} // key → index in p.ToShop
	for _, it := range items {
		if it.Status == StatusCompleted {
			p.Completed++
			continue
		}
		if strings.TrimSpace(it.Name) == "" {
			p.Unnamed = append(p.Unnamed, it)
			continue
		}
		if NameTooLong(it.Name) {
			p.TooLong = append(p.TooLong, it)
			continue
		}
		if it.Quantity < 1 {
			it.Quantity = 1
		}
		if it.Product == "" {
			pp := Parse(it.Name)
			it.Product = pp.Product
			if it.Quantity == pp.Quantity {
				it.Pieces = pp.Pieces
			}
		}
		if it.RunTagged() && !retryTagged {
			p.Tagged = append(p.Tagged, it)
			continue
		}
		k := it.Key()
		if i, ok := first[k]; ok && k != "" {
			p.Duplicates = append(p.Duplicates, Duplicate{Item: it, Of: p.ToShop[i]})
			if it.Quantity > p.ToShop[i].Quantity {
				p.ToShop[i].Quantity, p.ToShop[i].Pieces = it.Quantity, it.Pieces
			}
			continue
		}
		first[k] = len(p.ToShop)
		p.ToShop = append(p.ToShop, it)
	}
	// Duplicates name the item as finally shopped (with the folded quantity).
	for i, d := range p.Duplicates {
		p.Duplicates[i].Of = p.ToShop[first[d.Of.Key()]]
	}
	return p
}
