package homeassistant

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// itemFinished is item i's finished event of run "run-1".
func itemFinished(i, total int) runstatus.Event {
	it := report.ItemResult{ItemID: fmt.Sprintf("u%d", i), ItemName: fmt.Sprintf("item %d", i), Quantity: 1, Outcome: report.OutcomeAdded}
	return runstatus.Event{Time: time.Now(), Kind: runstatus.KindItemFinished, RunID: "run-1", Item: &it,
		Progress: runstatus.Progress{Total: total, Done: i}}
}

// consume runs sink.Consume on a new bus until the returned stop is called
// (which closes the bus and waits for Consume to return).
func consume(t *testing.T, sink *EventSink) (*runstatus.Bus, func()) {
	t.Helper()
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(64)
	done := make(chan error, 1)
	go func() { done <- sink.Consume(testCtx(t), sub) }()
	var stopped atomic.Bool
	stop := func() {
		if stopped.Swap(true) {
			return
		}
		bus.Close()
		if err := receive(t, done, "Consume to return after the bus closed"); err != nil {
			t.Errorf("Consume: %v", err)
		}
	}
	t.Cleanup(stop)
	return bus, stop
}

// checkItemEvents checks that Home Assistant received item 1..n's finished
// events once each, in order, and that those in late were marked late.
func checkItemEvents(t *testing.T, f *fakeha.Server, n int, late map[int]bool) {
	t.Helper()
	got := f.EventsOfType(EventItemFinished)
	if len(got) != n {
		t.Fatalf("%d item_finished events, want %d: %+v", len(got), n, got)
	}
	for i, ev := range got {
		want := fmt.Sprintf("u%d", i+1)
		if ev.Data["item_id"] != want {
			t.Errorf("item_finished #%d is %v, want %s (out of order)", i+1, ev.Data["item_id"], want)
		}
		if !late[i+1] {
			continue
		}
		if ev.Data["late"] != true {
			t.Errorf("item_finished %s fired after Home Assistant came back is not marked late: %v", want, ev.Data)
		}
		if at, _ := ev.Data["occurred_at"].(string); at == "" {
			t.Errorf("late item_finished %s has no occurred_at", want)
		} else if _, err := time.Parse(time.RFC3339Nano, at); err != nil {
			t.Errorf("occurred_at %q: %v", at, err)
		}
	}
}

// Home Assistant goes away mid-run (while an item_finished event is being
// fired) and comes back: every event arrives, in order, the ones from while
// it was away marked late.
func TestEventSinkQueuesEventsAcrossHomeAssistantRestart(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	sink := NewEventSink(c, EventSinkOptions{FireTimeout: testWait})
	bus, stop := consume(t, sink)

	// The second item's event takes Home Assistant down as it arrives: its
	// outcome is unknown to gemini-supply (the connection drops unanswered).
	var fires atomic.Int32
	f.SetEventHook(func(eventType string) fakeha.Fault {
		if eventType == EventItemFinished && fires.Add(1) == 2 {
			f.Down() // Home Assistant stops before handling it
			return fakeha.FaultDropBeforeApply
		}
		return fakeha.FaultNone
	})
	const total = 5
	bus.Publish(runstatus.Event{Time: time.Now(), Kind: runstatus.KindRunStarted, RunID: "run-1", Progress: runstatus.Progress{Total: total}})
	bus.Publish(itemFinished(1, total))
	eventually(t, "item 1's event", func() bool { return len(f.EventsOfType(EventItemFinished)) == 1 })
	for i := 2; i <= 4; i++ {
		bus.Publish(itemFinished(i, total))
	}
	eventually(t, "items 2–4 queued while Home Assistant is down", func() bool { return sink.Pending() == 3 })
	if n := len(f.EventsOfType(EventItemFinished)); n != 1 {
		t.Fatalf("%d item events while Home Assistant was down", n)
	}

	f.Boot()
	f.FinishStartup()
	bus.Publish(itemFinished(5, total))
	eventually(t, "every item's event", func() bool { return len(f.EventsOfType(EventItemFinished)) == total })
	stop()
	checkItemEvents(t, f, total, map[int]bool{2: true, 3: true, 4: true})
	if got := f.EventsOfType(EventItemFinished)[0].Data["late"]; got != nil {
		t.Errorf("item 1's event, fired on time, says late = %v", got)
	}
	if sink.Pending() != 0 {
		t.Errorf("%d events left in the outbox", sink.Pending())
	}
}

// Events queued while Home Assistant is away survive a restart of
// gemini-supply: the next sink (the next process) fires them, in order, late.
func TestEventSinkOutboxSurvivesRestart(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	outbox := filepath.Join(t.TempDir(), EventOutboxFile)

	first := NewEventSink(c, EventSinkOptions{FireTimeout: testWait, OutboxPath: outbox})
	bus, stop := consume(t, first)
	f.Down()
	eventually(t, "disconnect", func() bool { return !c.Connected() })
	for i := 1; i <= 3; i++ {
		bus.Publish(itemFinished(i, 3))
	}
	eventually(t, "three events queued", func() bool { return first.Pending() == 3 })
	stop() // gemini-supply stops with Home Assistant still down
	if _, err := os.Stat(outbox); err != nil {
		t.Fatalf("the outbox was not written: %v", err)
	}

	second := NewEventSink(c, EventSinkOptions{FireTimeout: testWait, OutboxPath: outbox})
	if n := second.Pending(); n != 3 {
		t.Fatalf("the next sink found %d queued events, want 3", n)
	}
	_, stop2 := consume(t, second)
	f.Boot()
	f.FinishStartup()
	eventually(t, "the queued events fired", func() bool { return len(f.EventsOfType(EventItemFinished)) == 3 })
	// Home Assistant has them; the sink learns it from the replies.
	eventually(t, "the outbox emptied", func() bool { return second.Pending() == 0 })
	stop2()
	checkItemEvents(t, f, 3, map[int]bool{1: true, 2: true, 3: true})
	if _, err := os.Stat(outbox); !os.IsNotExist(err) {
		t.Errorf("the outbox file is still there after every event was fired (%v)", err)
	}
}

// The busy event (a trigger refused while a run goes) waits in the outbox
// too when Home Assistant is away.
func TestBusyEventWaitsInTheOutbox(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	sink := NewEventSink(c, EventSinkOptions{FireTimeout: testWait})
	_, stop := consume(t, sink)
	f.Down()
	eventually(t, "disconnect", func() bool { return !c.Connected() })
	sink.BusyReporter()(testCtx(t), runstatus.Request{Source: "mqtt", Items: []string{"milk"}})
	if n := sink.Pending(); n != 1 {
		t.Fatalf("%d events queued, want the busy event", n)
	}
	f.Boot()
	f.FinishStartup()
	eventually(t, "the busy event", func() bool { return len(f.EventsOfType(EventBusy)) == 1 })
	stop()
	if ev := f.EventsOfType(EventBusy)[0]; ev.Data["late"] != true || ev.Data["source"] != "mqtt" {
		t.Errorf("busy event %v, want it late from mqtt", ev.Data)
	}
}
