package homeassistant

import (
	"testing"
	"time"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// TestEventSinkFiresTheSlots: without MQTT, Home Assistant learns the
// delivery slots from gemini_supply_slots: the next available window,
// the free windows today and tomorrow, and every window.
func TestEventSinkFiresTheSlots(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	sink := NewEventSink(c, EventSinkOptions{})
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(64)
	done := make(chan error, 1)
	go func() { done <- sink.Consume(testCtx(t), sub) }()

	read := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	r := slots.Reading{ReadAt: read, Slots: []slots.Slot{
		{Start: read.Add(time.Hour), End: read.Add(3 * time.Hour), Fee: 299, FeeKnown: true, Available: false},
		{Start: read.Add(25 * time.Hour), End: read.Add(27 * time.Hour), Fee: 499, FeeKnown: true, Available: true},
	}}
	bus.Publish(runstatus.Event{Time: read, Kind: runstatus.KindSlotsRead, Slots: &r})
	bus.Close()
	if err := receive(t, done, "Consume to return after the bus closed"); err != nil {
		t.Fatalf("Consume: %v", err)
	}
	var got []map[string]any
	for _, e := range f.Events() {
		if e.Type == EventSlots {
			got = append(got, e.Data)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d %s events, want 1: %+v", len(got), EventSlots, f.Events())
	}
	d := got[0]
	next, _ := d["next"].(map[string]any)
	list, _ := d["slots"].([]any)
	if d["read_at"] != "2026-11-27T09:00:00Z" || next["start"] != "2026-11-28T10:00:00Z" || next["fee"] != 4.99 ||
		d["free_today"] != 0.0 || d["free_tomorrow"] != 1.0 || len(list) != 2 {
		t.Errorf("slots event = %v", d)
	}
}
