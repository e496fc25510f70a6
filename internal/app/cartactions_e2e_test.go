package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/mqtt"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/store"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestReviewPackActionsChangeTheCart: after a real run of the demo store
// (Chromium, the scripted model), the review pack names what each item
// added and how sure the run is of it; Remove from cart, Change quantity
// and Wrong product change the store's cart exactly that much (through
// the run's browser and policy), Wrong product forgets the product and
// shops the item again with another product; each action is journaled
// and shown in the history, and published with the cart as read after
// it. Hostile requests get clear errors and change nothing.
func TestReviewPackActionsChangeTheCart(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "milk", "eggs", "bananas", "butter")
	bus := &runstatus.Bus{}
	sub := bus.Subscribe(256)
	e.deps.Bus = bus
	// Home Assistant's Cart sensor, on a real mosquitto.
	sensor := cartSensor(t, bus)
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := e.runner.DemoStore()
	runID := res.Summary.RunID
	pk := res.Pack
	if pk == nil || pk.Cart == nil {
		t.Fatalf("the run has no review pack with its cart: %+v", pk)
	}
	byName := map[string]reviewpack.Item{}
	for _, it := range pk.Items {
		byName[it.ItemName] = it
	}
	for _, name := range []string{"milk", "eggs", "bananas"} {
		it := byName[name]
		if it.Outcome != report.OutcomeAdded || it.ProductID == "" || it.ProductID != store.ProductID(it.URL) {
			t.Fatalf("%s in the pack: %+v", name, it)
		}
		if it.Confidence != reviewpack.AgentChose && it.Confidence != reviewpack.AgentOneMatch {
			t.Errorf("%s: confidence %q (matches %d), want the agent's", name, it.Confidence, it.Matches)
		}
	}
	if m := byName["milk"]; m.Confidence != reviewpack.AgentChose || m.Matches < 2 {
		t.Errorf("milk (several in stock): confidence %q among %d", m.Confidence, m.Matches)
	}
	if b := byName["butter"]; b.Outcome != report.OutcomeNotFound || !hasWarning(b, reviewpack.WarnOutOfStock) {
		t.Errorf("butter (sold out): %+v", b)
	}
	units := cartUnits(srv)
	for _, l := range pk.Cart.Lines {
		if units[l.ProductID] != l.Quantity {
			t.Errorf("the pack's cart says %d × %s, the store %d", l.Quantity, l.ProductID, units[l.ProductID])
		}
	}
	if pk.Cart.Units() != total(units) {
		t.Errorf("the pack's cart has %d units, the store %d", pk.Cart.Units(), total(units))
	}
	sensor.expect(units)
	// The run's journal carries the pack.
	h := PanelHistory(e.cfg)
	if d, err := h.Run(context.Background(), runID); err != nil || d.Pack == nil || len(d.Pack.Items) != len(pk.Items) {
		t.Fatalf("history of the run: pack %+v (%v)", d.Pack, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	act := func(kind reviewpack.ActionKind, item string, qty int) (reviewpack.Action, error) {
		return e.runner.CartAction(ctx, reviewpack.Request{RunID: runID, ItemID: byName[item].ItemID, Kind: kind, Quantity: qty, Source: "test"})
	}

	// Hostile and impossible requests: clear errors, the cart unchanged.
	e.runner.busy.Lock() // a run is going
	if _, err := act(reviewpack.ActRemove, "milk", 0); !errors.Is(err, runstatus.ErrBusy) {
		t.Errorf("an action during a run: %v, want ErrBusy", err)
	}
	e.runner.busy.Unlock()
	for _, tc := range []struct {
		name string
		req  reviewpack.Request
		want error
	}{
		{"unknown item", reviewpack.Request{RunID: runID, ItemID: "no-such-item", Kind: reviewpack.ActRemove}, panel.ErrNotFound},
		{"unknown run", reviewpack.Request{RunID: "20990101-000000", ItemID: byName["milk"].ItemID, Kind: reviewpack.ActRemove}, panel.ErrNotFound},
		{"a path for a run", reviewpack.Request{RunID: "../runs/" + runID, ItemID: byName["milk"].ItemID, Kind: reviewpack.ActRemove}, reviewpack.ErrInvalid},
		{"negative quantity", reviewpack.Request{RunID: runID, ItemID: byName["eggs"].ItemID, Kind: reviewpack.ActQuantity, Quantity: -2}, reviewpack.ErrInvalid},
		{"zero quantity", reviewpack.Request{RunID: runID, ItemID: byName["eggs"].ItemID, Kind: reviewpack.ActQuantity}, reviewpack.ErrInvalid},
		{"huge quantity", reviewpack.Request{RunID: runID, ItemID: byName["eggs"].ItemID, Kind: reviewpack.ActQuantity, Quantity: 1 << 30}, reviewpack.ErrInvalid},
		{"unknown action", reviewpack.Request{RunID: runID, ItemID: byName["eggs"].ItemID, Kind: "checkout"}, reviewpack.ErrInvalid},
		{"an item that added nothing", reviewpack.Request{RunID: runID, ItemID: byName["butter"].ItemID, Kind: reviewpack.ActRemove}, reviewpack.ErrNotInCart},
	} {
		if _, err := e.runner.CartAction(ctx, tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := cartUnits(srv); !sameUnits(got, units) {
		t.Fatalf("refused actions changed the cart: %v → %v", units, got)
	}

	// Remove from cart: the bananas' line goes, nothing else changes.
	bananas := byName["bananas"].ProductID
	a, err := act(reviewpack.ActRemove, "bananas", 0)
	if err != nil || a.Before != 1 || a.After != 0 {
		t.Fatalf("remove bananas: %+v, %v", a, err)
	}
	want := copyUnits(units)
	delete(want, bananas)
	if got := cartUnits(srv); !sameUnits(got, want) {
		t.Fatalf("after Remove from cart: %v, want %v", got, want)
	}
	expectCartEvent(t, sub, runID, reviewpack.ActRemove, want)
	sensor.expect(want)
	// Again: it is no longer in the cart.
	if _, err := act(reviewpack.ActRemove, "bananas", 0); !errors.Is(err, reviewpack.ErrNotInCart) {
		t.Errorf("removing it twice: %v, want ErrNotInCart", err)
	}

	// Change quantity: eggs to 3.
	eggs := byName["eggs"].ProductID
	if a, err := act(reviewpack.ActQuantity, "eggs", 3); err != nil || a.Before != 1 || a.After != 3 {
		t.Fatalf("eggs to 3: %+v, %v", a, err)
	}
	want[eggs] = 3
	if got := cartUnits(srv); !sameUnits(got, want) {
		t.Fatalf("after Change quantity: %v, want %v", got, want)
	}
	expectCartEvent(t, sub, runID, reviewpack.ActQuantity, want)
	sensor.expect(want)

	// Wrong product: milk's product leaves the cart and the memory, and
	// the item is shopped again with another product.
	oldMilk := byName["milk"].ProductID
	var reshop shop.Result
	start := func(ctx context.Context, req runstatus.Request) error {
		var err error
		reshop, err = e.runner.Shop(ctx, req)
		return err
	}
	a, err = CartActions(e.runner, start)(ctx, reviewpack.Request{RunID: runID, ItemID: byName["milk"].ItemID, Kind: reviewpack.ActWrongProduct, Source: "test"})
	if err != nil || !a.Forgot || a.Reshop != "milk" || a.Before != 1 || a.After != 0 {
		t.Fatalf("wrong product milk: %+v, %v", a, err)
	}
	if len(reshop.Summary.Items) != 1 || reshop.Summary.Items[0].ItemName != "milk" || reshop.Summary.Items[0].Outcome != report.OutcomeAdded {
		t.Fatalf("the re-shop: %s", reshop.Summary.Markdown())
	}
	newMilk := store.ProductID(reshop.Summary.Items[0].URL)
	if newMilk == "" || newMilk == oldMilk {
		t.Fatalf("the re-shop added %q again (was %q)", newMilk, oldMilk)
	}
	delete(want, oldMilk)
	want[newMilk] = 1
	if got := cartUnits(srv); !sameUnits(got, want) {
		t.Fatalf("after Wrong product: %v, want %v", got, want)
	}
	sensor.expect(want) // after the re-shop's run
	mem, err := OpenProducts(e.dataDir, "demo", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := mem.Lookup("milk"); !ok || store.ProductID(got.URL) != newMilk {
		t.Errorf("the memory holds %+v for milk, want the new product %s", got, newMilk)
	}
	if got := e.list()["milk"]; got != "completed" {
		t.Errorf("milk on the list: %s, want completed again", got)
	}

	// The history shows each action with the run.
	d, err := h.Run(context.Background(), runID)
	if err != nil || d.Pack == nil {
		t.Fatalf("history: %v", err)
	}
	var kinds []reviewpack.ActionKind
	for _, a := range d.Pack.Actions {
		if a.Error != "" {
			t.Errorf("journaled action failed: %+v", a)
		}
		kinds = append(kinds, a.Kind)
	}
	if len(kinds) != 3 || kinds[0] != reviewpack.ActRemove || kinds[1] != reviewpack.ActQuantity || kinds[2] != reviewpack.ActWrongProduct {
		t.Errorf("journaled actions = %v", kinds)
	}
	if d.Pack.Cart == nil || d.Pack.Cart.Units() != total(cartUnitsOf(d.Pack.Cart)) {
		t.Errorf("the journal's cart: %+v", d.Pack.Cart)
	}
}

func hasWarning(it reviewpack.Item, k reviewpack.WarningKind) bool {
	for _, w := range it.Warnings {
		if w.Kind == k {
			return true
		}
	}
	return false
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func copyUnits(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sameUnits(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}

func cartUnitsOf(c *reviewpack.Cart) map[string]int {
	m := map[string]int{}
	for _, l := range c.Lines {
		m[l.ProductID] += l.Quantity
	}
	return m
}

// expectCartEvent waits for the next cart_changed event and checks it says
// the cart the store has.
func expectCartEvent(t *testing.T, sub *runstatus.Subscription, runID string, kind reviewpack.ActionKind, want map[string]int) {
	t.Helper()
	timeout := time.After(time.Minute) // bounds a hang; the event is published before the action returns
	for {
		select {
		case ev := <-sub.C:
			if ev.Kind != runstatus.KindCartChanged || ev.Action == nil {
				continue // not an action's (a refused action's cart, read again)
			}
			if ev.RunID != runID || ev.Action == nil || ev.Action.Kind != kind || ev.Cart == nil || !sameUnits(cartUnitsOf(ev.Cart), want) {
				t.Fatalf("cart_changed event: run %s action %+v cart %+v, want %s with %v", ev.RunID, ev.Action, ev.Cart, kind, want)
			}
			return
		case <-timeout:
			t.Fatalf("no cart_changed event for %s", kind)
		}
	}
}

// mqttCart is what Home Assistant's MQTT Cart sensor shows, read by a
// second client from the broker.
type mqttCart struct {
	t     *testing.T
	mu    sync.Mutex
	state string
	attrs reviewpack.CartInfo
}

// cartSensor connects the MQTT integration to a real mosquitto, follows
// bus with it, and watches the Cart sensor's topics.
func cartSensor(t *testing.T, bus *runstatus.Bus) *mqttCart {
	t.Helper()
	b := testbroker.Start(t, testbroker.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := mqtt.Connect(ctx, mqtt.Options{Broker: mqtt.Broker{URL: b.URL()}, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	fctx, stopFollow := context.WithCancel(context.Background())
	stop := c.Follow(fctx, bus)
	t.Cleanup(func() {
		stopFollow()
		stop()
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		_ = c.Close(cctx)
	})
	s := &mqttCart{t: t}
	tp := c.Topics()
	subscribed := make(chan struct{}, 1)
	po := paho.NewClientOptions().AddBroker(b.URL()).SetClientID("cart-observer").SetOrderMatters(true)
	po.SetOnConnectHandler(func(pc paho.Client) {
		tok := pc.SubscribeMultiple(map[string]byte{tp.Cart: 1, tp.CartAttrs: 1}, func(_ paho.Client, m paho.Message) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if m.Topic() == tp.Cart {
				s.state = string(m.Payload())
			} else {
				_ = json.Unmarshal(m.Payload(), &s.attrs)
			}
		})
		if tok.WaitTimeout(time.Minute) && tok.Error() == nil {
			subscribed <- struct{}{}
		}
	})
	pc := paho.NewClient(po)
	if tok := pc.Connect(); !tok.WaitTimeout(time.Minute) || tok.Error() != nil {
		t.Fatalf("the observer cannot connect: %v", tok.Error())
	}
	t.Cleanup(func() { pc.Disconnect(0) })
	select {
	case <-subscribed:
	case <-time.After(time.Minute): // bounds a hang only
		t.Fatal("the observer could not subscribe")
	}
	return s
}

// expect waits until the sensor's state is the store's units and its
// attributes list the store's lines.
func (s *mqttCart) expect(want map[string]int) {
	s.t.Helper()
	byName := map[string]int{}
	for id, n := range want {
		if p, ok := demostore.ProductByID(id); ok {
			// As the demo store's (English) cart page names a line: the
			// review reads the cart from that page.
			byName[p.Name+", "+p.Size] = n
		}
	}
	testwait.Until(s.t, "the Cart sensor to show the store's cart", time.Minute, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.state != strconv.Itoa(total(want)) || s.attrs.Units != total(want) || len(s.attrs.Lines) != len(want) {
			return false
		}
		for _, l := range s.attrs.Lines {
			if byName[l.Name] != l.Quantity || l.PriceCents == nil {
				return false
			}
		}
		return true
	}, func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		return fmt.Sprintf("sensor %q %+v, want %v", s.state, s.attrs, want)
	})
}
