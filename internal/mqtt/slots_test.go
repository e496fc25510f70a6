package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
)

// TestSlotSensorsDiscoveredAndCarryTheNextSlot: on a real mosquitto the
// delivery slots' sensors are discovered (timestamps for the next slot's
// start and end and the reading, a monetary fee, counts of free windows)
// and carry the next available slot of a reading — the full window before
// it skipped — with every window as attributes; when nothing is
// available the next slot is unknown.
func TestSlotSensorsDiscoveredAndCarryTheNextSlot(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	c, _ := connectTest(t, m, nil)
	st := c.Topics().Slots
	obs := newObserver(t, m.URL(), nil, "homeassistant/#", "gemini_supply/#")

	bus := &runstatus.Bus{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := c.Follow(ctx, bus)
	defer stop()

	loc := time.FixedZone("EST", -5*3600)
	read := time.Date(2026, 11, 27, 9, 0, 0, 0, loc) // a Friday
	at := func(day, h int) time.Time { return time.Date(2026, 11, day, h, 0, 0, 0, loc) }
	r := slots.Reading{ReadAt: read, Slots: []slots.Slot{
		{Start: at(27, 10), End: at(27, 12), Fee: 299, FeeKnown: true, Available: false},
		{Start: at(28, 10), End: at(28, 12), Fee: 499, FeeKnown: true, Available: true},
		{Start: at(28, 14), End: at(28, 16), Fee: 399, FeeKnown: true, Available: true},
		{Start: at(27, 18), End: at(27, 20), Fee: 699, FeeKnown: true, Available: true},
	}}
	bus.Publish(runstatus.Event{Kind: runstatus.KindSlotsRead, Slots: &r})
	obs.waitPayload(st.NextStart, "2026-11-27T18:00:00-05:00")
	obs.waitPayload(st.NextEnd, "2026-11-27T20:00:00-05:00")
	obs.waitPayload(st.NextFee, "6.99")
	obs.waitPayload(st.FreeToday, "1")
	obs.waitPayload(st.FreeTomorrow, "2")
	obs.waitPayload(st.ReadAt, "2026-11-27T09:00:00-05:00")
	obs.waitFor("the slots' attributes", func(last map[string]obsMsg, _ []obsMsg) bool {
		_, ok := last[st.Attributes]
		return ok
	})
	var info slots.Info
	if err := json.Unmarshal([]byte(mustGet(t, obs, st.Attributes)), &info); err != nil {
		t.Fatal(err)
	}
	if len(info.Slots) != 4 || !info.Slots[0].Start.Equal(at(27, 10)) || info.Slots[0].Available ||
		info.Next == nil || !info.Next.Start.Equal(at(27, 18)) || info.FreeToday != 1 || info.FreeTomorrow != 2 {
		t.Errorf("attributes = %+v", info)
	}

	for object, dc := range map[string]string{
		"next_slot_start": "timestamp", "next_slot_end": "timestamp", "next_slot_fee": "monetary",
		"slots_free_today": "", "slots_free_tomorrow": "", "slots_read_at": "timestamp",
	} {
		topic := fmt.Sprintf("homeassistant/sensor/gemini_supply/%s/config", object)
		msg, ok := obs.get(topic)
		if !ok {
			t.Errorf("no discovery config on %s", topic)
			continue
		}
		var cfg map[string]any
		if err := json.Unmarshal([]byte(msg.payload), &cfg); err != nil || !msg.retained {
			t.Errorf("%s: %v, retained %v", topic, err, msg.retained)
			continue
		}
		if got, _ := cfg["device_class"].(string); got != dc || cfg["state_topic"] == nil || cfg["unique_id"] != "gemini_supply_"+object {
			t.Errorf("%s = %v", topic, cfg)
		}
	}

	// Every window full: no next slot.
	full := slots.Reading{ReadAt: read.Add(time.Hour), Slots: []slots.Slot{{Start: at(28, 10), End: at(28, 12), Available: false}}}
	bus.Publish(runstatus.Event{Kind: runstatus.KindSlotsRead, Slots: &full})
	obs.waitPayload(st.NextStart, "None")
	obs.waitPayload(st.NextFee, "None")
	obs.waitPayload(st.FreeTomorrow, "0")
}
