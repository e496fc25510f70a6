package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// requireBrowser fails (not skips) when the browser, the Playwright driver
// or Node are missing; -short skips the end-to-end tests.
func requireBrowser(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test with Chromium skipped in -short mode")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("the browser or the Playwright driver is not set up: run make test (or eval \"$(scripts/setup.sh)\" first)")
	}
	return exe
}

// e2e is one end-to-end setup: a YAML list, the demo store, the scripted
// model behind the fake Gemini server, real Chromium.
type e2e struct {
	t        *testing.T
	listPath string
	dataDir  string
	cfg      config.Config
	deps     Deps
	runner   *Runner
}

func newE2E(t *testing.T, items ...string) *e2e {
	exe := requireBrowser(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yaml")
	var b strings.Builder
	b.WriteString("# test list\nitems:\n")
	for _, it := range items {
		fmt.Fprintf(&b, "  - name: %s\n", it)
	}
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return &e2e{
		t: t, listPath: list, dataDir: filepath.Join(dir, "data"),
		cfg: config.Config{
			Store: "demo", GeminiModel: config.ScriptedModel, ShoppingList: list, DataDir: filepath.Join(dir, "data"),
			BrowserExecutable: exe, BrowserHeadless: true, Concurrency: 1, MaxTurns: 30, TimeBudget: 2 * time.Minute,
			PostalCode: "H2X 1Y4",
		},
		deps: Deps{Logger: testLogger(t), ModelBackoff: []time.Duration{10 * time.Millisecond}},
	}
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("GEMINI_SUPPLY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func (e *e2e) start() *Runner {
	e.t.Helper()
	r, err := NewRunner(e.cfg, e.deps)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = r.Close(context.Background()) })
	e.runner = r
	return r
}

func (e *e2e) shop(ctx context.Context) (shop.Result, error) {
	if e.runner == nil {
		e.start()
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	return e.runner.Shop(ctx, runstatus.Request{Source: "test"})
}

// list reads the YAML list back: name → "completed" | tags.
func (e *e2e) list() map[string]string {
	e.t.Helper()
	f, err := shoppinglist.OpenYAML(e.listPath, shoppinglist.ReadOnly())
	if err != nil {
		e.t.Fatal(err)
	}
	items, err := f.Items(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]string{}
	for _, it := range items {
		switch {
		case it.Status == shoppinglist.StatusCompleted:
			out[it.Name] = "completed"
		case it.HasTag(shoppinglist.TagNotFound):
			out[it.Name] = "#404"
		case it.HasTag(shoppinglist.TagFailed):
			out[it.Name] = "#failed"
		default:
			out[it.Name] = "open"
		}
	}
	return out
}

func outcomes(s report.Summary) map[string]string {
	m := map[string]string{}
	for _, it := range s.Items {
		m[it.ItemName] = string(it.Outcome)
	}
	return m
}

func fmtMap(m map[string]string) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%s=%s ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// sixItems is the list of the main end-to-end test: three products in
// stock, one the store does not sell, one sold out, one whose model calls
// always fail.
var sixItems = []string{"bananas", "2x eggs", "sourdough bread", "dragon fruit", "butter", "coffee"}

// TestSixItems: 3 added, 1 not found, 1 out of stock, 1 failed by
// persistent model errors — and the list, the demo cart, the journal and
// the summary agree.
func TestSixItems(t *testing.T) {
	e := newE2E(t, sixItems...)
	e.deps.Scripted.Misbehave = map[string]scripted.Misbehaviour{"coffee": scripted.ServerError}
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatalf("Shop: %v", err)
	}
	checkSix(t, e, res)
}

func checkSix(t *testing.T, e *e2e, res shop.Result) {
	t.Helper()
	want := map[string]string{"bananas": "added", "2x eggs": "added", "sourdough bread": "added", "dragon fruit": "not_found", "butter": "not_found", "coffee": "failed"}
	if got := outcomes(res.Summary); fmtMap(got) != fmtMap(want) {
		t.Fatalf("summary outcomes:\n got  %s\n want %s\n%s", fmtMap(got), fmtMap(want), res.Summary.Markdown())
	}
	wantList := map[string]string{"bananas": "completed", "2x eggs": "completed", "sourdough bread": "completed", "dragon fruit": "#404", "butter": "#404", "coffee": "#failed"}
	if got := e.list(); fmtMap(got) != fmtMap(wantList) {
		t.Errorf("YAML list:\n got  %s\n want %s", fmtMap(got), fmtMap(wantList))
	}
	for _, it := range res.Summary.Items {
		switch it.ItemName {
		case "butter":
			if !strings.Contains(strings.ToLower(it.Explanation), "out of stock") {
				t.Errorf("butter explanation = %q, want it to say out of stock", it.Explanation)
			}
		case "coffee":
			if !strings.Contains(it.Explanation, "model_error") || it.Attempts != 2 {
				t.Errorf("coffee: %q after %d attempts, want model_error after 2", it.Explanation, it.Attempts)
			}
		}
	}
	// The demo cart holds exactly what was reported.
	cart := map[string]int{}
	for _, l := range e.runner.DemoStore().Cart() {
		cart[l.ProductID] = l.Quantity
	}
	wantCart := map[string]int{"bananas-bunch": 1, "eggs-large-12": 2, "bread-sourdough-600g": 1}
	if fmt.Sprint(cart) != fmt.Sprint(wantCart) {
		t.Errorf("demo cart = %v, want %v", cart, wantCart)
	}
	if res.Review == nil || len(res.Review.Warnings) != 0 || len(res.Review.Changes) != 3 {
		t.Errorf("review = %+v, want 3 changes and no warnings", res.Review)
	}
	// The journal agrees.
	rec, err := shop.ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.JournalPath, e.dataDir) || rec.State != runstatus.StateReviewReady {
		t.Errorf("journal %s state %s", res.JournalPath, rec.State)
	}
	jr := map[string]string{}
	for _, ji := range rec.Items {
		if ji.Status != shop.ItemDone || ji.Result == nil {
			t.Errorf("journal item %s status %s", ji.Name, ji.Status)
			continue
		}
		jr[ji.Name] = string(ji.Result.Outcome)
	}
	if fmtMap(jr) != fmtMap(want) {
		t.Errorf("journal outcomes %s, want %s", fmtMap(jr), fmtMap(want))
	}
	if res.Summary.Usage.TotalTokens == 0 {
		t.Errorf("no token use recorded: %+v", res.Summary.Usage)
	}
	if e.runner.DemoStore().CheckoutHits() != 0 {
		t.Error("the checkout was reached")
	}
}

// TestSixItemsConcurrency: concurrency 1 and 3 give identical outcomes.
func TestSixItemsConcurrency(t *testing.T) {
	var got []string
	for _, n := range []int{1, 3} {
		e := newE2E(t, sixItems...)
		e.cfg.Concurrency = n
		e.deps.Scripted.Misbehave = map[string]scripted.Misbehaviour{"coffee": scripted.ServerError}
		res, err := e.shop(context.Background())
		if err != nil {
			t.Fatalf("concurrency %d: %v", n, err)
		}
		checkSix(t, e, res)
		got = append(got, fmtMap(outcomes(res.Summary))+" | "+fmtMap(e.list()))
	}
	if got[0] != got[1] {
		t.Errorf("outcomes differ:\n c=1: %s\n c=3: %s", got[0], got[1])
	}
}

// TestOutOfStockChoice: with a resolver, the sold-out item becomes a
// question; answering "nothing" ends it as not found.
func TestOutOfStockChoice(t *testing.T) {
	e := newE2E(t, "butter", "bananas")
	var mu sync.Mutex
	var asked []choice.Question
	e.deps.Resolver = resolverFunc(func(_ context.Context, q choice.Question) (choice.Answer, error) {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return choice.Answer{Kind: choice.KindNothing}, nil
	})
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomes(res.Summary); got["butter"] != "not_found" || got["bananas"] != "added" {
		t.Fatalf("outcomes = %v", got)
	}
	if len(asked) != 1 || asked[0].ItemName != "butter" || len(asked[0].Options) == 0 {
		t.Errorf("questions = %+v", asked)
	}
}

type resolverFunc func(context.Context, choice.Question) (choice.Answer, error)

func (f resolverFunc) Choose(ctx context.Context, q choice.Question) (choice.Answer, error) {
	return f(ctx, q)
}
