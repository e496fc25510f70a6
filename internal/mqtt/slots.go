package mqtt

import (
	"strconv"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// SlotTopics are the delivery slots' sensors: the next available slot's
// start, end and fee, the free windows today and tomorrow, when the slots
// were read, and the whole list as attributes. Read only: nothing here
// chooses or books a slot.
type SlotTopics struct {
	NextStart, NextEnd, NextFee string
	FreeToday, FreeTomorrow     string
	ReadAt                      string
	// Attributes is the JSON attributes of the next-slot and read-at
	// sensors: every window, the next one, the counts.
	Attributes string
}

func newSlotTopics(node string) SlotTopics {
	p := node + "/slots/"
	return SlotTopics{
		NextStart: p + "next_start", NextEnd: p + "next_end", NextFee: p + "next_fee",
		FreeToday: p + "free_today", FreeTomorrow: p + "free_tomorrow",
		ReadAt: p + "read_at", Attributes: p + "attributes",
	}
}

// slotEntities are the delivery slots' discovery entities.
func slotEntities(mk func(component, object, name, icon string, c DiscoveryConfig) Entity, t SlotTopics) []Entity {
	two := 2
	return []Entity{
		mk("sensor", "next_slot_start", "Next delivery slot start", "mdi:truck-delivery",
			DiscoveryConfig{StateTopic: t.NextStart, JSONAttributesTopic: t.Attributes, DeviceClass: "timestamp"}),
		mk("sensor", "next_slot_end", "Next delivery slot end", "mdi:truck-delivery-outline",
			DiscoveryConfig{StateTopic: t.NextEnd, DeviceClass: "timestamp"}),
		mk("sensor", "next_slot_fee", "Next delivery slot fee", "mdi:cash",
			DiscoveryConfig{StateTopic: t.NextFee, DeviceClass: "monetary", UnitOfMeasurement: "CAD", DisplayPrecision: &two}),
		mk("sensor", "slots_free_today", "Free delivery windows today", "mdi:calendar-today",
			DiscoveryConfig{StateTopic: t.FreeToday, StateClass: "measurement"}),
		mk("sensor", "slots_free_tomorrow", "Free delivery windows tomorrow", "mdi:calendar-arrow-right",
			DiscoveryConfig{StateTopic: t.FreeTomorrow, StateClass: "measurement"}),
		mk("sensor", "slots_read_at", "Delivery slots read at", "mdi:calendar-clock",
			DiscoveryConfig{StateTopic: t.ReadAt, JSONAttributesTopic: t.Attributes, DeviceClass: "timestamp"}),
	}
}

// slotPayloads renders the slots sensors' states.
func slotPayloads(t SlotTopics, r slots.Reading) map[string]string {
	info := slots.NewInfo(r)
	out := map[string]string{
		t.NextStart: payloadNone, t.NextEnd: payloadNone, t.NextFee: payloadNone,
		t.FreeToday:    strconv.Itoa(info.FreeToday),
		t.FreeTomorrow: strconv.Itoa(info.FreeTomorrow),
		t.ReadAt:       info.ReadAt.Format(time.RFC3339),
		t.Attributes:   mustJSON(info),
	}
	if n := info.Next; n != nil {
		out[t.NextStart] = n.Start.Format(time.RFC3339)
		out[t.NextEnd] = n.End.Format(time.RFC3339)
		if n.FeeKnown {
			out[t.NextFee] = slots.Dollars(n.Fee)
		}
	}
	return out
}
