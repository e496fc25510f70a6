package panel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/testbrowser"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// fakeTakeover holds two tabs, "sign-in" and an item's "item-1", and
// records the inputs it gets.
type fakeTakeover struct {
	shot   []byte
	refuse *RefusedError           // every click and key is refused so, when set
	needs  []runstatus.NeedsPerson // nil: the sign-in
	noted  chan string             // each input as it comes, when set
	mu     sync.Mutex
	inputs []string
}

func (f *fakeTakeover) tab(tab string) error {
	if tab != "sign-in" && tab != "item-1" {
		return fmt.Errorf("%w: %s", ErrNotHeld, tab)
	}
	return nil
}
func (f *fakeTakeover) note(tab, s string) {
	if f.tab(tab) == nil {
		f.mu.Lock()
		f.inputs = append(f.inputs, s)
		f.mu.Unlock()
		if f.noted != nil {
			f.noted <- s
		}
	}
}
func (f *fakeTakeover) NeedsPersons() []runstatus.NeedsPerson {
	if f.needs != nil {
		return f.needs
	}
	return []runstatus.NeedsPerson{{Tab: "sign-in", Reason: "sign_in_challenge"}}
}
func (f *fakeTakeover) Screenshot(_ context.Context, tab string) ([]byte, error) {
	if f.shot != nil {
		return f.shot, f.tab(tab)
	}
	return []byte{0xff, 0xd8, 0xff}, f.tab(tab)
}
func (f *fakeTakeover) Click(_ context.Context, tab string, x, y int) error {
	f.note(tab, fmt.Sprintf("click %d,%d", x, y))
	if f.refuse != nil {
		return f.refuse
	}
	return f.tab(tab)
}
func (f *fakeTakeover) Type(_ context.Context, tab, text string) error {
	f.note(tab, "type "+text)
	return f.tab(tab)
}
func (f *fakeTakeover) Key(_ context.Context, tab, key string) error {
	f.note(tab, "key "+key)
	if f.refuse != nil {
		return f.refuse
	}
	return f.tab(tab)
}
func (f *fakeTakeover) Done(_ context.Context, tab, decision string) (HandedBack, error) {
	if tab == "item-1" {
		f.note(tab, "done item-1 "+decision)
		return HandedBack{Item: "bananas", Outcome: "skipped"}, nil
	}
	f.note(tab, "done")
	return HandedBack{SignedIn: true}, f.tab(tab)
}
func (f *fakeTakeover) Request(_ context.Context, tab string) error {
	f.note(tab, "request "+tab)
	return f.tab(tab)
}
func (f *fakeTakeover) Guide(_ context.Context, tab, goal string) (GuideStep, error) {
	return GuideStep{Task: "Tick “I'm not a robot”.", Description: "The person wants to " + goal + ".", Box: [4]int{1, 2, 3, 4}}, f.tab(tab)
}

// The take-over API: needs_person in the state; inputs only with the
// panel's header and from its origin; coordinates checked; an unknown tab
// is 404; typed text reaches the tab but the log holds only its length.
func TestTakeoverAPI(t *testing.T) {
	f := &fakeTakeover{}
	var logs bytes.Buffer
	p, err := New(Options{Start: func(context.Context, runstatus.Request) error { return nil }, Stop: func(context.Context, string) error { return nil },
		Takeover: f, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	send := func(path, body string, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Host = "127.0.0.1:8099"
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w
	}
	ok := map[string]string{ActionHeader: "1"}
	var st struct {
		NeedsPerson []runstatus.NeedsPerson `json:"needs_person"`
	}
	if w := do(p, http.MethodGet, "/api/state", "", nil); json.Unmarshal(w.Body.Bytes(), &st) != nil || len(st.NeedsPerson) != 1 || st.NeedsPerson[0].Tab != "sign-in" {
		t.Fatalf("state: %s", w.Body)
	}
	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
		want             int
	}{
		{"no header", "/api/takeover/sign-in/click", `{"x":1,"y":1}`, nil, http.StatusForbidden},
		{"another origin", "/api/takeover/sign-in/type", `{"text":"x"}`, map[string]string{ActionHeader: "1", "Origin": "https://evil.example"}, http.StatusForbidden},
		{"cross-site", "/api/takeover/sign-in/done", ``, map[string]string{ActionHeader: "1", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"off the screen", "/api/takeover/sign-in/click", `{"x":1000,"y":1}`, ok, http.StatusBadRequest},
		{"no y", "/api/takeover/sign-in/click", `{"x":10}`, ok, http.StatusBadRequest},
		{"unknown tab", "/api/takeover/item-9/key", `{"key":"Enter"}`, ok, http.StatusNotFound},
		{"click", "/api/takeover/sign-in/click", `{"x":500,"y":999}`, ok, http.StatusOK},
		{"type", "/api/takeover/sign-in/type", `{"text":"hunter2-secret"}`, ok, http.StatusOK},
		{"key", "/api/takeover/sign-in/key", `{"key":"Enter"}`, ok, http.StatusOK},
		{"guide without a goal", "/api/guide", `{"tab":"sign-in"}`, ok, http.StatusBadRequest},
		{"guide", "/api/guide", `{"tab":"sign-in","goal":"sign in"}`, ok, http.StatusOK},
		{"done", "/api/takeover/sign-in/done", ``, ok, http.StatusOK},
		{"request an unknown item's tab", "/api/takeover/item-9/request", ``, ok, http.StatusNotFound},
		{"request without the header", "/api/takeover/item-1/request", ``, nil, http.StatusForbidden},
		{"request", "/api/takeover/item-1/request", ``, ok, http.StatusOK},
		{"a decision that is not JSON", "/api/takeover/item-1/done", `skip`, ok, http.StatusBadRequest},
		{"done with a decision", "/api/takeover/item-1/done", `{"outcome":"skip"}`, ok, http.StatusOK},
	} {
		if w := send(tc.path, tc.body, tc.hdr); w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
	}
	if got := strings.Join(f.inputs, "|"); got != "click 500,999|type hunter2-secret|key Enter|done|request item-1|done item-1 skip" {
		t.Errorf("inputs = %s", got)
	}
	if strings.Contains(logs.String(), "hunter2") || !strings.Contains(logs.String(), "chars=14") {
		t.Errorf("the log must hold the typed text's length only:\n%s", logs.String())
	}
	if w := do(p, http.MethodGet, "/api/takeover/sign-in/screen", "", nil); w.Code != 200 || w.Header().Get("Content-Type") != "image/jpeg" {
		t.Errorf("screen: %d %s", w.Code, w.Header())
	}
}

func (f *fakeTakeover) got() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.inputs, "|")
}

// The "Needs you" card in Chromium, in French: it appears with the
// reason; a tap on the screen clicks the tab there (its 0–999
// coordinates), the text field types, Show me draws the guide's box with
// its sentence, Done hands the tab back.
func TestNeedsYouCardInChromium(t *testing.T) {
	browser := testbrowser.Launch(t)
	f := &fakeTakeover{shot: screenshot(t, 1000, 500)}
	cat := messages.For("fr")
	p, err := New(Options{Start: func(context.Context, runstatus.Request) error { return nil }, Stop: func(context.Context, string) error { return nil },
		Takeover: f, Messages: cat})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	bctx, err := browser.NewContext(playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: 1280, Height: 900}})
	if err != nil {
		t.Fatal(err)
	}
	defer bctx.Close()
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(60000)
	if _, err := page.Goto(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#needs-reason").Filter(playwright.LocatorFilterOptions{HasText: cat.T("panel.needs_reason_sign_in_challenge")}).WaitFor(); err != nil {
		t.Fatalf("the card does not say why: %v", err)
	}
	img := page.Locator("#needs-screen")
	if _, err := page.Evaluate(screenShown); err != nil {
		t.Fatal(err)
	}
	box, err := img.BoundingBox()
	if err != nil || box == nil {
		t.Fatalf("no screen: %v", err)
	}
	if err := img.Click(playwright.LocatorClickOptions{Position: &playwright.Position{X: box.Width / 4, Y: box.Height / 2}}); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#needs-text").Fill("123456"); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#needs-send").Click(); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#needs-show").Click(); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#needs-step").Filter(playwright.LocatorFilterOptions{HasText: "not a robot"}).WaitFor(); err != nil {
		t.Fatal(err)
	}
	if v, _ := page.Locator("#needs-box").IsVisible(); !v {
		t.Error("the guide's box is not drawn")
	}
	if err := page.Locator("#needs-done").Click(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute) // bounds a hang only
	for !strings.HasSuffix(f.got(), "done") {
		if time.Now().After(deadline) {
			t.Fatalf("inputs = %s", f.got())
		}
		time.Sleep(50 * time.Millisecond)
	}
	in := strings.Split(f.got(), "|")
	var x, y int
	if len(in) == 3 {
		_, _ = fmt.Sscanf(in[0], "click %d,%d", &x, &y)
	}
	if len(in) != 3 || x < 240 || x > 260 || y < 490 || y > 510 || in[1] != "type 123456" {
		t.Fatalf("inputs = %v", in)
	}
}

// A tap or a key the store policy refuses (a checkout link on the tab) is
// answered 403 with the policy's reason, and the card says so, in English
// and in French; the key buttons send their key.
func TestNeedsYouCardShowsARefusal(t *testing.T) {
	browser := testbrowser.Launch(t)
	const reason = "pages under /checkout may not be opened by the agent (the agent never orders)"
	for _, lang := range []string{"en", "fr"} {
		f := &fakeTakeover{shot: screenshot(t, 1000, 500), refuse: &RefusedError{Rule: "order", Reason: reason}}
		cat := messages.For(lang)
		p, err := New(Options{Start: func(context.Context, runstatus.Request) error { return nil }, Stop: func(context.Context, string) error { return nil },
			Takeover: f, Messages: cat})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(p)
		page, err := browser.NewPage()
		if err != nil {
			t.Fatal(err)
		}
		page.SetDefaultTimeout(60000)
		if _, err := page.Goto(srv.URL + "/"); err != nil {
			t.Fatal(err)
		}
		if _, err := page.Evaluate(screenShown); err != nil {
			t.Fatal(err)
		}
		want := cat.T("panel.needs_refused", "reason", reason)
		for _, act := range []func() error{
			func() error { return page.Locator("#needs-screen").Click() },
			func() error { return page.Locator(`#needs-keys button[data-key="Enter"]`).Click() },
		} {
			if _, err := page.Evaluate(`() => { document.getElementById('needs-refused').hidden = true; }`); err != nil {
				t.Fatal(err)
			}
			if err := act(); err != nil {
				t.Fatal(err)
			}
			if err := page.Locator("#needs-refused").Filter(playwright.LocatorFilterOptions{HasText: want}).WaitFor(); err != nil {
				t.Fatalf("%s: the card does not say %q: %v", lang, want, err)
			}
		}
		if got := f.got(); !strings.HasSuffix(got, "|key Enter") {
			t.Errorf("%s: inputs %s", lang, got)
		}
		_ = page.Close()
		srv.Close()
	}
}

// screenShown waits, in the page, for the card's screen image to have
// loaded (its load event; bounded). page.WaitForFunction polls through an
// eval that the panel's CSP (no 'unsafe-eval') refuses when the first
// check is false; a function evaluated through the protocol is not.
const screenShown = `() => new Promise((resolve, reject) => {
  const img = document.getElementById('needs-screen');
  if (img.complete && img.naturalWidth > 0) return resolve(true);
  img.addEventListener('load', () => img.naturalWidth > 0 && resolve(true));
  setTimeout(() => reject(new Error('the card\'s screen did not load in 60 s')), 60000);
})`
