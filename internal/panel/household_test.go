package panel

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// householdRunID is a run id as serve makes them: it must never show in
// the main view.
const householdRunID = "20261125T030808Z-f009251f"

// householdHistory is one past run with a traced attempt: tokens, costs,
// coordinates and the scripted model's markers, all of which the page
// keeps in its details or drops.
type householdHistory struct{ shot []byte }

func (h householdHistory) Runs(context.Context) ([]RunInfo, error) {
	return []RunInfo{{ID: householdRunID, Source: "panel", State: "cancelled", StartedAt: time.Date(2026, 11, 25, 3, 8, 8, 0, time.UTC),
		Items: 3, Added: 1, NotShopped: 2, Usage: report.Usage{PromptTokens: 49762, OutputTokens: 7288}}}, nil
}

func (h householdHistory) Run(_ context.Context, id string) (RunDetail, error) {
	if id != householdRunID {
		return RunDetail{}, ErrNotFound
	}
	runs, _ := h.Runs(context.Background())
	return RunDetail{RunInfo: runs[0], Store: "demo", Model: "scripted", Changes: []string{"Natrel 2% Milk 2 L: 0 → 2"}, Warnings: []string{},
		Items: []RunItem{{ID: "a", Name: "2x milk", Quantity: 2, Status: "completed",
			Result:   &report.ItemResult{ItemID: "a", ItemName: "2x milk", Quantity: 2, Outcome: report.OutcomeAdded, ProductName: "Natrel 2% Milk 2 L", Explanation: "[scripted add product=milk-2l before=0]"},
			Attempts: []RunAttempt{{Query: "milk", DurationMS: 12400, Turns: 5, Usage: report.Usage{PromptTokens: 49762, OutputTokens: 7288}, Trace: "a-milk-1"}}}}}, nil
}

func (h householdHistory) Trace(_ context.Context, id, trace string) (Trace, error) {
	if id != householdRunID || trace != "a-milk-1" {
		return Trace{}, ErrNotFound
	}
	at := time.Date(2026, 11, 25, 3, 8, 10, 0, time.UTC)
	return Trace{Goal: "You are shopping for the household. Item: 2x milk …", URL: "http://127.0.0.1/", Screenshot: "turn-000.png",
		Turns: []TraceTurn{
			{Turn: 1, Started: at, ModelMS: 820, PromptTokens: 4000, OutputTokens: 300, Actions: []string{"typed “milk” and pressed Enter"},
				Calls: []Call{NewCall("type_text_at", map[string]any{"x": 500.0, "y": 60.0, "text": "milk", "press_enter": true})}, Screenshot: "turn-001.png"},
			{Turn: 2, Started: at.Add(4 * time.Second), ModelMS: 700, PromptTokens: 4100, OutputTokens: 310, Text: []string{"[scripted add product=milk-2l before=0]"},
				Actions: []string{"asked the household", "clicked at (162, 546)"}, Calls: []Call{
					{Name: "present_options", Answer: "product", AnswerText: "Natrel 2% Milk 2 L"}, clickOn("Add to cart — 2% Milk, 2 L")}, Screenshot: "turn-002.png"},
		},
		End: &TraceEnd{Tool: "report_item_added", Turns: 2, DurationMS: 12400, Usage: report.Usage{PromptTokens: 8100, OutputTokens: 610}}}, nil
}

func (h householdHistory) Screenshot(_ context.Context, id, trace, name string) ([]byte, error) {
	if id != householdRunID || trace != "a-milk-1" {
		return nil, ErrNotFound
	}
	return h.shot, nil
}

// TestHouseholdPageInChromium drives the page as a household member sees
// it — on a phone (390×844) and a desktop (1280×800), light and dark, in
// English and in French — through a run with a question, a quota wait,
// Stop, History with a trace, and Forget: the main view shows no run id,
// token count, coordinate or scripted-model marker; a quota wait counts
// down on its item; the latest tab is large and enlarges on a tap, a tab's
// blank first screen is never shown; ⭐ is an icon that renders; "2x milk"
// reads as written; Stop and Forget ask first and Forget can be undone;
// nothing the page loads fails (no favicon 404); and the French page has
// no English text of the catalogue left.
func TestHouseholdPageInChromium(t *testing.T) {
	browser := testbrowser.Launch(t)
	shot := screenshot(t, 1440, 900)
	for _, lang := range messages.Languages {
		for _, size := range []struct {
			name string
			w, h int
		}{{"phone", 390, 844}, {"desktop", 1280, 800}} {
			for _, scheme := range []*playwright.ColorScheme{playwright.ColorSchemeLight, playwright.ColorSchemeDark} {
				t.Run(fmt.Sprintf("%s/%s/%s", lang, size.name, *scheme), func(t *testing.T) {
					householdRun(t, browser, lang, size.w, size.h, scheme, shot)
				})
			}
		}
	}
}

func householdRun(t *testing.T, browser playwright.Browser, lang string, w, h int, scheme *playwright.ColorScheme, shot []byte) {
	cat := messages.For(lang)
	say := func(key string, args ...any) string { return cat.T("panel."+key, args...) }
	c := &control{}
	products := &fakeProducts{list: []Product{
		{Key: "milk", Name: "Natrel 2% Milk 2 L", Price: "$5.49", Pinned: true, Times: 3},
		{Key: "butter", Substitute: &Substitute{Name: "Greek Yogurt 750 g", Price: "$4.99", ByHousehold: true}},
	}}
	p, err := New(Options{Start: c.start, Stop: c.stop, History: householdHistory{shot: shot}, Products: products, Messages: cat})
	if err != nil {
		t.Fatal(err)
	}
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Consume(ctx, sub) }()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)

	bctx, err := browser.NewContext(playwright.BrowserNewContextOptions{Viewport: &playwright.Size{Width: w, Height: h}, ColorScheme: scheme, Locale: playwright.String(lang + "-CA")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bctx.Close() })
	page, err := bctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(60000)
	var failedMu sync.Mutex
	var failed []string // every response of the page's that is not OK
	page.OnResponse(func(r playwright.Response) {
		if r.Status() >= 400 {
			failedMu.Lock()
			failed = append(failed, fmt.Sprintf("%d %s", r.Status(), r.URL()))
			failedMu.Unlock()
		}
	})
	if _, err := page.Goto(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	text := func(sel string) string {
		t.Helper()
		s, err := page.Locator(sel).First().InnerText()
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	count := func(sel string) int { n, _ := page.Locator(sel).Count(); return n }
	visible := func(sel string) bool { v, _ := page.Locator(sel).First().IsVisible(); return v }
	click := func(sel string) {
		t.Helper()
		if err := page.Locator(sel).First().Click(); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		testwait.Until(t, what, 60*time.Second, cond, func() string {
			s, _ := page.Locator("body").InnerText()
			return s
		})
	}
	// Everything a person reads or hears on the page: its visible text and
	// the labels of its controls and images.
	var seen []string
	look := func() string {
		t.Helper()
		v, err := page.Evaluate(`() => document.body.innerText + '\n' + [...document.querySelectorAll('[aria-label],[title],[placeholder],img[alt]')]
			.filter((e) => e.checkVisibility()).map((e) => [e.getAttribute('aria-label'), e.title, e.placeholder, e.alt].filter(Boolean).join('\n')).join('\n')`)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := v.(string)
		seen = append(seen, s)
		return s
	}
	jargon := regexp.MustCompile(`\d+, \d+\)|tokens|jetons|\[scripted|` + householdRunID + `|\$0\.0000`)
	plain := func(where, s string) {
		t.Helper()
		if m := jargon.FindString(s); m != "" {
			t.Fatalf("%s shows %q:\n%s", where, m, s)
		}
	}
	until("the page to load its texts and stream", func() bool { return text("#state") == say("no_run") })
	if l, _ := page.Evaluate(`() => document.documentElement.lang`); l != lang {
		t.Fatalf("the page's language is %v, want %s", l, lang)
	}

	// A run: 2x milk, butter and bread; butter's tab opens blank, then
	// shows the store; bread's tab changes after it.
	pub := func(ev runstatus.Event) {
		ev.RunID = householdRunID
		if ev.State == "" {
			ev.State = runstatus.StateShopping
		}
		bus.Publish(ev)
	}
	items := []report.ItemResult{{ItemID: "a", ItemName: "2x milk", Quantity: 2, Replay: "remembered"}, {ItemID: "b", ItemName: "butter", Quantity: 1}, {ItemID: "c", ItemName: "bread", Quantity: 1}}
	pub(runstatus.Event{Kind: runstatus.KindRunStarted, Progress: runstatus.Progress{Total: 3}})
	for i := range items {
		pub(runstatus.Event{Kind: runstatus.KindItemStarted, Progress: runstatus.Progress{Total: 3}, Item: &items[i]})
	}
	until("the items' cards", func() bool { return count(`#items li[data-outcome="in_progress"]`) == 3 })
	// A remembered product is being added again (no agent, no tab).
	if s := text(`#items li[data-item="2x milk"]`); !strings.Contains(s, say("replaying")) {
		t.Fatalf("2x milk's card does not say it is bought again: %q", s)
	}
	p.Show(Frame{ItemID: "b", Item: "butter", Turn: 0, Action: "started", URL: "about:blank", Image: shot})
	until("butter's card starting", func() bool { return strings.Contains(text(`#items li[data-item="butter"]`), say("opening_store")) })
	if count("#tab-list figure") != 0 {
		t.Fatal("a tab's blank first screen is shown")
	}
	p.Show(Frame{ItemID: "b", Item: "butter", Turn: 1, URL: "http://127.0.0.1/search?q=butter", Image: shot,
		Calls: []Call{NewCall("type_text_at", map[string]any{"x": 500.0, "y": 60.0, "text": "butter", "press_enter": true})}})
	until("butter's tab", func() bool { return count(`#tab-list figure.main[data-item="butter"] img`) == 1 })
	p.Show(Frame{ItemID: "c", Item: "bread", Turn: 2, URL: "http://127.0.0.1/p/bread", Image: shot,
		Calls: []Call{NewCall("click_at", map[string]any{"x": 162.0, "y": 546.0})}})
	until("bread large, butter a thumbnail", func() bool {
		return count(`#tab-list figure.main[data-item="bread"]`) == 1 && count(`#tab-list figure.thumb[data-item="butter"]`) == 1
	})
	if s := text(`#items li[data-item="butter"]`); !strings.Contains(s, say("act_search", "text", "butter")) {
		t.Fatalf("butter's card does not say what its agent does: %q", s)
	}
	// A tap enlarges a thumbnail.
	click(`#tab-list figure.thumb[data-item="butter"]`)
	until("the enlarged screen", func() bool { return visible("#zoom") })
	if wz, _ := page.Locator("#zoom-img").Evaluate(`(i) => i.getBoundingClientRect().width`, nil); toFloat(wz) < float64(w)*0.6 {
		t.Fatalf("the enlarged screen is %v px wide on a %d px page", wz, w)
	}
	click("#zoom-close")
	until("the enlarged screen to close", func() bool { return !visible("#zoom") })

	// Bread waits for the model's quota: its card counts down.
	p.WaitForQuota("c", 42*time.Second)
	quota := regexp.MustCompile(strings.Replace(regexp.QuoteMeta(say("waiting_quota", "seconds", "@")), "@", `(\d+)`, 1))
	var first string
	until("the quota wait on bread's card", func() bool {
		m := quota.FindStringSubmatch(text(`#items li[data-item="bread"]`))
		if m != nil && first == "" {
			first = m[1]
		}
		return m != nil && m[1] != first // it counts down
	})

	// Butter is sold out: the question, answered with ⭐ (an icon that
	// renders, not a glyph the phone may lack).
	got := make(chan choice.Answer, 1)
	go func() {
		a, _ := p.Choose(ctx, choice.Question{ItemName: "butter", Context: "Lactantia Salted Butter 454 g is out of stock.",
			Options: []choice.Option{{Name: "Gay Lea Salted Butter 454 g", Price: "$6.99"}, {Name: "Natrel Unsalted Butter 454 g", Price: "$6.49"}}})
		got <- a
	}()
	star := page.GetByRole("button", playwright.PageGetByRoleOptions{Name: say("choose_keep", "n", 2, "item", "butter")})
	until("the question", func() bool { n, _ := star.Count(); return n == 1 })
	if s := text(`#items li[data-item="butter"]`); !strings.Contains(s, say("waiting_answer")) {
		t.Fatalf("butter's card does not say it waits for an answer: %q", s)
	}
	if v, _ := star.Evaluate(`(b) => { const r = b.querySelector('svg.icon').getBoundingClientRect(); return r.width > 0 && r.height > 0 && !b.textContent.includes('⭐') }`, nil); v != true {
		t.Fatal("the ⭐ button has no visible star icon")
	}
	main := look()
	plain("the live view", main)
	if err := star.Click(); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.Kind != choice.KindProduct || a.Index != 1 || !a.Remember {
			t.Fatalf("⭐ 2 answered %+v", a)
		}
	case <-time.After(60 * time.Second): // bounds a hang only
		t.Fatal("no answer")
	}
	milk := report.ItemResult{ItemID: "a", ItemName: "2x milk", Quantity: 2, Outcome: report.OutcomeAdded, ProductName: "Natrel 2% Milk 2 L", Turns: 5, Replay: "replayed",
		Explanation: "[scripted add product=milk-2l before=0]"}
	pub(runstatus.Event{Kind: runstatus.KindItemFinished, Progress: runstatus.Progress{Total: 3, Done: 1, Added: 1}, Item: &milk})
	until("milk added", func() bool { return count(`#items li[data-item="2x milk"][data-outcome="added"]`) == 1 })
	if s := text(`#items li[data-item="2x milk"] .name`); s != "2x milk" {
		t.Fatalf("2x milk's card reads %q", s)
	}
	if s := text(`#items li[data-item="2x milk"]`); !strings.Contains(s, say("replay_replayed")) {
		t.Fatalf("2x milk's card does not say it was bought again: %q", s)
	}
	plain("the live view", look())

	// Stop asks first: Cancel stops nothing, Stop stops.
	for _, sure := range []bool{false, true} {
		click("#stop")
		until("the confirmation", func() bool { return visible("#confirm") })
		plain("the confirmation", look())
		if sure {
			click("#confirm-ok")
		} else {
			click("#confirm-cancel")
		}
		until("the confirmation to close", func() bool { return !visible("#confirm") })
	}
	until("Stop to reach serve", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.stops) > 0 })
	c.mu.Lock()
	if len(c.stops) != 1 {
		t.Fatalf("%d stops: Cancel stopped the run", len(c.stops))
	}
	c.mu.Unlock()
	pub(runstatus.Event{Kind: runstatus.KindStateChanged, State: runstatus.StateCancelled, Progress: runstatus.Progress{Total: 3, Done: 1, Added: 1}})
	until("the stopped run", func() bool { return text("#state") == say("state_cancelled") && visible("#start") && !visible("#stop") })
	plain("the stopped run", look())

	// History: the run by its time, not its id; the trace with clock
	// times and actions in words, the prompt and the numbers collapsed.
	click("#tab-history")
	until("the past run", func() bool { return count(`#runs li[data-run] button`) == 1 })
	plain("the history", look())
	click(`#runs li[data-run] button`)
	until("the run's items", func() bool { return count(`#run-body .run-items li[data-item="2x milk"]`) == 1 })
	if s := text(`#run-body .run-items li[data-item="2x milk"] .name`); s != "2x milk" {
		t.Fatalf("2x milk in the history reads %q", s)
	}
	click(`#run-body .run-items li[data-item="2x milk"] button.link`)
	until("the trace's screenshots", func() bool {
		n, err := page.Evaluate(`() => [...document.querySelectorAll('#trace-body img')].filter(i => i.complete && i.naturalWidth > 0).length`)
		return err == nil && n == 3
	})
	tr := text("#trace-body")
	for _, want := range []string{say("act_search", "text", "milk"), say("act_click_on", "target", "Add to cart — 2% Milk, 2 L"), say("end_added"),
		say("act_asked") + " " + say("trace_answer_product", "product", "Natrel 2% Milk 2 L")} {
		if !strings.Contains(tr, want) {
			t.Fatalf("the trace does not say %q:\n%s", want, tr)
		}
	}
	if n := count(`#trace-body .turns time.clock:not(:empty)`); n != 2 {
		t.Fatalf("%d steps with their clock time, want 2", n)
	}
	if visible("#trace-body .goal") {
		t.Fatal("the agent's prompt is not collapsed")
	}
	plain("the trace", look())
	// The details hold the numbers.
	click(`#trace-body .turns li[data-turn="2"] details summary`)
	if s := text(`#trace-body .turns li[data-turn="2"] details`); !strings.Contains(s, "(162, 546)") {
		t.Fatalf("the step's details have no coordinates: %q", s)
	}

	// Forget asks first and can be undone.
	click("#tab-products")
	until("milk among the products", func() bool { return count(`#products li[data-product="milk"]`) == 1 })
	if v, _ := page.Locator(`#products li[data-product="milk"] .name svg.icon`).Evaluate(`(s) => s.getBoundingClientRect().width > 0`, nil); v != true {
		t.Fatal("the pinned milk has no visible star")
	}
	plain("the products", look())
	forget := `#products li[data-product="milk"] button[data-act="forget"]`
	click(forget)
	until("the confirmation", func() bool { return visible("#confirm") })
	click("#confirm-cancel")
	until("the confirmation to close", func() bool { return !visible("#confirm") })
	click(forget)
	until("the confirmation", func() bool { return visible("#confirm") })
	click("#confirm-ok")
	until("the undo", func() bool { return visible("#snackbar") && count(`#products li[data-product="milk"]`) == 0 })
	look()
	click("#snackbar-undo")
	until("milk back", func() bool { return count(`#products li[data-product="milk"]`) == 1 })
	// Forgotten for good: sent when the products are looked at again.
	click(forget)
	until("the confirmation", func() bool { return visible("#confirm") })
	click("#confirm-ok")
	until("milk gone", func() bool { return count(`#products li[data-product="milk"]`) == 0 })
	click("#tab-history")
	click("#tab-products")
	until("the forget sent", func() bool {
		products.mu.Lock()
		defer products.mu.Unlock()
		return len(products.forgot) > 0
	})
	products.mu.Lock()
	if !slices.Equal(products.forgot, []string{"milk"}) {
		t.Fatalf("forgotten: %v (Undo or Cancel forgot too)", products.forgot)
	}
	products.mu.Unlock()

	failedMu.Lock()
	if len(failed) > 0 {
		t.Fatalf("the page loaded things that failed: %v", failed)
	}
	failedMu.Unlock()
	if lang != "en" {
		noEnglish(t, cat, strings.Join(seen, "\n"))
	}
}

// noEnglish fails when a text of the English catalogue (the parts of it
// between its placeholders, when the language's text differs) shows on a
// page in another language.
func noEnglish(t *testing.T, cat messages.Catalog, page string) {
	t.Helper()
	en, other := messages.For("en").Area("panel"), cat.Area("panel")
	hole := regexp.MustCompile(`\{[a-z_]+\}`)
	for k, v := range en {
		if other[k] == v {
			continue
		}
		for _, part := range hole.Split(v, -1) {
			part = strings.TrimSpace(strings.Trim(part, " .:,“”()—…"))
			if len(part) < 4 || strings.Contains(other[k], part) {
				continue
			}
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(part) + `\b`).MatchString(page) {
				t.Errorf("the %s page shows English: %q (panel.%s)", cat.Lang(), part, k)
			}
		}
	}
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	}
	return 0
}

// clickOn is a click the agent named by what was under it.
func clickOn(target string) Call {
	c := NewCall("click_at", map[string]any{"x": 162.0, "y": 546.0})
	c.Target = target
	return c
}
