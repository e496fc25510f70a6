package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

func TestEventSinkFiresInOrder(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	sink := NewEventSink(c, EventSinkOptions{})
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(64)
	done := make(chan error, 1)
	go func() { done <- sink.Consume(testCtx(t), sub) }()

	milk := report.ItemResult{ItemID: "u1", ItemName: "milk", Quantity: 2, Outcome: report.OutcomeAdded,
		ProductName: "Lactantia 2% 2 L", Price: money.Parse("$5.49"), URL: "https://www.metro.ca/p/1"}
	eggs := report.ItemResult{ItemID: "u2", ItemName: "eggs", Quantity: 1, Outcome: report.OutcomeNotFound, Explanation: "sold out"}
	summary := report.Summary{RunID: "run-1", Items: []report.ItemResult{milk, eggs}, CartURL: "https://www.metro.ca/cart"}
	now := time.Now()
	events := []runstatus.Event{
		{Time: now, Kind: runstatus.KindRunStarted, RunID: "run-1", Progress: runstatus.Progress{Total: 2}},
		{Time: now, Kind: runstatus.KindItemStarted, RunID: "run-1", Item: &report.ItemResult{ItemName: "milk"}},
		{Time: now, Kind: runstatus.KindWaitingForUser, RunID: "run-1", Item: &report.ItemResult{ItemName: "milk"}, Message: "Which milk?"},
		{Time: now, Kind: runstatus.KindUserAnswered, RunID: "run-1", Item: &report.ItemResult{ItemName: "milk"}},
		{Time: now, Kind: runstatus.KindItemFinished, RunID: "run-1", Item: &milk, Progress: runstatus.Progress{Total: 2, Done: 1, Added: 1}},
		{Time: now, Kind: runstatus.KindWaitingForUser, RunID: "run-1", Item: &report.ItemResult{ItemName: "eggs"}, Message: "Which eggs?"},
		{Time: now, Kind: runstatus.KindItemFinished, RunID: "run-1", Item: &eggs, Progress: runstatus.Progress{Total: 2, Done: 2, Added: 1, NotFound: 1}},
		{Time: now, Kind: runstatus.KindRunFinished, RunID: "run-1", Summary: &summary},
	}
	for _, e := range events {
		bus.Publish(e)
	}
	bus.Close()
	if err := receive(t, done, "Consume to return after the bus closed"); err != nil {
		t.Fatalf("Consume: %v", err)
	}

	var types []string
	for _, e := range f.Events() {
		types = append(types, e.Type)
	}
	want := []string{EventRunStarted, EventItemFinished, EventItemFinished, EventRunFinished}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("events = %v, want %v", types, want)
	}
	ev := f.Events()
	item := ev[1].Data
	for k, v := range map[string]any{"item": "milk", "item_id": "u1", "outcome": "added", "product": "Lactantia 2% 2 L",
		"price": "$5.49", "price_cents": 549.0, "quantity": 2.0, "url": "https://www.metro.ca/p/1", "run_id": "run-1"} {
		if item[k] != v {
			t.Errorf("item_finished[%s] = %v, want %v", k, item[k], v)
		}
	}
	if ev[2].Data["explanation"] != "sold out" || ev[2].Data["outcome"] != "not_found" {
		t.Errorf("second item_finished = %v", ev[2].Data)
	}
	fin := ev[3].Data
	for k, v := range map[string]any{"added": 1.0, "not_found": 1.0, "failed": 0.0, "items": 2.0, "total": "$10.98",
		"total_cents": 1098.0, "cart_url": "https://www.metro.ca/cart", "cancelled": false} {
		if fin[k] != v {
			t.Errorf("run_finished[%s] = %v, want %v", k, fin[k], v)
		}
	}
	if s, _ := fin["summary"].(string); s != summary.Markdown() {
		t.Errorf("run_finished summary is not the markdown summary: %q", s)
	}

	// The waiting notice was shown, dismissed when answered, shown again for
	// eggs, and dismissed when the run finished with the question open.
	var notes []string
	for _, call := range f.Calls() {
		if call.Domain == "persistent_notification" {
			notes = append(notes, call.Service+":"+call.Data["notification_id"].(string))
		}
	}
	wantNotes := []string{"create:gemini_supply_waiting", "dismiss:gemini_supply_waiting", "create:gemini_supply_waiting", "dismiss:gemini_supply_waiting"}
	if !reflect.DeepEqual(notes, wantNotes) {
		t.Fatalf("notifications = %v, want %v", notes, wantNotes)
	}
	if _, shown := f.Notifications()[DefaultWaitingNotificationID]; shown {
		t.Fatal("waiting notification still shown after the run")
	}
}

func TestEventSinkKeepsGoingWhenHomeAssistantFails(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	logs := &syncbuf.Buffer{}
	// A fire timeout that only bounds a hang: the failure below is made by
	// a short context while Home Assistant is down, so a busy machine cannot
	// make the fire after recovery time out.
	sink := NewEventSink(c, EventSinkOptions{FireTimeout: testWait, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	f.SetRefuse(true)
	f.DropAll()
	eventually(t, "disconnect", func() bool { return !c.Connected() })
	down, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	sink.handle(down, runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "r"})
	if !strings.Contains(logs.String(), "could not fire") {
		t.Fatalf("no warning logged:\n%s", logs.String())
	}
	f.SetRefuse(false)
	eventually(t, "reconnect", c.Connected)
	sink.handle(testCtx(t), runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "r2"})
	// The event fired while Home Assistant was down is not lost: it is
	// fired late, before the one that followed it (queued behind it).
	ctx, stop := context.WithCancel(testCtx(t))
	flushed := make(chan struct{})
	go func() { defer close(flushed); sink.flushLoop(ctx) }()
	defer func() { stop(); <-flushed }()
	eventually(t, "both events fired", func() bool { return len(f.EventsOfType(EventRunStarted)) == 2 })
	got := f.EventsOfType(EventRunStarted)
	if got[0].Data["run_id"] != "r" || got[1].Data["run_id"] != "r2" || got[0].Data["late"] != true {
		t.Fatalf("events after recovery = %+v", got)
	}
}

func TestParseStartEvent(t *testing.T) {
	tests := []struct {
		data    string
		want    runstatus.Request
		wantErr string
	}{
		{``, runstatus.Request{Source: "event"}, ""},
		{`{}`, runstatus.Request{Source: "event"}, ""},
		{`{"retry_tagged": true, "concurrency": 2, "items": ["milk", " eggs "]}`,
			runstatus.Request{Source: "event", RetryTagged: true, Concurrency: 2, Items: []string{"milk", "eggs"}}, ""},
		{`{"retry_tagged": "yes", "concurrency": "3", "items": "milk, eggs,"}`,
			runstatus.Request{Source: "event", RetryTagged: true, Concurrency: 3, Items: []string{"milk", "eggs"}}, ""},
		{`{"retry_failed": true}`, runstatus.Request{Source: "event", RetryFailed: true}, ""},
		{`{"retry_failed": "maybe"}`, runstatus.Request{}, "retry_failed"},
		{`{"concurrency": 0}`, runstatus.Request{}, "between 1 and 8"},
		{`{"concurrency": 1.5}`, runstatus.Request{}, "whole number"},
		{`{"retry_tagged": "maybe"}`, runstatus.Request{}, "retry_tagged"},
		{`{"items": [1, 2]}`, runstatus.Request{}, "items"},
		{`["shop"]`, runstatus.Request{}, "not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.data, func(t *testing.T) {
			got, err := ParseStartEvent(json.RawMessage(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestEventTriggerStartsRuns(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	trig := NewEventTrigger(c, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	reqs := make(chan runstatus.Request, 4)
	done := make(chan error, 1)
	go func() {
		done <- trig.Run(ctx, func(_ context.Context, r runstatus.Request) error {
			reqs <- r
			if r.RetryTagged {
				return runstatus.ErrBusy
			}
			return nil
		})
	}()
	eventually(t, "the trigger to subscribe", func() bool { return f.Subscriptions(EventStart) == 1 })
	f.FireEvent(EventStart, map[string]any{"concurrency": 0}) // invalid: ignored
	f.FireEvent(EventStart, map[string]any{"items": []any{"milk"}})
	f.FireEvent(EventStart, map[string]any{"retry_tagged": true})
	if r := receive(t, reqs, "first request"); r.Source != "event" || !reflect.DeepEqual(r.Items, []string{"milk"}) {
		t.Fatalf("first request = %+v", r)
	}
	if r := receive(t, reqs, "second request"); !r.RetryTagged {
		t.Fatalf("second request = %+v", r)
	}
	// It keeps listening across a reconnect.
	f.DropAll()
	eventually(t, "resubscribed", func() bool { return c.Connected() && f.Subscriptions(EventStart) == 1 })
	f.FireEvent(EventStart, nil)
	receive(t, reqs, "request after a reconnect")
	cancel()
	if err := receive(t, done, "Run to return"); err != nil {
		t.Fatalf("Run = %v", err)
	}
	select {
	case r := <-reqs:
		t.Fatalf("unexpected request %+v (the invalid event started a run?)", r)
	default:
	}
}

func TestEventTriggerReportsAuthFailure(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	done := make(chan error, 1)
	go func() {
		done <- NewEventTrigger(c, nil).Run(testCtx(t), func(context.Context, runstatus.Request) error { return nil })
	}()
	eventually(t, "subscribed", func() bool { return f.Subscriptions(EventStart) == 1 })
	f.SetToken("revoked")
	f.DropAll()
	if err := receive(t, done, "Run to stop"); !errors.Is(err, ErrAuthInvalid) {
		t.Fatalf("Run = %v, want auth_invalid", err)
	}
}

func TestBusyReporter(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	BusyReporter(c, nil)(testCtx(t), runstatus.Request{Source: "mqtt", Items: []string{"milk"}})
	got := f.EventsOfType(EventBusy)
	if len(got) != 1 || got[0].Data["source"] != "mqtt" || got[0].Data["message"] != runstatus.ErrBusy.Error() {
		t.Fatalf("busy events = %+v", got)
	}
}
