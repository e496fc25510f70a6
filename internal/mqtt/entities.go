package mqtt

import (
	"encoding/json"
	"fmt"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Payloads on the availability topic and the buttons' command topics.
const (
	PayloadOnline  = "online"
	PayloadOffline = "offline"
	PayloadPress   = "PRESS"
	// payloadNone makes a Home Assistant MQTT sensor "unknown".
	payloadNone = "None"
)

// Event types published on the "Run request" event entity.
const (
	EventAccepted = "accepted"
	EventBusy     = "busy"
	EventError    = "error"
	// EventStopping: the stop button stopped the run in progress.
	EventStopping = "stopping"
	// EventNoRun: the stop button was pressed with no run going.
	EventNoRun = "no_run"
)

// HAStatusTopic is where Home Assistant publishes its birth ("online") and
// last-will ("offline") messages, relative to the discovery prefix.
const haStatusSuffix = "/status"

// Topics are every MQTT topic the integration uses. They derive from the
// node id (default "gemini_supply") and the discovery prefix (default
// "homeassistant").
type Topics struct {
	Availability string

	StartCommand string
	RetryCommand string
	StopCommand  string

	Status            string
	StatusAttributes  string
	Progress          string
	ProgressAttrs     string
	CurrentItem       string
	CurrentItemAttrs  string
	LastRun           string
	LastRunAttributes string
	CartTotal         string
	CartTotalAttrs    string
	NotFound          string
	NotFoundAttrs     string
	// Cart is the store's cart: its units, with the lines and the
	// estimated total as attributes (reviewpack.CartInfo).
	Cart      string
	CartAttrs string
	// Event carries non-retained JSON events ({"event_type": "accepted"|"busy"|"error", …}).
	Event string
	// Slots are the delivery slots' sensors (slots.go).
	Slots SlotTopics

	// HAStatus is Home Assistant's birth/last-will topic.
	HAStatus string
}

func newTopics(prefix, node string) Topics {
	return Topics{
		Availability:      node + "/availability",
		StartCommand:      node + "/command/start",
		RetryCommand:      node + "/command/retry",
		StopCommand:       node + "/command/stop",
		Status:            node + "/status",
		StatusAttributes:  node + "/status/attributes",
		Progress:          node + "/progress",
		ProgressAttrs:     node + "/progress/attributes",
		CurrentItem:       node + "/current_item",
		CurrentItemAttrs:  node + "/current_item/attributes",
		LastRun:           node + "/last_run",
		LastRunAttributes: node + "/last_run/attributes",
		CartTotal:         node + "/cart_total",
		CartTotalAttrs:    node + "/cart_total/attributes",
		NotFound:          node + "/not_found",
		NotFoundAttrs:     node + "/not_found/attributes",
		Cart:              node + "/cart",
		CartAttrs:         node + "/cart/attributes",
		Event:             node + "/event",
		Slots:             newSlotTopics(node),
		HAStatus:          prefix + haStatusSuffix,
	}
}

// stateTopics are the retained topics the integration publishes states on
// (Cleanup empties them).
func (t Topics) stateTopics() []string {
	return []string{
		t.Status, t.StatusAttributes, t.Progress, t.ProgressAttrs, t.CurrentItem, t.CurrentItemAttrs,
		t.LastRun, t.LastRunAttributes, t.CartTotal, t.CartTotalAttrs, t.NotFound, t.NotFoundAttrs,
		t.Cart, t.CartAttrs, t.Slots.NextStart, t.Slots.NextEnd, t.Slots.NextFee, t.Slots.FreeToday, t.Slots.FreeTomorrow,
		t.Slots.ReadAt, t.Slots.Attributes,
	}
}

// device ties every entity to one Home Assistant device.
type device struct {
	Identifiers  []string `json:"identifiers"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"manufacturer"`
	Model        string   `json:"model"`
	SWVersion    string   `json:"sw_version,omitempty"`
}

// origin names the software that published the discovery message.
type origin struct {
	Name      string `json:"name"`
	SWVersion string `json:"sw_version,omitempty"`
}

// DiscoveryConfig is one discovery payload (keys as Home Assistant's MQTT
// button, sensor and event platforms define them).
type DiscoveryConfig struct {
	Name                string `json:"name"`
	UniqueID            string `json:"unique_id"`
	Device              device `json:"device"`
	Origin              origin `json:"origin"`
	AvailabilityTopic   string `json:"availability_topic"`
	PayloadAvailable    string `json:"payload_available"`
	PayloadNotAvailable string `json:"payload_not_available"`
	Icon                string `json:"icon,omitempty"`

	// button
	CommandTopic string `json:"command_topic,omitempty"`
	PayloadPress string `json:"payload_press,omitempty"`

	// sensor and event
	StateTopic          string   `json:"state_topic,omitempty"`
	JSONAttributesTopic string   `json:"json_attributes_topic,omitempty"`
	DeviceClass         string   `json:"device_class,omitempty"`
	StateClass          string   `json:"state_class,omitempty"`
	UnitOfMeasurement   string   `json:"unit_of_measurement,omitempty"`
	Options             []string `json:"options,omitempty"`
	DisplayPrecision    *int     `json:"suggested_display_precision,omitempty"`
	EventTypes          []string `json:"event_types,omitempty"`
}

// Entity is one discovered Home Assistant entity.
type Entity struct {
	// Component is the Home Assistant platform: "button", "sensor" or "event".
	Component string
	// ObjectID is the last-but-one part of the discovery topic and the suffix of the unique id.
	ObjectID string
	// Topic is <prefix>/<component>/<node_id>/<object_id>/config.
	Topic  string
	Config DiscoveryConfig
}

// Payload is the JSON discovery payload.
func (e Entity) Payload() []byte {
	b, err := json.Marshal(e.Config)
	if err != nil { // cannot happen: plain strings and slices
		panic(fmt.Sprintf("mqtt: encoding discovery config %s: %v", e.Topic, err))
	}
	return b
}

// StatusOptions lists every state the "Status" sensor can show.
var StatusOptions = []string{
	string(runstatus.StateIdle), string(runstatus.StateInitializing), string(runstatus.StateAuthenticating),
	string(runstatus.StateShopping), string(runstatus.StateReviewing), string(runstatus.StateReviewReady),
	string(runstatus.StateCancelled), string(runstatus.StateFailed),
}

// entities builds every discovery entity.
func entities(prefix, node, swVersion string, t Topics) []Entity {
	dev := device{
		Identifiers:  []string{node},
		Name:         "Gemini Supply",
		Manufacturer: "gemini-supply",
		Model:        "Grocery shopping agent",
		SWVersion:    swVersion,
	}
	org := origin{Name: "gemini-supply", SWVersion: swVersion}
	two := 2
	mk := func(component, object, name, icon string, c DiscoveryConfig) Entity {
		c.Name = name
		c.UniqueID = node + "_" + object
		c.Device = dev
		c.Origin = org
		c.AvailabilityTopic = t.Availability
		c.PayloadAvailable = PayloadOnline
		c.PayloadNotAvailable = PayloadOffline
		c.Icon = icon
		return Entity{
			Component: component,
			ObjectID:  object,
			Topic:     fmt.Sprintf("%s/%s/%s/%s/config", prefix, component, node, object),
			Config:    c,
		}
	}
	return append([]Entity{
		mk("button", "start", "Start grocery run", "mdi:cart-arrow-down",
			DiscoveryConfig{CommandTopic: t.StartCommand, PayloadPress: PayloadPress}),
		mk("button", "retry", "Retry failed items", "mdi:cart-arrow-down",
			DiscoveryConfig{CommandTopic: t.RetryCommand, PayloadPress: PayloadPress}),
		mk("button", "stop", "Stop grocery run", "mdi:cart-off",
			DiscoveryConfig{CommandTopic: t.StopCommand, PayloadPress: PayloadPress}),
		mk("sensor", "status", "Status", "mdi:cart-outline",
			DiscoveryConfig{StateTopic: t.Status, JSONAttributesTopic: t.StatusAttributes,
				DeviceClass: "enum", Options: StatusOptions}),
		mk("sensor", "progress", "Progress", "mdi:progress-check",
			DiscoveryConfig{StateTopic: t.Progress, JSONAttributesTopic: t.ProgressAttrs,
				UnitOfMeasurement: "%", StateClass: "measurement"}),
		mk("sensor", "current_item", "Current item", "mdi:basket",
			DiscoveryConfig{StateTopic: t.CurrentItem, JSONAttributesTopic: t.CurrentItemAttrs}),
		mk("sensor", "last_run", "Last run", "mdi:history",
			DiscoveryConfig{StateTopic: t.LastRun, JSONAttributesTopic: t.LastRunAttributes,
				DeviceClass: "timestamp"}),
		// Home Assistant allows only state_class "total" with "monetary", which
		// would make long-term statistics sum cart estimates: no state class.
		mk("sensor", "cart_total", "Estimated cart total", "mdi:cash",
			DiscoveryConfig{StateTopic: t.CartTotal, JSONAttributesTopic: t.CartTotalAttrs,
				DeviceClass: "monetary", UnitOfMeasurement: "CAD", DisplayPrecision: &two}),
		mk("sensor", "cart", "Cart", "mdi:cart",
			DiscoveryConfig{StateTopic: t.Cart, JSONAttributesTopic: t.CartAttrs,
				UnitOfMeasurement: "units", StateClass: "measurement"}),
		mk("sensor", "not_found", "Items not found", "mdi:cart-remove",
			DiscoveryConfig{StateTopic: t.NotFound, JSONAttributesTopic: t.NotFoundAttrs,
				StateClass: "measurement"}),
		mk("event", "run_request", "Run request", "mdi:gesture-tap-button",
			DiscoveryConfig{StateTopic: t.Event, EventTypes: []string{EventAccepted, EventBusy, EventError, EventStopping, EventNoRun}}),
	}, slotEntities(mk, t.Slots)...)
}
