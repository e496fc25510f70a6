package homeassistant

import (
	"encoding/json"

	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// EventSlots carries the store's delivery slots each time a reading
// differs from the one before (slots.Info: read_at, next, free_today,
// free_tomorrow, slots). Read only: no slot is ever chosen or booked.
const EventSlots = "gemini_supply_slots"

// slotsData is the gemini_supply_slots event's data.
func slotsData(r slots.Reading) map[string]any {
	d := map[string]any{}
	b, err := json.Marshal(slots.NewInfo(r))
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil { // cannot happen: plain values
		d = map[string]any{"read_at": r.ReadAt}
	}
	return d
}
