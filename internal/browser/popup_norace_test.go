//go:build !race

package browser

import (
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/screen"
)

// TestPopupFallbackLoadsAllowedAddressInOpener exercises the Host's popup
// handling for a new tab that loads an address. It is left out of -race
// runs: playwright-go v0.5200.1 reads a popup's page field in its route
// code while its event loop writes it (a race inside the library that only
// a routed popup navigation triggers).
func TestPopupFallbackLoadsAllowedAddressInOpener(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	evil0 := f.hostHits("evil.test")

	mustDo(t, "open the sandbox page", tab.Navigate(ctx, "http://shop.test/sandbox?href=http://evil.test/popup"))
	tab.TakeNotices()
	mustDo(t, "click the framed evil link", tab.Click(ctx, norm(150, 150), screen.ButtonLeft, 1))
	waitFor(t, "the blocked new tab to be reported", 5*time.Second, func() bool { return hasNotice(tab.st.peekNotices(), "it was closed") })
	if n := f.hostHits("evil.test") - evil0; n != 0 {
		t.Fatalf("evil.test reached %d times", n)
	}

	mustDo(t, "open the sandbox page", tab.Navigate(ctx, "http://shop.test/sandbox?href=http://shop.test/color?c=orange"))
	mustDo(t, "click the framed link", tab.Click(ctx, norm(150, 150), screen.ButtonLeft, 1))
	waitFor(t, "the address to open in the opener", 5*time.Second, func() bool { return strings.HasSuffix(tab.URL(), "c=orange") })
	waitFor(t, "the new tab to close", 5*time.Second, func() bool { return len(f.host.cur.ctx.Pages()) == f.host.openPageCount() })
	if n := tab.TakeNotices(); !hasNotice(n, "opened in this tab instead") {
		t.Fatalf("notices %q", n)
	}
}
