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

	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
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
	e.deps.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Cleanup(func() {
		if t.Failed() {
			all := logs.String()
			t.Logf("the run's log (tail):\n%s", all[max(0, len(all)-20000):])
		}
	})
	desk := newDesk(t, e.deps.Logger)
	e.deps.Desk = desk
	p, err := panel.New(panel.Options{Logger: e.deps.Logger, Takeover: PanelTakeover(desk),
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
	_, pass := r.DemoStore().Credentials()
	all := logs.String()
	// Digits alone may occur in a duration: the code as a number of its own.
	if regexp.MustCompile(`(^|[^0-9.])`+typed+`([^0-9]|$)`).MatchString(all) || strings.Contains(all, pass) {
		t.Errorf("a typed secret is in the log")
	}
	// Nor in the traces.
	_ = filepath.WalkDir(e.cfg.TraceDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, rerr := os.ReadFile(path); rerr == nil && bytes.Contains(b, []byte(typed)) {
			t.Errorf("the typed code is in the trace %s", path)
		}
		return nil
	})
	if !strings.Contains(all, fmt.Sprintf("chars=%d", len(typed))) {
		t.Error("the typed input is not journaled by its length")
	}
	return o.res
}
