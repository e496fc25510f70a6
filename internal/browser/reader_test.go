package browser

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
)

// writerPage is a page that tries every way a page's scripts can send
// something that is not a GET: a fetch and an XHR of each writing method,
// a beacon, a form posted in a frame and a form posted by the page itself
// (the last thing it does). window.results records what each got.
const writerPage = `<iframe name="sink" id="sink"></iframe>
<form id="framed" method="post" action="/api/cart/add" target="sink"><input name="product" value="p1"></form>
<form id="top" method="post" action="/api/slots/reserve"><input name="slot" value="sat-10"></form>
<img id="img" src="/pixel.png">
<script>
  window.results = {};
  const done = [];
  for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    done.push(fetch('/api/cart/add', {method: m, body: m === 'DELETE' ? null : '{"product":"p1"}'})
      .then((r) => { window.results['fetch ' + m] = String(r.status); }, () => { window.results['fetch ' + m] = 'refused'; }));
    done.push(new Promise((res) => {
      const x = new XMLHttpRequest(); x.open(m, '/api/cart/add');
      x.onload = () => { window.results['xhr ' + m] = String(x.status); res(); };
      x.onerror = () => { window.results['xhr ' + m] = 'refused'; res(); };
      x.send('{}');
    }));
  }
  done.push(fetch('/api/read').then((r) => { window.results['fetch GET'] = String(r.status); }, () => { window.results['fetch GET'] = 'refused'; }));
  done.push(fetch('/api/read', {method: 'HEAD'}).then((r) => { window.results['fetch HEAD'] = String(r.status); }, () => { window.results['fetch HEAD'] = 'refused'; }));
  window.results.beacon = navigator.sendBeacon('/api/beacon', 'bought') ? 'queued' : 'refused';
  document.getElementById('framed').submit();
  window.settled = Promise.all(done).then(() => { window.results.done = true; });
</script>`

// methodRecorder records every request's "METHOD path" that reaches the
// store.
type methodRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (m *methodRecorder) add(r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, r.Method+" "+r.URL.Path)
}

func (m *methodRecorder) saw(req string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.seen {
		if s == req {
			return true
		}
	}
	return false
}

func (m *methodRecorder) writes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, s := range m.seen {
		if !readMethods[strings.SplitN(s, " ", 2)[0]] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// TestAReaderSendsNothingButReads attacks a reader the way a store's page
// could: fetches and XHRs of every writing method, a beacon, a form posted
// into a frame and the page's own form posted as a navigation. Not one of
// them reaches the store; its GETs and HEADs do. The same page in an
// ordinary tab does reach the store with them — the test can fail.
func TestAReaderSendsNothingButReads(t *testing.T) {
	requireBrowser(t)
	f := newSite(t)
	defer f.close()
	rec := &methodRecorder{}
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.add(r)
		switch r.URL.Path {
		case "/writer":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><html><head><meta charset="utf-8"></head><body>`+writerPage+`</body></html>`)
		case "/pixel.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pixelPNGForTests)
		case "/api/read", "/api/cart/add", "/api/beacon", "/api/slots/reserve":
			w.WriteHeader(http.StatusNoContent)
		default:
			f.serve(w, r)
		}
	})
	h := launch(t, baseOptions(t, siteProfile(), t.TempDir(), f.rules, &logBuffer{}))
	defer closeHost(t, h)
	ctx := testCtx(t)

	run := func(t *testing.T, tab *Tab) map[string]any {
		t.Helper()
		mustDo(t, "open the page", tab.Navigate(ctx, "http://shop.test/writer"))
		waitFor(t, "the page's requests to end", patience, func() bool {
			v, _ := eval(t, tab, `() => !!(window.results && window.results.done)`).(bool)
			return v
		})
		res := eval(t, tab, `() => window.results`).(map[string]any)
		// The page's own form, posted as a top-level navigation, last
		// (the evaluation may end with the page it ran in).
		_, _ = tab.page.Evaluate(`() => { document.getElementById('top').submit(); return true; }`)
		return res
	}

	t.Run("reader", func(t *testing.T) {
		tab, err := h.NewReader(ctx)
		mustDo(t, "open a reader", err)
		defer func() { _ = tab.Close() }()
		if !tab.IsReader() {
			t.Fatal("NewReader's tab does not say it is a reader")
		}
		res := run(t, tab)
		// The page's own form posted as a navigation: wait for the guard to
		// refuse it before the next navigation (which it would abort).
		var notices []string
		waitFor(t, "the form's post to be refused", patience, func() bool {
			notices = append(notices, tab.TakeNotices()...)
			return strings.Contains(strings.Join(notices, "\n"), "/api/slots/reserve was refused")
		})
		for k, v := range res {
			switch {
			case k == "done", k == "beacon": // a beacon is queued by the page; the store must not see it
			case k == "fetch GET" || k == "fetch HEAD":
				if v != "204" {
					t.Errorf("%s: %v, want 204 (a reader reads)", k, v)
				}
			case v != "refused":
				t.Errorf("%s: %v, want refused", k, v)
			}
		}
		// A navigation after the form's post and the beacon: what they sent
		// would have reached the store by the time this page has loaded.
		mustDo(t, "read again", tab.Navigate(ctx, "http://shop.test/writer"))
		if w := rec.writes(); len(w) != 0 {
			t.Errorf("a reader sent %v to the store", w)
		}
		if !rec.saw("GET /pixel.png") {
			t.Error("the reader's page never loaded its image: GETs must go through")
		}
	})

	t.Run("ordinary tab, for contrast", func(t *testing.T) {
		tab := newTab(t, h)
		run(t, tab)
		waitFor(t, "the ordinary tab's writes to reach the store", patience, func() bool {
			return len(rec.writes()) >= 8
		})
	})
}
