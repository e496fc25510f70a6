package homeassistant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// EventUsual asks for "the usual" (package usual): the phones of ha_notify
// get "12 usual items, 3 probably still at home — review", which opens
// the panel, where the household ticks what goes on the list. Nothing is
// added to the list by the event.
const EventUsual = "gemini_supply_usual"

// UsualTag is the tag of the usual's phone notification.
const UsualTag = "gemini_supply_usual"

// UsualTrigger answers gemini_supply_usual events with a phone push.
type UsualTrigger struct {
	c       *Client
	p       *Phone
	log     *slog.Logger
	propose func(ctx context.Context) (items, atHome int, err error)
	url     string
}

// NewUsualTrigger returns the trigger: propose counts the proposal's items
// and those probably still at home; url is what a tap on the notification
// opens (the panel: "/hassio/ingress/<slug>" for the add-on).
func NewUsualTrigger(c *Client, p *Phone, url string, propose func(ctx context.Context) (items, atHome int, err error)) *UsualTrigger {
	return &UsualTrigger{c: c, p: p, log: p.log.With("component", "homeassistant.usual"), propose: propose, url: url}
}

// Run listens for gemini_supply_usual until ctx is done (nil) or the client
// fails for good. It starts no run: its signature is serve's Source.
func (t *UsualTrigger) Run(ctx context.Context, _ func(context.Context, runstatus.Request) error) error {
	sub, err := t.c.SubscribeEvents(ctx, EventUsual)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("listen for %s events: %w", EventUsual, err)
	}
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-sub.C:
			if !ok {
				if err := t.c.Err(); err != nil && !errors.Is(err, ErrClosed) {
					return fmt.Errorf("listen for %s events: %w", EventUsual, err)
				}
				return nil
			}
			if err := t.Push(ctx); err != nil && ctx.Err() == nil {
				t.log.Warn("could not propose the usual", "error", err)
			}
		}
	}
}

// Push proposes the usual on the phones.
func (t *UsualTrigger) Push(ctx context.Context) error {
	n, home, err := t.propose(ctx)
	if err != nil {
		return err
	}
	m := t.p.msg
	return t.p.PushOpen(ctx, UsualTag, m.T("usual.push_title"), m.T("usual.summary", "n", n, "home", home), t.url)
}
