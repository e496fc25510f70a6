package panel

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// Behind ingress, Home Assistant says who uses the page: Start, Stop, an
// answer and a cart action carry that user's name (display name, else user
// name, else id) to what records them. Outside ingress nobody vouches for
// the headers: they are ignored.
func TestPanelRecordsWhoBehindIngress(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ingress bool
		hdr     map[string]string
		want    string
	}{
		{"display name", true, map[string]string{HeaderUserID: "abc123", HeaderUserName: "alice", HeaderUserDisplayName: "Alice  Martin"}, "Alice Martin"},
		{"user name only", true, map[string]string{HeaderUserID: "abc123", HeaderUserName: "alice"}, "alice"},
		{"id only", true, map[string]string{HeaderUserID: "abc123"}, "abc123"},
		{"no headers", true, nil, ""},
		{"outside ingress", false, map[string]string{HeaderUserDisplayName: "Mallory"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var stopBy string
			var cartReq reviewpack.Request
			c := &control{}
			p, err := New(Options{Ingress: tc.ingress, Start: c.start,
				Stop: func(ctx context.Context, source string) error {
					mu.Lock()
					defer mu.Unlock()
					stopBy = runstatus.ByFrom(ctx)
					return nil
				},
				CartAction: func(_ context.Context, req reviewpack.Request) (reviewpack.Action, error) {
					mu.Lock()
					defer mu.Unlock()
					cartReq = req
					return reviewpack.Action{Kind: req.Kind, By: req.By}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			post := func(path, body string) *httptest.ResponseRecorder {
				r := httptest.NewRequest("POST", path, strings.NewReader(body))
				r.Host = "127.0.0.1:8099"
				if tc.ingress {
					r.RemoteAddr = IngressProxy + ":41234"
				}
				r.Header.Set(ActionHeader, "1")
				for k, v := range tc.hdr {
					r.Header.Set(k, v)
				}
				w := httptest.NewRecorder()
				p.ServeHTTP(w, r)
				return w
			}
			if w := post("/api/start", ""); w.Code != http.StatusNoContent {
				t.Fatalf("start: %d %s", w.Code, w.Body)
			}
			if w := post("/api/stop", ""); w.Code != http.StatusNoContent {
				t.Fatalf("stop: %d %s", w.Code, w.Body)
			}
			if w := post("/api/cart/action", `{"run_id":"r1","item_id":"u1","action":"remove"}`); w.Code != http.StatusOK {
				t.Fatalf("cart action: %d %s", w.Code, w.Body)
			}

			// A question, answered from the page.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			openPage(p)
			answers := make(chan choice.Answer, 1)
			id := askInBackground(t, p, ctx, choice.Question{ItemName: "butter", Options: []choice.Option{{Name: "A"}}}, answers)
			if w := post("/api/answer", `{"id":"`+id+`","answer":"product","index":0}`); w.Code != http.StatusNoContent {
				t.Fatalf("answer: %d %s", w.Code, w.Body)
			}
			var a choice.Answer
			select {
			case a = <-answers:
			case <-time.After(60 * time.Second): // bounds a hang only
				t.Fatal("no answer")
			}

			// A safety confirmation, allowed from the page.
			confirmedBy := make(chan string, 1)
			go func() {
				_, by, _ := p.ConfirmBy(ctx, "The page asks to accept the terms.", "click I agree")
				confirmedBy <- by
			}()
			var cid string
			testwait.Until(t, "the safety check", 60*time.Second, func() bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				if len(p.questions) == 1 && p.questions[0].Kind == "confirm" {
					cid = p.questions[0].ID
				}
				return cid != ""
			})
			if w := post("/api/answer", `{"id":"`+cid+`","answer":"yes"}`); w.Code != http.StatusNoContent {
				t.Fatalf("confirm: %d %s", w.Code, w.Body)
			}
			var confirmBy string
			select {
			case confirmBy = <-confirmedBy:
			case <-time.After(60 * time.Second): // bounds a hang only
				t.Fatal("no confirmation")
			}

			c.mu.Lock()
			startBy := c.starts[0].By
			c.mu.Unlock()
			mu.Lock()
			defer mu.Unlock()
			for what, got := range map[string]string{"start": startBy, "stop": stopBy, "cart action": cartReq.By, "answer": a.By, "safety check": confirmBy} {
				if got != tc.want {
					t.Errorf("%s by %q, want %q", what, got, tc.want)
				}
			}
		})
	}
}

// openPage registers an open page, as an event stream does (the panel
// asks only while one is open).
func openPage(p *Panel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clients[make(chan struct{}, 1)] = struct{}{}
}

// askInBackground asks q in the panel (Choose) in the background, its
// answer going to got, and returns the question's id once the page has it.
func askInBackground(t *testing.T, p *Panel, ctx context.Context, q choice.Question, got chan<- choice.Answer) string {
	t.Helper()
	go func() {
		a, _ := p.Choose(ctx, q)
		got <- a
	}()
	var id string
	testwait.Until(t, "the question", 60*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.questions) == 1 {
			id = p.questions[0].ID
		}
		return id != ""
	})
	return id
}
