package panel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// control records what the panel asked of serve.
type control struct {
	mu     sync.Mutex
	starts []runstatus.Request
	stops  []string
	busy   bool
}

func (c *control) start(_ context.Context, req runstatus.Request) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy {
		return runstatus.ErrBusy
	}
	c.starts = append(c.starts, req)
	return nil
}

func (c *control) stop(_ context.Context, source string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stops = append(c.stops, source)
	return nil
}

func newPanel(t *testing.T, ingress bool) (*Panel, *control) {
	t.Helper()
	c := &control{}
	p, err := New(Options{Ingress: ingress, Start: c.start, Stop: c.stop})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

func do(p *Panel, method, path, remote string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.Host = "127.0.0.1:8099" // the panel's own address (not httptest's example.com)
	if remote != "" {
		r.RemoteAddr = remote
	}
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// In the add-on, only the Supervisor's ingress proxy may connect, and the
// page's links are relative to the ingress path it sends.
func TestIngress(t *testing.T) {
	p, _ := newPanel(t, true)
	for _, tc := range []struct {
		name, remote string
		want         int
	}{
		{"the ingress proxy", IngressProxy + ":41234", http.StatusOK},
		{"another add-on on the network", "172.30.32.5:41234", http.StatusForbidden},
		{"the host", "127.0.0.1:41234", http.StatusForbidden},
		{"an IPv6 client", "[::1]:41234", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if w := do(p, "GET", "/", tc.remote, nil); w.Code != tc.want {
				t.Fatalf("GET / from %s: %d, want %d", tc.remote, w.Code, tc.want)
			}
			if w := do(p, "POST", "/api/stop", tc.remote, map[string]string{ActionHeader: "1"}); tc.want == http.StatusForbidden && w.Code != http.StatusForbidden {
				t.Fatalf("POST /api/stop from %s: %d, want 403", tc.remote, w.Code)
			}
		})
	}
	for _, tc := range []struct{ header, base string }{
		{"/api/hassio_ingress/AbC-12_x", `<meta name="gemini-supply-base" content="/api/hassio_ingress/AbC-12_x/">`},
		{"", `<meta name="gemini-supply-base" content="/">`},
		{`/api/hassio_ingress/x"><script>alert(1)</script>`, `<meta name="gemini-supply-base" content="/">`},
		{"https://evil.example/", `<meta name="gemini-supply-base" content="/">`},
	} {
		w := do(p, "GET", "/", IngressProxy+":1", map[string]string{"X-Ingress-Path": tc.header})
		if body := w.Body.String(); !strings.Contains(body, tc.base) {
			t.Errorf("X-Ingress-Path %q: the page has no %s", tc.header, tc.base)
		}
	}
	// Outside the add-on any client may connect and the header is ignored.
	open, _ := newPanel(t, false)
	w := do(open, "GET", "/", "192.0.2.7:1", map[string]string{"X-Ingress-Path": "/api/hassio_ingress/abc"})
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `<meta name="gemini-supply-base" content="/">`) {
		t.Fatalf("outside the add-on: %d %q", w.Code, w.Body.String())
	}
}

// Start and Stop need the panel's header and a request that is not
// cross-site: a form or a script of another site cannot start or stop a run.
func TestActionsRefuseCrossSiteRequests(t *testing.T) {
	p, c := newPanel(t, false)
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no header (a plain form post)", nil, http.StatusForbidden},
		{"wrong header value", map[string]string{ActionHeader: "yes"}, http.StatusForbidden},
		{"cross-site", map[string]string{ActionHeader: "1", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"same-site other origin", map[string]string{ActionHeader: "1", "Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"the page", map[string]string{ActionHeader: "1", "Sec-Fetch-Site": "same-origin"}, http.StatusNoContent},
		{"a client without fetch metadata", map[string]string{ActionHeader: "1"}, http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.mu.Lock()
			before := len(c.stops) + len(c.starts)
			c.mu.Unlock()
			for _, path := range []string{"/api/start", "/api/stop"} {
				if w := do(p, "POST", path, "", tc.hdr); w.Code != tc.want {
					t.Fatalf("POST %s: %d, want %d", path, w.Code, tc.want)
				}
			}
			c.mu.Lock()
			after := len(c.stops) + len(c.starts)
			c.mu.Unlock()
			if got, want := after-before, map[bool]int{true: 2, false: 0}[tc.want == http.StatusNoContent]; got != want {
				t.Fatalf("%d actions reached serve, want %d", got, want)
			}
		})
	}
	if w := do(p, "GET", "/api/stop", "", map[string]string{ActionHeader: "1"}); w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /api/stop: %d, want 405", w.Code)
	}
	c.mu.Lock()
	c.busy = true
	c.mu.Unlock()
	if w := do(p, "POST", "/api/start", "", map[string]string{ActionHeader: "1"}); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "already in progress") {
		t.Fatalf("start while busy: %d %q", w.Code, w.Body.String())
	}
	if c.starts[0].Source != "panel" || c.stops[0] != "panel" {
		t.Fatalf("sources: %+v %v", c.starts, c.stops)
	}
}

// The event stream sends the whole snapshot at once and after every run
// event; a new run starts a new snapshot.
func TestEventStream(t *testing.T) {
	p, _ := newPanel(t, false)
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	consumed := make(chan struct{})
	go func() { _ = p.Consume(ctx, sub); close(consumed) }()

	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	snaps := make(chan Snapshot, 16)
	go readSnapshots(resp.Body, snaps)
	next := func(what string, ok func(Snapshot) bool) Snapshot {
		t.Helper()
		deadline := time.After(60 * time.Second) // bounds a hang only
		for {
			select {
			case s := <-snaps:
				if ok(s) {
					return s
				}
			case <-deadline:
				t.Fatalf("no snapshot with %s", what)
			}
		}
	}
	next("no run", func(s Snapshot) bool { return s.RunID == "" && len(s.Items) == 0 })
	bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "r1", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 2}})
	bus.Publish(runstatus.Event{Kind: runstatus.KindItemFinished, RunID: "r1", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 2, Done: 1, Added: 1},
		Item: &report.ItemResult{ItemID: "a", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2%", Replay: "replayed"}})
	s := next("milk added", func(s Snapshot) bool { return len(s.Items) == 1 && s.Items[0].Outcome == report.OutcomeAdded })
	if s.RunID != "r1" || s.State != runstatus.StateShopping || s.Progress.Done != 1 || s.Items[0].Replay != "replayed" {
		t.Fatalf("snapshot %+v", s)
	}
	bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "r2", State: runstatus.StateInitializing})
	next("the new run", func(s Snapshot) bool { return s.RunID == "r2" && len(s.Items) == 0 })
	bus.Close()
	select {
	case <-consumed:
	case <-time.After(60 * time.Second):
		t.Fatal("Consume did not end when the bus closed")
	}
}

func readSnapshots(r io.Reader, out chan<- Snapshot) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var s Snapshot
		if json.Unmarshal([]byte(data), &s) == nil {
			out <- s
		}
	}
}

// An answer from the page is checked like a reply on Telegram, and only the
// first one counts.
func TestAnswersAreChecked(t *testing.T) {
	p, _ := newPanel(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Nobody has the panel open: it cannot ask, and says so at once.
	if _, err := p.Choose(ctx, choice.Question{ItemName: "butter", Options: []choice.Option{{Name: "A"}}}); !errors.Is(err, ErrNobodyWatching) {
		t.Fatalf("Choose with no page open: %v, want ErrNobodyWatching", err)
	}
	if ok, err := p.Confirm(ctx, "x", "y"); ok || !errors.Is(err, ErrNobodyWatching) {
		t.Fatalf("Confirm with no page open: %v, %v", ok, err)
	}
	openPage(p)
	got := make(chan choice.Answer, 1)
	id := askInBackground(t, p, ctx, choice.Question{ItemName: "butter", Options: []choice.Option{{Name: "A"}, {Name: "B"}}}, got)
	post := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/answer", strings.NewReader(body))
		r.Host = "localhost:8099"
		r.Header.Set(ActionHeader, "1")
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w
	}
	for _, tc := range []struct {
		name, body string
		code       int
		says       string
	}{
		{"not JSON", "answer=1", http.StatusBadRequest, "JSON"},
		{"no such option", `{"id":"` + id + `","answer":"product","index":2}`, http.StatusBadRequest, "Please choose 1–2"},
		{"a negative option", `{"id":"` + id + `","answer":"product","index":-1}`, http.StatusBadRequest, "Please choose 1–2"},
		{"empty something else", `{"id":"` + id + `","answer":"custom","text":"  "}`, http.StatusBadRequest, "Say what to look for"},
		{"too long something else", `{"id":"` + id + `","answer":"custom","text":"` + strings.Repeat("x", choice.MaxCustomRunes+1) + `"}`, http.StatusBadRequest, "Say what to look for"},
		{"invisible something else", `{"id":"` + id + `","answer":"custom","text":"\u200b\u202e\u0000"}`, http.StatusBadRequest, "Say what to look for"},
		{"a confirmation's answer", `{"id":"` + id + `","answer":"yes"}`, http.StatusBadRequest, "not an answer"},
		{"an unknown question", `{"id":"nope","answer":"nothing"}`, http.StatusConflict, "already answered"},
		{"the answer", `{"id":"` + id + `","answer":"product","index":1}`, http.StatusNoContent, ""},
	} {
		if w := post(tc.body); w.Code != tc.code || !strings.Contains(w.Body.String(), tc.says) {
			t.Errorf("%s: %d %q, want %d %q", tc.name, w.Code, w.Body.String(), tc.code, tc.says)
		}
	}
	select {
	case a := <-got:
		if a.Kind != choice.KindProduct || a.Index != 1 {
			t.Fatalf("answer %+v", a)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Choose did not return the answer")
	}
	if w := post(`{"id":"` + id + `","answer":"nothing"}`); w.Code != http.StatusConflict {
		t.Fatalf("a second answer: %d, want 409", w.Code)
	}
	// Skip this week and ⭐ are answers of the panel too.
	for _, tc := range []struct {
		body string
		want choice.Answer
	}{
		{`"answer":"skip"`, choice.Answer{Kind: choice.KindSkip}},
		{`"answer":"product","index":0,"remember":true`, choice.Answer{Kind: choice.KindProduct, Index: 0, Remember: true}},
	} {
		id = askInBackground(t, p, ctx, choice.Question{ItemName: "butter", Options: []choice.Option{{Name: "A"}}}, got)
		if w := post(`{"id":"` + id + `",` + tc.body + `}`); w.Code != http.StatusNoContent {
			t.Fatalf("%s: %d %q", tc.body, w.Code, w.Body.String())
		}
		select {
		case a := <-got:
			if a != tc.want {
				t.Errorf("%s: answer %+v, want %+v", tc.body, a, tc.want)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("Choose did not return the answer")
		}
	}
}

// The page reads its texts in the household's language from one catalogue.
func TestMessagesSpeakTheConfiguredLanguage(t *testing.T) {
	for _, c := range []struct {
		lang, want, title string
	}{
		{"", "en", "Groceries"},
		{"fr-CA", "fr", "Épicerie"},
	} {
		ctl := &control{}
		p, err := New(Options{Start: ctl.start, Stop: ctl.stop, Messages: messages.For(c.lang)})
		if err != nil {
			t.Fatal(err)
		}
		w := do(p, http.MethodGet, "/api/messages", "", nil)
		var got struct {
			Lang  string            `json:"lang"`
			Texts map[string]string `json:"texts"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
			t.Fatalf("GET /api/messages (%q): %d %v %s", c.lang, w.Code, err, w.Body)
		}
		if got.Lang != c.want || got.Texts["title"] != c.title {
			t.Errorf("messages for %q: %s %q, want %s %q", c.lang, got.Lang, got.Texts["title"], c.want, c.title)
		}
	}
}

// TestStopWithNoRunIsAConflict: Stop when no run is in progress is the
// run's state (409, with serve's words), not a fault of the panel (500).
func TestStopWithNoRunIsAConflict(t *testing.T) {
	p, err := New(Options{Start: (&control{}).start, Stop: func(context.Context, string) error { return runstatus.ErrNoRun }})
	if err != nil {
		t.Fatal(err)
	}
	if w := do(p, "POST", "/api/stop", "", map[string]string{ActionHeader: "1"}); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), runstatus.ErrNoRun.Error()) {
		t.Fatalf("stop with no run: %d %q, want 409", w.Code, w.Body.String())
	}
}
