package usual

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

var now = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

func ago(days int) time.Time { return now.AddDate(0, 0, -days) }

func buy(item, id string, src, basket string, daysAgo int) Purchase {
	return Purchase{Item: item, Product: item + ", 1 L", ProductID: id, At: ago(daysAgo), Source: src, Basket: basket}
}

func TestCycleOf(t *testing.T) {
	tests := []struct {
		name       string
		days       []int // days ago of each purchase
		names      []string
		wantDays   int
		wantDef    bool
		wantAtHome bool
	}{
		{"median of the gaps", []int{1, 10, 19, 28}, []string{"milk"}, 9, false, true},
		{"median of uneven gaps", []int{8, 15, 26}, []string{"bread"}, 9, false, false},
		{"same day counts once", []int{3, 3, 17}, []string{"eggs"}, 14, false, true},
		{"one purchase: dairy default", []int{2}, []string{"Greek Yogurt"}, 8, true, true},
		{"one purchase: laundry default", []int{40}, []string{"Laundry Detergent"}, 45, true, false},
		{"one purchase: laundry, recent", []int{20}, []string{"lessive"}, 45, true, true},
		{"unknown kind", []int{5}, []string{"birthday candles"}, 14, true, true},
		{"exactly 70 % is due", []int{7, 17}, []string{"x"}, 10, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ps []Purchase
			for _, d := range tc.days {
				ps = append(ps, Purchase{At: ago(d)})
			}
			c := CycleOf(ps, tc.names...)
			if c.Days != tc.wantDays || c.Default != tc.wantDef || c.AtHome(now) != tc.wantAtHome {
				t.Errorf("cycle %+v at home %v, want %d days default %v at home %v", c, c.AtHome(now), tc.wantDays, tc.wantDef, tc.wantAtHome)
			}
		})
	}
}

// demoHistory is like the demo store's: weekly milk (last 3 days ago),
// bread every week but not last time, a favourite never bought.
func demoHistory() History {
	return History{
		Purchases: []Purchase{
			buy("Milk", "milk", FromOrder, "B3", 3), buy("Bananas", "ban", FromOrder, "B3", 3),
			buy("Milk", "milk", FromOrder, "B2", 10), buy("Bread", "bread", FromOrder, "B2", 10), buy("Coffee", "cof", FromOrder, "B2", 10),
			buy("Milk", "milk", FromOrder, "B1", 17), buy("Bread", "bread", FromOrder, "B1", 17),
			buy("Milk", "milk", FromOrder, "B0", 24), buy("Bread", "bread", FromOrder, "B0", 24), buy("Coffee", "cof", FromOrder, "B0", 24),
		},
		Favourites: []Purchase{{Item: "Greek Yogurt", Product: "Greek Yogurt, 750 g", ProductID: "yog", Source: FromFavourite},
			{Item: "Coffee", Product: "Coffee, 1 L", ProductID: "cof", Source: FromFavourite}},
	}
}

func names(its []Item) string {
	var s []string
	for _, it := range its {
		n := it.Name
		if it.ProbablyAtHome {
			n += "(home)"
		}
		s = append(s, n)
	}
	return strings.Join(s, ",")
}

func TestPropose(t *testing.T) {
	en := messages.For("en")
	tests := []struct {
		name string
		o    Options
		list []shoppinglist.Item
		want string
	}{
		{"latest: the last order only", Options{From: Latest}, nil, "Milk(home),Bananas(home)"},
		{"combined: the last 2 orders", Options{From: Combined, Orders: 2}, nil, "Bread,Coffee,Milk(home),Bananas(home)"},
		{"favourites added", Options{From: Latest, Favourites: true}, nil, "Greek Yogurt,Coffee,Milk(home),Bananas(home)"},
		{"what is on the list is left out", Options{From: Combined, Orders: 4},
			[]shoppinglist.Item{{Name: "2x bread", Status: shoppinglist.StatusNeedsAction}, {Name: "milk", Status: shoppinglist.StatusNeedsAction}}, "Coffee,Bananas(home)"},
		{"a completed list item does not count", Options{From: Latest},
			[]shoppinglist.Item{{Name: "bananas", Status: shoppinglist.StatusCompleted}}, "Milk(home),Bananas(home)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Now, tc.o.Lang = now, en
			p := Propose(demoHistory(), tc.list, tc.o)
			if got := names(p.Items); got != tc.want {
				t.Errorf("proposal %s, want %s", got, tc.want)
			}
		})
	}
}

func TestProposeSaysWhy(t *testing.T) {
	for _, lang := range []string{"en", "fr"} {
		p := Propose(demoHistory(), nil, Options{From: Latest, Favourites: true, Now: now, Lang: messages.For(lang)})
		byName := map[string]Item{}
		for _, it := range p.Items {
			byName[it.Name] = it
		}
		milk := byName["Milk"]
		want := map[string]string{"en": "every 7 days, last bought 3 days ago — probably still at home",
			"fr": "tous les 7 jours, acheté il y a 3 jours — sans doute encore à la maison"}[lang]
		if milk.Reason != want || milk.CycleDays != 7 || !milk.ProbablyAtHome || milk.Source != FromOrder {
			t.Errorf("%s: milk %+v, want reason %q", lang, milk, want)
		}
		if y := byName["Greek Yogurt"]; y.Source != FromFavourite || y.ProbablyAtHome || y.Reason != messages.For(lang).T("usual.favourite") {
			t.Errorf("%s: yogurt %+v", lang, y)
		}
	}
}

// TestWarnings: an item on the list bought less than 70 % of its cycle ago
// is warned about, never dropped; one due is not.
func TestWarnings(t *testing.T) {
	list := []shoppinglist.Item{{Name: "milk", Status: shoppinglist.StatusNeedsAction}, {Name: "bread", Status: shoppinglist.StatusNeedsAction}}
	w := Warnings(demoHistory(), list, nil, now)
	if len(w) != 1 || w[0].Item != "milk" || w[0].Message != "bought 3 days ago, usually every 7 days" ||
		messages.For("fr").Say(w[0].Text, "") != "acheté il y a 3 jours, d'habitude tous les 7 jours" {
		t.Fatalf("warnings = %+v", w)
	}
}

// TestMemoryNamesTheListItem: the product memory says "lait" on the list is
// the orders' milk.
func TestMemoryNamesTheListItem(t *testing.T) {
	mem := []products.Entry{{Key: "lait", Product: products.Product{Name: "Milk, 1 L", ProductID: "milk"}}}
	list := []shoppinglist.Item{{Name: "lait", Status: shoppinglist.StatusNeedsAction}}
	p := Propose(demoHistory(), list, Options{From: Latest, Now: now, Memory: mem, Lang: messages.For("en")})
	if got := names(p.Items); got != "Bananas(home)" || len(p.OnList) != 1 {
		t.Errorf("proposal %s, on list %+v", got, p.OnList)
	}
}
