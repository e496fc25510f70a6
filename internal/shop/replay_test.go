package shop

import (
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/money"
)

func TestReplayChecks(t *testing.T) {
	t.Run("price", func(t *testing.T) {
		for _, tc := range []struct {
			was, now string
			max      float64
			want     string // "" or a substring of the reason
		}{
			{"$5.00", "$5.99", 20, ""},
			{"$5.00", "$6.01", 20, "more than 20%"},
			{"$5.00", "$3.99", 20, "-20%"},
			{"$5.00", "$3.90", 20, "more than 20%"},
			{"$5.00", "$50.00", 1000, ""},
			{"", "$9.99", 20, ""}, // nothing remembered: the id and name decide
			// The page's price must be readable even with nothing (or
			// nothing readable) remembered: the add is reported at it.
			{"", "see in store", 20, "price cannot be read"},
			{"", "", 20, "price cannot be read"},
			{"see in store", "see in store", 20, "price cannot be read"},
			{"see in store", "$9.99", 20, "remembered price \"see in store\" cannot be read"},
			{"$0.00", "$9.99", 20, "remembered price \"$0.00\" cannot be read"},
			{"$4.99/kg", "$9.99", 20, "not per the same unit"},
			{"$5.49", "$549.00/kg", 20, "not per the same unit"},
			{"$5.49", "call for price", 20, "cannot be read"},
			{"$5.00", "$5.00", 0, ""},
			{"$5.00", "$5.01", 0, "more than 0%"},
		} {
			got := priceMoved(money.Parse(tc.was), money.Parse(tc.now), tc.max)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("priceMoved(%q → %q, %v%%) = %q, want %q", tc.was, tc.now, tc.max, got, tc.want)
			}
		}
	})
	t.Run("name", func(t *testing.T) {
		for _, tc := range []struct {
			page, whole, remembered string
			want                    bool
		}{
			{"2% Partly Skimmed Milk", "Natrel 2 L", "Natrel 2% Partly Skimmed Milk, 2 L", true},
			{"2% partly skimmed MILK", "natrel 2 l", "Natrel 2% Partly Skimmed Milk, 2 L", true},
			{"Plantains", "", "Fresh Bananas, bunch of 6", false},
			{"Organic 2% Milk", "Natrel 2 L", "Natrel 2% Partly Skimmed Milk, 2 L", false},
			{"", "", "Natrel Milk", false},
			{"Lait 2 %", "Natrel 2 L", "Natrel Lait 2 %, 2 L", true},
			// A page name that is a subset of the remembered one is not
			// enough: the remembered words must be on the page too.
			{"Milk", "", "Natrel 2% Milk 2 L", false},
			{"Milk", "Natrel 2 L", "Natrel 2% Milk 2 L", false},
		} {
			if got := sameName(tc.page, tc.whole, tc.remembered); got != tc.want {
				t.Errorf("sameName(%q, %q, %q) = %v", tc.page, tc.whole, tc.remembered, got)
			}
		}
	})
	t.Run("cart delta", func(t *testing.T) {
		lines := func(m map[string]int) cartState {
			c := cartState{lines: m}
			for _, n := range m {
				c.count += n
			}
			return c
		}
		for _, tc := range []struct {
			name          string
			before, after cartState
			qty           int
			want          string
		}{
			{"one line grew by the quantity", lines(map[string]int{"a": 1}), lines(map[string]int{"a": 3}), 2, ""},
			{"another tab added meanwhile", lines(map[string]int{"a": 1}), lines(map[string]int{"a": 2, "b": 5}), 1, ""},
			{"grew by more", lines(map[string]int{"a": 1}), lines(map[string]int{"a": 3}), 1, "changed by 2 units, not 1"},
			{"did not grow", lines(map[string]int{"a": 1}), lines(map[string]int{"a": 1, "b": 1}), 1, "changed by 0 units"},
			{"count only, grew", cartState{count: 4}, cartState{count: 6}, 1, ""},
			{"count only, did not grow enough", cartState{count: 4}, cartState{count: 5}, 2, "grew by 1 units, not 2"},
		} {
			got := tc.after.delta(tc.before, "a", tc.qty)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("%s: delta = %q, want %q", tc.name, got, tc.want)
			}
		}
	})
	t.Run("in-cart count", func(t *testing.T) {
		for _, tc := range []struct {
			text string
			want int // -1: not read
		}{
			{"", 0}, {"In cart: 1", 1}, {"Dans le panier : 12", 12}, {"In cart: 99", 99},
			{"Only 3 left – in cart: 1", -1},
			{"In cart: 12345678901234567890", -1},
			{"In cart: 100", -1},
			{"In cart: 1.5", -1},
			{"In cart", -1},
			{"In cart: -1", -1}, {"In cart: \u22121", -1},
		} {
			c, err := inCartState(tc.text, "a")
			switch {
			case tc.want < 0 && err == nil:
				t.Errorf("inCartState(%q) = %d, want it unread", tc.text, c.units("a"))
			case tc.want >= 0 && (err != nil || c.units("a") != tc.want):
				t.Errorf("inCartState(%q) = %d, %v; want %d", tc.text, c.units("a"), err, tc.want)
			}
		}
	})
	t.Run("same page", func(t *testing.T) {
		for _, tc := range []struct {
			now, want string
			ok        bool
		}{
			{"https://www.metro.ca/en/p/1", "https://www.metro.ca/en/p/1", true},
			{"https://www.metro.ca/en/p/1/?x=1#y", "https://www.metro.ca/en/p/1", true},
			{"https://www.metro.ca/en/p/2", "https://www.metro.ca/en/p/1", false},
			{"https://www.metro.ca/en", "https://www.metro.ca/en/p/1", false},
			{"https://evil.example/en/p/1", "https://www.metro.ca/en/p/1", false},
		} {
			if got := samePage(tc.now, tc.want); got != tc.ok {
				t.Errorf("samePage(%q, %q) = %v", tc.now, tc.want, got)
			}
		}
	})
}
