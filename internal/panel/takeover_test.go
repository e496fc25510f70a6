package panel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/takeover"
)

// fakeTab records the input a take-over sends it.
type fakeTab struct {
	mu    sync.Mutex
	input []string
}

func (f *fakeTab) rec(s string) error {
	f.mu.Lock()
	f.input = append(f.input, s)
	f.mu.Unlock()
	return nil
}
func (f *fakeTab) Click(_ context.Context, x, y int) error {
	return f.rec(fmt.Sprintf("click %d,%d", x, y))
}
func (f *fakeTab) Type(_ context.Context, s string) error { return f.rec("type " + s) }
func (f *fakeTab) Key(_ context.Context, k string) error  { return f.rec("key " + k) }
func (f *fakeTab) Screenshot(context.Context) ([]byte, error) {
	var b bytes.Buffer
	err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1000, 500)))
	return b.Bytes(), err
}
func (f *fakeTab) Evaluate(context.Context, string, any) (any, error) {
	return `[{"kind":"link","label":"Sign in","x":100,"y":50,"w":100,"h":20}]`, nil
}
func (f *fakeTab) Size() (int, int) { return 1000, 500 }
func (f *fakeTab) URL() string      { return "https://www.metro.ca/en" }

func postBody(p *Panel, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Host = "127.0.0.1:8099"
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// TestTakeoverAPI: a tab offered for sign-in is listed in needs_person;
// clicks, typing and keys go to it only through the panel's guard; the
// journal has the typed text's length, never the text; "Show me" answers a
// task with a box; Done hands the tab back (Offer returns).
func TestTakeoverAPI(t *testing.T) {
	reg := takeover.New(nil)
	var (
		mu     sync.Mutex
		events []takeover.Event
	)
	reg.OnEvent = func(e takeover.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	offered := make(chan takeover.Need, 1)
	reg.OnOffer = func(n takeover.Need) { offered <- n }
	c := &control{}
	p, err := New(Options{Takeover: reg, Start: c.start, Stop: c.stop})
	if err != nil {
		t.Fatal(err)
	}
	tab := &fakeTab{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	back := make(chan error, 1)
	go func() { back <- reg.Offer(ctx, tab, takeover.ReasonSignIn, "") }()
	n := <-offered

	var st struct {
		NeedsPerson []takeover.Need `json:"needs_person"`
	}
	if err := json.Unmarshal(do(p, "GET", "/api/state", "", nil).Body.Bytes(), &st); err != nil || len(st.NeedsPerson) != 1 || st.NeedsPerson[0] != n {
		t.Fatalf("needs_person = %+v (%v), want [%+v]", st.NeedsPerson, err, n)
	}
	ok := map[string]string{ActionHeader: "1"}
	base := "/api/takeover/" + n.Tab
	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
		want             int
	}{
		{"no panel header", base + "/click", `{"x":1,"y":2}`, nil, http.StatusForbidden},
		{"cross-site", base + "/type", `{"text":"x"}`, map[string]string{ActionHeader: "1", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"other origin", base + "/key", `{"key":"Enter"}`, map[string]string{ActionHeader: "1", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"off screen", base + "/click", `{"x":1000,"y":2}`, ok, http.StatusBadRequest},
		{"unknown tab", "/api/takeover/t99/click", `{"x":1,"y":2}`, ok, http.StatusNotFound},
		{"click", base + "/click", `{"x":500,"y":250}`, ok, http.StatusNoContent},
		{"type", base + "/type", `{"text":"hunter2-secret"}`, ok, http.StatusNoContent},
		{"key", base + "/key", `{"key":"Enter"}`, ok, http.StatusNoContent},
	} {
		if w := postBody(p, tc.path, tc.body, tc.hdr); w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
	}
	if got := strings.Join(tab.input, "|"); got != "click 500,250|type hunter2-secret|key Enter" {
		t.Fatalf("the tab got %q", got)
	}
	w := postBody(p, "/api/guide", `{"tab":"`+n.Tab+`","goal":"sign in"}`, ok)
	var step struct {
		Task string `json:"task"`
		Box  []int  `json:"box"`
		Done bool   `json:"done"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &step); err != nil || !strings.Contains(step.Task, "Sign in") || fmt.Sprint(step.Box) != "[100 100 200 140]" || step.Done {
		t.Fatalf("guide = %d %s", w.Code, w.Body)
	}
	if w := postBody(p, base+"/done", `{}`, ok); w.Code != http.StatusNoContent {
		t.Fatalf("done: %d %s", w.Code, w.Body)
	}
	if err := <-back; err != nil {
		t.Fatalf("Offer after Done: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	b, _ := json.Marshal(events)
	if strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), `"kind":"type","length":14`) {
		t.Fatalf("journal %s: want the typed length, never the text", b)
	}
}
