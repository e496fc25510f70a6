package browser

import (
	"fmt"
	"slices"
	"testing"
)

// TestSetItemDoesNotAccumulate calls SetItem many times on one tab across
// full and SPA navigations: every new document runs the banner script once,
// asks the Host for the tab's item exactly once, shows the latest item and
// has its item set by nothing else (scripts piled up by earlier SetItem
// calls would set it once each); another tab keeps its own item.
func TestSetItemDoesNotAccumulate(t *testing.T) {
	s := sharedSite(t)
	ctx := testCtx(t)
	prefix := s.host.profile.BannerText
	want := func(item string) string { return prefix + item }
	banner := func(tab *Tab) (string, int) {
		v := eval(t, tab, `(id) => [document.getElementById(id)?.textContent ?? '', document.querySelectorAll('#' + CSS.escape(id)).length]`, BannerElementID).([]any)
		return v[0].(string), int(toF(v[1]))
	}
	asks := func(tab *Tab) int {
		tab.st.mu.Lock()
		defer tab.st.mu.Unlock()
		return tab.st.itemAsks
	}
	// stats reads how often the banner script ran in the current document
	// and how often something set its item explicitly.
	stats := func(tab *Tab) (runs, sets int) {
		v := eval(t, tab, `(name) => { const s = window[name]; return s ? [s.runs, s.sets] : [-1, -1]; }`, bannerStatsName).([]any)
		return int(toF(v[0])), int(toF(v[1]))
	}
	// fresh checks a new document: one banner script ran, nothing set its
	// item (scripts piled up by earlier SetItem calls would), and it shows
	// the tab's latest item, which it asked the Host for.
	fresh := func(t *testing.T, tab *Tab, item, when string) {
		t.Helper()
		if text, n := banner(tab); text != want(item) || n != 1 {
			t.Fatalf("%s: banner %q (%d elements), want %q once", when, text, n, want(item))
		}
		if runs, sets := stats(tab); runs != 1 || sets != 0 {
			t.Fatalf("%s: the banner script ran %d times and the item was set %d times in this document; want 1 and 0", when, runs, sets)
		}
	}

	a, b := newTab(t, s.host), newTab(t, s.host)
	mustDo(t, "set B's item", b.SetItem(ctx, "oat milk"))
	mustDo(t, "open a page in B", b.Navigate(ctx, "http://shop.test/b"))
	bAsks := asks(b)

	items := []string{"apples", `eggs "large" <12>`, "bread", "2% milk", "cheese"}
	for i, item := range items {
		before := asks(a)
		for _, earlier := range items[:i] { // restarted queries: set again, then the real one
			mustDo(t, "set an earlier item", a.SetItem(ctx, earlier))
		}
		mustDo(t, "set the item", a.SetItem(ctx, item))
		if asks(a) != before {
			t.Fatalf("SetItem made the document ask for the item again (%d → %d)", before, asks(a))
		}
		// A full navigation: a new document with the latest item.
		mustDo(t, "open a page", a.Navigate(ctx, fmt.Sprintf("http://shop.test/p%d", i)))
		fresh(t, a, item, "after a full navigation")
		if got := asks(a) - before; got != 1 {
			t.Fatalf("after one full navigation the tab's documents asked for the item %d times, want 1", got)
		}
		// An SPA route change keeps the document and its item; a SetItem
		// on that document shows at once and through later route changes.
		mustDo(t, "open the SPA page", a.Navigate(ctx, "http://shop.test/spa"))
		fresh(t, a, item, "on the SPA page")
		eval(t, a, `() => go('/spa/one')`)
		fresh(t, a, item, "after pushState")
		next := item + " (next)"
		mustDo(t, "set the item on the SPA page", a.SetItem(ctx, next))
		eval(t, a, `() => { go('/spa/two'); swap('/spa/three'); }`)
		mustDo(t, "back (popstate)", a.GoBack(ctx))
		if text, n := banner(a); text != want(next) || n != 1 {
			t.Fatalf("after SetItem and SPA navigation: banner %q (%d elements), want %q once", text, n, want(next))
		}
		if runs, sets := stats(a); runs != 1 || sets != 1 {
			t.Fatalf("after SetItem on the SPA page: %d banner runs, %d item sets; want 1 and 1", runs, sets)
		}
		if got := asks(a) - before; got != 2 {
			t.Fatalf("two documents asked %d times for the item, want 2", got)
		}
		mustDo(t, "restore the item", a.SetItem(ctx, item))
		if a.Item() != item {
			t.Fatalf("Item() = %q, want %q", a.Item(), item)
		}
	}

	// B kept its item, in its current document and in a new one, and its
	// documents asked only for themselves.
	if text, n := banner(b); text != want("oat milk") || n != 1 {
		t.Fatalf("the other tab's banner reads %q (%d elements)", text, n)
	}
	if asks(b) != bAsks {
		t.Fatalf("the other tab's documents asked %d times during A's navigations", asks(b)-bAsks)
	}
	mustDo(t, "navigate B", b.Navigate(ctx, "http://shop.test/b2"))
	fresh(t, b, "oat milk", "B after a full navigation")
	if b.Item() != "oat milk" || !slices.Contains(items, a.Item()) {
		t.Fatalf("Item(): A %q, B %q", a.Item(), b.Item())
	}
}

// TestBannerAfterNavigateNeedsNoPolling: when Navigate returns, the new
// document's banner already shows the tab's item (the screenshot the agent
// takes next must show it).
func TestBannerAfterNavigateNeedsNoPolling(t *testing.T) {
	s := sharedSite(t)
	ctx := testCtx(t)
	tab := newTab(t, s.host)
	for i, item := range []string{"flour", "sugar", "salt"} {
		mustDo(t, "set item", tab.SetItem(ctx, item))
		mustDo(t, "open a page", tab.Navigate(ctx, fmt.Sprintf("http://shop.test/n%d", i)))
		v := eval(t, tab, `(id) => document.getElementById(id)?.textContent ?? ''`, BannerElementID)
		if want := s.host.profile.BannerText + item; v != want {
			t.Fatalf("banner right after Navigate: %q, want %q", v, want)
		}
	}
}
