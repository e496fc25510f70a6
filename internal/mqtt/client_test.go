package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
)

// connectTest connects a client to m with fast reconnects and a capturing logger.
func connectTest(t testing.TB, m *testbroker.Broker, mod func(*Options)) (*Client, *syncBuffer) {
	t.Helper()
	log, buf := testLogger()
	o := Options{
		Broker:               Broker{URL: m.URL()},
		SWVersion:            "1.2.3-test",
		Logger:               log,
		MaxReconnectInterval: 300 * time.Millisecond,
		RetryInterval:        300 * time.Millisecond,
		KeepAlive:            5 * time.Second,
	}
	if mod != nil {
		mod(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, err := Connect(ctx, o)
	if err != nil {
		t.Fatalf("Connect: %v\nlog:\n%s\nbroker:\n%s", err, buf.String(), m.Log())
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c, buf
}

// TestDiscoveryPayloads: every entity is announced, retained, with the keys
// Home Assistant needs, and the device is online and idle.
func TestDiscoveryPayloads(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	c, _ := connectTest(t, m, nil)
	tp := c.Topics()

	// The client publishes at QoS 0: Connect returning means the messages
	// left the client, not that the broker has them all. Wait until a first
	// subscriber has seen every config, then check what a fresh subscriber —
	// which only gets what is retained — receives.
	first := newObserver(t, m.URL(), nil, "homeassistant/#", "gemini_supply/#")
	first.waitFor("every discovery config and the first states at the broker", func(last map[string]obsMsg, _ []obsMsg) bool {
		n := 0
		for topic := range last {
			if strings.HasSuffix(topic, "/config") {
				n++
			}
		}
		_, status := last[tp.Status]
		_, item := last[tp.CurrentItem]
		return n >= 10 && status && item
	})
	obs := newObserver(t, m.URL(), nil, "homeassistant/#", "gemini_supply/#")
	obs.sync("gemini_supply/test/marker")

	type want struct {
		component, name, deviceClass, stateClass, unit string
		stateTopic, commandTopic, attrTopic            string
	}
	wants := map[string]want{
		"start":        {component: "button", name: "Start grocery run", commandTopic: tp.StartCommand},
		"retry":        {component: "button", name: "Retry failed items", commandTopic: tp.RetryCommand},
		"stop":         {component: "button", name: "Stop grocery run", commandTopic: tp.StopCommand},
		"status":       {component: "sensor", name: "Status", deviceClass: "enum", stateTopic: tp.Status, attrTopic: tp.StatusAttributes},
		"progress":     {component: "sensor", name: "Progress", unit: "%", stateClass: "measurement", stateTopic: tp.Progress, attrTopic: tp.ProgressAttrs},
		"current_item": {component: "sensor", name: "Current item", stateTopic: tp.CurrentItem, attrTopic: tp.CurrentItemAttrs},
		"last_run":     {component: "sensor", name: "Last run", deviceClass: "timestamp", stateTopic: tp.LastRun, attrTopic: tp.LastRunAttributes},
		"cart_total":   {component: "sensor", name: "Estimated cart total", deviceClass: "monetary", unit: "CAD", stateTopic: tp.CartTotal, attrTopic: tp.CartTotalAttrs},
		"not_found":    {component: "sensor", name: "Items not found", stateClass: "measurement", stateTopic: tp.NotFound, attrTopic: tp.NotFoundAttrs},
		"cart":         {component: "sensor", name: "Cart", unit: "units", stateClass: "measurement", stateTopic: tp.Cart, attrTopic: tp.CartAttrs},
		"run_request":  {component: "event", name: "Run request", stateTopic: tp.Event},
		// The delivery slots (slots.go).
		"next_slot_start":     {component: "sensor", name: "Next delivery slot start", deviceClass: "timestamp", stateTopic: tp.Slots.NextStart, attrTopic: tp.Slots.Attributes},
		"next_slot_end":       {component: "sensor", name: "Next delivery slot end", deviceClass: "timestamp", stateTopic: tp.Slots.NextEnd},
		"next_slot_fee":       {component: "sensor", name: "Next delivery slot fee", deviceClass: "monetary", unit: "CAD", stateTopic: tp.Slots.NextFee},
		"slots_free_today":    {component: "sensor", name: "Free delivery windows today", stateClass: "measurement", stateTopic: tp.Slots.FreeToday},
		"slots_free_tomorrow": {component: "sensor", name: "Free delivery windows tomorrow", stateClass: "measurement", stateTopic: tp.Slots.FreeTomorrow},
		"slots_read_at":       {component: "sensor", name: "Delivery slots read at", deviceClass: "timestamp", stateTopic: tp.Slots.ReadAt, attrTopic: tp.Slots.Attributes},
	}
	seenUnique := map[string]bool{}
	for object, w := range wants {
		t.Run(object, func(t *testing.T) {
			topic := fmt.Sprintf("homeassistant/%s/gemini_supply/%s/config", w.component, object)
			msg, ok := obs.get(topic)
			if !ok {
				t.Fatalf("no discovery config on %s; got:\n%s", topic, obs.dump())
			}
			if !msg.retained {
				t.Errorf("%s is not retained", topic)
			}
			var cfg map[string]any
			if err := json.Unmarshal([]byte(msg.payload), &cfg); err != nil {
				t.Fatalf("%s is not JSON: %v", topic, err)
			}
			str := func(k string) string { s, _ := cfg[k].(string); return s }
			if str("name") != w.name {
				t.Errorf("name = %q, want %q", str("name"), w.name)
			}
			uid := str("unique_id")
			if uid != "gemini_supply_"+object {
				t.Errorf("unique_id = %q", uid)
			}
			if seenUnique[uid] {
				t.Errorf("unique_id %q used twice", uid)
			}
			seenUnique[uid] = true
			if str("availability_topic") != tp.Availability || str("payload_available") != "online" || str("payload_not_available") != "offline" {
				t.Errorf("availability keys wrong: %v %v %v", cfg["availability_topic"], cfg["payload_available"], cfg["payload_not_available"])
			}
			dev, _ := cfg["device"].(map[string]any)
			ids, _ := dev["identifiers"].([]any)
			if len(ids) == 0 || ids[0] != "gemini_supply" || dev["name"] != "Gemini Supply" ||
				dev["manufacturer"] == nil || dev["model"] == nil || dev["sw_version"] != "1.2.3-test" {
				t.Errorf("device = %v", dev)
			}
			if org, _ := cfg["origin"].(map[string]any); org["name"] == nil {
				t.Errorf("origin has no name: %v", cfg["origin"])
			}
			for k, v := range map[string]string{
				"device_class": w.deviceClass, "state_class": w.stateClass, "unit_of_measurement": w.unit,
				"state_topic": w.stateTopic, "command_topic": w.commandTopic, "json_attributes_topic": w.attrTopic,
			} {
				if str(k) != v {
					t.Errorf("%s = %q, want %q", k, str(k), v)
				}
			}
			switch object {
			case "start", "retry", "stop":
				if str("payload_press") != "PRESS" {
					t.Errorf("payload_press = %q", str("payload_press"))
				}
			case "status":
				opts, _ := cfg["options"].([]any)
				for _, s := range []runstatus.State{runstatus.StateIdle, runstatus.StateInitializing, runstatus.StateAuthenticating,
					runstatus.StateShopping, runstatus.StateReviewing, runstatus.StateReviewReady, runstatus.StateFailed, runstatus.StateCancelled} {
					if !slices.Contains(opts, any(string(s))) {
						t.Errorf("status options %v lack %q", opts, s)
					}
				}
			case "run_request":
				types, _ := cfg["event_types"].([]any)
				if !slices.Equal(types, []any{"accepted", "busy", "error", "stopping", "no_run"}) {
					t.Errorf("event_types = %v", types)
				}
			}
			// Sensors with a command topic or buttons with a state topic would be rejected.
			if w.component == "button" && cfg["state_topic"] != nil {
				t.Errorf("button has a state_topic")
			}
		})
	}
	if n := len(obs.snapshot()); n == 0 {
		t.Fatal("nothing retained")
	}
	for topic, msg := range obs.snapshot() {
		if strings.HasPrefix(topic, "homeassistant/") {
			obj := strings.Split(topic, "/")[3]
			if _, ok := wants[obj]; !ok {
				t.Errorf("unexpected discovery topic %s", topic)
			}
			_ = msg
		}
	}
	for topic, want := range map[string]string{tp.Availability: "online", tp.Status: "idle", tp.CurrentItem: "None"} {
		msg, ok := obs.get(topic)
		if !ok || msg.payload != want || !msg.retained {
			t.Errorf("%s = %+v (present %v), want retained %q", topic, msg, ok, want)
		}
	}
}

// TestRepublishOnHomeAssistantBirth: Home Assistant's "online" on
// homeassistant/status makes the client announce everything again, and an
// "offline" left on the availability topic is corrected at once.
func TestRepublishOnHomeAssistantBirth(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	c, _ := connectTest(t, m, nil)
	obs := newObserver(t, m.URL(), nil, "homeassistant/#", "gemini_supply/#")
	obs.sync("gemini_supply/test/marker")
	cfgTopic := "homeassistant/button/gemini_supply/start/config"
	before := obs.count(cfgTopic)

	obs.publish("homeassistant/status", false, "online")
	obs.waitFor("discovery published again", func(_ map[string]obsMsg, hist []obsMsg) bool {
		n := 0
		for _, m := range hist {
			if m.topic == cfgTopic {
				n++
			}
		}
		return n > before
	})

	obs.publish(c.Topics().Availability, true, "offline")
	obs.waitPayload(c.Topics().Availability, "online")
}

// TestButtonPressStartsRun: pressing a button calls the Starter with the
// right request; a retained press is never acted on.
func TestButtonPressStartsRun(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	raw := newObserver(t, m.URL(), nil, "gemini_supply/#")
	// A stale retained press must not start a run at every connect.
	raw.publish("gemini_supply/command/start", true, "PRESS")

	starter := newFakeStarter(nil)
	c, logs := connectTest(t, m, func(o *Options) { o.Starter = starter })
	waitLog(t, logs, "ignoring a retained button press")

	tests := []struct {
		topic string
		retry bool
	}{
		{c.Topics().StartCommand, false},
		{c.Topics().RetryCommand, true},
	}
	for _, tc := range tests {
		raw.publish(tc.topic, false, "PRESS")
		got := starter.next(t)
		if got.Source != "mqtt" || got.RetryFailed != tc.retry {
			t.Errorf("press on %s: request = %+v, want source mqtt, retry_failed %v", tc.topic, got, tc.retry)
		}
		raw.waitFor("accepted event", func(last map[string]obsMsg, _ []obsMsg) bool {
			ev, ok := last[c.Topics().Event]
			return ok && strings.Contains(ev.payload, `"event_type":"accepted"`) &&
				strings.Contains(ev.payload, fmt.Sprintf(`"retry_tagged":%v`, tc.retry))
		})
	}
	raw.publish(c.Topics().StartCommand, false, "something else")
	waitLog(t, logs, "ignoring an unknown command payload")
	if n := len(starter.requests()); n != 2 {
		t.Errorf("starter called %d times, want 2: %+v", n, starter.requests())
	}
}

// TestBusyPress: a press during a run is refused by the gate; the status
// stays, the refusal is logged and published as a busy event and attribute.
func TestBusyPress(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	starter := newFakeStarter(runstatus.ErrBusy)
	c, logs := connectTest(t, m, func(o *Options) { o.Starter = starter })
	tp := c.Topics()
	obs := newObserver(t, m.URL(), nil, "gemini_supply/#")

	bus := &runstatus.Bus{}
	stop := c.Follow(context.Background(), bus)
	t.Cleanup(stop)

	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "r1", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 2}})
	obs.waitPayload(tp.Status, "shopping")

	obs.publish(tp.StartCommand, false, "PRESS")
	if r := starter.next(t); r.Source != "mqtt" {
		t.Errorf("request = %+v", r)
	}
	obs.waitFor("busy event", func(last map[string]obsMsg, _ []obsMsg) bool {
		ev, ok := last[tp.Event]
		return ok && strings.Contains(ev.payload, `"event_type":"busy"`) && !ev.retained
	})
	obs.waitFor("busy attribute", func(last map[string]obsMsg, _ []obsMsg) bool {
		var a struct {
			Busy        bool `json:"busy"`
			LastRequest struct {
				Result string `json:"result"`
			} `json:"last_request"`
		}
		return json.Unmarshal([]byte(last[tp.StatusAttributes].payload), &a) == nil && a.Busy && a.LastRequest.Result == "busy"
	})
	if got, _ := obs.get(tp.Status); got.payload != "shopping" {
		t.Errorf("status changed to %q on a refused press", got.payload)
	}
	waitLog(t, logs, "refused: a run is already in progress")
}

// TestStatusFollowsRun: the sensors follow a whole run published on the bus.
func TestStatusFollowsRun(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	c, _ := connectTest(t, m, nil)
	tp := c.Topics()
	obs := newObserver(t, m.URL(), nil, "gemini_supply/#")

	bus := &runstatus.Bus{}
	ctx, cancel := context.WithCancel(context.Background())
	stop := c.Follow(ctx, bus)
	defer stop()

	started := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	finished := started.Add(7 * time.Minute)
	milk := report.ItemResult{ItemID: "1", ItemName: "milk", Quantity: 1}
	bread := report.ItemResult{ItemID: "2", ItemName: "sourdough bread", Quantity: 1}
	eggs := report.ItemResult{ItemID: "3", ItemName: "eggs", Quantity: 2}
	done1 := milk
	done1.Outcome, done1.Price = report.OutcomeAdded, money.Price{Text: "$5.49", UnitCents: 549, Known: true}
	done2 := bread
	done2.Outcome, done2.Explanation = report.OutcomeNotFound, "no sourdough at this store"
	done3 := eggs
	done3.Outcome, done3.Price = report.OutcomeAdded, money.Price{Text: "$3.45", UnitCents: 345, Known: true}
	summary := &report.Summary{RunID: "run-1", StartedAt: started, FinishedAt: finished,
		Items: []report.ItemResult{done1, done2, done3}, CartURL: "https://www.metro.ca/en/cart"}

	type check struct{ topic, want string }
	steps := []struct {
		name   string
		event  runstatus.Event
		checks []check
	}{
		{"run started", runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "run-1", Time: started, State: runstatus.StateInitializing, Progress: runstatus.Progress{Total: 3}},
			[]check{{tp.Status, "initializing"}, {tp.Progress, "0"}, {tp.NotFound, "0"}}},
		{"authenticating", runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "run-1", State: runstatus.StateAuthenticating},
			[]check{{tp.Status, "authenticating"}}},
		{"shopping", runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "run-1", State: runstatus.StateShopping},
			[]check{{tp.Status, "shopping"}}},
		{"milk started", runstatus.Event{Kind: runstatus.KindItemStarted, RunID: "run-1", Item: &milk, Progress: runstatus.Progress{Total: 3}},
			[]check{{tp.CurrentItem, "milk"}}},
		{"milk added", runstatus.Event{Kind: runstatus.KindItemFinished, RunID: "run-1", Item: &done1, Progress: runstatus.Progress{Total: 3, Done: 1, Added: 1}},
			[]check{{tp.Progress, "33"}, {tp.CurrentItem, "None"}}},
		{"bread started", runstatus.Event{Kind: runstatus.KindItemStarted, RunID: "run-1", Item: &bread, Progress: runstatus.Progress{Total: 3, Done: 1, Added: 1}},
			[]check{{tp.CurrentItem, "sourdough bread"}}},
		{"bread not found", runstatus.Event{Kind: runstatus.KindItemFinished, RunID: "run-1", Item: &done2, Progress: runstatus.Progress{Total: 3, Done: 2, Added: 1, NotFound: 1}},
			[]check{{tp.Progress, "66"}, {tp.NotFound, "1"}}},
		{"eggs started", runstatus.Event{Kind: runstatus.KindItemStarted, RunID: "run-1", Item: &eggs, Progress: runstatus.Progress{Total: 3, Done: 2, Added: 1, NotFound: 1}},
			[]check{{tp.CurrentItem, "eggs"}}},
		{"eggs added", runstatus.Event{Kind: runstatus.KindItemFinished, RunID: "run-1", Item: &done3, Progress: runstatus.Progress{Total: 3, Done: 3, Added: 2, NotFound: 1}},
			[]check{{tp.Progress, "100"}}},
		{"reviewing", runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "run-1", State: runstatus.StateReviewing},
			[]check{{tp.Status, "reviewing"}}},
		{"finished", runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "run-1", State: runstatus.StateReviewReady, Summary: summary, Progress: runstatus.Progress{Total: 3, Done: 3, Added: 2, NotFound: 1}},
			[]check{{tp.Status, "review_ready"}, {tp.LastRun, "2026-03-01T14:07:00Z"}, {tp.CartTotal, "12.39"}, {tp.NotFound, "1"}, {tp.CurrentItem, "None"}}},
	}
	for _, s := range steps {
		bus.Publish(s.event)
		for _, ch := range s.checks {
			obs.waitPayload(ch.topic, ch.want)
		}
	}

	var progress runstatus.Progress
	if err := json.Unmarshal([]byte(mustGet(t, obs, tp.ProgressAttrs)), &progress); err != nil || progress.Done != 3 || progress.Total != 3 || progress.NotFound != 1 {
		t.Errorf("progress attributes = %+v (%v)", progress, err)
	}
	var last struct {
		Added, NotFound, Failed, Total int
		Summary                        string `json:"summary"`
		EstimatedTotal                 string `json:"estimated_total"`
		RunID                          string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(mustGet(t, obs, tp.LastRunAttributes)), &last); err != nil {
		t.Fatal(err)
	}
	if last.Added != 2 || last.Total != 3 || last.RunID != "run-1" || last.EstimatedTotal != "$12.39" ||
		!strings.Contains(last.Summary, "milk") || !strings.Contains(last.Summary, "no sourdough at this store") {
		t.Errorf("last run attributes = %+v", last)
	}
	var nf struct{ Items []notFoundItem }
	if err := json.Unmarshal([]byte(mustGet(t, obs, tp.NotFoundAttrs)), &nf); err != nil ||
		len(nf.Items) != 1 || nf.Items[0].Name != "sourdough bread" {
		t.Errorf("not found attributes = %+v (%v)", nf, err)
	}
	fresh := newObserver(t, m.URL(), nil, "gemini_supply/#")
	fresh.sync("gemini_supply/test/marker")
	for _, topic := range []string{tp.Status, tp.Progress, tp.LastRun, tp.CartTotal, tp.LastRunAttributes} {
		if msg, ok := fresh.get(topic); !ok || !msg.retained {
			t.Errorf("%s is not retained", topic)
		}
	}

	// Cancelling Follow's context stops it: later events change nothing.
	cancel()
	stop()
	bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "run-1", State: runstatus.StateIdle})
	obs.sync("gemini_supply/test/marker")
	if got, _ := obs.get(tp.Status); got.payload != "review_ready" {
		t.Errorf("status = %q after Follow stopped", got.payload)
	}
}

func mustGet(t *testing.T, o *observer, topic string) string {
	t.Helper()
	msg, ok := o.get(topic)
	if !ok {
		t.Fatalf("nothing on %s", topic)
	}
	return msg.payload
}

// BenchmarkEventToBroker measures how long a run event takes to reach a Home
// Assistant-like subscriber: bus → model → publish → mosquitto → subscriber.
func BenchmarkEventToBroker(b *testing.B) {
	m := testbroker.Start(b, testbroker.Options{})
	c, _ := connectTest(b, m, nil)
	obs := newObserver(b, m.URL(), nil, c.Topics().Status)
	bus := &runstatus.Bus{}
	stop := c.Follow(context.Background(), bus)
	defer stop()
	states := []runstatus.State{runstatus.StateShopping, runstatus.StateReviewing}
	for i := 0; b.Loop(); i++ {
		s := states[i%2]
		bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, RunID: "r", State: s})
		obs.waitPayload(c.Topics().Status, string(s))
	}
}
