package browser

import (
	"bufio"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

func TestCanonicalKey(t *testing.T) {
	tests := map[string]string{
		"control": "Control", "CTRL": "Control", "Ctrl": "Control",
		"cmd": "Meta", "Command": "Meta", "meta": "Meta", "super": "Meta",
		"alt": "Alt", "Option": "Alt", "shift": "Shift",
		"enter": "Enter", "RETURN": "Enter", "esc": "Escape", "Escape": "Escape",
		"arrowup": "ArrowUp", "up": "ArrowUp", "Arrow_Down": "ArrowDown", "left": "ArrowLeft", "RIGHT": "ArrowRight",
		"pageup": "PageUp", "page_down": "PageDown", "PgDn": "PageDown",
		"space": "Space", " ": "Space", "tab": "Tab", "backspace": "Backspace", "delete": "Delete", "del": "Delete",
		"home": "Home", "end": "End", "f1": "F1", "F12": "F12", "insert": "Insert",
		"a": "a", "A": "A", "1": "1", "+": "+", "plus": "+", "/": "/",
	}
	for in, want := range tests {
		got, err := canonicalKey(in)
		if err != nil || got != want {
			t.Errorf("canonicalKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "é", "€", "hyperdrive", "F13"} {
		_, err := canonicalKey(bad)
		var ie *InputError
		if !errors.As(err, &ie) || !ie.Rejected() {
			t.Errorf("canonicalKey(%q) error = %v, want a rejected InputError", bad, err)
		}
	}
}

func TestParseCombo(t *testing.T) {
	tests := []struct {
		in   string
		mods []string
		key  string
	}{
		{"Control+a", []string{"Control"}, "a"},
		{"control+A", []string{"Control"}, "a"},
		{"ctrl+shift+T", []string{"Control", "Shift"}, "t"},
		{"Meta+Shift+t", []string{"Meta", "Shift"}, "t"},
		{"Shift+A", []string{"Shift"}, "A"},
		{"cmd + c", []string{"Meta"}, "c"},
		{"Enter", nil, "Enter"},
		{"A", nil, "A"},
		{"Control++", []string{"Control"}, "+"},
		{"+", nil, "+"},
		{"alt+f4", []string{"Alt"}, "F4"},
	}
	for _, tt := range tests {
		mods, key, err := parseCombo(tt.in)
		if err != nil || !slices.Equal(mods, tt.mods) || key != tt.key {
			t.Errorf("parseCombo(%q) = %q, %q, %v; want %q, %q", tt.in, mods, key, err, tt.mods, tt.key)
		}
	}
	for _, bad := range []string{"", "  ", "a+b", "Control+nope", "Enter+a"} {
		if _, _, err := parseCombo(bad); err == nil {
			t.Errorf("parseCombo(%q) succeeded, want an error", bad)
		}
	}
}

func TestStrokes(t *testing.T) {
	got := strokes("Hi é€!\r\n\tx")
	want := []keyStroke{{key: "H"}, {key: "i"}, {key: " "}, {insert: "é€"}, {key: "!"}, {key: "Enter"}, {key: "Tab"}, {key: "x"}}
	if !slices.Equal(got, want) {
		t.Fatalf("strokes = %+v, want %+v", got, want)
	}
}

func TestNormalizeURL(t *testing.T) {
	tests := map[string]string{
		"www.metro.ca":                 "https://www.metro.ca",
		"www.metro.ca/en/search?q=a:b": "https://www.metro.ca/en/search?q=a:b",
		"  https://www.metro.ca/x ":    "https://www.metro.ca/x",
		"http://shop.test":             "http://shop.test",
		"localhost:8080/x":             "https://localhost:8080/x",
		"//www.metro.ca/en":            "https://www.metro.ca/en",
		"about:blank":                  "about:blank",
		"javascript:alert(1)":          "javascript:alert(1)",
		"file:///etc/passwd":           "file:///etc/passwd",
	}
	for in, want := range tests {
		if got := normalizeURL(in); got != want {
			t.Errorf("normalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResolverRules(t *testing.T) {
	rules, err := resolverRulesFromArgs([]string{"--other", "--host-resolver-rules=MAP www.metro.ca 127.0.0.1:8443, MAP *.img.test 127.0.0.2,EXCLUDE keep.test, MAP * ~NOTFOUND"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string
		err      bool
	}{
		{"www.metro.ca:443", "127.0.0.1:8443", false},
		{"WWW.METRO.CA:80", "127.0.0.1:8443", false},
		{"a.img.test:80", "127.0.0.2:80", false},
		{"keep.test:443", "keep.test:443", false},
		{"other.test:443", "", true},
	}
	for _, tt := range tests {
		got, err := mapAddress(rules, tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("mapAddress(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
	if _, err := parseResolverRules("MAP onlyone"); err == nil {
		t.Error("a MAP rule without a replacement was accepted")
	}
	if _, err := parseResolverRules("REWRITE a b"); err == nil {
		t.Error("an unsupported rule was accepted")
	}
}

func TestBannerScriptEscapes(t *testing.T) {
	s := bannerScript(`</script><b>"x"`)
	if strings.Contains(s, "</script>") {
		t.Error("banner prefix is not escaped for a script context")
	}
	if !strings.Contains(s, BannerElementID) || strings.Contains(s, "__PREFIX__") || strings.Contains(s, "__ID__") {
		t.Error("banner template placeholders not replaced")
	}
}

// testPolicy is a proxyPolicy for the proxy's own tests: good.test is
// allowed, /checkout blocked, POST only to /cart.
type testPolicy struct {
	mu      sync.Mutex
	blocked []string
}

func (p *testPolicy) allowHost(h string) bool {
	if h == "good.test" || h == "plain.test" {
		return true
	}
	p.mu.Lock()
	p.blocked = append(p.blocked, h)
	p.mu.Unlock()
	return false
}

func (p *testPolicy) checkRequest(method string, u *url.URL, _ http.Header) error {
	switch {
	case !p.allowHost(u.Hostname()):
		return errors.New("host")
	case store.NormalizePath(u.EscapedPath())[0] == "checkout":
		return errors.New("checkout")
	case method != http.MethodGet && u.Path != "/cart":
		return errors.New("state change")
	}
	return nil
}

func (p *testPolicy) readsBody(method string, _ *url.URL) bool { return method != http.MethodGet }

func (p *testPolicy) checkBody(_ string, _ *url.URL, _ http.Header, body []byte, complete bool) error {
	if !complete || strings.Contains(string(body), "placeOrder") {
		return errors.New("body")
	}
	return nil
}

// TestPolicyProxy drives the proxy as Chromium does: CONNECT for TLS and
// WebSockets (the proxy terminates both and checks every request inside),
// absolute-form requests for plain HTTP.
func TestPolicyProxy(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.Host+" "+r.Method+" "+r.URL.Path]++
		mu.Unlock()
		fmt.Fprint(w, "hello from "+r.Host)
	})
	backend := httptest.NewServer(handler)
	defer backend.Close()
	tlsBackend := httptest.NewTLSServer(handler)
	defer tlsBackend.Close()
	rules, _ := parseResolverRules(fmt.Sprintf("MAP plain.test %s, MAP good.test %s, MAP evil.test %s",
		backend.Listener.Addr(), tlsBackend.Listener.Addr(), backend.Listener.Addr()))
	pol := &testPolicy{}
	// The backend's certificate is not for good.test: a proxy that verifies
	// it refuses to forward (502); the tests below accept it, as for the
	// demo store's self-signed certificate.
	strict, err := startProxy(slog.New(slog.DiscardHandler), pol, rules, upstreamTLS{})
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	p, err := startProxy(slog.New(slog.DiscardHandler), pol, rules, upstreamTLS{insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pu, _ := url.Parse(p.URL())
	// The client trusts exactly the proxy's key, as Chromium is told to.
	client := &http.Client{Transport: &http.Transport{Proxy: func(r *http.Request) (*url.URL, error) { return pu, nil }, TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, //nolint:gosec // verified by VerifyConnection below
		VerifyConnection: func(cs tls.ConnectionState) error {
			der, _ := x509.MarshalPKIXPublicKey(cs.PeerCertificates[0].PublicKey)
			sum := sha256.Sum256(der)
			if h := base64.StdEncoding.EncodeToString(sum[:]); h != p.SPKIHash() && h != strict.SPKIHash() {
				return errors.New("not the proxy's key")
			}
			if cs.PeerCertificates[0].VerifyHostname("good.test") != nil {
				return errors.New("wrong host name")
			}
			return nil
		},
	}}, Timeout: 10 * time.Second}
	do := func(method, u string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, u, strings.NewReader("x"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, base := range []string{"http://plain.test", "https://good.test"} {
		host := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
		if code, body := do("GET", base+"/x"); code != 200 || body != "hello from "+host {
			t.Fatalf("%s allowed GET: %d %q", base, code, body)
		}
		if code, _ := do("POST", base+"/cart"); code != 200 {
			t.Fatalf("%s cart POST: %d", base, code)
		}
		for _, blocked := range []struct{ method, path string }{{"GET", "/checkout"}, {"GET", "/%63heckout/x"}, {"POST", "/x"}, {"PUT", "/cart/../x"}} {
			if code, body := do(blocked.method, base+blocked.path); code != http.StatusForbidden || !strings.Contains(body, "store policy") {
				t.Fatalf("%s %s %s: %d %q, want 403", base, blocked.method, blocked.path, code, body)
			}
		}
	}
	su, _ := url.Parse(strict.URL())
	pu.Host = su.Host
	// An upstream the proxy cannot reach answers nothing: the connection
	// closes, a network error in the browser (proxy.go, ErrorHandler).
	if resp, err := client.Get("https://good.test/x"); err == nil {
		resp.Body.Close()
		t.Fatalf("a wrong upstream certificate: %d, want no answer", resp.StatusCode)
	}
	pu.Host = strings.TrimPrefix(p.URL(), "http://")
	if code, _ := do("GET", "http://evil.test/x"); code != http.StatusForbidden {
		t.Fatalf("blocked HTTP status %d, want 403", code)
	}
	if code, body := do("GET", "http://"+proxyProbeHost+"/"); code != 200 || body != "policy proxy" {
		t.Fatalf("probe: %d %q", code, body)
	}

	// A plain CONNECT tunnel (ws:// goes this way) is served and checked too.
	connect := func(target, path string) string {
		c, err := net.DialTimeout("tcp", pu.Host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		if !strings.Contains(line, " 200 ") {
			return line
		}
		for {
			l, err := br.ReadString('\n')
			if err != nil || l == "\r\n" {
				break
			}
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n", path)
		all, _ := io.ReadAll(br)
		return line + string(all)
	}
	// The tunnel's target decides, not the Host header inside it: the
	// server is told the host the policy checked.
	if out := connect("plain.test:80", "/tunnel"); !strings.Contains(out, "hello from plain.test") {
		t.Fatalf("allowed CONNECT: %q", out)
	}
	if out := connect("plain.test:80", "/checkout"); !strings.Contains(out, " 403 ") {
		t.Fatalf("blocked path in a tunnel: %q", out)
	}
	if out := connect("evil.test:443", "/"); !strings.Contains(out, " 403 ") {
		t.Fatalf("blocked CONNECT answered %q, want 403", out)
	}
	// Only the standard ports: an allowed host's other ports are other
	// services.
	for _, target := range []string{"plain.test:22", "good.test:8443", "plain.test:0"} {
		if out := connect(target, "/x"); !strings.Contains(out, " 403 ") {
			t.Fatalf("CONNECT %s answered %q, want 403", target, out)
		}
	}
	if code, _ := do("GET", "http://plain.test:8080/x"); code != http.StatusForbidden {
		t.Fatalf("absolute request to a non-standard port: %d, want 403", code)
	}
	// The absolute request line decides over a Host header that differs.
	raw := func(req string) string {
		c, err := net.DialTimeout("tcp", pu.Host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(patience))
		fmt.Fprint(c, req)
		all, _ := io.ReadAll(c)
		return string(all)
	}
	if out := raw("GET http://plain.test/host HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n"); !strings.HasSuffix(out, "hello from plain.test") {
		t.Fatalf("a request for plain.test with Host: evil.test: %q", out)
	}
	// WebSocket is the one upgrade allowed.
	for _, proto := range []string{"h2c", "TLS/1.2", "websocket2"} {
		ureq, _ := http.NewRequest("GET", "http://plain.test/upgrade", nil)
		ureq.Header.Set("Connection", "Upgrade")
		ureq.Header.Set("Upgrade", proto)
		resp, err := client.Do(ureq)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("Upgrade: %s answered %d, want 403", proto, resp.StatusCode)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Only the allowed requests reached a server: GET /x and POST /cart
	// over http and https, and the tunnel's request.
	want := map[string]int{"plain.test GET /x": 1, "plain.test POST /cart": 1, "good.test GET /x": 1, "good.test POST /cart": 1, "plain.test GET /tunnel": 1, "plain.test GET /host": 1}
	if !maps.Equal(hits, want) {
		t.Errorf("server hits %v, want %v", hits, want)
	}
	pol.mu.Lock()
	defer pol.mu.Unlock()
	if !slices.Contains(pol.blocked, "evil.test") {
		t.Fatalf("blocked hosts reported: %v", pol.blocked)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := Options{}
	o.applyDefaults()
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "profile directory") {
		t.Errorf("no profile dir: %v", err)
	}
	o = Options{ProfileDir: t.TempDir(), ScreenshotFormat: "gif"}
	o.applyDefaults()
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "png or jpeg") {
		t.Errorf("gif: %v", err)
	}
	o = Options{RemoteURL: "ftp://x", ProfileDir: "x"}
	o.applyDefaults()
	o.Store = siteProfile()
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("ftp remote: %v", err)
	}
	o = Options{ProfileDir: t.TempDir(), DriverDirectory: t.TempDir(), Store: siteProfile()}
	o.applyDefaults()
	if err := o.validate(); err == nil || !strings.Contains(err.Error(), "setup.sh") {
		t.Errorf("empty driver dir: %v", err)
	}
	if !remoteIsCDP("http://127.0.0.1:9222") || !remoteIsCDP("ws://h:9222/devtools/browser/abc") || remoteIsCDP("ws://h:3000/pw") {
		t.Error("remoteIsCDP misclassifies endpoints")
	}
}

// TestManualLoginWaitIsNotCutShort: `login --headful --wait 5m` must give
// the person the whole wait, beyond the scripted login's own bound.
func TestManualLoginWaitIsNotCutShort(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want time.Duration
	}{
		{"headless", Options{Headless: true, ManualLoginWait: 5 * time.Minute}, DefaultLoginTimeout},
		{"headful without a manual wait", Options{}, DefaultLoginTimeout},
		{"headful with a manual wait", Options{ManualLoginWait: 5 * time.Minute}, DefaultLoginTimeout + 5*time.Minute},
		{"remote browser", Options{RemoteURL: "http://127.0.0.1:9222", ManualLoginWait: 5 * time.Minute}, DefaultLoginTimeout},
	}
	for _, tt := range tests {
		o := tt.o
		o.applyDefaults()
		if got := o.loginBudget(); got != tt.want {
			t.Errorf("%s: login budget %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Opening a tab is bounded apart from an action: a test (or a user) that
// cuts the action timeout to a second must not make a busy machine's new
// window fail.
func TestTabTimeoutDefaults(t *testing.T) {
	for _, c := range []struct {
		name        string
		action, tab time.Duration
		wantTab     time.Duration
	}{
		{"defaults", 0, 0, DefaultTabTimeout},
		{"a short action timeout leaves the tab's bound alone", time.Second, 0, DefaultTabTimeout},
		{"a tab bound below the action timeout is raised to it", time.Minute, time.Second, time.Minute},
		{"set", 0, 45 * time.Second, 45 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := Options{ActionTimeout: c.action, TabTimeout: c.tab}
			o.applyDefaults()
			if o.TabTimeout != c.wantTab {
				t.Fatalf("TabTimeout = %v, want %v", o.TabTimeout, c.wantTab)
			}
		})
	}
}
