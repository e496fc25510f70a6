package homeassistant

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// restartWait bounds every wait of the restart tests: it only stops a hang.
const restartWait = 90 * time.Second

// restartItems are the items of a run; decision(i) is what the run reports.
const restartItems = 6

func decision(i int) string { return []string{"added", "not_found", "failed"}[i%3] }

func restartUID(i int) string { return fmt.Sprintf("uid-%d", i) }

// wantItem is item i as Home Assistant must show it after the run.
func wantItem(i int) fakeha.TodoItem {
	it := fakeha.TodoItem{UID: restartUID(i), Summary: fmt.Sprintf("item %d", i), Status: "needs_action"}
	switch decision(i) {
	case "added":
		it.Status = "completed"
		it.Description = fmt.Sprintf("gemini-supply: added product %d", i)
	case "not_found":
		it.Summary += " #404"
		it.Description = "gemini-supply: nothing like it"
	case "failed":
		it.Summary += " #failed"
		it.Description = "gemini-supply: browser crashed"
	}
	return it
}

func markItem(ctx context.Context, p *TodoProvider, i int) error {
	id := restartUID(i)
	switch decision(i) {
	case "added":
		return p.MarkCompleted(ctx, id, shoppinglist.Added{ProductName: fmt.Sprintf("product %d", i), Quantity: 1})
	case "not_found":
		return p.MarkNotFound(ctx, id, "nothing like it")
	default:
		return p.MarkFailed(ctx, id, "browser crashed")
	}
}

// restarter plays Home Assistant's restart once it went down: it stays down
// for downtime, boots (STARTING, entities not loaded), waits until the
// client has connected to the starting Home Assistant, and finishes startup.
// What it could not do is sent on errs.
func restarter(ctx context.Context, f *fakeha.Server, downtime time.Duration, errs chan<- error) {
	wait := func(what string, cond func() bool) bool {
		for !cond() {
			select {
			case <-ctx.Done():
				errs <- fmt.Errorf("restarter: %s: %w", what, ctx.Err())
				return false
			case <-time.After(5 * time.Millisecond):
			}
		}
		return true
	}
	if !wait("Home Assistant going down", func() bool { return f.Restarts() > 0 }) {
		return
	}
	select { // the down-time itself: the world's clock, not a test wait
	case <-ctx.Done():
		errs <- ctx.Err()
		return
	case <-time.After(downtime):
	}
	before := f.Upgrades()
	f.Boot()
	if !wait("the client connecting to the starting Home Assistant", func() bool {
		return f.Upgrades() > before && f.ActiveConnections() > 0
	}) {
		return
	}
	f.FinishStartup()
	errs <- nil
}

// TestUpdatesSurviveRestarts restarts Home Assistant at every phase of a run
// — before the first update, between updates, during a write (before and
// after Home Assistant applied it), with down-times from 0 to 10 s — and
// checks that every item ends as the run reported, no update is applied
// twice, and no todo write reaches Home Assistant while it is starting. A
// mark whose deadline passes while Home Assistant is away is queued and
// lands after the reconnect (Flush).
func TestUpdatesSurviveRestarts(t *testing.T) {
	type phase int
	const (
		beforeFirst phase = iota
		betweenUpdates
		duringWriteBeforeApply
		duringWriteAfterApply
	)
	tests := []struct {
		name     string
		phase    phase
		downtime time.Duration
		// markTimeout is each mark's deadline (the run's finalize timeout);
		// shorter than downtime, marks are queued and land later.
		markTimeout time.Duration
	}{
		{"before the first update, no down-time", beforeFirst, 0, restartWait},
		{"before the first update, 3 s down", beforeFirst, 3 * time.Second, restartWait},
		{"between updates, no down-time", betweenUpdates, 0, restartWait},
		{"between updates, 1 s down", betweenUpdates, time.Second, restartWait},
		{"during a write before it applied, no down-time", duringWriteBeforeApply, 0, restartWait},
		{"during a write before it applied, 3 s down", duringWriteBeforeApply, 3 * time.Second, restartWait},
		{"during a write after it applied, no down-time", duringWriteAfterApply, 0, restartWait},
		{"during a write after it applied, 3 s down", duringWriteAfterApply, 3 * time.Second, restartWait},
		{"between updates, 10 s down, deadlines pass while away", betweenUpdates, 10 * time.Second, 500 * time.Millisecond},
		{"during a write after it applied, 10 s down, deadlines pass while away", duringWriteAfterApply, 10 * time.Second, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := startFake(t, fakeha.Options{Coalesce: true})
			var items []fakeha.TodoItem
			for i := range restartItems {
				items = append(items, fakeha.TodoItem{UID: restartUID(i), Summary: fmt.Sprintf("item %d", i)})
			}
			f.AddTodoList(list, "Groceries", fakeha.LocalTodoFeatures, items...)
			logs := &syncbuf.Buffer{}
			c := dialTest(t, testOptions(f, logs))
			p := NewTodoProvider(c, TodoOptions{})
			ctx, cancel := context.WithTimeout(context.Background(), restartWait)
			defer cancel()
			if _, err := p.Items(ctx); err != nil {
				t.Fatal(err)
			}

			// No todo write may reach Home Assistant while it is not RUNNING.
			var early atomic.Int32
			var updates atomic.Int32
			f.SetServiceHook(func(sc fakeha.ServiceCall) fakeha.Fault {
				if sc.Domain != "todo" {
					return fakeha.FaultNone
				}
				if f.CoreState() != fakeha.CoreRunning {
					early.Add(1)
				}
				if updates.Add(1) != 3 || f.Restarts() > 0 {
					return fakeha.FaultNone
				}
				switch tt.phase {
				case duringWriteBeforeApply:
					return fakeha.FaultRestartBeforeApply
				case duringWriteAfterApply:
					return fakeha.FaultRestartAfterApply
				}
				return fakeha.FaultNone
			})
			restarted := make(chan error, 1)
			go restarter(ctx, f, tt.downtime, restarted)

			if tt.phase == beforeFirst {
				f.Down()
			}
			var pending []string
			for i := range restartItems {
				mctx, mcancel := context.WithTimeout(ctx, tt.markTimeout)
				err := markItem(mctx, p, i)
				mcancel()
				switch {
				case errors.Is(err, shoppinglist.ErrUpdatePending):
					pending = append(pending, restartUID(i))
				case err != nil:
					t.Fatalf("mark item %d: %v\n%s", i, err, logs)
				}
				if tt.phase == betweenUpdates && i == 2 {
					f.Down()
				}
			}
			if err := <-restarted; err != nil {
				t.Fatalf("%v\n%s", err, logs)
			}
			if tt.markTimeout < tt.downtime && len(pending) == 0 {
				t.Errorf("no mark missed its deadline during a %v down-time: the queue was not exercised", tt.downtime)
			}
			if failed := p.Flush(ctx); len(failed) != 0 {
				t.Fatalf("updates not applied after Home Assistant came back: %v\n%s", failed, logs)
			}
			if p.Pending() != 0 {
				t.Errorf("%d updates still queued after Flush", p.Pending())
			}

			if got := f.Restarts(); got != 1 {
				t.Errorf("Home Assistant restarted %d times, want 1", got)
			}
			for i, it := range f.TodoItems(list) {
				if want := wantItem(i); it != want {
					t.Errorf("item %d = %+v, want %+v (queued: %v)\n%s", i, it, want, pending, logs)
				}
				if n := f.AppliedUpdates(it.UID); n != 1 {
					t.Errorf("item %s was changed %d times, want exactly once", it.UID, n)
				}
			}
			if n := early.Load(); n != 0 {
				t.Errorf("%d todo writes reached Home Assistant before it was running", n)
			}
			if n := f.IDReuseErrors(); n != 0 {
				t.Errorf("id_reuse errors: %d", n)
			}
		})
	}
}

// A todo entity that is not loaded when Home Assistant says RUNNING (an
// integration still setting up, or reloaded): Home Assistant answers success
// to todo.update_item and changes nothing. The write is read back, found not
// to have taken, and applied again once the entity is loaded — and the mark
// does not return before that.
func TestWriteThatDidNotTakeIsAppliedAgain(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Groceries", fakeha.LocalTodoFeatures, fakeha.TodoItem{UID: "milk", Summary: "milk"})
	logs := &syncbuf.Buffer{}
	p := NewTodoProvider(dialTest(t, testOptions(f, logs)), TodoOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), restartWait)
	defer cancel()
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	f.SetServiceHook(func(sc fakeha.ServiceCall) fakeha.Fault {
		once.Do(func() { f.SetEntitiesLoaded(false) }) // the integration reloads under the first write
		return fakeha.FaultNone
	})
	done := make(chan error, 1)
	go func() { done <- p.MarkCompleted(ctx, "milk", shoppinglist.Added{ProductName: "Milk 2 L"}) }()

	testwait.Until(t, "the first write, answered success without effect", restartWait, func() bool {
		calls := f.Calls()
		return len(calls) == 1 && calls[0].Error == "" && !calls[0].Changed
	}, logs.String)
	select {
	case err := <-done:
		t.Fatalf("the mark returned (%v) while its write had not taken", err)
	default:
	}
	f.SetEntitiesLoaded(true)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mark: %v\n%s", err, logs)
		}
	case <-ctx.Done():
		t.Fatalf("the mark did not finish after the entity loaded\n%s", logs)
	}
	want := fakeha.TodoItem{UID: "milk", Summary: "milk", Status: "completed", Description: "gemini-supply: added Milk 2 L"}
	if got := f.TodoItems(list); len(got) != 1 || got[0] != want {
		t.Fatalf("items = %+v, want %+v", got, want)
	}
	if n := f.AppliedUpdates("milk"); n != 1 {
		t.Errorf("applied %d times, want 1", n)
	}
	if len(f.Calls()) != 2 {
		t.Errorf("calls = %+v, want the write that did not take and its repetition", f.Calls())
	}
}

// The client connects to a Home Assistant that is still starting: reads and
// writes — a todo mark, the entity check, a notification — wait until it is
// RUNNING (homeassistant_started), then go through.
func TestCallsWaitForHomeAssistantToStart(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Groceries", fakeha.ShoppingListFeatures, fakeha.TodoItem{UID: "milk", Summary: "milk"})
	f.Down()
	f.Boot()
	logs := &syncbuf.Buffer{}
	c := dialTest(t, testOptions(f, logs))
	if c.Running() {
		t.Fatal("Running() is true while Home Assistant is starting")
	}
	p := NewTodoProvider(c, TodoOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), restartWait)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.MarkNotFound(ctx, "milk", "") }()
	checked := make(chan error, 1)
	go func() { checked <- p.Check(ctx) }()
	notified := make(chan error, 1)
	go func() { notified <- NewNotifier(c, NotifierOptions{}).Notify(ctx, "n1", "title", "sent once running") }()
	// A Home Assistant that is starting has not the entity loaded: Check
	// would wrongly call it unknown and a write would be lost.
	testwait.Until(t, "the client subscribed to homeassistant_started", restartWait, func() bool {
		return f.Subscriptions(fakeha.EventHomeAssistantStarted) == 1
	}, logs.String)
	if n := len(f.Calls()); n != 0 {
		t.Fatalf("%d service calls sent while Home Assistant was starting", n)
	}
	f.FinishStartup()
	for _, ch := range []chan error{done, checked, notified} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatalf("%v\n%s", err, logs)
			}
		case <-ctx.Done():
			t.Fatalf("calls still waiting after Home Assistant started\n%s", logs)
		}
	}
	if !c.Running() {
		t.Error("Running() is false after Home Assistant started")
	}
	if got := f.TodoItems(list); got[0].Summary != "milk #404" {
		t.Errorf("item = %+v", got[0])
	}
}

// A person deletes an item during the run: todo.update_item answers
// service_validation_error "Unable to find to-do list item", mapped to
// ErrItemGone; so is an item already gone when the mark reads it. Neither
// is queued.
func TestMarkOfDeletedItemIsItemGone(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Groceries", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{UID: "milk", Summary: "milk"}, fakeha.TodoItem{UID: "eggs", Summary: "eggs"})
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
	ctx := testCtx(t)
	// Deleted between the mark's read and its write.
	f.SetServiceHook(func(sc fakeha.ServiceCall) fakeha.Fault {
		f.AddTodoList(list, "Groceries", fakeha.ShoppingListFeatures, fakeha.TodoItem{UID: "eggs", Summary: "eggs"})
		return fakeha.FaultNone
	})
	err := p.MarkCompleted(ctx, "milk", shoppinglist.Added{})
	if !errors.Is(err, ErrItemGone) || errors.Is(err, shoppinglist.ErrUpdatePending) {
		t.Fatalf("err = %v, want ErrItemGone", err)
	}
	calls := f.Calls()
	if len(calls) != 1 || calls[0].Error != CodeServiceValidationError {
		t.Fatalf("calls = %+v, want one answered service_validation_error", calls)
	}
	f.SetServiceHook(nil)
	if err := p.MarkFailed(ctx, "milk", "x"); !errors.Is(err, ErrItemGone) {
		t.Fatalf("err = %v, want ErrItemGone", err)
	}
	if p.Pending() != 0 {
		t.Errorf("%d updates queued for a deleted item", p.Pending())
	}
	if _, err := p.Item(ctx, "milk"); !errors.Is(err, ErrItemGone) {
		t.Errorf("Item of the deleted item: %v, want ErrItemGone", err)
	}
}

// An update that cannot land before the run ends is reported, once, by
// Flush, and still lands when Home Assistant comes back.
func TestUpdateThatCannotLandIsReported(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Groceries", fakeha.ShoppingListFeatures, fakeha.TodoItem{UID: "milk", Summary: "milk"})
	logs := &syncbuf.Buffer{}
	p := NewTodoProvider(dialTest(t, testOptions(f, logs)), TodoOptions{})
	ctx := testCtx(t)
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}
	f.Down()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := p.MarkCompleted(short, "milk", shoppinglist.Added{})
	cancel()
	if !errors.Is(err, shoppinglist.ErrUpdatePending) {
		t.Fatalf("err = %v, want ErrUpdatePending", err)
	}
	short, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
	failed := p.Flush(short)
	cancel()
	if len(failed) != 1 || !errors.Is(failed["milk"], shoppinglist.ErrUpdatePending) {
		t.Fatalf("Flush = %v, want milk pending", failed)
	}
	if msg := failed["milk"].Error(); !strings.Contains(msg, `"milk"`) || !strings.Contains(msg, "mark completed") {
		t.Errorf("the report does not say which update: %v", failed["milk"])
	}
	if again := p.Flush(short); len(again) != 0 {
		t.Errorf("reported twice: %v", again)
	}
	f.Boot()
	f.FinishStartup()
	testwait.Until(t, "the queued update landing", restartWait, func() bool {
		return f.TodoItems(list)[0].Status == "completed"
	}, logs.String)
	testwait.Until(t, "the queue emptying", restartWait, func() bool { return p.Pending() == 0 }, logs.String)
	if n := f.AppliedUpdates("milk"); n != 1 {
		t.Errorf("applied %d times, want 1", n)
	}
}

// The todo entity stays unloaded while Home Assistant runs: the update is
// queued, and the summary notification says which update did not land and
// why.
func TestSummaryNamesUpdatesThatDidNotLand(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Groceries", fakeha.ShoppingListFeatures, fakeha.TodoItem{UID: "milk", Summary: "milk"})
	logs := &syncbuf.Buffer{}
	p := NewTodoProvider(dialTest(t, testOptions(f, logs)), TodoOptions{})
	ctx := testCtx(t)
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}
	f.SetEntitiesLoaded(false)
	// The mark's time runs out once it has found the entity not loaded (a
	// fixed 200 ms could end before the first read on a loaded machine,
	// and then nobody knows why).
	short, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for !strings.Contains(logs.String(), "is not loaded yet") {
			select {
			case <-short.Done(): // the test's own bound
				return
			case <-tick.C:
			}
		}
	}()
	err := p.MarkNotFound(short, "milk", "none left")
	cancel()
	if !errors.Is(err, shoppinglist.ErrUpdatePending) {
		t.Fatalf("err = %v, want ErrUpdatePending", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := p.SendSummary(sctx, report.Summary{RunID: "r1"}); err != nil {
		t.Fatalf("SendSummary: %v\n%s", err, logs)
	}
	n := f.Notifications()[DefaultSummaryNotificationID]
	// Why depends on which wait the deadline cut on a loaded machine: the
	// unloaded entity, or Home Assistant's startup state read again.
	why := strings.Contains(n.Message, "not loaded") || strings.Contains(n.Message, "finish starting")
	if !strings.Contains(n.Message, "not updated") || !strings.Contains(n.Message, "milk") || !why {
		t.Errorf("the summary does not say which update did not land and why:\n%s", n.Message)
	}
}
