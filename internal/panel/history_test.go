package panel

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// fakeHistory has one run, r1, with one trace, t1, and its screenshot.
type fakeHistory struct {
	mu    sync.Mutex
	calls []string
}

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

func (h *fakeHistory) note(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, s)
}

func (h *fakeHistory) Runs(context.Context) ([]RunInfo, error) {
	h.note("runs")
	return []RunInfo{{ID: "r1", State: "review_ready", Items: 2, Added: 1}}, nil
}

func (h *fakeHistory) Run(_ context.Context, id string) (RunDetail, error) {
	h.note("run " + id)
	if id != "r1" {
		return RunDetail{}, ErrNotFound
	}
	return RunDetail{RunInfo: RunInfo{ID: "r1"}, Items: []RunItem{{Name: "milk", Attempts: []RunAttempt{{Trace: "t1"}}}}}, nil
}

func (h *fakeHistory) Trace(_ context.Context, id, trace string) (Trace, error) {
	h.note("trace " + id + " " + trace)
	if id != "r1" || trace != "t1" {
		return Trace{}, ErrNotFound
	}
	return Trace{Goal: "Buy milk.", Turns: []TraceTurn{{Turn: 1, Actions: []string{"clicked at (1, 2)"}, Screenshot: "turn-001.png"}}}, nil
}

func (h *fakeHistory) Screenshot(_ context.Context, id, trace, name string) ([]byte, error) {
	h.note("shot " + id + " " + trace + " " + name)
	switch name {
	case "turn-001.png":
		return pngBytes, nil
	case "turn-002.png":
		return []byte("<script>alert(1)</script>"), nil
	case "turn-003.png":
		return nil, errors.New("disk on fire")
	}
	return nil, ErrNotFound
}

// Past runs, their traces and screenshots are served by name; a name that
// is not a plain name (a path, a dot file) never reaches the history, and
// only images are served as screenshots.
func TestHistoryEndpoints(t *testing.T) {
	h := &fakeHistory{}
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, History: h})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path      string
		code      int
		says, via string
	}{
		{"/api/runs", 200, `"id":"r1"`, "runs"},
		{"/api/runs/r1", 200, `"trace":"t1"`, "run r1"},
		{"/api/runs/r9", 404, "not found", "run r9"},
		{"/api/runs/r1/traces/t1", 200, `"goal":"Buy milk."`, "trace r1 t1"},
		{"/api/runs/r1/traces/t2", 404, "not found", "trace r1 t2"},
		{"/api/runs/r1/traces/t1/turn-001.png", 200, "PNG", "shot r1 t1 turn-001.png"},
		{"/api/runs/r1/traces/t1/turn-002.png", 404, "not a screenshot", "shot r1 t1 turn-002.png"},
		{"/api/runs/r1/traces/t1/turn-003.png", 500, "disk on fire", "shot r1 t1 turn-003.png"},
		// Never asked of the history:
		{"/api/runs/..", http.StatusTemporaryRedirect, "", ""}, // the mux cleans the path
		{"/api/runs/.hidden", 404, "", ""},
		{"/api/runs/r1%2F..%2F..%2Fetc", 404, "", ""},
		{"/api/runs/r1/traces/..%2Fr2", 404, "", ""},
		{"/api/runs/r1/traces/t1/result.json", 404, "", ""},
		{"/api/runs/r1/traces/t1/turn-001.png%2F..", 404, "", ""},
		{"/api/runs/r1/traces/t1/..%2F..%2Fsecrets.png", 404, "", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			h.mu.Lock()
			h.calls = nil
			h.mu.Unlock()
			w := do(p, "GET", tc.path, "", nil)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.says) {
				t.Fatalf("GET %s: %d %q, want %d %q", tc.path, w.Code, w.Body.String(), tc.code, tc.says)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if got := strings.Join(h.calls, ";"); got != tc.via {
				t.Fatalf("GET %s asked the history %q, want %q", tc.path, got, tc.via)
			}
		})
	}
	if w := do(p, "GET", "/api/runs/r1/traces/t1/turn-001.png", "", nil); w.Header().Get("Content-Type") != "image/png" {
		t.Fatalf("screenshot Content-Type %q", w.Header().Get("Content-Type"))
	}
	// Without a history: an empty list, and nothing else.
	bare, _ := newPanel(t, false)
	if w := do(bare, "GET", "/api/runs", "", nil); w.Code != 200 || strings.TrimSpace(w.Body.String()) != "[]" {
		t.Fatalf("runs without a history: %d %q", w.Code, w.Body.String())
	}
	if w := do(bare, "GET", "/api/runs/r1", "", nil); w.Code != 404 {
		t.Fatalf("a run without a history: %d", w.Code)
	}
}

type fakeProducts struct {
	mu     sync.Mutex
	list   []Product
	forgot []string
}

func (f *fakeProducts) Products(context.Context) ([]Product, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Product(nil), f.list...), nil
}

func (f *fakeProducts) Forget(_ context.Context, item string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.list {
		if p.Key == item {
			f.list = append(f.list[:i], f.list[i+1:]...)
			f.forgot = append(f.forgot, item)
			return nil
		}
	}
	return ErrNotFound
}

func (f *fakeProducts) PinSubstitute(_ context.Context, item string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.list {
		if p.Key == item && p.Substitute != nil {
			f.list[i] = Product{Key: p.Key, Name: p.Substitute.Name, Pinned: true, Policy: p.Policy}
			return nil
		}
	}
	return ErrNotFound
}

func (f *fakeProducts) SetPolicy(_ context.Context, item string, pol shoppinglist.Policy) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.list {
		if p.Key == item {
			f.list[i].Policy = pol
			return nil
		}
	}
	f.list = append(f.list, Product{Key: item, Policy: pol})
	return nil
}

// A substitute is pinned and a policy set from the Products tab, by
// guarded requests like Forget.
func TestProductsPinAndPolicy(t *testing.T) {
	f := &fakeProducts{list: []Product{{Key: "butter", Name: "Lactantia Salted Butter", Substitute: &Substitute{Name: "Becel Margarine", ByHousehold: true, InARow: 1}}}}
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, Products: f})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string, hdr map[string]string) int {
		r := httptest.NewRequest("POST", path, strings.NewReader(body))
		r.Host = "localhost:8099"
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w.Code
	}
	ok := map[string]string{ActionHeader: "1"}
	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
		code             int
	}{
		{"pin from another site", "/api/products/pin", `{"key":"butter"}`, nil, http.StatusForbidden},
		{"pin without a substitute", "/api/products/pin", `{"key":"milk"}`, ok, http.StatusNotFound},
		{"policy without a policy", "/api/products/policy", `{"key":"butter"}`, ok, http.StatusBadRequest},
		{"policy from another site", "/api/products/policy", `{"key":"butter","policy":{"no_substitute":true}}`, nil, http.StatusForbidden},
		{"policy", "/api/products/policy", `{"key":"butter","policy":{"no_substitute":true,"always_ask":true}}`, ok, http.StatusNoContent},
		{"pin", "/api/products/pin", `{"key":"butter"}`, ok, http.StatusNoContent},
	} {
		if code := post(tc.path, tc.body, tc.hdr); code != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.code)
		}
	}
	w := do(p, "GET", "/api/products", "", nil)
	var list []Product
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list) != 1 {
		t.Fatalf("products: %q (%v)", w.Body.String(), err)
	}
	if b := list[0]; b.Name != "Becel Margarine" || !b.Pinned || b.Substitute != nil || b.Policy != (shoppinglist.Policy{NoSub: true, Ask: true}) {
		t.Errorf("butter after pin and policy: %+v", b)
	}
}

// Remembered products are listed; forgetting one is a guarded request
// like Start and Stop.
func TestProducts(t *testing.T) {
	f := &fakeProducts{list: []Product{{Key: "milk", Name: "Natrel 2% Milk"}, {Key: "butter", Name: "Greek yogurt", Pinned: true}}}
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, Products: f})
	if err != nil {
		t.Fatal(err)
	}
	w := do(p, "GET", "/api/products", "", nil)
	var list []Product
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list) != 2 || !list[1].Pinned {
		t.Fatalf("products: %q (%v)", w.Body.String(), err)
	}
	post := func(body string, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/products/forget", strings.NewReader(body))
		r.Host = "localhost:8099"
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w
	}
	ok := map[string]string{ActionHeader: "1"}
	for _, tc := range []struct {
		name, body string
		hdr        map[string]string
		code       int
	}{
		{"a form of another site", `{"key":"milk"}`, nil, http.StatusForbidden},
		{"a script of another site", `{"key":"milk"}`, map[string]string{ActionHeader: "1", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"not JSON", `key=milk`, ok, http.StatusBadRequest},
		{"no key", `{}`, ok, http.StatusBadRequest},
		{"unknown", `{"key":"bread"}`, ok, http.StatusNotFound},
		{"the page", `{"key":"milk"}`, ok, http.StatusNoContent},
	} {
		if w := post(tc.body, tc.hdr); w.Code != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, w.Code, w.Body.String(), tc.code)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.forgot) != 1 || f.forgot[0] != "milk" || len(f.list) != 1 {
		t.Fatalf("forgot %v, left %v", f.forgot, f.list)
	}
}

// The preview says what a run would shop and skip; Retry asks for the
// tagged items too, and its start carries retry_tagged.
func TestPreviewAndRetry(t *testing.T) {
	var retries []bool
	c := &control{}
	items := []shoppinglist.Item{
		{ID: "1", Name: "2x milk", Product: "milk", Quantity: 2, Status: shoppinglist.StatusNeedsAction},
		{ID: "2", Name: "Milk", Product: "Milk", Quantity: 1, Status: shoppinglist.StatusNeedsAction},
		{ID: "3", Name: "dragon fruit", Product: "dragon fruit", Quantity: 1, Status: shoppinglist.StatusNeedsAction, Tags: []string{"#404"}},
		{ID: "4", Name: "eggs", Product: "eggs", Quantity: 1, Status: shoppinglist.StatusCompleted},
	}
	fail := false
	p, err := New(Options{Start: c.start, Stop: c.stop, Preview: func(_ context.Context, retry bool) (shoppinglist.Plan, error) {
		retries = append(retries, retry)
		if fail {
			return shoppinglist.Plan{}, errors.New("Home Assistant is restarting")
		}
		if retry {
			return shoppinglist.PlanRetry(items), nil // as the app's Preview
		}
		return shoppinglist.PlanRun(items, false), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Name, Product, Of string
		Quantity          int
	}
	var plan struct {
		ToShop     []line `json:"to_shop"`
		Tagged     []line `json:"tagged"`
		Duplicates []line `json:"duplicates"`
		Completed  int    `json:"completed"`
		Untagged   int    `json:"untagged"`
	}
	w := do(p, "GET", "/api/preview", "", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.ToShop) != 1 || plan.ToShop[0].Quantity != 2 || len(plan.Tagged) != 1 || len(plan.Duplicates) != 1 || plan.Duplicates[0].Of != "2x milk" || plan.Completed != 1 {
		t.Fatalf("preview %s", w.Body.String())
	}
	w = do(p, "GET", "/api/preview?retry=1", "", nil)
	plan.Untagged = 0
	if err := json.Unmarshal(w.Body.Bytes(), &plan); err != nil || len(plan.ToShop) != 1 || plan.ToShop[0].Name != "dragon fruit" ||
		plan.Untagged != 2 || plan.Completed != 1 {
		t.Fatalf("retry preview (only the tagged item; the two open untagged ones counted as left out) %s", w.Body.String())
	}
	if len(retries) != 2 || retries[0] || !retries[1] {
		t.Fatalf("retries %v", retries)
	}
	fail = true
	if w := do(p, "GET", "/api/preview", "", nil); w.Code != http.StatusBadGateway || !strings.Contains(w.Body.String(), "restarting") {
		t.Fatalf("a list that cannot be read: %d %q", w.Code, w.Body.String())
	}
	// Retry failed starts a run that shops the tagged items.
	post := func(body string) int {
		r := httptest.NewRequest("POST", "/api/start", strings.NewReader(body))
		r.Host = "localhost:8099"
		r.Header.Set(ActionHeader, "1")
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w.Code
	}
	if code := post(`{"retry_tagged":true}`); code != http.StatusNoContent {
		t.Fatalf("retry: %d", code)
	}
	if code := post(`{"retry_tagged":"yes"}`); code != http.StatusBadRequest {
		t.Fatalf("a bad start body: %d", code)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.starts) != 1 || c.starts[0].Source != "panel" || !c.starts[0].RetryFailed {
		t.Fatalf("starts %+v", c.starts)
	}
	// Without a preview the page starts at once.
	bare, _ := newPanel(t, false)
	if w := do(bare, "GET", "/api/preview", "", nil); w.Code != http.StatusNotFound {
		t.Fatalf("preview without a list: %d", w.Code)
	}
}
