package browser

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dietPage tries what a hostile widget does to cost a tab CPU: frames of
// another host, of a blocked path and through a redirect to one, a frame
// of the store's own, workers and sockets — directly and through a blank
// frame's pristine window — and an image, a font and a third-party script.
// window.results records what each attempt got.
const dietPage = `<img id="img" src="/pixel.png" width="10" height="10">
<iframe id="evil" src="http://evil.test/frame"></iframe>
<iframe id="blocked" src="/en/checkout"></iframe>
<iframe id="redirected" src="/redirect-checkout"></iframe>
<iframe id="own" src="/color?c=red"></iframe>
<script src="http://evil.test/lib.js"></script>
<script>
  window.results = {};
  const blank = document.createElement('iframe'); document.body.appendChild(blank);
  const tries = {
    worker: (w) => new w.Worker(URL.createObjectURL(new Blob(['postMessage(1)'], {type: 'text/javascript'}))),
    sharedWorker: (w) => new w.SharedWorker(URL.createObjectURL(new Blob(['onconnect = () => {}'], {type: 'text/javascript'}))),
    webSocket: (w) => new w.WebSocket('ws://shop.test/ws'),
    eventSource: (w) => new w.EventSource('/events'),
  };
  for (const [name, make] of Object.entries(tries)) {
    for (const [where, w] of [['page', window], ['blank frame', blank.contentWindow]]) {
      try { make(w); window.results[name + ' in ' + where] = 'made'; } catch (e) { window.results[name + ' in ' + where] = 'refused'; }
    }
  }
  try { window.Worker = function () {}; } catch (e) {}
  window.results.restored = typeof window.Worker === 'function' && String(window.Worker).includes('refused') ? 'no' : 'yes';
  window.results.fetch = 'pending';
  fetch('/api/ok').then((r) => { window.results.fetch = String(r.status); }, () => { window.results.fetch = 'refused'; });
</script>`

// frameState tells, for each frame of the diet page, what document it holds.
const frameState = `() => Object.fromEntries([...document.querySelectorAll('iframe[id]')].map((f) => {
  let s; try { s = f.contentDocument ? (f.contentDocument.URL || 'blank') : 'cross-origin'; } catch (e) { s = 'cross-origin'; }
  return [f.id, s];
}))`

func serveDiet(f *siteFixture) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/diet":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><html><head><meta charset="utf-8"></head><body>`+dietPage+`</body></html>`)
		case "/pixel.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pixelPNGForTests)
		case "/api/ok":
			w.WriteHeader(http.StatusNoContent)
		default:
			f.serve(w, r)
		}
	}
}

// TestTabsRefuseWhatTheyDoNotNeed: an agent tab's page cannot make
// workers or sockets (not even through a blank frame's window, not by
// putting the constructors back), and its frames of another host or of a
// blocked path stay blank without a request reaching the proxy or the
// server, while the store's own frame, image and fetch load. A replay tab
// loads only the document and the store's own scripts and fetches: no
// frame at all, no image; switched back, the tab loads like an agent tab.
func TestTabsRefuseWhatTheyDoNotNeed(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	f := newSite(t)
	defer f.close()
	f.srv.Config.Handler = serveDiet(f)
	h := launch(t, baseOptions(t, siteProfile(), t.TempDir(), f.rules, &logBuffer{}))
	defer closeHost(t, h)
	tab := newTab(t, h)
	ctx := testCtx(t)

	load := func(t *testing.T) (map[string]any, map[string]any) {
		t.Helper()
		mustDo(t, "open the page", tab.Navigate(ctx, "http://shop.test/diet"))
		waitFor(t, "the page's fetch to end", patience, func() bool {
			return eval(t, tab, `() => window.results.fetch !== 'pending'`).(bool)
		})
		return eval(t, tab, `() => window.results`).(map[string]any), eval(t, tab, frameState).(map[string]any)
	}

	t.Run("agent tab", func(t *testing.T) {
		evil0, blocked0 := f.hostHits("evil.test"), f.blockedPathHits()
		res, frames := load(t)
		for k, v := range res {
			if (strings.Contains(k, " in ") && v != "refused") || (k == "restored" && v != "no") {
				t.Errorf("%s: %v", k, v)
			}
		}
		if res["fetch"] != "204" {
			t.Errorf("the store's own fetch: %v, want 204", res["fetch"])
		}
		for _, id := range []string{"evil", "blocked", "redirected"} {
			if frames[id] != "about:blank" {
				t.Errorf("frame %s holds %v, want a blank frame (refused before any request)", id, frames[id])
			}
		}
		if frames["own"] != "http://shop.test/color?c=red" {
			t.Errorf("the store's own frame holds %v", frames["own"])
		}
		if !eval(t, tab, `() => { const i = document.getElementById('img'); return i.complete && i.naturalWidth > 0; }`).(bool) {
			t.Error("the store's image did not load in the agent's tab")
		}
		if n := f.hostHits("evil.test") - evil0; n != 0 {
			t.Errorf("evil.test was reached %d times", n)
		}
		if n := f.blockedPathHits() - blocked0; n != 0 {
			t.Errorf("blocked paths were reached %d times", n)
		}
		if n := f.count("shop.test", "/redirect-checkout"); n == 0 {
			t.Error("the redirecting frame's first hop (allowed) was never requested: the test proves nothing about redirects")
		}
	})

	t.Run("replay tab", func(t *testing.T) {
		mustDo(t, "switch to replay", tab.ReplayOnly(ctx, true))
		own0, img0 := f.count("shop.test", "/color"), f.count("shop.test", "/pixel.png")
		res, frames := load(t)
		if res["fetch"] != "204" {
			t.Errorf("the store's own fetch: %v, want 204 (a replay's add is one)", res["fetch"])
		}
		for id, v := range frames {
			if v != "about:blank" {
				t.Errorf("frame %s holds %v in a replay tab, want blank", id, v)
			}
		}
		if n := f.count("shop.test", "/color") - own0; n != 0 {
			t.Errorf("the store's own frame was requested %d times by a replay tab", n)
		}
		if n := f.count("shop.test", "/pixel.png") - img0; n != 0 {
			t.Errorf("the image was requested %d times by a replay tab", n)
		}

		mustDo(t, "switch back", tab.ReplayOnly(ctx, false))
		_, frames = load(t)
		if frames["own"] != "http://shop.test/color?c=red" {
			t.Errorf("after switching back, the store's own frame holds %v", frames["own"])
		}
	})
}

// directPage: a button that counts its (trusted) clicks into #n a moment
// later, a button under an overlay, and a disabled one.
const directPage = `<div id="n"></div>
<button id="add" style="position:absolute;left:100px;top:1500px;width:120px;height:40px">add</button>
<button id="under" style="position:absolute;left:300px;top:100px;width:120px;height:40px">under</button>
<div id="overlay" style="position:absolute;left:250px;top:50px;width:300px;height:200px;background:#0008"></div>
<button id="off" disabled style="position:absolute;left:600px;top:100px;width:120px;height:40px">off</button>
<div id="dialog" style="display:none">dialog</div>
<script>
  let n = 0;
  document.getElementById('add').addEventListener('click', (e) => { if (e.isTrusted) setTimeout(() => { document.getElementById('n').textContent = 'in cart: ' + (++n); }, 50); });
  document.getElementById('under').addEventListener('click', () => { document.getElementById('n').textContent = 'wrong'; });
  window.showDialog = () => setTimeout(() => { document.getElementById('dialog').style.display = 'block'; }, 50);
</script>`

// TestPressElementAndWaitChange: a direct click lands as a trusted click
// on an element below the fold, and the in-page wait returns once the
// page's count changes (or a dialog appears); a covered or disabled
// element is not clicked, and a wait for a change that never comes ends
// at its bound with false.
func TestPressElementAndWaitChange(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	mustDo(t, "open", tab.Navigate(ctx, "http://shop.test/"))
	eval(t, tab, `(html) => { document.body.innerHTML = html; for (const s of document.body.querySelectorAll('script')) { const c = document.createElement('script'); c.textContent = s.textContent; s.replaceWith(c); } }`, directPage)
	for i, want := range []string{"in cart: 1", "in cart: 2"} {
		from := ""
		if i > 0 {
			from = "in cart: 1"
		}
		mustDo(t, "press add", tab.PressElement(ctx, "#add"))
		changed, err := tab.WaitChange(ctx, "#n", from, "", patience)
		mustDo(t, "wait for the count", err)
		if got := eval(t, tab, `() => document.getElementById('n').textContent`); !changed || got != want {
			t.Fatalf("after press %d: changed %v, count %q, want %q", i+1, changed, got, want)
		}
	}
	for _, sel := range []string{"#under", "#off", "#missing"} {
		if err := tab.PressElement(ctx, sel); err == nil {
			t.Errorf("pressing %s: no error", sel)
		}
	}
	if got := eval(t, tab, `() => document.getElementById('n').textContent`); got != "in cart: 2" {
		t.Errorf("a refused press clicked something: count %q", got)
	}
	eval(t, tab, `() => window.showDialog()`)
	changed, err := tab.WaitChange(ctx, "#n", "in cart: 2", "#dialog", patience)
	if err != nil || !changed {
		t.Errorf("waiting for the dialog: %v, %v", changed, err)
	}
	changed, err = tab.WaitChange(ctx, "#n", "in cart: 2", "", 300*time.Millisecond)
	if err != nil || changed {
		t.Errorf("a wait for a change that never comes: %v, %v", changed, err)
	}
}
