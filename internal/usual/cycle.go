package usual

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/products"
)

// AtHomeShare is the share of its cycle under which an item bought since is
// probably still at home (ai-shopping-copilot's StockPruner: 70 %).
const AtHomeShare = 0.7

// Kind is a kind of product with a default restock cycle.
type Kind struct {
	Name string // message key suffix: usual.kind_<name>
	Days int
	// Words, any of which in the item's or product's name (a word of it,
	// English or French) gives the kind.
	Words []string
}

// Kinds are the default restock cycles, used for an item bought fewer than
// twice. Dairy (8 days) and laundry (45 days) are ai-shopping-copilot's
// StockPruner defaults; the others are this project's estimates for a
// household doing one grocery order a week (docs/usual.md).
var Kinds = []Kind{
	{"laundry", 45, []string{"laundry", "detergent", "lessive", "softener", "assouplissant"}},
	{"household", 30, []string{"dish", "dishwasher", "vaisselle", "paper", "papier", "towel", "essuie", "garbage", "sacs", "bags", "cleaner", "nettoyant"}},
	{"personal", 30, []string{"shampoo", "shampooing", "soap", "savon", "toothpaste", "dentifrice", "deodorant", "déodorant"}},
	{"eggs", 10, []string{"egg", "eggs", "oeuf", "oeufs", "œuf", "œufs"}},
	{"dairy", 8, []string{"milk", "lait", "yogurt", "yoghurt", "yogourt", "cheese", "fromage", "butter", "beurre", "cream", "crème", "creme", "margarine"}},
	{"bakery", 5, []string{"bread", "pain", "bagel", "bagels", "baguette", "croissant", "croissants", "buns"}},
	{"produce", 7, []string{"banana", "bananas", "banane", "bananes", "apple", "apples", "pomme", "pommes", "tomato", "tomatoes", "tomate", "tomates", "carrot", "carrots", "carotte", "carottes", "lettuce", "laitue", "potato", "potatoes", "onion", "onions", "oignon", "oignons", "fruit", "fruits", "vegetables", "légumes"}},
	{"meat", 7, []string{"chicken", "poulet", "beef", "boeuf", "bœuf", "pork", "porc", "fish", "poisson", "salmon", "saumon", "ham", "jambon"}},
	{"drinks", 10, []string{"juice", "jus", "beverage", "boisson", "water", "eau", "soda"}},
	{"pantry", 21, []string{"coffee", "café", "tea", "thé", "pasta", "spaghetti", "rice", "riz", "sugar", "sucre", "flour", "farine", "oil", "huile", "cereal", "céréales", "granola"}},
}

// otherKind is the kind of an item no word names.
var otherKind = Kind{Name: "other", Days: 14}

// KindOf is the kind of an item from its name and its product's name.
func KindOf(names ...string) Kind {
	words := map[string]bool{}
	for _, n := range names {
		for _, w := range strings.FieldsFunc(strings.ToLower(n), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r > 127)
		}) {
			words[w] = true
		}
	}
	for _, k := range Kinds {
		for _, w := range k.Words {
			if words[w] {
				return k
			}
		}
	}
	return otherKind
}

// Cycle is an item's restock cycle.
type Cycle struct {
	Days int `json:"cycle_days"`
	// Default: fewer than two purchases on different days, so the cycle is
	// its kind's default (Kind).
	Default bool   `json:"cycle_default,omitempty"`
	Kind    string `json:"kind,omitempty"`
	// Last is the last purchase (zero: never bought, a favourite).
	Last time.Time `json:"last_bought,omitzero"`
	// Purchases counts the days it was bought on.
	Purchases int `json:"purchases"`
}

// CycleOf is the restock cycle of one item's purchases: the median number
// of days between its purchases (on different days); its kind's default
// with fewer than two.
func CycleOf(ps []Purchase, names ...string) Cycle {
	var days []time.Time
	for _, p := range ps {
		d := day(p.At)
		if !slices.ContainsFunc(days, func(t time.Time) bool { return t.Equal(d) }) {
			days = append(days, d)
		}
	}
	slices.SortFunc(days, func(a, b time.Time) int { return a.Compare(b) })
	c := Cycle{Purchases: len(days)}
	for _, p := range ps {
		if p.At.After(c.Last) {
			c.Last = p.At
		}
	}
	if len(days) < 2 {
		k := KindOf(names...)
		c.Days, c.Default, c.Kind = k.Days, true, k.Name
		return c
	}
	gaps := make([]float64, 0, len(days)-1)
	for i := 1; i < len(days); i++ {
		gaps = append(gaps, math.Round(days[i].Sub(days[i-1]).Hours()/24))
	}
	c.Days = int(math.Round(median(gaps)))
	if c.Days < 1 {
		c.Days = 1
	}
	return c
}

// DaysSince is how many whole days before now it was last bought (-1:
// never).
func (c Cycle) DaysSince(now time.Time) int {
	if c.Last.IsZero() {
		return -1
	}
	return int(math.Round(day(now).Sub(day(c.Last)).Hours() / 24))
}

// AtHome says the item was bought less than AtHomeShare of its cycle ago:
// probably still at home.
func (c Cycle) AtHome(now time.Time) bool {
	ago := c.DaysSince(now)
	return ago >= 0 && float64(ago) < AtHomeShare*float64(c.Days)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// day is t's calendar day (in its own location).
func day(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// itemKey is how purchases of one item are grouped: the product id when
// known, else the product's name, else the item's key.
func itemKey(p Purchase) string {
	switch {
	case p.ProductID != "":
		return "id:" + p.ProductID
	case strings.TrimSpace(p.Product) != "":
		return "product:" + products.Key(p.Product)
	}
	return "item:" + products.Key(p.Item)
}
