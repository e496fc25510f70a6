package browser

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestSessionCheckNeedsEvidence: a tab is "signed out" only when the store
// says so — a loaded store page without the marker, or a redirect to the
// identity site — never because a page is still loading or draws its
// header late (what a busy machine looks like).
func TestSessionCheckNeedsEvidence(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	hang := make(chan struct{})
	defer close(hang)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body>%s</body></html>`, body)
		}
		switch r.URL.Path {
		case "/in":
			page(`<div id="signed-in">My account</div><p>signed in</p>`)
		case "/out":
			page(`<button id="sign-in">Sign in</button>`)
		case "/late":
			// The header is drawn by a script after the load event.
			page(`<script>addEventListener('load', () => setTimeout(() => {
				const d = document.createElement('div'); d.id = 'signed-in'; document.body.prepend(d) }, 300))</script><p>late header</p>`)
		case "/loading":
			// No marker yet, and an image that never arrives: the page
			// never finishes loading.
			page(`<p>loading…</p><img src="/hang" alt="">`)
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		case "/to-login":
			http.Redirect(w, r, "http://login.test/signin", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	p := store.Demo()
	p.Name, p.HomeURL = "test", "http://shop.test/in"
	p.AllowedHosts, p.StoreHosts, p.LoginHosts = []string{"shop.test"}, []string{"shop.test"}, []string{"login.test"}
	p.IgnoreHTTPSErrors = false
	p.AuthMarkerSelector, p.AuthMarkerOnEveryPage = "#signed-in", true
	rules := fmt.Sprintf("MAP shop.test %s, MAP login.test %s", srv.Listener.Addr(), srv.Listener.Addr())
	o := baseOptions(t, p, t.TempDir(), rules, nil)
	o.SkipAuthCheck = false
	o.ActionTimeout = 8 * time.Second // bounds the page that never loads
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)

	cases := []struct {
		path    string
		expired bool
	}{
		{"/in", false},
		{"/late", false},    // loaded, marker drawn 300 ms later: the grace sees it
		{"/loading", false}, // still loading at the deadline: not evidence
		{"/out", true},      // loaded without the marker: the store says signed out
		{"/to-login", true}, // the store sends the tab to its identity site
	}
	for _, tc := range cases {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			tab := newTab(t, h)
			err := tab.Navigate(ctx, "http://shop.test"+tc.path)
			var blocked *BlockedError
			if err != nil && !(tc.path == "/to-login" && errors.As(err, &blocked)) && !isActionTimeout(err) {
				t.Fatalf("navigate: %v", err)
			}
			_, err = tab.Screenshot(ctx)
			if got := errors.Is(err, ErrAuthExpired); got != tc.expired {
				t.Errorf("Screenshot of %s: %v; want expired=%v", tc.path, err, tc.expired)
			}
			if !tc.expired && err != nil {
				t.Errorf("Screenshot of %s: %v, want a screenshot", tc.path, err)
			}
		})
	}
	t.Run("a grace with no time left is no evidence", func(t *testing.T) {
		// A loaded page without the marker, read when the deadline is
		// spent (as after a load wait that used it up): the grace is owed
		// and not given, so the check cannot tell — it is repeated, not
		// taken for signed out.
		tab := newTab(t, h)
		mustDo(t, "open a signed-out page", tab.Navigate(ctx, "http://shop.test/out"))
		if v := h.readSession(tab.page, time.Now(), time.Second); v != sessionUnknown {
			t.Errorf("with the deadline spent: %v, want unknown", v)
		}
		if v := h.readSession(tab.page, time.Now().Add(5*time.Second), 300*time.Millisecond); v != sessionSignedOut {
			t.Errorf("with time for the grace: %v, want signed out", v)
		}
	})
}

func isActionTimeout(err error) bool {
	var te *TimeoutError
	return errors.As(err, &te)
}
