package homeassistant

import (
	"testing"
	"time"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// TestEventSinkFiresTheCart: without MQTT, Home Assistant learns the cart
// from gemini_supply_cart — after the run (its units, estimated total and
// lines) and after each action on it (with the action).
func TestEventSinkFiresTheCart(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	sink := NewEventSink(c, EventSinkOptions{})
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(64)
	done := make(chan error, 1)
	go func() { done <- sink.Consume(testCtx(t), sub) }()

	now := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	milk := reviewpack.Line{Name: "Natrel 2% Milk 2 L", ProductID: "milk-2pct-2l", Quantity: 2, Price: money.Parse("$5.49")}
	bread := reviewpack.Line{Name: "POM White Bread 675 g", ProductID: "bread-white-675g", Quantity: 1, Price: money.Parse("$3.99")}
	cart := reviewpack.Cart{ReadAt: now, URL: "https://www.metro.ca/cart", Lines: []reviewpack.Line{milk, bread}}
	summary := report.Summary{RunID: "run-1", Items: []report.ItemResult{}}
	bus.Publish(runstatus.Event{Time: now, Kind: runstatus.KindRunFinished, RunID: "run-1", Summary: &summary,
		Pack: &reviewpack.Pack{RunID: "run-1", Items: []reviewpack.Item{}, Cart: &cart}})
	milk.Quantity = 1
	after := reviewpack.Cart{ReadAt: now.Add(time.Minute), Lines: []reviewpack.Line{milk, bread}}
	bus.Publish(runstatus.Event{Time: now, Kind: runstatus.KindCartChanged, RunID: "run-1", Cart: &after,
		Action: &reviewpack.Action{Kind: reviewpack.ActQuantity, ItemID: "u1", ItemName: "milk", Product: milk.Name, Before: 2, After: 1}})
	bus.Close()
	if err := receive(t, done, "Consume to return after the bus closed"); err != nil {
		t.Fatalf("Consume: %v", err)
	}

	var carts []map[string]any
	for _, e := range f.Events() {
		if e.Type == EventCart {
			carts = append(carts, e.Data)
		}
	}
	if len(carts) != 2 {
		t.Fatalf("%d %s events, want 2: %+v", len(carts), EventCart, f.Events())
	}
	for i, want := range []struct {
		units, cents float64
		total        string
		milk         float64
	}{{3, 1497, "$14.97", 2}, {2, 948, "$9.48", 1}} {
		d := carts[i]
		if d["units"] != want.units || d["total_cents"] != want.cents || d["estimated_total"] != want.total || d["run_id"] != "run-1" {
			t.Errorf("cart event %d = %v", i, d)
		}
		lines, _ := d["lines"].([]any)
		if len(lines) != 2 {
			t.Fatalf("cart event %d lines = %v", i, d["lines"])
		}
		l0, _ := lines[0].(map[string]any)
		if l0["name"] != "Natrel 2% Milk 2 L" || l0["quantity"] != want.milk || l0["price"] != "$5.49" || l0["price_cents"] != 549.0 {
			t.Errorf("cart event %d first line = %v", i, l0)
		}
	}
	if _, ok := carts[0]["action"]; ok {
		t.Errorf("the run's cart event has an action: %v", carts[0])
	}
	act, _ := carts[1]["action"].(map[string]any)
	if act["action"] != "quantity" || act["item"] != "milk" || act["before"] != 2.0 || act["after"] != 1.0 {
		t.Errorf("the action's cart event's action = %v", carts[1]["action"])
	}
}
