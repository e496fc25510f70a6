package panel

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawRequest sends one HTTP/1.1 request as written (its Host header
// included) to addr and returns the response.
func rawRequest(t *testing.T, addr, method, path string, hdr [][2]string) *http.Response {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, path)
	for _, h := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], h[1])
	}
	b.WriteString("Content-Length: 0\r\nConnection: close\r\n\r\n")
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	_ = resp.Body.Close()
	return resp
}

// TestRebindingAndForeignOriginsAreRefused drives the real panel server
// (outside ingress, on a loopback port) with the requests of a DNS
// rebinding attack: a page of attacker.example whose name now points at
// this machine. Every one gets 421 and reaches neither Start nor Stop; an
// evil Origin without fetch metadata gets 403; the panel's own addresses
// still work; the raw template is not served; the CSP restricts forms and
// <base>.
func TestRebindingAndForeignOriginsAreRefused(t *testing.T) {
	p, c := newPanel(t, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.ServeListener(ctx, ln) })
	defer wg.Wait()
	defer cancel()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	evil := [][2]string{{"Host", "attacker.example:8099"}, {"Origin", "http://attacker.example:8099"}, {"Sec-Fetch-Site", "same-origin"}, {ActionHeader, "1"}}
	for _, tc := range []struct {
		name, method, path string
		hdr                [][2]string
		want               int
	}{
		{"rebound stop", "POST", "/api/stop", evil, http.StatusMisdirectedRequest},
		{"rebound start", "POST", "/api/start", evil, http.StatusMisdirectedRequest},
		{"rebound answer", "POST", "/api/answer", evil, http.StatusMisdirectedRequest},
		{"rebound forget", "POST", "/api/products/forget", evil, http.StatusMisdirectedRequest},
		{"rebound state", "GET", "/api/state", evil[:1], http.StatusMisdirectedRequest},
		{"rebound runs", "GET", "/api/runs", evil[:1], http.StatusMisdirectedRequest},
		{"rebound page", "GET", "/", evil[:1], http.StatusMisdirectedRequest},
		{"a name under localhost's", "GET", "/api/state", [][2]string{{"Host", "localhost.attacker.example:" + port}}, http.StatusMisdirectedRequest},
		{"evil origin, no fetch metadata", "POST", "/api/stop", [][2]string{{"Host", addr}, {"Origin", "http://attacker.example:8099"}, {ActionHeader, "1"}}, http.StatusForbidden},
		{"null origin", "POST", "/api/start", [][2]string{{"Host", addr}, {"Origin", "null"}, {ActionHeader, "1"}}, http.StatusForbidden},
		{"origin on another port", "POST", "/api/stop", [][2]string{{"Host", addr}, {"Origin", "http://127.0.0.1:1"}, {ActionHeader, "1"}}, http.StatusForbidden},
		{"https origin for an http panel", "POST", "/api/stop", [][2]string{{"Host", addr}, {"Origin", "https://" + addr}, {ActionHeader, "1"}}, http.StatusForbidden},
		{"raw template", "GET", "/static/index.html", [][2]string{{"Host", addr}}, http.StatusNotFound},
		{"static directory", "GET", "/static/", [][2]string{{"Host", addr}}, http.StatusNotFound},
		// The panel's own addresses.
		{"state at 127.0.0.1", "GET", "/api/state", [][2]string{{"Host", addr}}, http.StatusOK},
		{"state at localhost", "GET", "/api/state", [][2]string{{"Host", "localhost:" + port}}, http.StatusOK},
		{"state at [::1]", "GET", "/api/state", [][2]string{{"Host", "[::1]:" + port}}, http.StatusOK},
		{"script", "GET", "/static/app.js", [][2]string{{"Host", addr}}, http.StatusOK},
		{"stop from the page", "POST", "/api/stop", [][2]string{{"Host", "localhost:" + port}, {"Origin", "http://localhost:" + port}, {"Sec-Fetch-Site", "same-origin"}, {ActionHeader, "1"}}, http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.mu.Lock()
			before := len(c.stops) + len(c.starts)
			c.mu.Unlock()
			resp := rawRequest(t, addr, tc.method, tc.path, tc.hdr)
			if resp.StatusCode != tc.want {
				t.Fatalf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
			}
			c.mu.Lock()
			after := len(c.stops) + len(c.starts)
			c.mu.Unlock()
			if tc.want != http.StatusNoContent && after != before {
				t.Fatalf("a refused request reached serve")
			}
			if tc.want == http.StatusOK && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "form-action 'self'; base-uri 'none'") {
				t.Fatalf("CSP %q lacks form-action 'self' and base-uri 'none'", resp.Header.Get("Content-Security-Policy"))
			}
		})
	}
}

// TestPanelHosts: which Host headers the panel answers to, by the address
// it was started on.
func TestPanelHosts(t *testing.T) {
	for _, tc := range []struct {
		bound string
		host  string
		want  bool
	}{
		{"127.0.0.1:8099", "127.0.0.1:8099", true},
		{"127.0.0.1:8099", "LOCALHOST:8099", true},
		{"127.0.0.1:8099", "[::1]:8099", true},
		{"127.0.0.1:8099", "127.0.0.2", true}, // loopback
		{"127.0.0.1:8099", "192.168.1.5:8099", false},
		{"127.0.0.1:8099", "attacker.example", false},
		{"127.0.0.1:8099", "", false},
		{"0.0.0.0:8099", "192.168.1.5:8099", true}, // all interfaces: any address literal
		{"0.0.0.0:8099", "attacker.example:8099", false},
		{"192.168.1.5:8099", "192.168.1.5:8099", true},
		{"192.168.1.5:8099", "10.0.0.1:8099", false},
		{"pantry.lan:8099", "pantry.lan:8099", true},
		{"pantry.lan:8099", "PANTRY.LAN", true},
		{"pantry.lan:8099", "attacker.example", false},
	} {
		p, _ := newPanel(t, false)
		p.bindTo(tc.bound)
		if got := p.hostAllowed(tc.host); got != tc.want {
			t.Errorf("bound to %s, Host %q: %v, want %v", tc.bound, tc.host, got, tc.want)
		}
	}
}
