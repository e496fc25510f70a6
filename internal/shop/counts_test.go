package shop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// TestCountsAddUp: a list with an empty entry, an entry with an empty
// name, a tag-only entry and an over-long one besides two products. The
// live lines' "Shopping N item(s)", the lines printed per item and "Done:
// … of N" agree: each list entry is counted once, as shopped or skipped.
func TestCountsAddUp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "list.yaml")
	long := strings.Repeat("x", 250)
	list := "items:\n  - milk\n  - \"\"\n  - name:\n  - \"#404\"\n  - bread\n  - " + long + "\n"
	if err := os.WriteFile(path, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	yl, err := shoppinglist.OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newFakeAgent(map[string]behaviour{"milk": added("Milk", "$1"), "bread": added("Bread", "$2")})
	cfg := baseConfig(t, newFakeProvider(), &fakeHost{authed: true}, a)
	cfg.Provider = yl
	bus := &runstatus.Bus{}
	cfg.Bus = bus
	var out bytes.Buffer
	sub := bus.Subscribe(1024)
	followed := make(chan struct{})
	go func() { defer close(followed); NewTerminal(&out, false).Follow(context.Background(), sub) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	<-followed
	text := out.String()
	started := regexp.MustCompile(`Shopping (\d+) item`).FindStringSubmatch(text)
	done := regexp.MustCompile(`Done: (\d+) added, (\d+) not found, (\d+) failed of (\d+)\.`).FindStringSubmatch(text)
	if started == nil || done == nil {
		t.Fatalf("no start or end line:\n%s", text)
	}
	skipped := strings.Count(text, "skipped:")
	addedLines := strings.Count(text, "✓")
	n, _ := strconv.Atoi(started[1])
	total, _ := strconv.Atoi(done[4])
	if n != 6 || total != 6 || skipped != 4 || addedLines != 2 || done[1] != "2" {
		t.Errorf("start says %d, end %d of %s, %d skipped lines and %d added; want 6, 2 of 6, 4 and 2:\n%s", n, total, done[1], skipped, addedLines, text)
	}
}

// TestNoCartLinkForTheDemoStore: the demo store's pages answer only in the
// run's browser, under metro.ca's names, and are gone once the demo ends:
// the summary and the review give no link (it would open the real
// metro.ca), while the run still reads the cart at its address.
func TestNoCartLinkForTheDemoStore(t *testing.T) {
	a := newFakeAgent(map[string]behaviour{"milk": added("Milk", "$1")})
	cfg := baseConfig(t, newFakeProvider("milk"), &fakeHost{authed: true}, a)
	cfg.Store.CartURL, cfg.Store.NoCartLink = "https://www.metro.ca/en/online-grocery/cart", true
	cfg.Cart = &fakeCartReader{}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	PrintResult(&out, res)
	if res.Summary.CartURL != "" || strings.Contains(out.String(), "metro.ca/en/online-grocery/cart") {
		t.Errorf("the demo's summary links to the cart:\n%s", out.String())
	}
	// The review pack (the panel's "Open the cart") links nowhere either.
	if res.Pack == nil {
		t.Fatal("no review pack")
	}
	if res.Pack.CartURL != "" || (res.Pack.Cart != nil && res.Pack.Cart.URL != "") {
		t.Errorf("the demo's review pack links to the cart: %q, cart %+v", res.Pack.CartURL, res.Pack.Cart)
	}
}
