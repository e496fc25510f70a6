package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

var typeWhat = regexp.MustCompile(`type (\d{6})`)

// TestTakeOverSignInChallenge: with the demo's sign-in challenge on, the
// run stops at sign-in with needs_person in the panel's state instead of
// failing; following /api/guide for "sign in" — clicking the centre of
// each box and typing what it says — signs in; /done resumes the run and
// its items are added. The take-over never reached the checkout and the
// typed code is in no log line, nor are the credentials.
func TestTakeOverSignInChallenge(t *testing.T) {
	takeOverSignIn(t, func(_ *testing.T, log *slog.Logger) *shop.Desk { return NewDesk(log) })
}

// takeOverSignIn is TestTakeOverSignInChallenge with the Desk newDesk
// returns (its guide offline or Gemini's).
func takeOverSignIn(t *testing.T, newDesk func(*testing.T, *slog.Logger) *shop.Desk) shop.Result {
	t.Setenv("GEMINI_SUPPLY_DEMO_SIGNIN_CHALLENGE", "1")
	e := newE2E(t, "bananas", "2x eggs")
	logs := &syncbuf.Buffer{}
	e.deps.Logger = debugLogger(logs)
	t.Cleanup(func() {
		if t.Failed() {
			all := logs.String()
			t.Logf("the run's log (tail):\n%s", all[max(0, len(all)-20000):])
		}
	})
	e.cfg.TraceDir = filepath.Join(t.TempDir(), "traces")
	desk := newDesk(t, e.deps.Logger)
	e.deps.Desk = desk
	// The phones of ha_notify get "Needs you: sign in", a tap opening the panel.
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer hcancel()
	f, ha := phoneOnFakeHA(hctx, t, &e.cfg)
	const svc = phoneService
	push, err := NeedsYouOnPhones(e.cfg, ha, e.deps.Logger)
	if err != nil || push == nil {
		t.Fatalf("NeedsYouOnPhones = %v, %v", push != nil, err)
	}
	desk.OnNeedsPerson(push)
	p, err := panel.New(panel.Options{Logger: e.deps.Logger, Takeover: PanelTakeover(desk), History: PanelHistory(e.cfg),
		Start: func(context.Context, runstatus.Request) error { return nil }, Stop: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	post := func(path string, body any) (int, map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(b))
		req.Header.Set(panel.ActionHeader, "1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		if resp.StatusCode != http.StatusOK {
			t.Logf("POST %s: %d %s", path, resp.StatusCode, raw)
		}
		return resp.StatusCode, m
	}

	r := e.start()
	type outcome struct {
		res shop.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := e.shop(context.Background())
		done <- outcome{res, err}
	}()

	// The run stops at sign-in: needs_person in /api/state.
	deadline := time.Now().Add(5 * time.Minute) // bounds a hang only
	var needs []runstatus.NeedsPerson
	for len(needs) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no needs_person in /api/state")
		}
		select {
		case o := <-done:
			t.Fatalf("the run ended before a person signed in: %v", o.err)
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := http.Get(srv.URL + "/api/state")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			NeedsPerson []runstatus.NeedsPerson `json:"needs_person"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		needs = st.NeedsPerson
	}
	if needs[0].Tab != "sign-in" || needs[0].Reason != "sign_in_challenge" {
		t.Fatalf("needs_person = %+v", needs)
	}
	if resp, err := http.Get(srv.URL + "/api/takeover/sign-in/screen"); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("screen: %v %v", resp, err)
	}
	// Without the panel's header an input is refused.
	if resp, err := http.Post(srv.URL+"/api/takeover/sign-in/click", "application/json", strings.NewReader(`{"x":1,"y":1}`)); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a click without the panel's header: %v %v", resp, err)
	}

	// The push reached the phone (the run waits on: it needs no answer).
	testwait.Until(t, "the Needs you push", time.Minute, func() bool { return len(f.ShownOnPhone(svc)) > 0 })
	if n := f.ShownOnPhone(svc)[homeassistant.NeedsYouTag]; n.Title != "Needs you: sign in" || n.Data["url"] != AddOnPanelPath || n.Data["clickAction"] != AddOnPanelPath || n.Tag() != homeassistant.NeedsYouTag {
		t.Fatalf("the push: %+v", n)
	}

	_, pass := r.DemoStore().Credentials()
	typed := ""
	for i := 0; ; i++ {
		if i > 12 {
			t.Fatal("the guide did not finish in 12 steps")
		}
		code, step := post("/api/guide", map[string]string{"tab": "sign-in", "goal": "sign in"})
		if code != 200 {
			t.Fatalf("guide step %d: %d", i, code)
		}
		t.Logf("guide step %d: %v %v", i, step["task"], step["box"])
		if step["done"] == true {
			break
		}
		box, _ := step["box"].([]any)
		if len(box) != 4 {
			t.Fatalf("step %d has no box: %v", i, step)
		}
		x := int((box[0].(float64) + box[2].(float64)) / 2)
		y := int((box[1].(float64) + box[3].(float64)) / 2)
		if c, _ := post("/api/takeover/sign-in/click", map[string]int{"x": x, "y": y}); c != 200 {
			t.Fatalf("click %d,%d: %d", x, y, c)
		}
		if m := typeWhat.FindStringSubmatch(step["task"].(string)); m != nil {
			// A person may type a password too (here by mistake, then
			// erased): it is a secret like the code.
			if c, _ := post("/api/takeover/sign-in/type", map[string]string{"text": pass}); c != 200 {
				t.Fatalf("type the password: %d", c)
			}
			for range pass {
				if c, _ := post("/api/takeover/sign-in/key", map[string]string{"key": "Backspace"}); c != 200 {
					t.Fatalf("Backspace: %d", c)
				}
			}
			typed = m[1]
			if c, _ := post("/api/takeover/sign-in/type", map[string]string{"text": typed}); c != 200 {
				t.Fatalf("type: %d", c)
			}
		}
	}
	if typed == "" {
		t.Fatal("the guide never said what to type")
	}
	if c, m := post("/api/takeover/sign-in/done", nil); c != 200 || m["signed_in"] != true {
		t.Fatalf("done: %d %v", c, m)
	}
	o := <-done
	if o.err != nil {
		t.Fatalf("the run: %v", o.err)
	}
	if c := o.res.Summary.Counts(); c.Added != 2 {
		t.Fatalf("counts %+v, want 2 added:\n%s", c, o.res.Summary.Markdown())
	}
	for _, it := range o.res.Summary.Items {
		if it.Outcome != report.OutcomeAdded {
			t.Errorf("%s: %s", it.ItemName, it.Outcome)
		}
	}
	if n := r.DemoStore().CheckoutHits(); n != 0 {
		t.Errorf("checkout hits %d", n)
	}
	// Neither the password nor the code the person typed is in the log,
	// the journal, a trace file or the History API. Digits alone may occur
	// in a duration: the code as a number of its own.
	code := regexp.MustCompile(`(^|[^0-9.])` + typed + `([^0-9]|$)`)
	leaks := func(what string, b []byte) {
		t.Helper()
		if code.Match(b) || bytes.Contains(b, []byte(pass)) {
			t.Errorf("a typed secret is in %s", what)
		}
	}
	all := logs.String()
	leaks("the log", []byte(all))
	files := 0
	for _, dir := range []string{e.cfg.TraceDir, e.cfg.DataDir} {
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.HasSuffix(path, ".png") || strings.HasSuffix(path, ".jpg") {
				return nil
			}
			if b, rerr := os.ReadFile(path); rerr == nil {
				files++
				leaks(path, b)
			}
			return nil
		})
	}
	if files < 2 {
		t.Errorf("only %d journal and trace files to search", files)
	}
	if !strings.Contains(all, fmt.Sprintf("chars=%d", len(typed))) || !strings.Contains(all, fmt.Sprintf("chars=%d", len(pass))) {
		t.Error("the typed input is not logged by its length")
	}
	// History shows every input and guide step, typed text as its length.
	resp, err := http.Get(srv.URL + "/api/runs/" + filepath.Base(strings.TrimSuffix(o.res.JournalPath, ".json")))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	leaks("the History API", raw)
	var d panel.RunDetail
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("History: %v\n%s", err, raw)
	}
	kinds := map[string]int{}
	for _, st := range d.TakeOver {
		kinds[st.Kind]++
		if st.Kind == "type" && st.Chars != len(typed) && st.Chars != len(pass) {
			t.Errorf("a typed input of %d characters", st.Chars)
		}
	}
	if kinds["offered"] != 1 || kinds["type"] != 2 || kinds["key"] != len(pass) || kinds["click"] < 5 || kinds["guide"] < 6 || kinds["done"] != 1 {
		t.Errorf("History's take-over: %v\n%s", kinds, raw)
	}
	return o.res
}
