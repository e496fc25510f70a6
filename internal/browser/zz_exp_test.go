package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

func TestZZExp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<html><body><a id=a1 href="/p2" target=_blank>blank</a><a id=a2 href="http://evil.example/x" target=_blank>evil</a><button id=b onclick="window.open('/p3','_blank','noopener')">b</button>%s</body></html>`, r.URL.Path)
	}))
	defer srv.Close()
	t0 := time.Now()
	pw, err := playwright.Run(&playwright.RunOptions{SkipInstallBrowsers: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	dir := t.TempDir()
	ctx, err := pw.Chromium.LaunchPersistentContext(dir, playwright.BrowserTypeLaunchPersistentContextOptions{
		ExecutablePath: playwright.String(os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")),
		Headless:       playwright.Bool(true),
		Args:           []string{"--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--host-resolver-rules=MAP evil.example 127.0.0.1:1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("launch %v; browser=%v pages=%d", time.Since(t0), ctx.Browser(), len(ctx.Pages()))
	ctx.OnClose(func(c playwright.BrowserContext) { t.Logf("context close event %v", time.Since(t0)) })
	ctx.OnPage(func(p playwright.Page) { op, _ := p.Opener(); t.Logf("ctx page event url=%q opener=%v", p.URL(), op != nil) })
	ctx.Route("**/*", func(r playwright.Route) {
		req := r.Request()
		fr := req.Frame()
		var pg playwright.Page
		if fr != nil {
			pg = fr.Page()
		}
		t.Logf("route %s nav=%v frame=%v page=%v", req.URL(), req.IsNavigationRequest(), fr != nil, pg != nil)
		r.Continue()
	})
	page, err := ctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	page.OnPopup(func(p playwright.Page) {
		t.Logf("popup url=%q", p.URL())
		go func() {
			err := p.WaitForURL(func(u string) bool { return u != "" && u != "about:blank" }, playwright.PageWaitForURLOptions{Timeout: playwright.Float(3000), WaitUntil: playwright.WaitUntilStateCommit})
			t.Logf("popup after commit url=%q err=%v", p.URL(), err)
		}()
	})
	if _, err := page.Goto(srv.URL + "/p1"); err != nil {
		t.Fatal(err)
	}
	for _, sel := range []string{"#a1", "#a2", "#b"} {
		page.Click(sel)
		time.Sleep(1500 * time.Millisecond)
	}
	for _, k := range []string{"a", "A", "é", " ", "!", "€", "\n"} {
		err := page.Keyboard().Press(k)
		t.Logf("press %q: %v", k, err)
	}
	// kill
	b, _ := os.ReadFile(dir + "/SingletonLock")
	lnk, _ := os.Readlink(dir + "/SingletonLock")
	t.Logf("lock %q %q", b, lnk)
	var pid int
	for i := len(lnk) - 1; i >= 0; i-- {
		if lnk[i] == '-' {
			fmt.Sscanf(lnk[i+1:], "%d", &pid)
			break
		}
	}
	t.Logf("pid %d", pid)
	syscall.Kill(pid, syscall.SIGKILL)
	_, err = page.Evaluate("1+1")
	t.Logf("after kill eval err=%v", err)
	time.Sleep(time.Second)
	_, err = page.Evaluate("1+1")
	t.Logf("after kill eval2 err=%v %T", err, err)
}
