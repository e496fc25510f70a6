package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
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
	// OutboxPath is the file that keeps the events not fired yet, so a
	// restart of gemini-supply does not lose them (EventOutboxFile in the
	// data folder); empty keeps them in memory only.
	OutboxPath string
}

// EventOutboxFile is the outbox's file name in the data folder.
const EventOutboxFile = "ha-events-outbox.json"

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
// No event is lost when Home Assistant is away: an event that could not be
// fired, or whose outcome is unknown (the connection dropped before the
// answer), goes to the outbox, and so does every event after it while the
// outbox is not empty, so that automations see them in order. The outbox is
// fired in the background once Home Assistant runs again; each of its events
// carries late: true and occurred_at (RFC 3339), and may repeat one Home
// Assistant received just before it went away (an unknown outcome). With
// OutboxPath the outbox survives a restart of gemini-supply. While Home
// Assistant is not running, events go straight to the outbox: a run never
// waits for Home Assistant (the bus drops what a slow subscriber cannot take).
// Notifications are not queued: the waiting notice is shown again with the
// next question and the summary is on the list.
type EventSink struct {
	c        *Client
	notifier *Notifier
	log      *slog.Logger
	timeout  time.Duration
	waiting  map[string]string // open questions: item → question
	outbox   *eventOutbox
}

// queuedEvent is an event in the outbox.
type queuedEvent struct {
	Type       string         `json:"event_type"`
	Data       map[string]any `json:"event_data"`
	OccurredAt time.Time      `json:"occurred_at"`
}

// lateData is the event's data as fired late: its own, with late and
// occurred_at.
func (q queuedEvent) lateData() map[string]any {
	d := make(map[string]any, len(q.Data)+2)
	for k, v := range q.Data {
		d[k] = v
	}
	d["late"] = true
	d["occurred_at"] = q.OccurredAt.UTC().Format(time.RFC3339Nano)
	return d
}

// eventOutbox is the ordered queue of events not fired yet, written to path
// (when set) after every change.
type eventOutbox struct {
	path   string
	log    *slog.Logger
	mu     sync.Mutex
	events []queuedEvent
	wake   chan struct{} // a new event was queued
}

func loadOutbox(path string, log *slog.Logger) *eventOutbox {
	o := &eventOutbox{path: path, log: log, wake: make(chan struct{}, 1)}
	if path == "" {
		return o
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		log.Warn("could not read the events not fired yet", "path", path, "error", err)
	default:
		if err := json.Unmarshal(b, &o.events); err != nil {
			log.Warn("the file of events not fired yet is damaged; they are lost", "path", path, "error", err)
			o.events = nil
		} else if len(o.events) > 0 {
			log.Info("events not fired before the last stop will be fired late", "queued", len(o.events))
		}
	}
	return o
}

// saveLocked writes the outbox (o.mu held).
func (o *eventOutbox) saveLocked() {
	if o.path == "" {
		return
	}
	if len(o.events) == 0 {
		if err := os.Remove(o.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			o.log.Warn("could not clear the file of events not fired yet", "path", o.path, "error", err)
		}
		return
	}
	b, err := json.Marshal(o.events)
	if err == nil {
		err = atomicfile.Write(o.path, b, 0o600)
	}
	if err != nil {
		o.log.Warn("could not save the events not fired yet; a restart would lose them", "path", o.path, "error", err)
	}
}

// add queues ev behind the others.
func (o *eventOutbox) add(ev queuedEvent) int {
	o.mu.Lock()
	o.events = append(o.events, ev)
	n := len(o.events)
	o.saveLocked()
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return n
}

// head is the oldest queued event.
func (o *eventOutbox) head() (queuedEvent, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.events) == 0 {
		return queuedEvent{}, false
	}
	return o.events[0], true
}

// pop removes the oldest event once it was fired.
func (o *eventOutbox) pop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.events) > 0 {
		o.events = o.events[1:]
		o.saveLocked()
	}
}

func (o *eventOutbox) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.events)
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
	log := logger.With("component", "homeassistant.events")
	return &EventSink{c: c, notifier: opts.Notifier, log: log,
		timeout: opts.FireTimeout, waiting: map[string]string{}, outbox: loadOutbox(opts.OutboxPath, log)}
}

// Pending is how many events wait in the outbox to be fired late.
func (s *EventSink) Pending() int { return s.outbox.len() }

// Consume handles the events of sub one at a time until sub.C is closed
// (returns nil) or ctx is done (returns ctx.Err()). Meanwhile it fires the
// outbox whenever Home Assistant runs; what is left stays in the outbox
// (and its file) for the next Consume.
func (s *EventSink) Consume(ctx context.Context, sub *runstatus.Subscription) error {
	flushCtx, stopFlush := context.WithCancel(ctx)
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		s.flushLoop(flushCtx)
	}()
	defer func() {
		stopFlush()
		<-flushed
	}()
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
	case runstatus.KindSlotsRead:
		if ev.Slots != nil {
			s.fire(ctx, EventSlots, slotsData(*ev.Slots))
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

// fire fires the event now when Home Assistant runs and nothing older waits;
// otherwise, or when the fire fails or its outcome is unknown, the event
// goes to the outbox.
func (s *EventSink) fire(ctx context.Context, eventType string, data map[string]any) {
	ev := queuedEvent{Type: eventType, Data: data, OccurredAt: time.Now()}
	if s.outbox.len() > 0 || !s.c.Running() {
		n := s.outbox.add(ev)
		s.log.Warn("could not fire a Home Assistant event now (Home Assistant is not running, or older events wait); queued, it will be fired late",
			"event_type", eventType, "queued", n)
		return
	}
	fctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.c.FireEvent(fctx, eventType, data); err != nil {
		n := s.outbox.add(ev)
		s.log.Warn("could not fire a Home Assistant event; queued, it will be fired late", "event_type", eventType, "queued", n, "error", err)
	}
}

// flushLoop fires the outbox, oldest first, whenever Home Assistant runs,
// until ctx is done. A failed fire is tried again after a growing pause
// (at most 30 s), or as soon as Home Assistant runs again.
func (s *EventSink) flushLoop(ctx context.Context) {
	const maxBackoff = 30 * time.Second
	backoff := 100 * time.Millisecond
	for {
		q, ok := s.outbox.head()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-s.outbox.wake:
				continue
			}
		}
		// Wait for Home Assistant to run, bounded by the fire timeout so
		// the loop notices ctx and new events; Running after a wait means
		// the fire below is expected to land.
		wctx, cancel := context.WithTimeout(ctx, s.timeout)
		err := s.c.WaitRunning(wctx)
		if err == nil {
			err = s.c.FireEvent(wctx, q.Type, q.lateData())
		}
		cancel()
		if err == nil {
			// Home Assistant took it: out of the outbox even when the sink
			// is stopping (else the next start would fire it again).
			s.outbox.pop()
			s.log.Info("a queued Home Assistant event was fired late", "event_type", q.Type,
				"late_by", time.Since(q.OccurredAt).Round(time.Millisecond), "queued", s.outbox.len())
			backoff = 100 * time.Millisecond
			if ctx.Err() != nil {
				return
			}
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, ErrClosed) {
			return
		}
		s.log.Debug("a queued Home Assistant event could not be fired yet", "event_type", q.Type, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, maxBackoff)
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
