package homeassistant_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
)

// The full shopping run against the fake Home Assistant: the real
// orchestrator (app.Runner), the demo store, the scripted model, real
// Chromium, the todo provider, the event sink.

const integrationToken = "integration-token-5f1e2d"

func requireBrowser(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test with Chromium skipped in -short mode")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("the browser or the Playwright driver is not set up: run make test (or eval \"$(bash scripts/setup.sh)\" first)")
	}
	return exe
}

func logger() *slog.Logger {
	if os.Getenv("GEMINI_SUPPLY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

type haRun struct {
	fake    *fakeha.Server
	summary report.Summary
	err     error
}

// shopWithHA runs one shopping run whose list is todo.shopping_list on a fake
// Home Assistant; setup may install faults before the run.
func shopWithHA(t *testing.T, concurrency int, setup func(*fakeha.Server)) haRun {
	exe := requireBrowser(t)
	f, err := fakeha.Start(fakeha.Options{Token: integrationToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.AddTodoList("todo.shopping_list", "Shopping List", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{UID: "bananas", Summary: "bananas"},
		fakeha.TodoItem{UID: "eggs", Summary: "2x eggs"},
		fakeha.TodoItem{UID: "bread", Summary: "sourdough bread"},
		fakeha.TodoItem{UID: "dragon", Summary: "dragon fruit"},
		fakeha.TodoItem{UID: "butter", Summary: "butter"},
		fakeha.TodoItem{UID: "coffee", Summary: "coffee"},
		fakeha.TodoItem{UID: "kiwi", Summary: "kiwi #404"},                   // tagged by an earlier run: skipped
		fakeha.TodoItem{UID: "flour", Summary: "flour", Status: "completed"}, // done: ignored
	)
	log := logger()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := homeassistant.Dial(ctx, homeassistant.Options{URL: f.URL(), Token: config.Secret(integrationToken), Logger: log,
		BackoffBase: time.Millisecond, BackoffMax: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	provider := homeassistant.NewTodoProvider(c, homeassistant.TodoOptions{Logger: log})
	if err := provider.Check(ctx); err != nil {
		t.Fatal(err)
	}

	bus := &runstatus.Bus{}
	sub := bus.Subscribe(256)
	sinkDone := make(chan error, 1)
	go func() {
		sinkDone <- homeassistant.NewEventSink(c, homeassistant.EventSinkOptions{Logger: log}).Consume(ctx, sub)
	}()

	dir := t.TempDir()
	r, err := app.NewRunner(config.Config{
		Store: "demo", GeminiModel: config.ScriptedModel, DataDir: dir,
		BrowserExecutable: exe, BrowserHeadless: true, Concurrency: concurrency, MaxTurns: 30, TimeBudget: 2 * time.Minute,
		PostalCode: "H2X 1Y4",
	}, app.Deps{
		Provider: provider, Bus: bus, Logger: log, ModelBackoff: []time.Duration{10 * time.Millisecond},
		Scripted: app.ScriptedOptions{Misbehave: map[string]scripted.Misbehaviour{"coffee": scripted.ServerError}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	if setup != nil {
		setup(f)
	}
	summary, err := r.Run(ctx, runstatus.Request{Source: "event"})
	bus.Close()
	select {
	case <-sinkDone:
	case <-ctx.Done():
		t.Fatal("the event sink did not finish")
	}
	return haRun{fake: f, summary: summary, err: err}
}

// listState is uid → "summary|status|description".
func listState(f *fakeha.Server) map[string]string {
	out := map[string]string{}
	for _, it := range f.TodoItems("todo.shopping_list") {
		out[it.UID] = it.Summary + "|" + it.Status + "|" + it.Description
	}
	return out
}

var wantList = map[string]string{
	"bananas": "bananas|completed|",
	"eggs":    "2x eggs|completed|",
	"bread":   "sourdough bread|completed|",
	"dragon":  "dragon fruit #404|needs_action|",
	"butter":  "butter #404|needs_action|",
	"coffee":  "coffee #failed|needs_action|",
	"kiwi":    "kiwi #404|needs_action|",
	"flour":   "flour|completed|",
}

func checkList(t *testing.T, run haRun) {
	t.Helper()
	f := run.fake
	got := listState(f)
	for uid, want := range wantList {
		if got[uid] != want {
			t.Errorf("item %s = %q, want %q\n%s", uid, got[uid], want, run.summary.Markdown())
		}
	}
	for _, c := range f.Calls() {
		if _, ok := c.Data["description"]; ok {
			t.Errorf("a description was sent to todo.shopping_list, which does not support them: %+v", c)
		}
		if c.Domain == "todo" && (c.Data["item"] == "kiwi" || c.Data["item"] == "flour") {
			t.Errorf("an item the run should skip was touched: %+v", c)
		}
	}
}

func checkSummaryNotification(t *testing.T, run haRun) {
	t.Helper()
	n, ok := run.fake.Notifications()[homeassistant.DefaultSummaryNotificationID]
	if !ok {
		t.Fatalf("no summary notification; notifications: %+v", run.fake.Notifications())
	}
	if n.Title != run.summary.Title() || n.Message != run.summary.Markdown() {
		t.Errorf("summary notification = %q / %q, want the run summary", n.Title, n.Message)
	}
	for _, want := range []string{"dragon fruit", "out of stock", "coffee", "Sourdough"} {
		if !strings.Contains(strings.ToLower(n.Message), strings.ToLower(want)) {
			t.Errorf("summary notification lacks %q:\n%s", want, n.Message)
		}
	}
}

func TestShoppingRunAgainstHomeAssistant(t *testing.T) {
	run := shopWithHA(t, 1, nil)
	if run.err != nil {
		t.Fatalf("run: %v", run.err)
	}
	checkList(t, run)
	checkSummaryNotification(t, run)

	// Events fired in order: started, one per item, finished, the cart.
	evs := run.fake.Events()
	if len(evs) != 9 {
		t.Fatalf("events: %+v", evs)
	}
	if evs[0].Type != homeassistant.EventRunStarted || evs[0].Data["total"] != 6.0 {
		t.Errorf("first event = %+v", evs[0])
	}
	outcomes := map[string]string{}
	for _, e := range evs[1:7] {
		if e.Type != homeassistant.EventItemFinished {
			t.Fatalf("event %+v, want item_finished", e)
		}
		outcomes[e.Data["item"].(string)] = e.Data["outcome"].(string)
	}
	want := map[string]string{"bananas": "added", "2x eggs": "added", "sourdough bread": "added", "dragon fruit": "not_found", "butter": "not_found", "coffee": "failed"}
	if fmt.Sprint(outcomes) != fmt.Sprint(want) {
		t.Errorf("item_finished outcomes = %v, want %v", outcomes, want)
	}
	last := evs[7]
	if last.Type != homeassistant.EventRunFinished || last.Data["added"] != 3.0 || last.Data["not_found"] != 2.0 || last.Data["failed"] != 1.0 {
		t.Errorf("run_finished event = %+v", last)
	}
	// The cart as the demo store has it: bananas, 2 eggs, bread.
	if cart := evs[8]; cart.Type != homeassistant.EventCart || cart.Data["units"] != 4.0 || cart.Data["total_cents"] != 1606.0 {
		t.Errorf("last event = %+v, want the cart", cart)
	}
}

// Ten dropped connections during a run: before and
// after Home Assistant applied an update, while reading the list, while
// sending the summary. No list update is lost and none is applied twice.
func TestShoppingRunSurvivesTenDrops(t *testing.T) {
	var mu sync.Mutex
	attempts, faults := 0, 0
	inject := func(kind string) fakeha.Fault {
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if faults >= 10 || attempts%3 == 0 {
			return fakeha.FaultNone
		}
		faults++
		if faults%2 == 0 {
			return fakeha.FaultDropBeforeApply
		}
		return fakeha.FaultDropAfterApply
	}
	run := shopWithHA(t, 1, func(f *fakeha.Server) {
		f.SetCommandHook(func(msgType string) fakeha.Fault {
			if msgType == "get_states" || msgType == "todo/item/list" {
				return inject(msgType)
			}
			return fakeha.FaultNone
		})
		f.SetServiceHook(func(c fakeha.ServiceCall) fakeha.Fault {
			if c.Domain == "todo" || (c.Domain == "persistent_notification" && c.Data["notification_id"] == homeassistant.DefaultSummaryNotificationID) {
				return inject(c.Domain + "." + c.Service)
			}
			return fakeha.FaultNone
		})
	})
	if run.err != nil {
		t.Fatalf("run: %v", run.err)
	}
	mu.Lock()
	gotFaults := faults
	mu.Unlock()
	if gotFaults != 10 {
		t.Fatalf("%d faults injected, want 10", gotFaults)
	}
	if up := run.fake.Upgrades(); up != 11 {
		t.Errorf("connections = %d, want 11", up)
	}
	checkList(t, run)
	checkSummaryNotification(t, run)
	changes := map[string]int{}
	for _, c := range run.fake.Calls() {
		if c.Domain == "todo" && c.Changed {
			changes[c.Data["item"].(string)]++
		}
	}
	var uids []string
	for uid := range wantList {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	for _, uid := range uids {
		want := 1
		if uid == "kiwi" || uid == "flour" {
			want = 0
		}
		if changes[uid] != want {
			t.Errorf("item %s changed %d times, want %d", uid, changes[uid], want)
		}
	}
	if n := run.fake.IDReuseErrors(); n != 0 {
		t.Errorf("id_reuse errors: %d", n)
	}
}

// Home Assistant restarts twice during a real run: once right after it
// applied a list update (the client never got the answer) and once before it
// applied another, each time down for 3 s and then starting (todo entity not
// loaded, service calls answered success without effect) before it runs.
// Every item still ends as the run reported, each changed exactly once.
func TestShoppingRunSurvivesHomeAssistantRestarts(t *testing.T) {
	const restarts = 2
	var updates atomic.Int32
	errs := make(chan error, 1)
	run := shopWithHA(t, 1, func(f *fakeha.Server) {
		f.SetServiceHook(func(c fakeha.ServiceCall) fakeha.Fault {
			if c.Domain != "todo" || f.CoreState() != fakeha.CoreRunning {
				return fakeha.FaultNone
			}
			switch updates.Add(1) {
			case 2:
				return fakeha.FaultRestartAfterApply
			case 4:
				return fakeha.FaultRestartBeforeApply
			}
			return fakeha.FaultNone
		})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			for k := 1; k <= restarts; k++ {
				for f.Restarts() < k {
					select {
					case <-ctx.Done():
						errs <- fmt.Errorf("restart %d never happened", k)
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
				select { // the down-time: the world's clock, not a test wait
				case <-ctx.Done():
					errs <- ctx.Err()
					return
				case <-time.After(3 * time.Second):
				}
				before := f.Upgrades()
				f.Boot()
				for f.Upgrades() == before {
					select {
					case <-ctx.Done():
						errs <- fmt.Errorf("the client did not reconnect to the starting Home Assistant after restart %d", k)
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
				f.FinishStartup()
			}
			errs <- nil
		}()
	})
	if run.err != nil {
		t.Fatalf("run: %v", run.err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if got := run.fake.Restarts(); got != restarts {
		t.Fatalf("Home Assistant restarted %d times, want %d", got, restarts)
	}
	checkList(t, run)
	for uid := range wantList {
		want := 1
		if uid == "kiwi" || uid == "flour" {
			want = 0
		}
		if n := run.fake.AppliedUpdates(uid); n != want {
			t.Errorf("item %s changed %d times, want %d", uid, n, want)
		}
	}
	if _, ok := run.fake.Notifications()[homeassistant.DefaultSummaryNotificationID]; !ok {
		t.Error("no summary notification after the restarts")
	}
}
