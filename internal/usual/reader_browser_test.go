package usual

import (
	"context"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestReaderReadsTheDemoStoreAndChangesNothing: the demo store's past
// baskets and favourites are read by code in a reader tab, every basket
// dated as the store shows it, and no request the reading sent is a state
// change (the store's own record of every request).
func TestReaderReadsTheDemoStoreAndChangesNothing(t *testing.T) {
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || testing.Short() {
		t.Skip("needs the browser environment of scripts/setup.sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // bounds a hang only
	defer cancel()
	srv, err := demostore.Start(ctx, demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	user, pass := srv.Credentials()
	h, err := browser.Launch(ctx, browser.Options{
		ExecutablePath: exe, ProfileDir: t.TempDir(), Headless: true, Store: store.Demo(),
		ExtraArgs: []string{"--host-resolver-rules=" + srv.HostResolverRules()}, UpstreamRoots: srv.CertPool(),
		Username: user, Password: config.Secret(pass), LoginStepTimeout: time.Minute,
	})
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		_ = h.Close(cctx)
	}()
	if err := h.Login(ctx); err != nil {
		t.Fatalf("Login: %v", err)
	}
	before := srv.Requests()
	tab, err := h.NewReader(ctx)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	hist := StoreReader{Pages: store.Demo().Usual, Lang: messages.For("en")}.Read(ctx, tab, true)
	_ = tab.Close()
	after := srv.Requests()

	if len(hist.NotRead) > 0 {
		t.Fatalf("not read: %v", hist.NotRead)
	}
	want := 0
	for _, b := range demostore.PastBaskets() {
		want += len(b.Lines)
	}
	if len(hist.Purchases) != want {
		t.Fatalf("read %d order lines, the store shows %d: %+v", len(hist.Purchases), want, hist.Purchases)
	}
	today := day(time.Now())
	for _, p := range hist.Purchases {
		if p.Source != FromOrder || p.ProductID == "" || p.Product == "" || p.Units < 1 {
			t.Errorf("purchase %+v: want an order line with product, id and units", p)
		}
		if ago := int(today.Sub(day(p.At)).Hours() / 24); ago != 3 && ago != 10 && ago != 17 && ago != 24 {
			t.Errorf("purchase %+v dated %d days ago, not one of the baskets' days", p, ago)
		}
	}
	if len(hist.Favourites) != len(demostore.Favourites()) {
		t.Errorf("favourites = %+v, want %v", hist.Favourites, demostore.Favourites())
	}

	sent := 0
	for k, n := range after {
		if n -= before[k]; n <= 0 {
			continue
		}
		sent++
		method, _, _ := strings.Cut(k, " ")
		if store.StateChanging(method) {
			t.Errorf("the reader sent %d× %s: a state change", n, k)
		}
	}
	if sent == 0 || after["GET "+demostore.HostStore+" "+demostore.PastBasketsPath] == 0 {
		t.Fatalf("no reading was recorded by the store: %v", maps.Collect(maps.All(after)))
	}
	if srv.CheckoutHits() != 0 {
		t.Errorf("the checkout was reached %d times", srv.CheckoutHits())
	}
}
