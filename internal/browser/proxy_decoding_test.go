package browser

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// profilePolicy is the store profile alone as the proxy's policy.
type profilePolicy struct{ p store.Profile }

func (pp profilePolicy) allowHost(h string) bool { return pp.p.HostAllowed(h) }
func (pp profilePolicy) checkRequest(m string, u *url.URL, _ http.Header) error {
	if v := pp.p.CheckRequest(m, u, false); !v.Allowed {
		return errors.New(v.Reason)
	}
	return nil
}
func (pp profilePolicy) readsBody(m string, u *url.URL) bool { return pp.p.BodyChecked(m, u) }
func (pp profilePolicy) checkBody(m string, u *url.URL, h http.Header, body []byte, complete bool) error {
	if v := pp.p.CheckBody(m, u, h.Get("Content-Type"), body, complete); !v.Allowed {
		return errors.New(v.Reason)
	}
	return nil
}

// TestProxyRefusesPathsAServerReadsDifferently: addresses whose dot segments
// appear only after a second decoding (or after ";params" are stripped)
// reached the demo store's checkout through the real proxy, because the
// policy decoded more than the server does. Each must get the proxy's 403
// and never reach the store; a plain cart operation still works.
func TestProxyRefusesPathsAServerReadsDifferently(t *testing.T) {
	ds, err := demostore.Start(context.Background(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	rules, err := parseResolverRules(ds.HostResolverRules())
	if err != nil {
		t.Fatal(err)
	}
	// The proxy trusts exactly the demo store's certificate, as the app
	// wires it.
	p, err := startProxy(slog.New(slog.DiscardHandler), profilePolicy{store.Demo()}, rules, upstreamTLS{roots: ds.CertPool()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pu, err := url.Parse(p.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the proxy's own certificate
	defer c.CloseIdleConnections()
	do := func(method, path string) int {
		t.Helper()
		req, err := http.NewRequest(method, "https://www.metro.ca"+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct{ method, path string }{
		{"GET", "/en/checkout"},
		{"GET", "/en/checkout/%252e%252e"},
		{"POST", "/api/checkout/%252e%252e/cart/add"},
		{"POST", "/en/place-order/%252e%252e/%252e%252e/api/cart/update"},
		{"POST", "/checkout/placeOrder;%2f..%2f..%2fapi%2fcart%2fadd"},
	} {
		before := ds.CheckoutHits()
		if code := do(tc.method, tc.path); code != http.StatusForbidden {
			t.Errorf("%s %s: status %d, want the proxy's 403", tc.method, tc.path, code)
		}
		if ds.CheckoutHits() > before {
			t.Errorf("%s %s reached the store's checkout", tc.method, tc.path)
		}
	}
	// A cart read still reaches the store (401: this client is not signed in).
	if code := do("GET", "/api/cart"); code != http.StatusUnauthorized {
		t.Errorf("GET /api/cart: %d, want the store's 401; the cart must stay reachable", code)
	}
	// A proxy given other roots does not trust the demo store's certificate.
	other, err := startProxy(slog.New(slog.DiscardHandler), profilePolicy{store.Demo()}, rules, upstreamTLS{roots: x509.NewCertPool(), insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ou, _ := url.Parse(other.URL())
	*pu = *ou
	c.CloseIdleConnections()
	// Certificate not trusted: no answer, the connection closes (a network
	// error in the browser; proxy.go, ErrorHandler).
	if resp, err := c.Get("https://www.metro.ca/api/cart"); err == nil {
		_ = resp.Body.Close()
		t.Errorf("GET /api/cart through a proxy with other roots: %d, want no answer (certificate not trusted)", resp.StatusCode)
	}
}
