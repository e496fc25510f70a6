package panel

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// weekHistory is a household's journals: this week's run "w2" (its items
// listed at its start), last week's "w1" with a replayed item and a
// changed cart line, "w1b", a Wrong product's re-shop of w1's milk, and
// "w1r", a Retry of its failed items.
type weekHistory struct{ fakeHistory }

var weekStart = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

func (h *weekHistory) Runs(context.Context) ([]RunInfo, error) {
	return []RunInfo{
		{ID: "w1r", State: "review_ready", StartedAt: weekStart.Add(-7*24*time.Hour + 2*time.Hour), Items: 1, Added: 1, TotalCents: 1348, Kind: "retry"},
		{ID: "w1b", State: "review_ready", StartedAt: weekStart.Add(-7*24*time.Hour + time.Hour), Items: 1, Added: 1, TotalCents: 1348, Kind: "reshop"},
		{ID: "w1", State: "review_ready", StartedAt: weekStart.Add(-7 * 24 * time.Hour), Items: 2, Added: 2, TotalCents: 1199},
	}, nil
}

func (h *weekHistory) Run(_ context.Context, id string) (RunDetail, error) {
	switch id {
	case "w2":
		return RunDetail{RunInfo: RunInfo{ID: "w2", State: "shopping"}, Items: []RunItem{
			{ID: "1", Name: "lait", Quantity: 1}, {ID: "2", Name: "12 oeufs", Quantity: 1}, {ID: "3", Name: "bananes", Quantity: 1}, {ID: "4", Name: "tourtière", Quantity: 1},
		}}, nil
	case "w1":
		rs := []RunInfo{}
		runs, _ := h.Runs(context.Background())
		rs = append(rs, runs[2])
		return RunDetail{RunInfo: rs[0], Changes: []string{"Natrel 2 L: 0 → 1 ($4.99 each)"}, Warnings: []string{},
			ChangeLines: []CartChange{{Name: "Natrel 2 L", Before: 0, After: 1, Price: money.Parse("$4.99")}},
			Items: []RunItem{
				{ID: "1", Name: "lait", Quantity: 1, Result: &report.ItemResult{ItemID: "1", ItemName: "lait", Outcome: report.OutcomeAdded, ProductName: "Natrel 2 L", Price: money.Parse("$4.99"), Replay: "replayed"}, Attempts: []RunAttempt{}},
				{ID: "5", Name: "café", Quantity: 1, Result: &report.ItemResult{ItemID: "5", ItemName: "café", Outcome: report.OutcomeNotShopped, Explanation: "the run was stopped before this item"}, Attempts: []RunAttempt{}},
			}}, nil
	}
	return RunDetail{}, ErrNotFound
}

// TestAHouseholdsWeekOnAFrenchPhone (issue 33) drives the page in French
// on a 390 px phone in the dark: the live view lists every item from the
// start and, after an answer, says so; the review puts what needs a look
// first (the not-found tourtière with its reason), the rest folded, prices
// and totals in French, real plurals; History has a neutral state, a total
// per run, a re-shop named as such, no "null" under a replayed item and
// the cart review's lines in French; Products lists the items by the
// household's words, French and English names of one product together,
// any product pinnable, and fits the phone.
func TestAHouseholdsWeekOnAFrenchPhone(t *testing.T) {
	hist := &weekHistory{}
	prods := &fakeProducts{list: []Product{
		{Key: "banane", Words: []string{"bananes"}, Name: "Bananes fraîches, régime de 6", URL: "https://store/p/bananas", Price: "$1.99", Times: 2, LastSeen: weekStart},
		{Key: "beurre", Words: []string{"beurre"}, Name: "Lactantia beurre salé 454 g", URL: "https://store/p/butter", Price: "7,49 $", LastSeen: weekStart},
		{Key: "butter", Words: []string{"butter"}, Name: "Lactantia beurre salé 454 g", URL: "https://store/p/butter", Price: "7,49 $", LastSeen: weekStart},
	}}
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, History: hist, Products: prods, Messages: messages.For("fr"),
		CartAction: func(context.Context, reviewpack.Request) (reviewpack.Action, error) { return reviewpack.Action{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	bus := &runstatus.Bus{}
	page, text := openPanel(t, p, bus, playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 390, Height: 844},
		ColorScheme: playwright.ColorSchemeDark, Locale: playwright.String("fr-CA")})
	fr := messages.For("fr")
	say := func(key string, args ...any) string { return fr.T("panel."+key, args...) }
	until := func(what string, cond func() bool) {
		t.Helper()
		testwait.Until(t, what, 60*time.Second, cond)
	}
	count := func(sel string) int { n, _ := page.Locator(sel).Count(); return n }
	click := func(sel string) {
		t.Helper()
		if err := page.Locator(sel).First().Click(); err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
	}
	shot := func(name string) {
		if dir := os.Getenv("GEMINI_SUPPLY_REVIEW_SHOTS"); dir != "" {
			_, _ = page.Screenshot(playwright.PageScreenshotOptions{Path: playwright.String(filepath.Join(dir, name)), FullPage: playwright.Bool(true)})
		}
	}
	until("the page", func() bool { return text("#state") == say("no_run") })

	// The live view lists every item from the start.
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "w2", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 4}})
	until("every item from the start", func() bool { return count(`#items li[data-item]`) == 4 })
	if n := count(`#items li[data-queued="true"]`); n != 4 {
		t.Errorf("%d items waiting their turn, want 4", n)
	}
	if s := text(`#items li[data-item="tourtière"] .activity`); s != say("queued") {
		t.Errorf("tourtière before its turn: %q", s)
	}
	// After an answer the card says so, not the search before the question.
	milk := report.ItemResult{ItemID: "1", ItemName: "lait", Quantity: 1}
	bus.Publish(runstatus.Event{Kind: runstatus.KindItemStarted, RunID: "w2", State: runstatus.StateShopping, Item: &milk, Progress: runstatus.Progress{Total: 4}})
	until("milk started", func() bool { return count(`#items li[data-queued="true"]`) == 3 })
	p.Show(Frame{ItemID: "1", Item: "lait", Turn: 1, URL: "https://store/search", Calls: []Call{NewCall("type_text_at", map[string]any{"text": "lait", "press_enter": true})}})
	until("the search on the card", func() bool { return text(`#items li[data-item="lait"] .activity`) == say("act_search", "text", "lait") })
	bus.Publish(runstatus.Event{Kind: runstatus.KindUserAnswered, RunID: "w2", State: runstatus.StateShopping, Item: &milk, Message: "chose Natrel 2 L", Progress: runstatus.Progress{Total: 4}})
	until("the answer on the card", func() bool {
		return text(`#items li[data-item="lait"] .activity`) == say("answered_going_on", "answer", "Natrel 2 L")
	})
	shot("live.fr.png")

	// The end: what needs a look first, the rest folded, French prices.
	price := money.Parse("$7.49")
	items := []report.ItemResult{
		{ItemID: "1", ItemName: "lait", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Natrel 2 L", Price: price},
		{ItemID: "2", ItemName: "12 oeufs", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Burnbrae 12 gros", Price: money.Parse("$4.29")},
		{ItemID: "3", ItemName: "bananes", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Bananes, régime de 6", Price: money.Parse("$1.99")},
		{ItemID: "4", ItemName: "tourtière", Quantity: 1, Outcome: report.OutcomeNotFound, Explanation: "Aucune tourtière dans ce magasin."},
	}
	pack := &reviewpack.Pack{RunID: "w2", Cart: &reviewpack.Cart{Lines: []reviewpack.Line{
		{Name: "Natrel 2 L", ProductID: "milk", Quantity: 1, Price: price},
		{Name: "Burnbrae 12 gros", ProductID: "eggs", Quantity: 1, Price: money.Parse("$4.29")},
		{Name: "Bananes, régime de 6", ProductID: "bananas", Quantity: 1, Price: money.Parse("$1.99")},
	}}}
	for _, it := range items {
		pi := reviewpack.Item{ItemID: it.ItemID, ItemName: it.ItemName, Outcome: it.Outcome, ProductName: it.ProductName, Quantity: 1, Price: it.Price}
		if it.Outcome == report.OutcomeAdded {
			pi.ProductID = map[string]string{"1": "milk", "2": "eggs", "3": "bananas"}[it.ItemID]
			pi.Confidence, pi.Matches = reviewpack.AgentChose, 8
		}
		pack.Items = append(pack.Items, pi)
	}
	sum := report.Summary{RunID: "w2", Items: items}
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "w2", State: runstatus.StateReviewReady,
		Progress: runstatus.Progress{Total: 4, Done: 4, Added: 3, NotFound: 1}, Summary: &sum, Pack: pack})
	until("the review", func() bool { return count(`#pack li[data-item]`) == 4 })
	if s := text(`#pack .look`); !strings.Contains(s, "tourtière") || !strings.Contains(s, "Aucune tourtière dans ce magasin.") {
		t.Errorf("what needs a look: %q", s)
	}
	if n := count(`#pack details.fine-group:not([open]) li[data-item]`); n != 3 {
		t.Errorf("%d fine lines folded, want 3", n)
	}
	if ok, _ := page.Locator(`#pack li[data-item="lait"]`).IsVisible(); ok {
		t.Error("a fine line is in plain view")
	}
	if ok, _ := page.Locator("#items").IsVisible(); ok {
		t.Error("the cards repeat the pack")
	}
	if s := text(`#pack li[data-item="lait"]`); !strings.Contains(s, "7,49\u00a0$") || strings.Contains(s, "$7.49") {
		t.Errorf("a price on the French page: %q", s)
	}
	if s := text("#total"); s != say("cart_total", "total", "13,77\u00a0$") {
		t.Errorf("the total: %q", s)
	}
	if s := text("#counts"); strings.Contains(s, "(s)") || !strings.Contains(s, "3 ajoutés") || !strings.Contains(s, "1 introuvable") {
		t.Errorf("the counts: %q", s)
	}
	if v, _ := page.Locator(`#pack li[data-item="lait"] details.more`).Count(); v != 1 {
		t.Error("the agent's confidence is not in the line's details")
	}
	shot("review.fr.png")

	// History: neutral, totals, kinds, plurals, no "null", French lines.
	click("#tab-history")
	until("the past runs", func() bool { return count(`#runs li[data-run]`) == 3 })
	runs := text("#runs")
	for _, want := range []string{say("past_done"), say("kind_reshop"), say("kind_retry"), "1 article", "2 articles", "13,48\u00a0$", "11,99\u00a0$"} {
		if !strings.Contains(runs, want) {
			t.Errorf("History does not say %q: %q", want, runs)
		}
	}
	if strings.Contains(runs, say("state_review_ready")) || strings.Contains(runs, "1 articles") {
		t.Errorf("History: %q", runs)
	}
	click(`#runs li[data-run="w1"] button`)
	until("last week's run", func() bool { return count(`#run-body .run-items li[data-item="lait"]`) == 1 })
	body := text("#run-body")
	if strings.Contains(body, "null") || strings.Contains(body, "each") || !strings.Contains(body, "4,99\u00a0$ l'unité") {
		t.Errorf("last week's run: %q", body)
	}
	if !strings.Contains(text(`#run-body .run-items li[data-item="café"]`), say("not_shopped_why")) {
		t.Errorf("a stopped run's item: %q", text(`#run-body .run-items li[data-item="café"]`))
	}
	shot("history.fr.png")

	// Products: the household's words, one card for one product, any
	// product pinnable, on the phone's width.
	click("#tab-products")
	until("the products", func() bool { return count(`#products li[data-product]`) == 2 })
	if s := text(`#products li[data-product="banane"] .name`); s != "bananes" {
		t.Errorf("bananas are listed as %q", s)
	}
	if s := text(`#products li[data-keys="beurre butter"] .name`); !strings.Contains(s, "beurre") || !strings.Contains(s, "butter") {
		t.Errorf("butter's card: %q", s)
	}
	if s := text(`#products li[data-product="banane"]`); !strings.Contains(s, "1,99\u00a0$") {
		t.Errorf("a remembered product's price on the French page: %q", s)
	}
	if n := count(`#products li[data-product="banane"] button[data-act="keep"]`); n != 1 {
		t.Error("the bananas' product cannot be pinned")
	}
	w, err := page.Evaluate(`() => document.documentElement.scrollWidth`)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := w.(int); n > 390 {
		t.Errorf("the Products tab is %v px wide on a 390 px phone", w)
	}
	for _, k := range []string{"no_substitute", "always_ask", "any_brand"} {
		box, err := page.Locator(`#products li[data-product="banane"] input[data-policy="` + k + `"]`).BoundingBox()
		if err != nil || box == nil || box.X < 0 || box.X+box.Width > 390 || box.Width < 10 {
			t.Errorf("the %s checkbox is not on screen: %+v (%v)", k, box, err)
		}
	}
	shot("products.fr.png")
}

// reshopHistory: "week" and, after it, "again", a Wrong product's re-shop
// of its milk.
type reshopHistory struct{ fakeHistory }

func (h *reshopHistory) Runs(context.Context) ([]RunInfo, error) {
	return []RunInfo{{ID: "again", State: "review_ready", StartedAt: weekStart.Add(time.Minute)}, {ID: "week", State: "review_ready", StartedAt: weekStart}}, nil
}

func (h *reshopHistory) Run(_ context.Context, id string) (RunDetail, error) {
	milk := reviewpack.Item{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Oat drink", ProductID: "oat", Quantity: 1}
	switch id {
	case "week":
		return RunDetail{RunInfo: RunInfo{ID: "week", State: "review_ready", StartedAt: weekStart}, Items: []RunItem{
			{ID: "1", Name: "milk", Result: &report.ItemResult{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Oat drink"}},
			{ID: "2", Name: "eggs", Result: &report.ItemResult{ItemID: "2", ItemName: "eggs", Outcome: report.OutcomeAdded, ProductName: "Eggs"}},
		}, Pack: &reviewpack.Pack{RunID: "week", Items: []reviewpack.Item{milk, {ItemID: "2", ItemName: "eggs", Outcome: report.OutcomeAdded, ProductName: "Eggs", ProductID: "eggs"}},
			Actions: []reviewpack.Action{{At: weekStart.Add(30 * time.Second), Kind: reviewpack.ActWrongProduct, ItemID: "1", ItemName: "milk", Reshop: "milk"}}}}, nil
	case "again":
		milk.ProductName, milk.ProductID = "Natrel 2 L", "natrel"
		return RunDetail{RunInfo: RunInfo{ID: "again", State: "review_ready", StartedAt: weekStart.Add(time.Minute)}, Items: []RunItem{
			{ID: "1", Name: "milk", Result: &report.ItemResult{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2 L"}},
		}, Pack: &reviewpack.Pack{RunID: "again", Items: []reviewpack.Item{milk}, Cart: &reviewpack.Cart{Lines: []reviewpack.Line{{Name: "Natrel 2 L", ProductID: "natrel", Quantity: 1}}}}}, nil
	}
	return RunDetail{}, ErrNotFound
}

// After a restart the panel shows the last run, not "No run yet"; a
// Wrong product's re-shop shows on the review of the week it belongs to,
// whose milk line is the re-shop's (its actions going to the re-shop's run)
// and whose cart is the one read after it.
func TestRestoreShowsTheLastRun(t *testing.T) {
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, History: &reshopHistory{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	s := p.snapshotLocked()
	p.mu.Unlock()
	if s.RunID != "week" || s.State != runstatus.StateReviewReady || s.Pack == nil || len(s.Pack.Items) != 2 || len(s.Items) != 2 {
		t.Fatalf("restored %+v", s)
	}
	if it, _ := s.Pack.Item("1"); it.ProductName != "Natrel 2 L" || s.ItemRuns["1"] != "again" {
		t.Errorf("the re-shopped milk: %+v, its run %q", it, s.ItemRuns["1"])
	}
	if !s.HasCart || s.CartUnits != 1 {
		t.Errorf("the cart after the re-shop: %+v", s.Pack.Cart)
	}
	if s.Summary == nil {
		t.Error("no summary: the page would not show the review")
	}
}

// chainHistory: "week"; "again", a Wrong product's re-shop of its milk;
// "third", a re-shop of that re-shop's milk — each journal saying whose
// review it belongs to.
type chainHistory struct{ reshopHistory }

func (h *chainHistory) Runs(context.Context) ([]RunInfo, error) {
	return []RunInfo{{ID: "third", State: "review_ready", StartedAt: weekStart.Add(time.Hour), Kind: "reshop", ReshopOf: "again"},
		{ID: "again", State: "review_ready", StartedAt: weekStart.Add(time.Minute), Kind: "reshop", ReshopOf: "week"},
		{ID: "week", State: "review_ready", StartedAt: weekStart}}, nil
}

func (h *chainHistory) Run(ctx context.Context, id string) (RunDetail, error) {
	switch id {
	case "again":
		d, err := h.reshopHistory.Run(ctx, id)
		d.Kind, d.ReshopOf = "reshop", "week"
		d.Pack.Actions = []reviewpack.Action{{At: weekStart.Add(30 * time.Minute), Kind: reviewpack.ActWrongProduct, ItemID: "1", ItemName: "milk", Reshop: "milk"}}
		return d, err
	case "third":
		milk := reviewpack.Item{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Lactantia 2 L", ProductID: "lactantia", Quantity: 1}
		return RunDetail{RunInfo: RunInfo{ID: "third", State: "review_ready", StartedAt: weekStart.Add(time.Hour), Kind: "reshop", ReshopOf: "again"}, Items: []RunItem{
			{ID: "1", Name: "milk", Result: &report.ItemResult{ItemID: "1", ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Lactantia 2 L"}},
		}, Pack: &reviewpack.Pack{RunID: "third", Items: []reviewpack.Item{milk}, Cart: &reviewpack.Cart{Lines: []reviewpack.Line{{Name: "Lactantia 2 L", ProductID: "lactantia", Quantity: 1}}}}}, nil
	}
	return h.reshopHistory.Run(ctx, id)
}

// A re-shop of a re-shop is restored on the week's review (the one the
// first re-shop belongs to), with the last re-shop's milk: not as a
// one-item review of the re-shop before it.
func TestRestoreFollowsReshopsToTheirWeek(t *testing.T) {
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, History: &chainHistory{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	s := p.snapshotLocked()
	p.mu.Unlock()
	if s.RunID != "week" || s.Pack == nil || len(s.Pack.Items) != 2 {
		t.Fatalf("restored run %q with pack %+v", s.RunID, s.Pack)
	}
	if it, _ := s.Pack.Item("1"); it.ProductName != "Lactantia 2 L" || s.ItemRuns["1"] != "third" {
		t.Errorf("the milk: %+v, its run %q", it, s.ItemRuns["1"])
	}
}
