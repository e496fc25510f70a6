// Package mqtt is gemini-supply's Home Assistant MQTT integration: it makes
// one "Gemini Supply" device appear in Home Assistant through MQTT discovery,
// with two buttons (start a grocery run, retry failed items), sensors that
// follow a run live (status, progress, current item, last run, estimated cart
// total, items not found), a "Run request" event entity, and availability
// through a retained "online" / last-will "offline" topic.
//
// The broker comes from the configuration (mqtt_broker) or, for the add-on,
// from the Supervisor's MQTT service (ResolveBroker). Connect keeps the
// entities discovered across reconnections and Home Assistant restarts;
// Follow maps a runstatus.Bus onto the sensors; button presses call a
// Starter (the single-run gate). Cleanup removes every entity again.
//
// Topics (node id "gemini_supply", discovery prefix "homeassistant"):
//
//	homeassistant/{button,sensor,event}/gemini_supply/<object>/config   discovery (retained)
//	gemini_supply/availability                                        online | offline (retained, will)
//	gemini_supply/command/start, gemini_supply/command/retry          button presses ("PRESS")
//	gemini_supply/<sensor>[/attributes]                                states and JSON attributes (retained)
//	gemini_supply/event                                                {"event_type": accepted|busy|error, …}
//
// docs/mqtt.md describes every entity and payload.
package mqtt
