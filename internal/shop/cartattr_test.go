package shop

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/report"
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
			"added 1 × product a to the cart although the item ended not_found"},
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
