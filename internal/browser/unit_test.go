package browser

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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

// TestPolicyProxy drives the proxy as Chromium does: CONNECT for TLS and
// WebSockets, absolute-form requests for plain HTTP.
func TestPolicyProxy(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.Host]++
		mu.Unlock()
		fmt.Fprint(w, "hello from "+r.Host)
	}))
	defer backend.Close()
	rules, _ := parseResolverRules(fmt.Sprintf("MAP good.test %s, MAP evil.test %s", backend.Listener.Addr(), backend.Listener.Addr()))
	var blockedMu sync.Mutex
	var blocked []string
	p, err := startProxy(slog.New(slog.DiscardHandler), func(h string) bool { return h == "good.test" },
		func(h string) { blockedMu.Lock(); blocked = append(blocked, h); blockedMu.Unlock() }, rules)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pu, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 5 * time.Second}

	// Plain HTTP through the proxy.
	resp, err := client.Get("http://good.test/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello from good.test" {
		t.Fatalf("allowed HTTP: %d %q", resp.StatusCode, body)
	}
	resp, err = client.Get("http://evil.test/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("blocked HTTP status %d, want 403", resp.StatusCode)
	}

	// CONNECT tunnels.
	connect := func(target string) (string, net.Conn) {
		c, err := net.DialTimeout("tcp", pu.Host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		if strings.Contains(line, " 200 ") {
			for {
				l, err := br.ReadString('\n')
				if err != nil || l == "\r\n" {
					break
				}
			}
			fmt.Fprintf(c, "GET /tunnel HTTP/1.1\r\nHost: good.test\r\nConnection: close\r\n\r\n")
			all, _ := io.ReadAll(br)
			return line + string(all), c
		}
		return line, c
	}
	out, c := connect("good.test:443")
	c.Close()
	if !strings.Contains(out, " 200 ") || !strings.Contains(out, "hello from good.test") {
		t.Fatalf("allowed CONNECT: %q", out)
	}
	out, c = connect("evil.test:443")
	c.Close()
	if !strings.Contains(out, " 403 ") {
		t.Fatalf("blocked CONNECT answered %q, want 403", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["evil.test"] != 0 {
		t.Fatalf("evil.test was reached %d times", hits["evil.test"])
	}
	blockedMu.Lock()
	defer blockedMu.Unlock()
	if !slices.Equal(blocked, []string{"evil.test", "evil.test"}) {
		t.Fatalf("blocked hosts reported: %v", blocked)
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
