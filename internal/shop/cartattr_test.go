package shop

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestFalseExpiryDoesNotSignIn: a tab says the session expired, but a
// fresh look at the store finds it signed in (a slow page, not a lost
// session): the item is retried without a login.
func TestFalseExpiryDoesNotSignIn(t *testing.T) {
	p := newFakeProvider("a")
	h := &fakeHost{authed: true}
	expired := fmt.Errorf("screenshot: %w", browser.ErrAuthExpired)
	a := newFakeAgent(map[string]behaviour{
		"a": sequence(fails(agent.ReasonBrowserError, expired), added("A", "$1")),
	})
	res, err := Run(context.Background(), baseConfig(t, p, h, a))
	if err != nil {
		t.Fatal(err)
	}
	if h.loginCount() != 0 || res.Logins != 0 {
		t.Errorf("logins = %d (result %d), want none: the session was valid", h.loginCount(), res.Logins)
	}
	if got := outcomeByName(res.Summary)["a"]; got != report.OutcomeAdded || a.attemptsFor("a") != 2 {
		t.Errorf("a = %s after %d attempts, want added after 2", got, a.attemptsFor("a"))
	}
}

// TestRetryToldWhatItsItemAdded: the first attempt adds the product (its
// tab's cart request) and is cut short by an expired session; the retry's
// goal says what is already in the cart, so an agent does not add it again.
func TestRetryToldWhatItsItemAdded(t *testing.T) {
	p := newFakeProvider("olive oil")
	h := &fakeHost{authed: true}
	expired := fmt.Errorf("screenshot: %w", browser.ErrAuthExpired)
	var retryGoal string
	a := newFakeAgent(map[string]behaviour{
		"olive oil": sequence(
			addsThen("olive-oil", 1, signsOut(h, fails(agent.ReasonBrowserError, expired))),
			func(ctx context.Context, c *fakeCall) agent.Result {
				retryGoal = c.goal
				return added("Olive Oil", "$12.99")(ctx, c)
			}),
	})
	res, err := Run(context.Background(), baseConfig(t, p, h, a))
	if err != nil {
		t.Fatal(err)
	}
	want := "An earlier attempt at this item stopped after it had already added to the cart: 1 × product olive-oil."
	if !strings.Contains(retryGoal, want) {
		t.Errorf("the retry's goal does not say what was added:\n%s", retryGoal)
	}
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeAdded || len(it.Warnings) != 0 {
		t.Errorf("item %+v", it)
	}
}

// TestCartChangesCheckedAgainstTheReport: what an item's tabs added to the
// cart is compared with what it reported the moment it finishes; every
// difference is a warning on the item (and in the summary).
func TestCartChangesCheckedAgainstTheReport(t *testing.T) {
	expired := fmt.Errorf("screenshot: %w", browser.ErrAuthExpired)
	cases := []struct {
		name string
		b    func(h *fakeHost) behaviour
		want string // a part of the one warning; "" for none
	}{
		{"added once, reported once", func(*fakeHost) behaviour { return addsThen("a", 1, added("A", "$1")) }, ""},
		{"added twice by one attempt", func(*fakeHost) behaviour { return addsThen("a", 1, addsThen("a", 1, added("A", "$1"))) },
			"added A 2 times but reported 1"},
		{"added again by the retry, which ignored the note", func(h *fakeHost) behaviour {
			return sequence(addsThen("a", 1, signsOut(h, fails(agent.ReasonBrowserError, expired))), addsThen("a", 1, added("A", "$1")))
		}, "added A 2 times but reported 1"},
		{"another product added", func(*fakeHost) behaviour { return addsThen("b", 1, addsThen("a", 1, added("A", "$1"))) },
			"added 1 × product b, which it did not report"},
		{"added, then reported not found", func(*fakeHost) behaviour { return addsThen("a", 1, notFound("nothing suitable")) },
			"added 1 × product a to the cart although the item ended not found"},
		{"added, then failed", func(*fakeHost) behaviour {
			return addsThen("a", 2, fails(agent.ReasonMaxTurns, fmt.Errorf("too many turns")))
		}, "added 2 × product a to the cart although the item ended failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakeProvider("a")
			h := &fakeHost{authed: true}
			a := newFakeAgent(map[string]behaviour{"a": tc.b(h)})
			res, err := Run(context.Background(), baseConfig(t, p, h, a))
			if err != nil {
				t.Fatal(err)
			}
			it := res.Summary.Items[0]
			switch {
			case tc.want == "" && len(it.Warnings) != 0:
				t.Errorf("warnings %q, want none", it.Warnings)
			case tc.want != "" && (len(it.Warnings) != 1 || !strings.Contains(it.Warnings[0], tc.want)):
				t.Errorf("warnings %q, want one saying %q", it.Warnings, tc.want)
			case tc.want != "" && !strings.Contains(strings.Join(res.Summary.Warnings, "\n"), tc.want):
				t.Errorf("the summary's warnings %q do not carry the item's", res.Summary.Warnings)
			}
			// Said in French, in the item's warnings and the summary's.
			fr := messages.For("fr")
			for i, w := range it.Warnings {
				said := fr.Say(it.WarningText(i), w)
				if it.WarningText(i).Key == "" || len(fr.Foreign(said)) > 0 || said == w {
					t.Errorf("warning %q has key %q and says %q in French (English left: %q)", w, it.WarningText(i).Key, said, fr.Foreign(said))
				}
			}
			for _, w := range res.Summary.WarningsIn(fr) {
				if left := fr.Foreign(w); len(left) > 0 {
					t.Errorf("the summary's warning %q in French has English left: %q", w, left)
				}
			}
		})
	}
}

// TestPooledTabCartsStayWithTheirItem: a replay tab serves one item after
// another; each item counts only the cart requests sent while it had the
// tab, so an earlier item's add never reads as this item's extra unit.
func TestPooledTabCartsStayWithTheirItem(t *testing.T) {
	tab := &fakeTab{host: &fakeHost{}}
	tab.addToCart("bananas", 1) // the previous item's replay
	it := &itemRun{}
	it.setTab(tab)
	tab.addToCart("milk", 1)
	ids := func(reqs []browser.CartRequest) string {
		var out []string
		for _, r := range reqs {
			out = append(out, r.ProductID)
		}
		return strings.Join(out, ",")
	}
	if got := ids(it.cartSoFar()); got != "milk" {
		t.Fatalf("the item's requests = %q, want milk only", got)
	}
	it.setTab(tab) // the same tab handed on to the item's agent keeps what it did
	if got := ids(it.keepTabCart(tab)); got != "milk" {
		t.Fatalf("kept %q, want milk", got)
	}
	tab.addToCart("eggs", 1) // the next item's, once the tab went back to the pool
	if got := ids(it.cartSoFar()); got != "milk" {
		t.Errorf("after the tab left, the item's requests = %q, want milk", got)
	}
}

// TestCartLimitRefusesUnitsNobodyAskedFor: where the tabs can read an add
// (a profile with CartOps), the item's tab refuses an add that would put
// more units in the cart than the item asks for — across its attempts, for
// any product — before the store sees it; the item says so. Without the
// limit the same agents put a second unit in the cart (the warnings of
// TestCartChangesCheckedAgainstTheReport).
func TestCartLimitRefusesUnitsNobodyAskedFor(t *testing.T) {
	expired := fmt.Errorf("screenshot: %w", browser.ErrAuthExpired)
	cases := []struct {
		name    string
		item    string // the list's text; the agent shops "a"
		b       func(h *fakeHost) behaviour
		inCart  int // units of the adds the store accepted
		refused int // adds refused
	}{
		{"one add for one", "a", func(*fakeHost) behaviour { return addsThen("a", 1, added("A", "$1")) }, 1, 0},
		{"twice by one attempt", "a", func(*fakeHost) behaviour { return addsThen("a", 1, addsThen("a", 1, added("A", "$1"))) }, 1, 1},
		{"again by the retry, which ignored the note", "a", func(h *fakeHost) behaviour {
			return sequence(addsThen("a", 1, signsOut(h, fails(agent.ReasonBrowserError, expired))), addsThen("a", 1, added("A", "$1")))
		}, 1, 1},
		{"another product after the add", "a", func(*fakeHost) behaviour { return addsThen("a", 1, addsThen("b", 1, added("A", "$1"))) }, 1, 1},
		{"two units in one add for two", "2x a", func(*fakeHost) behaviour { return addsThen("a", 2, added("A", "$1")) }, 2, 0},
		{"two adds for two, a third refused", "2x a", func(*fakeHost) behaviour {
			return addsThen("a", 1, addsThen("a", 1, addsThen("a", 1, added("A", "$1"))))
		}, 2, 1},
		{"two units in one add for one", "a", func(*fakeHost) behaviour { return addsThen("a", 2, added("A", "$1")) }, 0, 1},
		{"a wrong product removed, then the right one", "a", func(*fakeHost) behaviour {
			return addsThen("b", 1, setsThen("b", 0, addsThen("a", 1, added("A", "$1"))))
		}, 2, 0},
		{"a quantity change is not an add", "a", func(*fakeHost) behaviour {
			return addsThen("a", 1, setsThen("a", 3, added("A", "$1")))
		}, 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakeProvider(tc.item)
			h, tabs := recordingHost()
			a := newFakeAgent(map[string]behaviour{"a": tc.b(h)})
			res, err := Run(context.Background(), baseConfig(t, p, h, a))
			if err != nil {
				t.Fatal(err)
			}
			units, refused := cartOf(tabs())
			inCart := 0
			for _, n := range units {
				inCart += n
			}
			if inCart != tc.inCart || refused != tc.refused {
				t.Errorf("the store accepted %d units and %d adds were refused, want %d and %d", inCart, refused, tc.inCart, tc.refused)
			}
			it := res.Summary.Items[0]
			var said []string
			for _, w := range it.Warnings {
				if strings.Contains(w, "the store was not sent those adds") {
					said = append(said, w)
				}
			}
			if (tc.refused > 0) != (len(said) == 1) {
				t.Errorf("warnings %q, want one about the refused adds: %v", it.Warnings, tc.refused > 0)
			}
		})
	}
}

// TestRetryToldWhenAnEarlierCartChangeMayHaveAdded: a profile that cannot
// read its cart changes (metro: no CartOps, every change Kind "") still
// tells a retry to check the cart first when an earlier attempt's change
// the store accepted went to a cart path that is not a delivery choice.
func TestRetryToldWhenAnEarlierCartChangeMayHaveAdded(t *testing.T) {
	metro := store.Metro()
	req := func(path string, kind store.CartOpKind, status int) browser.CartRequest {
		return browser.CartRequest{CartChange: store.CartChange{Path: path, Kind: kind}, Method: "POST", Status: status}
	}
	cases := []struct {
		name  string
		reqs  []browser.CartRequest
		setup func(string) bool
		want  bool
	}{
		{"nothing sent", nil, metro.CartSetupPath, false},
		{"a postal code only", []browser.CartRequest{req("/en/online-grocery/cart/postal-code", "", 200)}, metro.CartSetupPath, false},
		{"delivery mode, store and time slot", []browser.CartRequest{
			req("/en/online-grocery/delivery-mode", "", 200), req("/en/store-selector", "", 200), req("/en/online-grocery/timeslot", "", 204),
		}, metro.CartSetupPath, false},
		{"an add of unknown kind", []browser.CartRequest{req("/en/online-grocery/cart/add-to-cart", "", 200)}, metro.CartSetupPath, true},
		{"a cart entry change after the postal code", []browser.CartRequest{
			req("/en/postal-code", "", 200), req("/en/online-grocery/cart-entries", "", 201),
		}, metro.CartSetupPath, true},
		{"an add the store refused", []browser.CartRequest{req("/en/online-grocery/cart/add-to-cart", "", 403)}, metro.CartSetupPath, false},
		{"an add that failed", []browser.CartRequest{{CartChange: store.CartChange{Path: "/add-to-cart"}, Method: "POST", Failed: true}}, metro.CartSetupPath, false},
		{"a read add is the precise note's (demo)", []browser.CartRequest{req("/api/cart/add", store.CartAdd, 200)}, store.Demo().CartSetupPath, false},
		{"the demo's postal code and consent", []browser.CartRequest{req("/api/postal-code", "", 200), req("/api/consent", "", 200)}, store.Demo().CartSetupPath, false},
		{"no setup paths known", []browser.CartRequest{req("/en/postal-code", "", 200)}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			it := &itemRun{cart: tc.reqs}
			if got := it.maybeAdded(tc.setup); got != tc.want {
				t.Errorf("maybeAdded = %v, want %v", got, tc.want)
			}
		})
	}
	for _, p := range metro.CartSetupPaths {
		if u := (&url.URL{Scheme: "https", Host: "www.metro.ca", Path: "/en" + p}); !metro.IsCartChange("POST", u) {
			t.Errorf("setup path %s is not one of metro's cart paths", p)
		}
	}
}

// TestCartLimitCountsPackagesThatCoverPieces (issues 33, 34, 37): the
// item's cart limit follows the household's rule — "12 eggs" lets one box
// of 12 through and refuses the second; "3 apples" lets one 3 lb bag
// through, or three loose apples; "2x eggs" two boxes. A product whose
// text the page did not show counts as sold loose, unless an earlier add of
// the same product said how it is sold.
func TestCartLimitCountsPackagesThatCoverPieces(t *testing.T) {
	const box, bag, loose = "Large White Eggs 12 eggs", "Gala Apples 3 lb bag", "Gala Apple each"
	tests := []struct {
		item    string
		text    string // what the page shows of the product added
		allowed int    // adds of one unit let through, one after the other
	}{
		{"12 eggs", box, 1},
		{"a dozen eggs", box, 1},
		{"une douzaine d'œufs", "Gros œufs blancs 12 œufs", 1},
		{"24 eggs", box, 2},
		{"2x eggs", box, 2},
		{"3 apples", bag, 1},
		{"trois pommes", bag, 1},
		{"3 apples", loose, 3},
		{"3 apples", "", 3},
		{"2 milk", "2% Milk 2 L", 2},
		{"milk", "2% Milk 2 L", 1},
	}
	for _, tc := range tests {
		t.Run(tc.item+" as "+tc.text, func(t *testing.T) {
			var item shoppinglist.Item
			item.SetName(tc.item)
			it := &itemRun{p: &planned{item: item}}
			allowed := 0
			for tabUnits := range 5 {
				if it.cartLimit(store.CartChange{Kind: store.CartAdd, ProductID: "p", Quantity: 1, ProductText: tc.text}, tabUnits) != nil {
					break
				}
				allowed++
			}
			if allowed != tc.allowed {
				t.Errorf("%d adds let through, want %d", allowed, tc.allowed)
			}
		})
	}
	// The text read once stands for the product's later adds.
	var eggs shoppinglist.Item
	eggs.SetName("12 eggs")
	it := &itemRun{p: &planned{item: eggs}}
	if err := it.cartLimit(store.CartChange{Kind: store.CartAdd, ProductID: "eggs-12", Quantity: 1, ProductText: box}, 0); err != nil {
		t.Fatalf("the first box: %v", err)
	}
	err := it.cartLimit(store.CartChange{Kind: store.CartAdd, ProductID: "eggs-12", Quantity: 1}, 1)
	if err == nil || !strings.Contains(err.Error(), "12 pieces") {
		t.Errorf("a second box whose text was not read: %v, want refused as 12 pieces in one box", err)
	}
}

// recordingHost is a signed-in host whose profile reads its adds (so the
// items' cart limits apply), and the tabs it has opened so far.
func recordingHost() (*fakeHost, func() []*fakeTab) {
	h := &fakeHost{authed: true, limitsAdds: true}
	var tabs []*fakeTab
	var mu sync.Mutex
	h.tabFor = func(ft *fakeTab) Tab {
		mu.Lock()
		defer mu.Unlock()
		tabs = append(tabs, ft)
		return ft
	}
	return h, func() []*fakeTab {
		mu.Lock()
		defer mu.Unlock()
		return append([]*fakeTab(nil), tabs...)
	}
}

// cartOf is what the tabs' adds the store accepted put in the cart, per
// product, and how many adds were refused.
func cartOf(tabs []*fakeTab) (map[string]int, int) {
	units, refused := map[string]int{}, 0
	for _, ft := range tabs {
		for _, r := range ft.CartRequests() {
			if r.Done() && r.Kind == store.CartAdd {
				units[r.ProductID] += max(r.Quantity, 1)
			}
			if r.Refused {
				refused++
			}
		}
	}
	return units, refused
}
