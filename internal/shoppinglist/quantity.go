package shoppinglist

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Quantities as a household means them: one rule, read here, that the
// list's parser, the agent's goal, the cart guard and the review agree on.
//
// A list counts either packages or pieces:
//
//	the list says                          counts     quantity
//	"milk", "bread"                        packages   1
//	"2x milk", "milk x2", "2 × milk"       packages   2
//	"2 milk", "two milk", "3 yogurt"       packages   2, 2, 3 (a count of a thing not counted in pieces)
//	"2 bags of apples", "3 cans of tomatoes" packages 2, 3 (the count names a container)
//	"12 eggs", "6 bagels", "3 apples"      pieces     12, 6, 3 (a count of a plural noun)
//	"three apples", "trois pommes"         pieces     3
//	"a couple of avocados"                 pieces     2
//	"a dozen eggs", "une douzaine d'œufs"  pieces     12
//	"half a dozen bagels", "2 dozen eggs"  pieces     6, 24
//	"2 litres of milk", "500 g butter"     a size     1 (the size is part of the product)
//
// A count of pieces is not a count of packages. How many packages cover it
// depends on the product (ReadPack reads its name and size as the store
// shows them), and Packages says how many:
//
//	the product is sold                      "12 eggs"     "3 apples"   "2 baguettes"
//	in packs of a count (12, 6, 30)          ceil(12/12)=1 ceil(3/6)=1  ceil(2/6)=1
//	a bag of pieces by weight (3 lb bag)     1             1            1
//	one piece by weight (a 300 g baguette)   12            3            2
//	loose (each, per lb, no size)            12            3            2
//
// A package by weight or volume holds several pieces (a bag) when its text
// names a container ("bag", "sac", "bunch", "tray"…) or the item's pieces
// in the plural ("Gala Apples 3 lb"); otherwise it is one piece ("Baguette
// 300 g", "Pineapple 1.5 kg").
//
// A count of packages is that many packages, whatever the product.

// Pack is how a product is sold, read from its name and size as the store
// shows them (ReadPack).
type Pack struct {
	// Count is how many pieces one package holds ("12 eggs", "dozen",
	// "6 bagels", "12 x 355 mL"); 0 when the package is not counted.
	Count int
	// Measured: the package is a weight or a volume ("3 lb bag", "2 L",
	// "454 g"), not a count.
	Measured bool
	// Bag: a measured package of several pieces — its text names a
	// container ("3 lb bag", "sac de 3 lb") or, read for an item
	// (ReadPackFor), the item's pieces in the plural ("Gala Apples 3 lb").
	Bag bool
}

// Loose reports whether the product is sold by the piece: neither counted
// nor measured ("each", priced per lb, no size shown).
func (p Pack) Loose() bool { return p.Count == 0 && !p.Measured }

var (
	// "half a dozen", "half-dozen", "demi-douzaine": six.
	halfDozenRE = regexp.MustCompile(`\b(?:half[- ]?(?:a )?dozen|demi[- ]douzaine)\b`)
	// "2 dozen", "deux douzaines", "dozen", "douzaine": twelve each.
	dozenRE = regexp.MustCompile(`(?:\b(\d{1,2}|[a-z]+) )?\b(?:dozen|douzaines?)\b`)
	// "12 x 355 mL", "6×100 g": a multipack.
	multipackRE = regexp.MustCompile(`\b(\d{1,3}) ?[x×] ?\d`)
	// "pack of 6", "paquet de 8", "box of 12".
	// (A unit after the number makes it a size: "sac de 3 lb".)
	packOfRE = regexp.MustCompile(`\b(?:pack|paquet|box|boite|boîte|caisse|case|bag|sac|bunch|botte|tray|plateau) (?:of|de) (\d{1,3})\b(?: ?([\pL%]+))?`)
	// "6-pack", "12 pk", "24 ct", "8 count", "10 pieces", "6 unités".
	packWordRE = regexp.MustCompile(`\b(\d{1,3}) ?-? ?(?:pack|pk|ct|count|pcs|pieces|pièces|morceaux|unités|units)\b`)
	// "12 eggs", "6 bagels", "30 œufs": a number then a word.
	countedRE = regexp.MustCompile(`(?:^|[^\d.,])(\d{1,3}) ([\pL][\pL'-]*)`)
	// a number then a unit: "2 L", "454 g", "3 lb bag", "1.36 kg".
	measuredRE = regexp.MustCompile(`\d(?:[.,]\d+)? ?([\pL%]+)`)
	// a container of several pieces.
	bagRE = regexp.MustCompile(`\b(?:bags?|sacs?|bunch|bunches|bottes?|nets?|filets?|trays?|barquettes?|clamshell|boxe?s?|boîtes?|boites?|packs?|paquets?|cartons?|caisses?|cases?)\b`)
	// priced by weight: "$1.99/lb", "4,39 $/kg", "per lb", "le kg".
	perWeightRE = regexp.MustCompile(`(?:/ ?|\bper |\bau |\ble |\bla )(?:lb|kg|g|100 ?g|livre)\b`)
)

// ReadPack reads how a product is sold from what the store shows of it —
// its name, brand and size ("Large White Eggs, Burnbrae Farms, 12 eggs";
// "Gala Apples 3 lb bag"; "Plain Bagels 6 bagels"; "Bananas $0.35/lb").
func ReadPack(text string) Pack {
	s := " " + strings.ToLower(strings.Join(strings.Fields(text), " ")) + " "
	s = perWeightRE.ReplaceAllString(s, " ")
	var p Pack
	switch {
	case halfDozenRE.MatchString(s):
		p.Count = 6
	case dozenRE.MatchString(s):
		m := dozenRE.FindStringSubmatch(s)
		n := 1
		if c, ok := count(m[1]); ok {
			n = c
		} else if c, ok := englishCounts[m[1]]; ok {
			n = c
		}
		p.Count = 12 * n
	}
	for _, re := range []*regexp.Regexp{multipackRE, packOfRE, packWordRE} {
		if p.Count > 0 {
			break
		}
		if m := re.FindStringSubmatch(s); m != nil && (len(m) < 3 || !isUnit(m[2])) {
			if c, err := strconv.Atoi(m[1]); err == nil && c > 1 {
				p.Count = c
			}
		}
	}
	for _, m := range measuredRE.FindAllStringSubmatch(s, -1) {
		if isUnit(m[1]) && m[1] != "%" {
			p.Measured = true
		}
	}
	p.Bag = p.Measured && bagRE.MatchString(s)
	if p.Count == 0 {
		for _, m := range countedRE.FindAllStringSubmatch(s, -1) {
			c, err := strconv.Atoi(m[1])
			if err != nil || c < 2 || isUnit(m[2]) || notCountedAfterWord[m[2]] {
				continue
			}
			p.Count = c
			break
		}
	}
	return p
}

// ReadPackFor is ReadPack for an item whose product words are product
// ("apples", "Granny Smith apples", "pommes de terre"): a measured package
// whose text names the item's pieces in the plural is a bag of them ("Gala
// Apples 3 lb").
func ReadPackFor(text, product string) Pack {
	p := ReadPack(text)
	if p.Measured && !p.Bag {
		if noun := pieceNoun(strings.Fields(product)); noun != "" && plural(noun) {
			p.Bag = slices.Contains(strings.Fields(normalisePhrase(text)), normalisePhrase(noun))
		}
	}
	return p
}

// Packages is how many packages of a product sold as pack buy what a list
// item asks for: n of them when it counts packages (pieces false); when it
// counts pieces, the packages that cover n — ceil(n / pack count) for a
// counted package, one bag of pieces by weight, n when each package is one
// piece (by weight: a baguette) or the product is sold loose. Never less
// than 1.
func Packages(n int, pieces bool, pack Pack) int {
	n = max(n, 1)
	switch {
	case !pieces:
		return n
	case pack.Count > 0:
		return (n + pack.Count - 1) / pack.Count
	case pack.Bag:
		return 1
	}
	return n
}

// PackagesFor is how many packages of the product the store shows as
// productText buy the item (Packages, ReadPackFor).
func (it Item) PackagesFor(productText string) int {
	product := it.Product
	if product == "" {
		product = Parse(it.Name).Product
	}
	return Packages(it.Quantity, it.Pieces, ReadPackFor(productText, product))
}

// FarFrom reports whether units packages of the product the store shows as
// productText are far from what the item asks for: at least twice, or at
// most half, the packages the rule says (twelve 12-packs for "12 eggs").
func (it Item) FarFrom(units int, productText string) bool {
	want := it.PackagesFor(productText)
	return units >= 2*want || 2*units <= want
}

// englishCounts are the counts an English list writes in words ("two
// milk", "three apples"). "one" is left alone, as "un"/"une" are: one is
// the default, and it starts names ("One Degree bread").
var englishCounts = map[string]int{
	"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12,
}

// notCountedAfterWord are words that make a leading count word part of a
// product's name ("three cheese pizza", "Five Alive", "seven grain bread").
var notCountedAfterWord = map[string]bool{
	"cheese": true, "cheeses": true, "grain": true, "grains": true, "bean": true, "alive": true,
	"up": true, "spice": true, "berry": true, "fromages": true, "épices": true, "pistoles": true,
}

// containers are the words that make a count one of packages ("2 bags of
// apples", "3 cans of tomatoes", "deux boîtes de thon").
var containers = map[string]bool{
	"bag": true, "bags": true, "box": true, "boxes": true, "can": true, "cans": true, "tin": true, "tins": true,
	"pack": true, "packs": true, "package": true, "packages": true, "packet": true, "packets": true,
	"bottle": true, "bottles": true, "carton": true, "cartons": true, "jar": true, "jars": true,
	"tub": true, "tubs": true, "loaf": true, "loaves": true, "bunch": true, "bunches": true,
	"case": true, "cases": true, "container": true, "containers": true, "tray": true, "trays": true,
	"sac": true, "sacs": true, "boîte": true, "boîtes": true, "boite": true, "boites": true,
	"paquet": true, "paquets": true, "bouteille": true, "bouteilles": true, "pot": true, "pots": true,
	"caisse": true, "caisses": true, "canette": true, "canettes": true, "conserve": true, "conserves": true,
	"pain": true, "pains": true, "barquette": true, "barquettes": true, "contenant": true, "contenants": true,
}

// linkWords end the noun a count counts ("pommes de terre", "cans of
// tomatoes", "bagels with sesame").
var linkWords = map[string]bool{
	"of": true, "with": true, "for": true, "in": true, "de": true, "des": true, "du": true, "à": true, "au": true,
	"aux": true, "avec": true, "pour": true, "en": true,
}

// countsPieces reports whether a count before product words counts pieces:
// its noun is plural ("12 eggs", "pommes de terre") and not a container
// ("2 bags of apples"). A singular noun ("2 milk", "3 yogurt") is counted
// in packages.
func countsPieces(product []string) bool {
	if len(product) == 0 || containers[strings.ToLower(product[0])] {
		return false
	}
	noun := pieceNoun(product)
	return noun != "" && plural(noun)
}

// pieceNoun is the noun a count counts: the last word before a link word
// ("apples" in "Granny Smith apples", "pommes" in "pommes de terre"),
// lower case.
func pieceNoun(product []string) string {
	noun := ""
	for _, w := range product {
		lw := strings.ToLower(w)
		if linkWords[lw] || strings.HasPrefix(lw, "d'") || strings.HasPrefix(lw, "d’") {
			break
		}
		noun = lw
	}
	return noun
}

// plural: an English or French plural ("eggs", "œufs", "choux"), not a
// singular that ends in s ("hummus", "swiss", "anchois" counts as plural).
func plural(w string) bool {
	w = strings.TrimRight(w, ".,;:!?)")
	if len([]rune(w)) < 3 {
		return false
	}
	switch {
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is") && !strings.HasSuffix(w, "ais"):
		return false
	}
	return strings.HasSuffix(w, "s") || strings.HasSuffix(w, "x")
}

// amount reads an amount in words at the start of words: "a dozen",
// "half a dozen", "two dozen", "a couple of", "une douzaine de/d'", "une
// demi-douzaine de". It returns the count, whether it counts pieces
// (always, for dozens; by the noun, for a couple), and the product words.
func amount(words []string) (int, bool, []string, bool) {
	lw := make([]string, len(words))
	for i, w := range words {
		lw[i] = strings.ToLower(w)
	}
	at := func(i int, ws ...string) bool {
		if i+len(ws) > len(lw) {
			return false
		}
		for j, w := range ws {
			if lw[i+j] != w {
				return false
			}
		}
		return true
	}
	// rest drops a linking "of"/"de"/"d'" before the product.
	rest := func(i int) []string {
		if i < len(words) && (lw[i] == "of" || lw[i] == "de") {
			i++
		}
		out := append([]string(nil), words[i:]...)
		if len(out) > 0 {
			for _, p := range []string{"d'", "d’", "D'", "D’"} {
				if s, ok := strings.CutPrefix(out[0], p); ok && s != "" {
					out[0] = s
					break
				}
			}
		}
		return out
	}
	var n, used int
	pieces := true
	switch {
	case at(0, "half", "a", "dozen"), at(0, "a", "half", "dozen"), at(0, "a", "half-dozen"):
		n, used = 6, 3
		if at(0, "a", "half-dozen") {
			used = 2
		}
	case at(0, "half-dozen"), at(0, "half", "dozen"):
		n, used = 6, 1
		if at(0, "half", "dozen") {
			used = 2
		}
	case at(0, "une", "demi-douzaine"), at(0, "la", "demi-douzaine"):
		n, used = 6, 2
	case at(0, "demi-douzaine"):
		n, used = 6, 1
	case at(0, "a", "dozen"), at(0, "one", "dozen"), at(0, "une", "douzaine"):
		n, used = 12, 2
	case at(0, "dozen"), at(0, "douzaine"):
		n, used = 12, 1
	case len(lw) > 1 && (lw[1] == "dozen" || lw[1] == "douzaines" || lw[1] == "douzaine"):
		c, ok := count(lw[0])
		if !ok || c > 8 {
			return 0, false, nil, false
		}
		n, used = 12*c, 2
	case at(0, "a", "couple", "of"), at(0, "a", "couple"), at(0, "couple", "of"):
		n, used = 2, 2
		if at(0, "couple", "of") {
			used = 1
		}
		pieces = false // by the noun, below
	default:
		return 0, false, nil, false
	}
	product := rest(used)
	if len(product) == 0 {
		return 0, false, nil, false
	}
	if !pieces {
		pieces = countsPieces(product)
	}
	return n, pieces, product, true
}
