package app

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestThePanelsCartIsTheStoresCart (issue 33): after a real run of the
// demo store, the review in the panel (real Chromium, a phone) shows the
// cart as the store has it after every action — Change quantity and Remove
// update the line in place (the quantity shown, a removed line without
// buttons), their outcome next to the buttons, the total re-read from the
// store's cart — also after a reload and after a restart of the panel; a
// product already gone says so plainly; Wrong product asks first and its
// re-shop shows on the week's review, which stays.
func TestThePanelsCartIsTheStoresCart(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "milk", "eggs", "bananas", "butter")
	bus := &runstatus.Bus{}
	e.deps.Bus = bus
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := e.runner.DemoStore()
	if res.Pack == nil || res.Pack.Cart == nil {
		t.Fatalf("the run has no review pack with its cart: %+v", res.Pack)
	}

	// The panel as serve wires it, the run's end published again to it
	// (it subscribed after the run).
	var reshops sync.WaitGroup
	t.Cleanup(reshops.Wait)
	start := func(_ context.Context, req runstatus.Request) error {
		reshops.Add(1)
		go func() {
			defer reshops.Done()
			ctx, cancel := context.WithTimeout(context.Background(), runBound)
			defer cancel()
			if _, err := e.runner.Shop(ctx, req); err != nil {
				t.Errorf("the re-shop: %v", err)
			}
		}()
		return nil
	}
	// twice: the next action is taken once more just before (a second
	// phone, a double tap): the product is already gone when it arrives.
	var twice atomic.Bool
	cartAction := func(ctx context.Context, req reviewpack.Request) (reviewpack.Action, error) {
		if twice.CompareAndSwap(true, false) {
			if _, err := e.runner.CartAction(ctx, req); err != nil {
				t.Errorf("the first of two removes: %v", err)
			}
		}
		return CartActions(e.runner, start)(ctx, req)
	}
	newPanel := func() *panel.Panel {
		p, err := panel.New(panel.Options{Start: start, Stop: func(context.Context, string) error { return nil },
			History: PanelHistory(e.cfg), CartAction: cartAction})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	serve := func(p *panel.Panel) string {
		sub := bus.Subscribe(256)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = p.Consume(ctx, sub) }()
		t.Cleanup(func() { cancel(); <-done })
		hs := httptest.NewServer(p)
		// The page's event stream stays open until the browser closes.
		t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
		return hs.URL + "/"
	}
	p := newPanel()
	url := serve(p)
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: res.Summary.RunID, State: runstatus.StateReviewReady,
		Progress: runstatus.Progress{Total: 4, Done: 4}, Summary: &res.Summary, Pack: res.Pack})

	page, err := testbrowser.Launch(t).NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 390, Height: 844},
		ColorScheme: playwright.ColorSchemeDark})
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(120000)
	if _, err := page.Goto(url); err != nil {
		t.Fatal(err)
	}
	say := func(key string, args ...any) string { return messages.For("en").T("panel."+key, args...) }
	text := func(sel string) string {
		s, err := page.Locator(sel).First().TextContent()
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	count := func(sel string) int { n, _ := page.Locator(sel).Count(); return n }
	attr := func(sel, name string) string { v, _ := page.Locator(sel).First().GetAttribute(name); return v }
	until := func(what string, cond func() bool) {
		t.Helper()
		testwait.Until(t, what, 3*time.Minute, cond)
	}
	line := func(item string) string { return fmt.Sprintf(`#pack li[data-item=%q]`, item) }
	// storeTotal is the store's cart as the page should say it.
	storeTotal := func() string {
		var c money.Cents
		for _, l := range srv.Cart() {
			c += money.Cents(l.UnitCents) * money.Cents(l.Quantity)
		}
		return say("cart_total", "total", money.Format(c))
	}
	unitsOf := func(item string) int {
		id := ""
		for _, it := range res.Pack.Items {
			if it.ItemName == item {
				id = it.ProductID
			}
		}
		return cartUnits(srv)[id]
	}
	// The page's cart is the store's: each added line's quantity (a line
	// the store no longer has is marked gone, without buttons) and the
	// total.
	sameAsStore := func(when string) {
		t.Helper()
		until(when+": the page's total to be the store's", func() bool { return text("#total") == storeTotal() })
		for _, item := range []string{"milk", "eggs", "bananas"} {
			want := unitsOf(item)
			if want == 0 {
				if attr(line(item), "data-gone") != "true" || count(line(item)+" button") != 0 {
					t.Errorf("%s: %s is not in the store's cart, the page shows %q with %d buttons", when, item, text(line(item)), count(line(item)+" button"))
				}
				continue
			}
			if got := attr(line(item), "data-quantity"); got != strconv.Itoa(want) || !strings.Contains(text(line(item)), fmt.Sprintf("%d × ", want)) {
				t.Errorf("%s: %s shows %q (quantity %s), the store has %d", when, item, text(line(item)), got, want)
			}
		}
	}
	until("the review", func() bool { return count(`#pack li[data-item]`) == 4 })
	sameAsStore("after the run")
	// What needs a look first: butter (sold out) with its reason; the
	// rest folded; no grid of cards repeating the pack.
	if s := text(`#pack .look`); !strings.Contains(s, "butter") {
		t.Errorf("butter is not among what needs a look: %q", s)
	}
	if n := count(`#pack details.fine-group li[data-item]`); n == 0 {
		t.Error("the fine items are not folded")
	}
	if ok, _ := page.Locator("#items").IsVisible(); ok {
		t.Error("the items' cards repeat the pack below it")
	}

	// Change quantity: eggs to 3, in place, the outcome next to the button.
	if err := page.Locator(`#pack details.fine-group > summary`).Click(); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator(line("eggs") + " input.qty").Fill("3"); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator(line("eggs") + ` button[data-act="quantity"]`).Click(); err != nil {
		t.Fatal(err)
	}
	until("eggs at 3 in the store", func() bool { return unitsOf("eggs") == 3 })
	until("the outcome next to the eggs' buttons", func() bool { return strings.Contains(text(line("eggs")+" .feedback"), "1 → 3") })
	sameAsStore("after Change quantity")

	// Remove from cart: the bananas' line stays, marked gone, no buttons.
	if err := page.Locator(line("bananas") + ` button[data-act="remove"]`).Click(); err != nil {
		t.Fatal(err)
	}
	until("bananas out of the store's cart", func() bool { return unitsOf("bananas") == 0 })
	until("the bananas' line gone", func() bool { return attr(line("bananas"), "data-gone") == "true" })
	sameAsStore("after Remove")

	// A reload: the same cart.
	if _, err := page.Reload(); err != nil {
		t.Fatal(err)
	}
	until("the review after a reload", func() bool { return count(`#pack li[data-item]`) == 4 })
	sameAsStore("after a reload")

	// Already gone: the eggs leave the cart just before the page's Remove
	// arrives; the page says so plainly.
	twice.Store(true)
	if err := page.Locator(`#pack details.fine-group > summary`).Click(); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator(line("eggs") + ` button[data-act="remove"]`).Click(); err != nil {
		t.Fatal(err)
	}
	until("already gone, next to the button", func() bool { return text(line("eggs")+" .feedback") == say("cart_gone") })
	if s := text(line("eggs")); strings.Contains(s, "not in the cart: not in the cart") {
		t.Errorf("removing twice: %q", s)
	}
	sameAsStore("after removing twice")

	// Wrong product asks first: Cancel sends nothing.
	oldMilk := srv.Cart()
	if err := page.Locator(line("milk") + ` button[data-act="wrong_product"]`).Click(); err != nil {
		t.Fatal(err)
	}
	until("the confirmation", func() bool { ok, _ := page.Locator("#confirm").IsVisible(); return ok })
	if err := page.Locator("#confirm-cancel").Click(); err != nil {
		t.Fatal(err)
	}
	if got := srv.Cart(); len(got) != len(oldMilk) || unitsOf("milk") != 1 {
		t.Fatalf("Cancel changed the cart: %v → %v", oldMilk, got)
	}
	// Confirmed: the week's review stays, the milk's line is shopped again
	// on it and ends with another product.
	if err := page.Locator(line("milk") + ` button[data-act="wrong_product"]`).Click(); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#confirm-ok").Click(); err != nil {
		t.Fatal(err)
	}
	oldName := productName(res.Pack, "milk")
	until("the re-shop to end on the review", func() bool {
		s := text(line("milk"))
		return count(`#pack li[data-item]`) == 4 && !strings.Contains(s, oldName) && strings.Contains(s, "1 × ")
	})
	reshops.Wait()
	if n := count(`#pack li[data-item]`); n != 4 {
		t.Errorf("the week's review has %d lines after the re-shop, want 4", n)
	}
	until("the review's total after the re-shop", func() bool { return text("#total") == storeTotal() })

	// A restart: a new panel shows the last run — the week's review with
	// the re-shopped milk — and the store's cart.
	p2 := newPanel()
	if err := p2.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := page.Goto(serve(p2)); err != nil {
		t.Fatal(err)
	}
	until("the last run after a restart", func() bool { return count(`#pack li[data-item]`) == 4 })
	if s := text("#state"); s == say("no_run") {
		t.Errorf("after a restart the page says %q", s)
	}
	if s := text(line("milk")); strings.Contains(s, oldName) {
		t.Errorf("after a restart the milk's line is the wrong product again: %q", s)
	}
	until("the total after a restart", func() bool { return text("#total") == storeTotal() })
	// History names the re-shop for what it is.
	if err := page.Locator("#tab-history").Click(); err != nil {
		t.Fatal(err)
	}
	until("the re-shop in History", func() bool { return strings.Contains(text("#runs"), say("kind_reshop")) })
}

func productName(pk *reviewpack.Pack, name string) string {
	for _, it := range pk.Items {
		if it.ItemName == name {
			return it.ProductName
		}
	}
	return ""
}
