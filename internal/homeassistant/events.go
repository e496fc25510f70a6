package homeassistant

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Event types fired for automations.
const (
	EventRunStarted   = "gemini_supply_run_started"
	EventItemFinished = "gemini_supply_item_finished"
	EventRunFinished  = "gemini_supply_run_finished"
	EventRunFailed    = "gemini_supply_run_failed"
	EventStart        = "gemini_supply_start"
	EventStop         = "gemini_supply_stop"
	EventBusy         = "gemini_supply_busy"
	// EventCart carries the store's cart after each run and each action on
	// it (for installs without MQTT, whose Cart sensor shows the same).
	EventCart = "gemini_supply_cart"
)

// DefaultFireTimeout bounds each event the sink fires or notification it shows.
const DefaultFireTimeout = 30 * time.Second

// EventSinkOptions configures an EventSink.
type EventSinkOptions struct {
	// Notifier shows the "waiting for your choice" notice; nil uses
	// NewNotifier(client, NotifierOptions{}).
	Notifier *Notifier
	Logger   *slog.Logger
	// FireTimeout bounds each call to Home Assistant (default 30 s).
	FireTimeout time.Duration
}

// EventSink turns a run's status events into Home Assistant events, in
// order, and keeps a "waiting for your choice" notification shown while a
// question waits for the user:
//
//	KindRunStarted   → gemini_supply_run_started  {run_id, total}
//	KindItemFinished → gemini_supply_item_finished {run_id, item, item_id, quantity, outcome, product, price, price_cents, url, explanation, done, total}
//	KindRunFinished  → gemini_supply_run_finished  {run_id, added, not_found, failed, duplicates, items, total, total_cents, unknown_prices, cancelled, stopped, cart_url, title, summary}
//	state failed     → gemini_supply_run_failed    {run_id, message}
//	KindRunFinished with the cart, KindCartChanged → gemini_supply_cart {run_id, units, estimated_total, total_cents, unknown_prices, lines: [{name, quantity, price, price_cents}], cart_url, read_at[, action]}
//	KindWaitingForUser / KindUserAnswered → persistent notification gemini_supply_waiting shown / dismissed
//
// A failed call is logged and the sink goes on: Home Assistant being away
// never stalls a run (the bus drops what a slow subscriber cannot take).
type EventSink struct {
	c        *Client
	notifier *Notifier
	log      *slog.Logger
	timeout  time.Duration
	waiting  map[string]string // open questions: item → question
}

// NewEventSink returns a sink firing on c.
func NewEventSink(c *Client, opts EventSinkOptions) *EventSink {
	if opts.Notifier == nil {
		opts.Notifier = NewNotifier(c, NotifierOptions{})
	}
	if opts.FireTimeout <= 0 {
		opts.FireTimeout = DefaultFireTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = c.log
	}
	return &EventSink{c: c, notifier: opts.Notifier, log: logger.With("component", "homeassistant.events"),
		timeout: opts.FireTimeout, waiting: map[string]string{}}
}

// Consume handles the events of sub one at a time until sub.C is closed
// (returns nil) or ctx is done (returns ctx.Err()).
func (s *EventSink) Consume(ctx context.Context, sub *runstatus.Subscription) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-sub.C:
			if !ok {
				return nil
			}
			s.handle(ctx, ev)
		}
	}
}

func (s *EventSink) handle(ctx context.Context, ev runstatus.Event) {
	switch ev.Kind {
	case runstatus.KindRunStarted:
		clear(s.waiting)
		s.fire(ctx, EventRunStarted, map[string]any{"run_id": ev.RunID, "total": ev.Progress.Total})
	case runstatus.KindItemFinished:
		if ev.Item == nil {
			return
		}
		s.fire(ctx, EventItemFinished, itemData(ev))
	case runstatus.KindRunFinished:
		if len(s.waiting) > 0 {
			clear(s.waiting)
			s.dismissWaiting(ctx)
		}
		s.fire(ctx, EventRunFinished, runFinishedData(s.notifier.opts.Messages, ev))
		if ev.Pack != nil && ev.Pack.Cart != nil {
			s.fire(ctx, EventCart, cartData(ev.RunID, *ev.Pack.Cart, nil))
		}
	case runstatus.KindCartChanged:
		if ev.Cart != nil {
			s.fire(ctx, EventCart, cartData(ev.RunID, *ev.Cart, ev.Action))
		}
	case runstatus.KindStateChanged:
		if ev.State == runstatus.StateFailed {
			s.fire(ctx, EventRunFailed, map[string]any{"run_id": ev.RunID, "message": ev.Message})
		}
	case runstatus.KindWaitingForUser:
		s.waiting[questionKey(ev)] = ev.Message
		s.showWaiting(ctx)
	case runstatus.KindUserAnswered:
		k := questionKey(ev)
		if _, ok := s.waiting[k]; !ok {
			return
		}
		delete(s.waiting, k)
		if len(s.waiting) == 0 {
			s.dismissWaiting(ctx)
		} else {
			s.showWaiting(ctx)
		}
	}
}

func (s *EventSink) fire(ctx context.Context, eventType string, data map[string]any) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.c.FireEvent(ctx, eventType, data); err != nil {
		s.log.Warn("could not fire a Home Assistant event", "event_type", eventType, "error", err)
	}
}

func (s *EventSink) showWaiting(ctx context.Context) {
	items := make([]string, 0, len(s.waiting))
	for k := range s.waiting {
		items = append(items, k)
	}
	sort.Strings(items)
	var b strings.Builder
	m := s.notifier.opts.Messages
	b.WriteString(m.T("notify.waiting_body") + "\n\n")
	for _, it := range items {
		fmt.Fprintf(&b, "- **%s**", escapeMarkdown(it))
		if q := s.waiting[it]; q != "" {
			b.WriteString(": " + escapeMarkdown(q))
		}
		b.WriteString("\n")
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.notifier.Notify(ctx, s.notifier.opts.WaitingID, m.T("notify.waiting_title"), b.String()); err != nil {
		s.log.Warn("could not show the waiting notification", "error", err)
	}
}

func (s *EventSink) dismissWaiting(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.notifier.Dismiss(ctx, s.notifier.opts.WaitingID); err != nil {
		s.log.Warn("could not dismiss the waiting notification", "error", err)
	}
}

func questionKey(ev runstatus.Event) string {
	if ev.Item != nil && ev.Item.ItemName != "" {
		return ev.Item.ItemName
	}
	if ev.Item != nil {
		return ev.Item.ItemID
	}
	return "an item"
}

func itemData(ev runstatus.Event) map[string]any {
	it := ev.Item
	q := it.Quantity
	if q < 1 {
		q = 1
	}
	d := map[string]any{
		"run_id":      ev.RunID,
		"item":        it.ItemName,
		"item_id":     it.ItemID,
		"quantity":    q,
		"outcome":     string(it.Outcome),
		"product":     it.ProductName,
		"price":       it.Price.Text,
		"url":         it.URL,
		"explanation": it.Explanation,
		"done":        ev.Progress.Done,
		"total":       ev.Progress.Total,
	}
	if it.Price.Known {
		d["price_cents"] = int64(it.Price.UnitCents)
	}
	return d
}

func runFinishedData(m messages.Catalog, ev runstatus.Event) map[string]any {
	d := map[string]any{"run_id": ev.RunID}
	if ev.Summary == nil {
		p := ev.Progress
		d["added"], d["not_found"], d["failed"], d["items"] = p.Added, p.NotFound, p.Failed, p.Total
		return d
	}
	sum := *ev.Summary
	c := sum.Counts()
	total, unknown := sum.EstimatedTotal()
	d["added"] = c.Added
	d["not_found"] = c.NotFound
	d["failed"] = c.Failed
	d["duplicates"] = c.Duplicate
	d["skipped"] = c.Skipped
	d["not_shopped"] = c.NotShopped
	d["items"] = c.Total
	d["total"] = money.Format(total)
	d["total_cents"] = int64(total)
	d["unknown_prices"] = unknown
	d["cancelled"] = sum.Cancelled
	d["stopped"] = sum.Cancelled
	d["cart_url"] = sum.CartURL
	d["title"] = sum.TitleIn(m)
	d["summary"] = sum.MarkdownIn(m)
	if sum.RunID != "" {
		d["run_id"] = sum.RunID
	}
	return d
}

// cartData is the gemini_supply_cart event's data: the cart as the MQTT
// Cart sensor's attributes have it, and the action that changed it.
func cartData(runID string, c reviewpack.Cart, act *reviewpack.Action) map[string]any {
	d := map[string]any{}
	b, err := json.Marshal(c.Info(runID))
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil { // cannot happen: plain values
		d = map[string]any{"run_id": runID, "units": c.Units()}
	}
	if act != nil {
		d["action"] = map[string]any{"action": string(act.Kind), "item": act.ItemName, "product": act.Product,
			"before": act.Before, "after": act.After, "error": act.Error}
	}
	return d
}

// escapeMarkdown keeps list and model text from changing the formatting.
func escapeMarkdown(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, "`", "\\`", `[`, `\[`, `]`, `\]`, `#`, `\#`, "\n", " ")
	return r.Replace(s)
}
