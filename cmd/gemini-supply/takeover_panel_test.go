package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
)

// TestTakeOverInThePanelDuringServe is issue 42's "Done when" with the
// panel driven in real Chromium: with the demo's sign-in challenge on, a
// run started from the panel's Start stops at sign-in and the panel shows
// the Needs you card; the person presses Show me, reads the box and the
// sentence, taps the box's centre on the card's screen image, types in the
// card's text field what the sentence says, and again until the guide says
// the goal is done; Done hands the tab back, the card goes away and the
// run finishes with the items in the demo store's cart.
func TestTakeOverInThePanelDuringServe(t *testing.T) {
	browser := testbrowser.Launch(t)
	isolate(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yaml")
	if err := os.WriteFile(list, []byte("items:\n  - name: bananas\n  - name: 2x eggs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	base, errb, cancel, done := serveUI(t, map[string]string{
		"GEMINI_SUPPLY_STORE": "demo", "GEMINI_SUPPLY_GEMINI_MODEL": "scripted", "GEMINI_SUPPLY_SHOPPING_LIST": list,
		"GEMINI_SUPPLY_DATA_DIR": data, "GEMINI_SUPPLY_BROWSER_PROFILE_DIR": filepath.Join(dir, "profile"),
		"GEMINI_SUPPLY_CONCURRENCY": "1", "GEMINI_SUPPLY_DEMO_SIGNIN_CHALLENGE": "1",
		"GEMINI_SUPPLY_HOME_ASSISTANT_URL": "", "GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN": "", "GEMINI_SUPPLY_MQTT_BROKER": "",
	}, 90*time.Second)
	defer func() {
		cancel()
		<-done
	}()
	logs := func() string { return errb.String() }

	page, err := browser.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 1280, Height: 900}})
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(60000)
	if _, err := page.Goto(base); err != nil {
		t.Fatal(err)
	}
	p := pageHelper{t: t, page: page, logs: logs}
	lang := "en"
	if v, err := page.Evaluate(`() => document.documentElement.lang`); err == nil && v != "" {
		lang = v.(string)
	}
	if lang != "en" {
		p.lang = lang
	}
	say := func(key string, args ...any) string { return messages.For(lang).T("panel."+key, args...) }
	p.until("the page to load its script", func() bool { return p.text("#state") == say("no_run") })

	p.click("#start")
	p.until("the preview", func() bool { return p.visible("#preview") })
	p.click("#preview-go")

	// The run stops at sign-in: the Needs you card, with the tab's screen.
	p.until("the Needs you card", func() bool { return p.visible("#needs") })
	if got := p.text("#needs-reason"); got != say("needs_reason_sign_in_challenge") {
		t.Fatalf("the card says %q", got)
	}
	shown := func() bool {
		v, _ := page.Evaluate(`() => { const i = document.getElementById('needs-screen'); return i.complete && i.naturalWidth > 0; }`)
		return v == true
	}
	p.until("the tab's screen on the card", shown)
	p.screenshot("panel-needs-you.png")

	// idle: no input or guide step of the card on its way.
	idle := func() bool {
		v, _ := page.Evaluate(`() => document.getElementById('needs').getAttribute('aria-busy') !== 'true'`)
		return v == true
	}
	typeWhat := regexp.MustCompile(`(\d{6})`)
	doneText, _, _ := strings.Cut(say("needs_guide_done", "task", "\x00"), "\x00")
	finished, code := false, ""
	for i := 0; i < 12 && !finished; i++ {
		if _, err := page.Evaluate(`() => { document.getElementById('needs-step').textContent = ''; }`); err != nil {
			t.Fatal(err)
		}
		p.click("#needs-show")
		p.until("the guide's step", func() bool { return idle() && p.text("#needs-step") != "" })
		sentence := p.text("#needs-step")
		t.Logf("step %d: %s", i, sentence)
		if strings.HasPrefix(sentence, doneText) {
			finished = true
			break
		}
		if !p.visible("#needs-box") {
			t.Fatalf("step %d has no box: %q", i, sentence)
		}
		// Where the box is drawn on the screen image: tap its centre (the
		// screen scrolled to the middle of the window, below the app bar).
		if _, err := page.Evaluate(`() => document.getElementById('needs-screen-wrap').scrollIntoView({block: 'center'})`); err != nil {
			t.Fatal(err)
		}
		bb, err := page.Locator("#needs-box").BoundingBox()
		if err != nil || bb == nil {
			t.Fatalf("the box: %v", err)
		}
		x, y := bb.X+bb.Width/2, bb.Y+bb.Height/2
		if v, _ := page.Evaluate(`([x, y]) => { const e = document.elementFromPoint(x, y); return e ? e.id : ''; }`, []float64{x, y}); v != "needs-screen" {
			t.Fatalf("the box's centre is on %q, not on the tab's screen", v)
		}
		if err := page.Mouse().Click(x, y); err != nil {
			t.Fatal(err)
		}
		p.until("the tap to be done", idle)
		if m := typeWhat.FindStringSubmatch(sentence); m != nil {
			code = m[1]
			if err := page.Locator("#needs-text").Fill(m[1]); err != nil {
				t.Fatal(err)
			}
			p.click("#needs-send")
			p.until("the text to be typed", idle)
		}
	}
	if !finished {
		t.Fatalf("the guide did not finish in 12 steps\n%s", logs())
	}
	p.click("#needs-done")
	p.until("the card to go once the tab is handed back", func() bool { return !p.visible("#needs") })

	// The run goes on and adds the items to the demo store's cart.
	p.until("the run to finish", func() bool {
		resp, err := http.Get(base + "api/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st struct {
			State runstatus.State `json:"state"`
		}
		return json.NewDecoder(resp.Body).Decode(&st) == nil && st.State == runstatus.StateReviewReady
	})
	raw, err := os.ReadFile(filepath.Join(data, "demo-cart.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cart []demostore.CartLine
	if err := json.Unmarshal(raw, &cart); err != nil {
		t.Fatal(err)
	}
	qty := map[string]int{}
	for _, l := range cart {
		qty[l.ProductID] = l.Quantity
	}
	if len(cart) != 2 || qty["eggs-large-12"] != 2 {
		t.Fatalf("the demo store's cart: %s\n%s", raw, logs())
	}
	if !strings.Contains(logs(), "sign-in challenge passed") {
		t.Fatal("the demo store never saw the challenge passed")
	}

	// History shows what the person did: the taps, the code typed as its
	// length (never the code), the guide's steps, the hand-back.
	if err := page.Locator("#tab-live").Focus(); err != nil {
		t.Fatal(err)
	}
	if err := page.Keyboard().Press("ArrowRight"); err != nil {
		t.Fatal(err)
	}
	p.until("the run in the history", func() bool { return p.count("#runs li[data-run] button") == 1 })
	p.click("#runs li[data-run] button")
	p.until("the take-over in the run", func() bool { return p.count("#run-body .takeover-log li") > 0 })
	got := p.text("#run-body .takeover-log")
	for _, want := range []string{say("takeover_offered_sign_in"), say("takeover_type_other", "n", 6), say("takeover_guide", "n", 1), say("takeover_done_signed_in")} {
		if !strings.Contains(got, want) {
			t.Errorf("History's take-over lacks %q: %q", want, got)
		}
	}
	if code != "" && strings.Contains(got, code) {
		t.Errorf("History shows the typed code: %q", got)
	}
	p.screenshot("panel-history-takeover.png")
}
