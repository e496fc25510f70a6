package mqtt

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
)

// TestWillOnKilledConnection: when the client's TCP connection dies without an
// MQTT DISCONNECT, the broker publishes the retained will "offline"; the
// client reconnects by itself and is "online" again, discovery re-published.
func TestWillOnKilledConnection(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	d := &killDialer{}
	starter := newFakeStarter(nil)
	c, logs := connectTest(t, m, func(o *Options) { o.DialContext = d.DialContext; o.Starter = starter })
	tp := c.Topics()
	obs := newObserver(t, m.URL(), nil, "homeassistant/#", "gemini_supply/#")
	obs.sync("gemini_supply/test/marker")
	obs.waitPayload(tp.Availability, "online")
	cfgTopic := "homeassistant/sensor/gemini_supply/status/config"
	before := obs.count(cfgTopic)

	// Sever the connection and keep the client off the broker until the will is seen.
	d.kill(true)
	obs.waitPayload(tp.Availability, "offline")
	waitLog(t, logs, "lost the MQTT connection")

	d.allow()
	obs.waitPayload(tp.Availability, "online")
	obs.waitFor("discovery re-published after reconnecting", func(_ map[string]obsMsg, hist []obsMsg) bool {
		n := 0
		for _, m := range hist {
			if m.topic == cfgTopic {
				n++
			}
		}
		return n > before
	})

	// Commands work on the new connection (subscriptions were made again).
	obs.publish(tp.StartCommand, false, "PRESS")
	if r := starter.next(t); r.Source != "mqtt" {
		t.Errorf("request after reconnect = %+v", r)
	}
}

// TestBrokerRestart: the broker goes away (losing every retained message, as
// persistence is off) and comes back on the same port; the client reconnects
// and everything is discovered and online again.
func TestBrokerRestart(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	c, logs := connectTest(t, m, nil)
	tp := c.Topics()

	bus := &runstatus.Bus{}
	stop := c.Follow(context.Background(), bus)
	defer stop()

	m.Stop()
	waitLog(t, logs, "lost the MQTT connection")
	// A state change while the broker is away is published once it is back.
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "r", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 4}})
	m.Start()

	obs := newObserver(t, m.URL(), nil, "homeassistant/#", "gemini_supply/#")
	obs.waitPayload(tp.Availability, "online")
	obs.waitPayload(tp.Status, "shopping")
	obs.waitFor("all discovery configs", func(last map[string]obsMsg, _ []obsMsg) bool {
		n := 0
		for topic, msg := range last {
			if strings.HasPrefix(topic, "homeassistant/") && strings.HasSuffix(topic, "/config") && msg.payload != "" {
				n++
			}
		}
		return n == len(c.entities)
	})
}

// TestCloseAndCleanup: Close leaves the entities with "offline"; Cleanup
// (client and package-level) deletes every retained topic.
func TestCloseAndCleanup(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	retained := func() map[string]obsMsg {
		obs := newObserver(t, m.URL(), nil, "homeassistant/#", "gemini_supply/#")
		obs.sync("gemini_supply/test/marker")
		out := obs.snapshot()
		delete(out, "gemini_supply/test/marker")
		obs.pc.Disconnect(0)
		return out
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	// Close: offline, configs stay.
	c, _ := connectTest(t, m, nil)
	bus := &runstatus.Bus{}
	stop := c.Follow(ctx, bus)
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "r", Progress: runstatus.Progress{Total: 1}})
	stop()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
	got := retained()
	if got[c.Topics().Availability].payload != "offline" {
		t.Errorf("availability after Close = %+v", got[c.Topics().Availability])
	}
	if len(got) < len(c.entities)+3 {
		t.Errorf("only %d retained topics after Close:\n%v", len(got), got)
	}

	// Package-level Cleanup removes them all.
	log, _ := testLogger()
	if err := Cleanup(ctx, Options{Broker: Broker{URL: m.URL()}, Logger: log}); err != nil {
		t.Fatalf("Cleanup: %v", err)
	}
	if got := retained(); len(got) != 0 {
		t.Errorf("retained after Cleanup: %v", got)
	}

	// Client Cleanup, too — and nothing comes back afterwards.
	c2, _ := connectTest(t, m, nil)
	if len(retained()) == 0 {
		t.Fatal("nothing published by the second client")
	}
	if err := c2.Cleanup(ctx); err != nil {
		t.Fatalf("(*Client).Cleanup: %v", err)
	}
	if got := retained(); len(got) != 0 {
		t.Errorf("retained after (*Client).Cleanup: %v", got)
	}
	if err := c2.Cleanup(ctx); err == nil {
		t.Error("Cleanup on a closed client succeeded")
	}
}

// TestConnectWaitsForBroker: Connect keeps trying while the broker is not up
// yet, and gives up when its context ends.
func TestConnectWaitsForBroker(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	m.Stop()
	log, logs := testLogger()
	o := Options{Broker: Broker{URL: m.URL()}, Logger: log, RetryInterval: 200 * time.Millisecond}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := Connect(ctx, o)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect with no broker = %v, want deadline exceeded", err)
	}

	result := make(chan error, 1)
	var c *Client
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		var err error
		c, err = Connect(ctx, o)
		result <- err
	}()
	waitLog(t, logs, "MQTT broker not reachable; will retry")
	m.Start()
	if err := <-result; err != nil {
		t.Fatalf("Connect once the broker started: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Error(err)
	}
}

// TestAuthentication: a broker with logins accepts the right ones and
// refuses wrong ones at once (no endless retry), with a useful message.
func TestAuthentication(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{Users: map[string]string{"addons": "s3cret-pw"}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	log, _ := testLogger()
	_, err := Connect(ctx, Options{Broker: Broker{URL: m.URL(), Username: "addons", Password: "wrong"}, Logger: log})
	if err == nil || !strings.Contains(err.Error(), "refused the credentials") {
		t.Fatalf("Connect with a wrong password = %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("a refused login was retried until the deadline")
	}

	c, _ := connectTest(t, m, func(o *Options) { o.Broker = Broker{URL: m.URL(), Username: "addons", Password: "s3cret-pw"} })
	obs := newObserver(t, m.URL(), func(po *paho.ClientOptions) { po.SetUsername("addons").SetPassword("s3cret-pw") }, "gemini_supply/#")
	obs.waitPayload(c.Topics().Availability, "online")
}
