package panel

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestPageInChromium drives the page in real Chromium, behind a proxy that
// plays Home Assistant's ingress (a base path, the X-Ingress-Path header):
// the run's events show up live as state, progress and item cards; Stop
// is sent with the panel's header and reaches serve; keyboard works.
func TestPageInChromium(t *testing.T) {
	c := &control{}
	p, err := New(Options{Ingress: true, Start: c.start, Stop: c.stop})
	if err != nil {
		t.Fatal(err)
	}
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Consume(ctx, sub) }()

	// Home Assistant's ingress proxy: strips its path, names it in
	// X-Ingress-Path, and connects from the Supervisor's address.
	const ingress = "/api/hassio_ingress/t0k3n"
	ha := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/frontend" {
			// Home Assistant's frontend in a dark custom theme, with the
			// panel in its iframe, as the sidebar shows it.
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, `<!doctype html><html style="--primary-background-color: rgb(17, 34, 51); --primary-text-color: rgb(238, 238, 238)">`+
				`<body><iframe id="panel" src="`+ingress+`/"></iframe></body></html>`)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, ingress)
		if !ok {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = rest
		if r2.URL.Path == "" {
			r2.URL.Path = "/"
		}
		r2.RequestURI = ""
		r2.RemoteAddr = IngressProxy + ":50000"
		r2.Header.Set("X-Ingress-Path", ingress)
		p.ServeHTTP(w, r2)
	}))
	t.Cleanup(ha.Close)
	// Launched after ha: its cleanup runs first, closing the page's event
	// stream, which ha.Close waits for.
	browser := testbrowser.Launch(t)

	page, err := browser.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 390, Height: 844}, ColorScheme: playwright.ColorSchemeDark})
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(60000)
	if _, err := page.Goto(ha.URL + ingress + "/"); err != nil {
		t.Fatal(err)
	}
	text := func(sel string) string {
		s, err := page.Locator(sel).TextContent()
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		testwait.Until(t, what, 60*time.Second, cond)
	}
	until("the page to load its script and stream", func() bool { return text("#state") == "No run yet." })

	bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "r1", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 2}})
	bus.Publish(runstatus.Event{Kind: runstatus.KindItemFinished, RunID: "r1", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 2, Done: 1, Added: 1},
		Item: &report.ItemResult{ItemID: "a", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2% Milk", Replay: "replayed"}})
	until("the added item's card", func() bool {
		return strings.Contains(text(`#items li[data-item="milk"][data-outcome="added"]`), "Natrel 2% Milk")
	})
	if s := text("#counts"); !strings.Contains(s, "1 of 2 done") {
		t.Fatalf("counts %q", s)
	}
	// A choice, answered in the page: the option's button, as on Telegram.
	type result struct {
		a   choice.Answer
		err error
	}
	got := make(chan result, 1)
	recv := func() result {
		t.Helper()
		select {
		case r := <-got:
			return r
		case <-time.After(60 * time.Second): // bounds a hang only
			t.Fatal("no answer")
			return result{}
		}
	}
	go func() {
		a, err := p.Choose(ctx, choice.Question{ItemName: "butter", Context: "Every butter is out of stock.",
			Options: []choice.Option{{Name: "Salted Butter 454 g", Price: "$6.99"}, {Name: "Unsalted Butter 454 g", Price: "$6.49"}}})
		got <- result{a, err}
	}()
	if err := page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "2. Unsalted Butter 454 g — $6.49"}).Click(); err != nil {
		t.Fatal(err)
	}
	if r := recv(); r.err != nil || r.a.Kind != choice.KindProduct || r.a.Index != 1 {
		t.Fatalf("the panel's answer: %+v, %v", r.a, r.err)
	}
	until("the answered question to leave the page", func() bool {
		n, _ := page.Locator(".question").Count()
		return n == 0
	})
	// "Something else" with the text box, by keyboard.
	go func() {
		a, err := p.Choose(ctx, choice.Question{ItemName: "butter", Options: []choice.Option{{Name: "Salted Butter 454 g"}}})
		got <- result{a, err}
	}()
	box := page.GetByRole("textbox", playwright.PageGetByRoleOptions{Name: "Something else: what to look for instead"})
	if err := box.Fill("margarine"); err != nil {
		t.Fatal(err)
	}
	if err := box.Press("Enter"); err != nil {
		t.Fatal(err)
	}
	if r := recv(); r.err != nil || r.a.Kind != choice.KindCustom || r.a.Text != "margarine" {
		t.Fatalf("something else: %+v, %v", r.a, r.err)
	}
	// Another channel answers first: the question leaves the page, which
	// says where it was answered.
	qctx, closeQ := context.WithCancelCause(ctx)
	go func() {
		a, err := p.Confirm(qctx, "This page asks to accept new terms.", "click_at 500,500")
		got <- result{choice.Answer{Index: map[bool]int{true: 1}[a]}, err}
	}()
	until("the safety check in the page", func() bool {
		n, _ := page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Allow"}).Count()
		return n == 1
	})
	closeQ(&choice.Closed{By: "Telegram", Line: "✅ Allowed"})
	if r := recv(); r.err == nil {
		t.Fatal("a question closed elsewhere returned no error")
	}
	until("the note that Telegram answered", func() bool {
		n, _ := page.Locator(".question").Count()
		return n == 0 && strings.Contains(text("#message"), "answered on Telegram")
	})

	// Keyboard: Stop is reachable with Tab and pressed with Enter; it asks
	// first, with Cancel focused (Enter there stops nothing), then Stop.
	press := func(key string) {
		t.Helper()
		if err := page.Keyboard().Press(key); err != nil {
			t.Fatal(err)
		}
	}
	dialogOpen := func() bool { v, _ := page.Locator("#confirm").IsVisible(); return v }
	for _, keys := range [][]string{{"Enter"}, {"Tab", "Enter"}} { // Cancel, then Stop
		if err := page.Locator("#stop").Focus(); err != nil {
			t.Fatal(err)
		}
		press("Enter")
		until("the confirmation", dialogOpen)
		for _, k := range keys {
			press(k)
		}
		until("the confirmation to close", func() bool { return !dialogOpen() })
	}
	until("Stop to reach serve", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.stops) >= 1
	})
	c.mu.Lock()
	if len(c.stops) != 1 {
		t.Fatalf("%d stops: Cancel in the confirmation stopped the run", len(c.stops))
	}
	c.mu.Unlock()
	bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "r1", State: runstatus.StateCancelled, Progress: runstatus.Progress{Total: 2, Done: 1, Added: 1}})
	until("the stopped run", func() bool {
		dis, _ := page.Locator("#stop").IsDisabled()
		en, _ := page.Locator("#start").IsEnabled()
		return text("#state") == "Stopped" && dis && en
	})
	// A start refused because a run is going shows why.
	c.mu.Lock()
	c.busy = true
	c.mu.Unlock()
	if err := page.Locator("#start").Click(); err != nil {
		t.Fatal(err)
	}
	until("the refusal", func() bool { return strings.Contains(text("#notice"), "already in progress") })

	// Inside Home Assistant's frontend the page takes its theme, and
	// follows it when it changes.
	if _, err := page.Goto(ha.URL + "/frontend"); err != nil {
		t.Fatal(err)
	}
	frame := page.FrameLocator("#panel")
	style := func(prop string) string {
		v, err := frame.Locator("body").Evaluate(`(b, p) => getComputedStyle(b)[p]`, prop)
		if err != nil {
			return ""
		}
		s, _ := v.(string)
		return s
	}
	until("the panel in Home Assistant's theme", func() bool {
		return style("backgroundColor") == "rgb(17, 34, 51)" && style("color") == "rgb(238, 238, 238)"
	})
	if _, err := page.Evaluate(`() => document.documentElement.style.setProperty('--primary-background-color', 'rgb(250, 250, 250)')`); err != nil {
		t.Fatal(err)
	}
	until("the panel to follow the theme's change", func() bool { return style("backgroundColor") == "rgb(250, 250, 250)" })
}
