package browser

import (
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/screen"
)

// TestPopupFallbackLoadsAllowedAddressInOpener exercises the Host's popup
// handling for a new tab that loads an address. (It used to be left out
// of -race runs: playwright-go v0.5200.1 reads a popup's page field in its
// route code while its event loop writes it. The browser no longer routes
// requests through Playwright — the policy proxy and the tabs' CDP guards
// enforce the policy — so that code never runs.)
func TestPopupFallbackLoadsAllowedAddressInOpener(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	evil0 := f.hostHits("evil.test")

	mustDo(t, "open the sandbox page", tab.Navigate(ctx, "http://shop.test/sandbox?href=http://evil.test/popup"))
	tab.TakeNotices()
	waitFramedLink(t, tab)
	mustDo(t, "click the framed evil link", tab.Click(ctx, norm(150, 150), screen.ButtonLeft, 1))
	waitFor(t, "the blocked new tab to be reported", patience, func() bool { return hasNotice(tab.st.peekNotices(), "was closed") })
	if n := f.hostHits("evil.test") - evil0; n != 0 {
		t.Fatalf("evil.test reached %d times", n)
	}

	mustDo(t, "open the sandbox page", tab.Navigate(ctx, "http://shop.test/sandbox?href=http://shop.test/color?c=orange"))
	waitFramedLink(t, tab)
	mustDo(t, "click the framed link", tab.Click(ctx, norm(150, 150), screen.ButtonLeft, 1))
	// The sandbox page's own address ends in "c=orange" too: wait for the
	// exact address (this wait passed at once before the popup came).
	waitFor(t, "the address to open in the opener", patience, func() bool { return tab.URL() == "http://shop.test/color?c=orange" })
	waitFor(t, "the new tab to close", patience, func() bool { return len(f.host.cur.ctx.Pages()) == f.host.openPageCount() })
	if n := tab.TakeNotices(); !hasNotice(n, "opened in this tab instead") {
		t.Fatalf("notices %q; log:\n%s", n, f.logs.String())
	}
}

// waitFramedLink waits until the sandboxed frame's link is there to click
// (a click before the frame renders opens nothing).
func waitFramedLink(t *testing.T, tab *Tab) {
	t.Helper()
	err := tab.page.FrameLocator("iframe").Locator("a").WaitFor(playwright.LocatorWaitForOptions{
		State: playwright.WaitForSelectorStateVisible, Timeout: playwright.Float(float64(patience.Milliseconds())),
	})
	mustDo(t, "wait for the framed link", err)
}
