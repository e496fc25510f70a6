package browser

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/screen"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// DescribePage shows a store page as a screen reader would read it: the
// tiles' names, prices and stock, the add buttons (a sold-out one
// disabled), the links' addresses, the cart count and the dialogs, with
// boxes in the model's coordinates that are where the screenshot shows
// them.
func TestDescribePageReadsTheStorePage(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	s, err := demostore.Start(t.Context(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := baseOptions(t, store.Demo(), t.TempDir(), s.HostResolverRules(), nil)
	o.UpstreamRoots = s.CertPool()
	o.SkipAuthCheck = true
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)
	tab := newTab(t, h)
	mustDo(t, "search", tab.Navigate(ctx, s.BaseURL()+"/en/online-grocery/search?filter=butter"))
	tree, err := tab.DescribePage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("PAGETREE_PRINT") != "" {
		t.Log("\n" + tree)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s*- link "Salted Butter" url=https://www\.metro\.ca/en/online-grocery/aisles/dairy-eggs/salted-butter/p/butter-salted-454g @\d+,\d+,\d+,\d+$`),
		regexp.MustCompile(`(?m)^\s*- text "\$6\.99"$`),
		regexp.MustCompile(`(?m)^\s*- button "Out of stock" \[disabled\] @\d+,\d+,\d+,\d+$`),
		regexp.MustCompile(`(?m)^\s*- button "Accept all cookies" @`),
	} {
		if !want.MatchString(tree) {
			t.Errorf("the tree has no line like %s:\n%s", want, tree)
		}
	}
	// The element at a point, by its words: the trace's "clicked “…”" —
	// what a click there would hit (under the cookie banner's backdrop,
	// nothing nameable), then, the banner accepted, the page's controls.
	for i, c := range []struct {
		selector, want string
	}{
		{"article.tile a.tile-name", ""},
		{"#onetrust-accept-btn-handler", "Accept all cookies"},
		{"article.tile a.tile-name", "Salted Butter"},
		{"#search-box", "Search for a product"},
	} {
		box, err := tab.page.Locator(c.selector).First().BoundingBox()
		if err != nil || box == nil {
			t.Fatalf("%s: %v", c.selector, err)
		}
		p := screen.Point{X: int((box.X + box.Width/2) * 1000 / float64(h.opts.Width)), Y: int((box.Y + box.Height/2) * 1000 / float64(h.opts.Height))}
		if got, err := tab.ElementAt(ctx, p); err != nil || got != c.want {
			t.Errorf("ElementAt(%s) = %q, %v; want %q", c.selector, got, err, c.want)
		}
		if i == 1 {
			mustDo(t, "accept the cookies", tab.Click(ctx, p, screen.ButtonLeft, 1))
		}
	}
	if strings.Count(tree, "\n") >= MaxPageTreeLines {
		t.Errorf("the tree was cut: %d lines", strings.Count(tree, "\n"))
	}
}
