package panel

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
)

// The "Needs you" card for an item's tab its agent gave up, in Chromium:
// it names the item and why, offers "Not found" and "Skip this time"
// besides Done, and "Not found" hands the tab back with that decision. A
// running item's live screen has "Take over", which asks for its tab.
func TestNeedsYouItemCardInChromium(t *testing.T) {
	browser := testbrowser.Launch(t)
	f := &fakeTakeover{needs: []runstatus.NeedsPerson{{Tab: "item-1", Reason: "item_gave_up", Item: "bananas"}}, noted: make(chan string, 8)}
	cat := messages.For("en")
	p, err := New(Options{Start: func(context.Context, runstatus.Request) error { return nil }, Stop: func(context.Context, string) error { return nil },
		Takeover: f, Messages: cat})
	if err != nil {
		t.Fatal(err)
	}
	// An agent at work on the list item "1": its live screen.
	p.Show(Frame{ItemID: "1", Item: "bananas", Turn: 0, Action: "started", Image: screenshot(t, 1440, 900)})
	srv := httptest.NewServer(p)
	defer srv.Close()
	bctx, err := browser.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer bctx.Close()
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(60000)
	if _, err := page.Goto(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	noted := func(want string) {
		t.Helper()
		select {
		case got := <-f.noted:
			if got != want {
				t.Fatalf("the page sent %q, want %q", got, want)
			}
		case <-time.After(time.Minute): // bounds a hang only
			t.Fatalf("the page sent nothing, want %q", want)
		}
	}
	if err := page.Locator("#tab-list .take-over").Click(); err != nil {
		t.Fatalf("no Take over on the live screen: %v", err)
	}
	noted("request item-1")
	want := cat.T("panel.needs_reason_item_gave_up", "item", "bananas")
	if err := page.Locator("#needs-reason").Filter(playwright.LocatorFilterOptions{HasText: want}).WaitFor(); err != nil {
		t.Fatalf("the card does not say which item and why (%q): %v", want, err)
	}
	if err := page.Locator("#needs-skip").WaitFor(); err != nil {
		t.Fatalf("no Skip: %v", err)
	}
	if err := page.Locator("#needs-not-found").Click(); err != nil {
		t.Fatal(err)
	}
	noted("done item-1 not_found")
}
