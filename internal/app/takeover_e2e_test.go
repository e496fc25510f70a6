package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/takeover"
)

// TestSignInChallengeTakeOverRun is issue 42's whole flow, offline: with
// the demo's sign-in challenge on, the run stops at sign-in and the panel
// lists the tab in needs_person; following the panel's /api/guide for
// "sign in" — clicking the centre of each box and typing what it says —
// signs in; /done resumes the run, which adds the item.
func TestSignInChallengeTakeOverRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t, "bananas")
	e.cfg.DemoSignInChallenge = true
	reg := takeover.New(e.deps.Logger)
	offered := make(chan takeover.Need, 1)
	reg.OnOffer = func(n takeover.Need) { offered <- n }
	e.deps.Takeover = reg
	p, err := panel.New(panel.Options{Takeover: reg,
		Start: func(context.Context, runstatus.Request) error { return nil },
		Stop:  func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	post := func(path string, body any, out any) error {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(b))
		req.Header.Set(panel.ActionHeader, "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			var m bytes.Buffer
			_, _ = m.ReadFrom(resp.Body)
			return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, m.String())
		}
		if out != nil {
			return json.NewDecoder(resp.Body).Decode(out)
		}
		return nil
	}

	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()
	person := make(chan error, 1)
	var code string
	go func() {
		person <- func() error {
			var n takeover.Need
			select {
			case n = <-offered:
			case <-ctx.Done():
				return ctx.Err()
			}
			resp, err := http.Get(srv.URL + "/api/state")
			if err != nil {
				return err
			}
			var st struct {
				NeedsPerson []takeover.Need `json:"needs_person"`
			}
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil || len(st.NeedsPerson) != 1 || st.NeedsPerson[0].Reason != takeover.ReasonSignIn {
				return fmt.Errorf("needs_person = %+v (%v)", st.NeedsPerson, err)
			}
			typeWhat := regexp.MustCompile(`type (\d{6})\.`)
			tab, err := reg.Tab(n.Tab)
			if err != nil {
				return err
			}
			for i := 0; i < 20; i++ {
				var step struct {
					Task string `json:"task"`
					Box  []int  `json:"box"`
					Done bool   `json:"done"`
				}
				if err := post("/api/guide", map[string]string{"tab": n.Tab, "goal": "sign in"}, &step); err != nil {
					return err
				}
				if step.Done {
					return post("/api/takeover/"+n.Tab+"/done", map[string]any{}, nil)
				}
				if len(step.Box) != 4 {
					return fmt.Errorf("step %q without a box", step.Task)
				}
				if err := post("/api/takeover/"+n.Tab+"/click", map[string]int{"x": (step.Box[0] + step.Box[2]) / 2, "y": (step.Box[1] + step.Box[3]) / 2}, nil); err != nil {
					return err
				}
				if m := typeWhat.FindStringSubmatch(step.Task); m != nil {
					code = m[1]
					if err := post("/api/takeover/"+n.Tab+"/type", map[string]string{"text": code}, nil); err != nil {
						return err
					}
				}
				// Let a navigation the click started finish before the next look.
				_, _ = tab.Evaluate(ctx, `() => new Promise(r => document.readyState === 'complete' ? r(true) : addEventListener('load', () => r(true)))`, nil)
			}
			return fmt.Errorf("the guide did not finish in 20 steps")
		}()
	}()
	res, err := e.shop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-person; err != nil {
		t.Fatalf("the person: %v", err)
	}
	if code == "" {
		t.Fatal("the guide never said what to type")
	}
	if got := outcomes(res.Summary); got["bananas"] != "added" {
		t.Fatalf("outcomes = %v", got)
	}
}
