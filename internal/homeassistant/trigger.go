package homeassistant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// MaxConcurrency is the largest concurrency a trigger may ask for: the
// configuration's own limit.
const MaxConcurrency = config.MaxConcurrency

// EventTrigger starts shopping runs from the Home Assistant event
// gemini_supply_start, and stops the run in progress on gemini_supply_stop
// (WithStop). Optional start event data:
//
//	retry_tagged: true          also shop items tagged #404/#failed
//	retry_failed: true          shop only the items tagged #404/#failed
//	concurrency: 2              tabs at once (1–8; default: configured)
//	items: ["milk", "eggs"]     only these items (a list, or "milk, eggs")
type EventTrigger struct {
	c    *Client
	log  *slog.Logger
	stop func(ctx context.Context, source string) error
}

// WithStop makes gemini_supply_stop call stop (serve's Server.Stop) with
// source "event". Without it the trigger does not listen for stops.
func (t *EventTrigger) WithStop(stop func(ctx context.Context, source string) error) *EventTrigger {
	t.stop = stop
	return t
}

// NewEventTrigger returns a trigger on c.
func NewEventTrigger(c *Client, logger *slog.Logger) *EventTrigger {
	if logger == nil {
		logger = c.log
	}
	return &EventTrigger{c: c, log: logger.With("component", "homeassistant.trigger")}
}

// Run subscribes to gemini_supply_start (and gemini_supply_stop with
// WithStop) and calls start (stop) for every valid event until ctx is done
// (returns nil) or the client fails for good (returns its error). Invalid
// event data is logged and ignored; start's errors (runstatus.ErrBusy
// included) are logged by the caller's start, and so is a stop with no run.
func (t *EventTrigger) Run(ctx context.Context, start func(context.Context, runstatus.Request) error) error {
	sub, err := t.c.SubscribeEvents(ctx, EventStart)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("listen for %s events: %w", EventStart, err)
	}
	defer sub.Close()
	var stops <-chan Event
	if t.stop != nil {
		stopSub, err := t.c.SubscribeEvents(ctx, EventStop)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listen for %s events: %w", EventStop, err)
		}
		defer stopSub.Close()
		stops = stopSub.C
	}
	t.log.Info("listening for Home Assistant events", "event_type", EventStart, "stop", t.stop != nil)
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-stops:
			if !ok {
				return t.ended()
			}
			// The stop with no run going is logged by stop (serve.Server.Stop).
			if err := t.stop(ctx, "event"); err != nil && ctx.Err() == nil {
				t.log.Debug("stop event", "result", err)
			}
		case ev, ok := <-sub.C:
			if !ok {
				return t.ended()
			}
			req, err := ParseStartEvent(ev.Data)
			if err != nil {
				t.log.Warn("ignored a start event with invalid data", "event_type", EventStart, "error", err)
				continue
			}
			if err := start(ctx, req); err != nil && !errors.Is(err, runstatus.ErrBusy) {
				t.log.Warn("could not start a run from a Home Assistant event", "error", err)
			}
		}
	}
}

// ended is Run's result when a subscription closed: the client's failure, if any.
func (t *EventTrigger) ended() error {
	if err := t.c.Err(); err != nil && !errors.Is(err, ErrClosed) {
		return fmt.Errorf("listen for %s events: %w", EventStart, err)
	}
	return nil
}

// ParseStartEvent reads gemini_supply_start event data into a Request with
// Source "event". Values rendered by templates as strings ("true", "2") are
// accepted.
func ParseStartEvent(data json.RawMessage) (runstatus.Request, error) {
	req := runstatus.Request{Source: "event"}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return req, nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return req, fmt.Errorf("event data is not an object: %w", err)
	}
	if v, ok := m["retry_tagged"]; ok {
		b, err := boolValue(v)
		if err != nil {
			return req, fmt.Errorf("retry_tagged: %w", err)
		}
		req.RetryTagged = b
	}
	if v, ok := m["retry_failed"]; ok {
		b, err := boolValue(v)
		if err != nil {
			return req, fmt.Errorf("retry_failed: %w", err)
		}
		req.RetryFailed = b
	}
	if v, ok := m["concurrency"]; ok {
		n, err := intValue(v)
		if err != nil {
			return req, fmt.Errorf("concurrency: %w", err)
		}
		if n < 1 || n > MaxConcurrency {
			return req, fmt.Errorf("concurrency %d is not between 1 and %d", n, MaxConcurrency)
		}
		req.Concurrency = n
	}
	if v, ok := m["items"]; ok {
		items, err := listValue(v)
		if err != nil {
			return req, fmt.Errorf("items: %w", err)
		}
		req.Items = items
	}
	return req, nil
}

func boolValue(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0", "":
			return false, nil
		}
	case float64:
		return x != 0, nil
	}
	return false, fmt.Errorf("want true or false, got %v", v)
}

func intValue(v any) (int, error) {
	switch x := v.(type) {
	case float64:
		if x != float64(int(x)) {
			return 0, fmt.Errorf("want a whole number, got %v", x)
		}
		return int(x), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, fmt.Errorf("want a whole number, got %q", x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("want a whole number, got %v", v)
}

func listValue(v any) ([]string, error) {
	var raw []string
	switch x := v.(type) {
	case string:
		raw = strings.FieldsFunc(x, func(r rune) bool { return r == ',' || r == '\n' })
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("want item names, got %v", e)
			}
			raw = append(raw, s)
		}
	case nil:
		return nil, nil
	default:
		return nil, fmt.Errorf("want a list of item names, got %v", v)
	}
	var out []string
	for _, s := range raw {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// BusyReporter returns a function for serve's busy hook: it fires
// gemini_supply_busy {source, retry_tagged, items, message} so an automation
// can tell the person who pressed the button that a run is already going.
func BusyReporter(c *Client, logger *slog.Logger) func(context.Context, runstatus.Request) {
	if logger == nil {
		logger = c.log
	}
	log := logger.With("component", "homeassistant.trigger")
	return func(ctx context.Context, req runstatus.Request) {
		ctx, cancel := context.WithTimeout(ctx, DefaultFireTimeout)
		defer cancel()
		if err := c.FireEvent(ctx, EventBusy, busyData(req)); err != nil {
			log.Warn("could not fire the busy event", "error", err)
		}
	}
}

// BusyReporter is the package's BusyReporter through the sink: a busy event
// Home Assistant cannot take now waits in the outbox like the run's events.
func (s *EventSink) BusyReporter() func(context.Context, runstatus.Request) {
	return func(ctx context.Context, req runstatus.Request) { s.fire(ctx, EventBusy, busyData(req)) }
}

// busyData is the gemini_supply_busy event's data for the refused req.
func busyData(req runstatus.Request) map[string]any {
	data := map[string]any{
		"source":       req.Source,
		"retry_tagged": req.RetryTagged,
		"items":        req.Items,
		"message":      runstatus.ErrBusy.Error(),
		"time":         time.Now().UTC().Format(time.RFC3339),
	}
	if req.Items == nil {
		data["items"] = []string{}
	}
	return data
}
