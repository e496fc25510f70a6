// Package runstatus holds the observable state of a shopping run: the states a
// run moves through, its progress, and the stream of events that terminal
// output, MQTT, Home Assistant and Telegram subscribe to.
//
// It is deliberately free of heavy dependencies so every integration can
// import it without pulling in the browser or the model client.
package runstatus

import (
	"errors"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// State is where a run is.
type State string

const (
	StateIdle           State = "idle"
	StateInitializing   State = "initializing"
	StateAuthenticating State = "authenticating"
	StateShopping       State = "shopping"
	StateReviewing      State = "reviewing"
	StateReviewReady    State = "review_ready"
	StateCancelled      State = "cancelled"
	StateFailed         State = "failed"
)

// Kind says what an Event reports.
type Kind string

const (
	// KindRunStarted: a run began; Progress.Total is the number of items to shop.
	KindRunStarted Kind = "run_started"
	// KindStateChanged: State changed (Err holds the cause for StateFailed).
	KindStateChanged Kind = "state_changed"
	// KindItemStarted: an agent started on Item (Item.Outcome is empty).
	KindItemStarted Kind = "item_started"
	// KindItemFinished: Item has its final outcome.
	KindItemFinished Kind = "item_finished"
	// KindWaitingForUser: a question about Item is waiting for the user.
	KindWaitingForUser Kind = "waiting_for_user"
	// KindUserAnswered: the question about Item was answered (or timed out).
	KindUserAnswered Kind = "user_answered"
	// KindRunFinished: the run ended; Summary is set, and Pack (the review
	// pack, with the cart after the run) when the run shopped.
	KindRunFinished Kind = "run_finished"
	// KindCartChanged: the household acted on the cart after run RunID
	// (Action); Cart is the cart as read after it (nil: not readable).
	KindCartChanged Kind = "cart_changed"
	// KindSlotsRead: the store's delivery slots were read and differ from
	// the last reading published (Slots).
	KindSlotsRead Kind = "slots_read"
)

// Progress counts a run's items.
type Progress struct {
	Total    int `json:"total"`
	Done     int `json:"done"`
	Added    int `json:"added"`
	NotFound int `json:"not_found"`
	Failed   int `json:"failed"`
}

// Percent is Done of Total in whole percent (0 when there is nothing to do).
func (p Progress) Percent() int {
	if p.Total <= 0 {
		return 0
	}
	return p.Done * 100 / p.Total
}

// Event is one observable change of a run.
type Event struct {
	Time     time.Time          `json:"time"`
	Kind     Kind               `json:"kind"`
	RunID    string             `json:"run_id"`
	State    State              `json:"state"`
	Progress Progress           `json:"progress"`
	Item     *report.ItemResult `json:"item,omitempty"`
	// Message is free text: the question asked, or why the run failed.
	Message string          `json:"message,omitempty"`
	Summary *report.Summary `json:"summary,omitempty"`
	// Pack is the run's review pack (KindRunFinished).
	Pack *reviewpack.Pack `json:"pack,omitempty"`
	// Cart and Action: KindCartChanged.
	Cart   *reviewpack.Cart   `json:"cart,omitempty"`
	Action *reviewpack.Action `json:"action,omitempty"`
	// RunKind and ReshopOf say, on every event of a run, what the run was
	// asked to do and, for a re-shop, the run whose review it belongs to.
	RunKind  RunKind `json:"run_kind,omitempty"`
	ReshopOf string  `json:"reshop_of,omitempty"`
	// Slots: KindSlotsRead.
	Slots *slots.Reading `json:"slots,omitempty"`
}

// Bounded returns the event with every text clipped to the bounds of
// package report (the bus publishes only bounded events, so the panel,
// notifications, HA events, MQTT and Telegram never carry an unbounded
// text).
func (e Event) Bounded() Event {
	e.RunID = report.Clip(e.RunID, report.MaxNameRunes)
	e.Message = report.Clip(e.Message, report.MaxTextRunes)
	if e.Item != nil {
		it := e.Item.Bounded()
		e.Item = &it
	}
	if e.Summary != nil {
		s := e.Summary.Bounded()
		e.Summary = &s
	}
	if e.Pack != nil {
		p := e.Pack.Bounded()
		e.Pack = &p
	}
	if e.Cart != nil {
		c := e.Cart.Bounded()
		e.Cart = &c
	}
	if e.Action != nil {
		a := e.Action.Bounded()
		e.Action = &a
	}
	if e.Slots != nil {
		s := e.Slots.Bounded()
		e.Slots = &s
	}
	return e
}

// Request asks for a run; every trigger (terminal, HA event, stdin, MQTT
// button, voice) produces one.
type Request struct {
	// Source names the trigger for logs ("mqtt", "event", "stdin", …).
	Source string `json:"source"`
	// By is the Home Assistant user who asked (see WithBy); "" when not known.
	By          string `json:"by,omitempty"`
	RetryTagged bool   `json:"retry_tagged,omitempty"` // also shop items tagged #404/#failed
	// RetryFailed shops only the items an earlier run tagged #404/#failed
	// (the Retry failed buttons).
	RetryFailed bool     `json:"retry_failed,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"` // 0: configured value
	Items       []string `json:"items,omitempty"`       // limit the run to these item names
	// WrongProducts: the review pack's Wrong product re-shops an item with
	// the product the household rejected (item name → product name and
	// URL) — never added again.
	WrongProducts map[string]WrongProduct `json:"-"`
	// ReshopOf is the run whose review a Wrong product's re-shop belongs
	// to (its item is shown on that run's review).
	ReshopOf string `json:"reshop_of,omitempty"`
}

// RunKind is what a run was asked to do.
type RunKind string

// Run kinds.
const (
	RunWeekly RunKind = "weekly" // the list's open items
	RunRetry  RunKind = "retry"  // Retry failed: only the items an earlier run tagged #404/#failed
	RunReshop RunKind = "reshop" // Wrong product: one item again, without the rejected product
)

// Kind is what the request asks for.
func (r Request) Kind() RunKind {
	switch {
	case len(r.WrongProducts) > 0:
		return RunReshop
	case r.RetryFailed:
		return RunRetry
	}
	return RunWeekly
}

// WrongProduct is a product the household rejected for an item.
type WrongProduct struct{ Name, URL, ProductID string }

// ErrBusy is returned when a run is requested while another is in progress.
var ErrBusy = errors.New("a shopping run is already in progress")
