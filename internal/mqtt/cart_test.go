package mqtt

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
)

// TestCartSensorFollowsRunsAndActions: the Cart sensor (on a real
// mosquitto) shows the cart's units after a run, with its lines and
// estimated total as attributes, and follows an action on the cart
// afterwards — also one on an earlier run's cart.
func TestCartSensorFollowsRunsAndActions(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{})
	c, _ := connectTest(t, m, nil)
	tp := c.Topics()
	obs := newObserver(t, m.URL(), nil, "gemini_supply/#")

	bus := &runstatus.Bus{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := c.Follow(ctx, bus)
	defer stop()

	price := func(c money.Cents) money.Price { return money.Price{Text: money.Format(c), UnitCents: c, Known: true} }
	read := time.Date(2026, 3, 1, 14, 0, 0, 0, time.UTC)
	cart := &reviewpack.Cart{ReadAt: read, URL: "https://www.metro.ca/en/online-grocery/cart", Lines: []reviewpack.Line{
		{Name: "Natrel 2% Partly Skimmed Milk 2 L", ProductID: "milk-2pct-2l", Quantity: 2, Price: price(549)},
		{Name: "POM White Sandwich Bread 675 g", ProductID: "bread-white-675g", Quantity: 1, Price: price(399)},
		{Name: "Mystery line", Quantity: 1, Price: money.Price{Text: "see store"}},
	}}
	sum := &report.Summary{RunID: "run-1", StartedAt: read, FinishedAt: read, Items: []report.ItemResult{}}
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "run-1", State: runstatus.StateReviewReady, Summary: sum,
		Pack: &reviewpack.Pack{RunID: "run-1", Items: []reviewpack.Item{}, Cart: cart}})
	obs.waitPayload(tp.Cart, "4")
	obs.waitFor("the cart's attributes", func(last map[string]obsMsg, _ []obsMsg) bool {
		_, ok := last[tp.CartAttrs]
		return ok
	})

	var info reviewpack.CartInfo
	if err := json.Unmarshal([]byte(mustGet(t, obs, tp.CartAttrs)), &info); err != nil {
		t.Fatal(err)
	}
	if info.Units != 4 || info.EstimatedTotal != "$14.97" || info.TotalCents != 1497 || info.UnknownPrices != 1 || info.RunID != "run-1" ||
		len(info.Lines) != 3 || info.Lines[0].Name != "Natrel 2% Partly Skimmed Milk 2 L" || info.Lines[0].Quantity != 2 ||
		info.Lines[0].Price != "$5.49" || info.Lines[2].PriceCents != nil || info.CartURL == "" {
		t.Errorf("cart attributes = %+v", info)
	}

	// Remove the milk: the sensor follows the action's cart.
	after := &reviewpack.Cart{ReadAt: read.Add(time.Minute), Lines: cart.Lines[1:]}
	bus.Publish(runstatus.Event{Kind: runstatus.KindCartChanged, RunID: "run-1", Cart: after,
		Action: &reviewpack.Action{Kind: reviewpack.ActRemove, ItemID: "1", ItemName: "milk", Before: 2}})
	obs.waitPayload(tp.Cart, "2")
	// An action on an earlier run's cart is the store's cart too; it does
	// not touch the run sensors.
	bus.Publish(runstatus.Event{Kind: runstatus.KindCartChanged, RunID: "run-0", Cart: &reviewpack.Cart{Lines: []reviewpack.Line{}},
		Action: &reviewpack.Action{Kind: reviewpack.ActRemove, ItemID: "9", ItemName: "bread", Before: 1}})
	obs.waitPayload(tp.Cart, "0")
	if got := mustGet(t, obs, tp.Status); got != "review_ready" {
		t.Errorf("status = %q after an action, want review_ready", got)
	}
}
