package panel

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// packHistory is one run, r1, whose journal holds the pack and the
// actions taken on it (as app's History reads them).
type packHistory struct {
	fakeHistory
	mu   sync.Mutex
	pack reviewpack.Pack
}

func (h *packHistory) Runs(context.Context) ([]RunInfo, error) {
	return []RunInfo{{ID: "r1", State: "review_ready", Items: 2, Added: 1}}, nil
}

func (h *packHistory) Run(_ context.Context, id string) (RunDetail, error) {
	if id != "r1" {
		return RunDetail{}, ErrNotFound
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	pk := h.pack
	pk.Actions = append([]reviewpack.Action(nil), h.pack.Actions...)
	return RunDetail{RunInfo: RunInfo{ID: "r1", State: "review_ready"}, Items: []RunItem{}, Changes: []string{}, Warnings: []string{}, Pack: &pk}, nil
}

// TestReviewPackInChromium: at the end of a run the Run view shows the
// review pack — what each item added, how sure the run is, its warnings —
// with the actions; a click sends the action (with the panel's header,
// through the guards), the action shows under the pack when the cart
// changes, and History shows it with the run.
func TestReviewPackInChromium(t *testing.T) {
	milk := reviewpack.Item{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2% Milk 2 L", ProductID: "milk-2pct-2l",
		Quantity: 1, Price: money.Parse("$5.49"), Confidence: reviewpack.AgentChose, Matches: 8,
		Warnings: []reviewpack.Warning{{Kind: reviewpack.WarnPriceChanged, Message: "Natrel 2% Milk 2 L is up 22 % since last time ($4.49 → $5.49)."}}}
	butter := reviewpack.Item{ItemID: "2", ItemName: "butter", Outcome: report.OutcomeNotFound, Warnings: []reviewpack.Warning{{Kind: reviewpack.WarnOutOfStock, Message: `"butter" was out of stock.`}}}
	pack := reviewpack.Pack{RunID: "r1", Items: []reviewpack.Item{milk, butter},
		Cart: &reviewpack.Cart{Lines: []reviewpack.Line{{Name: milk.ProductName, ProductID: milk.ProductID, Quantity: 1}}}}
	hist := &packHistory{pack: pack}
	bus := &runstatus.Bus{}
	var mu sync.Mutex
	var got []reviewpack.Request
	cartAction := func(_ context.Context, req reviewpack.Request) (reviewpack.Action, error) {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		a := reviewpack.Action{At: time.Now(), Kind: req.Kind, Source: req.Source, ItemID: req.ItemID, ItemName: "milk", Product: milk.ProductName, Before: 1, After: req.Quantity}
		hist.mu.Lock()
		hist.pack.Actions = append(hist.pack.Actions, a)
		hist.mu.Unlock()
		bus.Publish(runstatus.Event{Kind: runstatus.KindCartChanged, RunID: "r1", Action: &a,
			Cart: &reviewpack.Cart{Lines: []reviewpack.Line{{Name: milk.ProductName, ProductID: milk.ProductID, Quantity: a.After}}}})
		return a, nil
	}
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, History: hist, CartAction: cartAction})
	if err != nil {
		t.Fatal(err)
	}
	page, text := openPanel(t, p, bus, playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 390, Height: 844}})
	until := func(what string, cond func() bool) {
		t.Helper()
		testwait.Until(t, what, 60*time.Second, cond)
	}
	until("the page to load its script and stream", func() bool { return text("#state") == "No run yet." })

	sum := report.Summary{RunID: "r1", Items: []report.ItemResult{}, CartURL: "https://www.metro.ca/en/online-grocery/cart",
		Warnings: []string{"The cart gained 1 × Oikos Greek Yogurt that no list item reported."}}
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "r1", State: runstatus.StateReviewReady, Summary: &sum, Pack: &pack})
	const card = `#pack li[data-item="milk"]`
	until("the pack's milk", func() bool { return strings.Contains(text(card), "1 × Natrel 2% Milk 2 L") })
	// The end of the run (issue 26: at review_ready the Run view had no link
	// to the cart and no review): the cart's link and the review's warnings.
	if ok, _ := page.Locator("#cart-link").IsVisible(); !ok {
		t.Error("the Run view at the end has no visible link to the cart")
	}
	if href, _ := page.Locator("#cart-link").GetAttribute("href"); href != sum.CartURL {
		t.Errorf("the cart link goes to %q, want %q", href, sum.CartURL)
	}
	if s := text("#end-warnings"); !strings.Contains(s, "Oikos Greek Yogurt") {
		t.Errorf("the review's warnings at the end: %q", s)
	}
	if s := text(card); !strings.Contains(s, "the agent chose among 8") || !strings.Contains(s, "up 22 %") {
		t.Errorf("milk in the pack: %q", s)
	}
	if s := text(`#pack li[data-item="butter"]`); !strings.Contains(s, "out of stock") {
		t.Errorf("butter in the pack: %q", s)
	}
	if n, _ := page.Locator(`#pack li[data-item="butter"] button`).Count(); n != 0 {
		t.Errorf("butter, which added nothing, has %d action buttons", n)
	}

	// Change quantity to 3, then Remove from cart.
	if err := page.Locator(card + " input.qty").Fill("3"); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator(card + ` button[data-act="quantity"]`).Click(); err != nil {
		t.Fatal(err)
	}
	until("the action under the pack", func() bool {
		return strings.Contains(text("#pack"), "Changed Natrel 2% Milk 2 L: 1 → 3")
	})
	if err := page.Locator(card + ` button[data-act="remove"]`).Click(); err != nil {
		t.Fatal(err)
	}
	until("the second action under the pack", func() bool { return strings.Contains(text("#pack"), "Removed Natrel 2% Milk 2 L from the cart") })
	mu.Lock()
	if len(got) != 2 || got[0].Kind != reviewpack.ActQuantity || got[0].Quantity != 3 || got[0].RunID != "r1" || got[0].ItemID != "1" ||
		got[0].Source != "panel" || got[1].Kind != reviewpack.ActRemove {
		t.Errorf("requests = %+v", got)
	}
	mu.Unlock()

	// History: the run's pack with its actions.
	if err := page.Locator("#tab-history").Click(); err != nil {
		t.Fatal(err)
	}
	until("the past run", func() bool { n, _ := page.Locator(`#runs li[data-run="r1"] button`).Count(); return n == 1 })
	if err := page.Locator(`#runs li[data-run="r1"] button`).Click(); err != nil {
		t.Fatal(err)
	}
	until("the run's actions in History", func() bool {
		n, _ := page.Locator(`#run-body .actions-done li`).Count()
		return n == 2
	})
	if s := text(`#run-body .actions-done`); !strings.Contains(s, "Changed Natrel 2% Milk 2 L: 1 → 3") || !strings.Contains(s, "Removed") {
		t.Errorf("History's actions: %q", s)
	}
}

// openPanel serves p, feeds it bus's events until the test ends, and opens
// its page in the test Chromium with opts; text reads the first element a
// selector finds.
func openPanel(t *testing.T, p *Panel, bus *runstatus.Bus, opts playwright.BrowserNewPageOptions) (page playwright.Page, text func(sel string) string) {
	t.Helper()
	return openPanelWith(t, p, bus, opts, nil)
}

// openPanelWith is openPanel with before run on the page before it loads
// the panel (a route, say).
func openPanelWith(t *testing.T, p *Panel, bus *runstatus.Bus, opts playwright.BrowserNewPageOptions, before func(playwright.Page)) (page playwright.Page, text func(sel string) string) {
	t.Helper()
	sub := bus.Subscribe(16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Consume(ctx, sub) }()
	t.Cleanup(func() { cancel(); <-done })
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	page, err := testbrowser.Launch(t).NewPage(opts)
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(60000)
	if before != nil {
		before(page)
	}
	if _, err := page.Goto(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	return page, func(sel string) string {
		s, err := page.Locator(sel).First().TextContent()
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
}
