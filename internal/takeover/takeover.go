// Package takeover offers a tab that needs a person — the sign-in tab when
// a challenge appears, an item's tab when its agent gives up — to the
// household: the panel lists it (needs_person), sends pointer and key
// events to that tab only, and "Done" hands it back to whoever offered it.
// Typed text is never logged, traced or journaled: only its length.
package takeover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
)

// Tab is a tab given to a person (browser.Handoff).
type Tab interface {
	Click(ctx context.Context, x, y int) error
	Type(ctx context.Context, text string) error
	Key(ctx context.Context, key string) error
	Screenshot(ctx context.Context) ([]byte, error)
	Evaluate(ctx context.Context, script string, arg any) (any, error)
	Size() (width, height int)
	URL() string
}

// Reasons a tab needs a person.
const (
	ReasonSignIn = "sign_in"
	ReasonItem   = "item"
)

// Need is one tab waiting for a person, as /api/state lists it.
type Need struct {
	Tab    string `json:"tab"`
	Reason string `json:"reason"`
	Item   string `json:"item"`
}

// Event is one journaled input or hand-back (typed text only as its length).
type Event struct {
	Tab    string `json:"tab"`
	Reason string `json:"reason"`
	Item   string `json:"item,omitempty"`
	Kind   string `json:"kind"` // offered | click | type | key | done
	X      int    `json:"x,omitempty"`
	Y      int    `json:"y,omitempty"`
	Key    string `json:"key,omitempty"`
	Length int    `json:"length,omitempty"` // typed characters
	Err    string `json:"error,omitempty"`
}

// ErrUnknownTab: no tab by that id waits for a person.
var ErrUnknownTab = errors.New("takeover: no such tab needs a person")

type offered struct {
	need Need
	tab  Tab
	done chan struct{}
}

// Registry holds the tabs offered to a person. Safe for concurrent use.
type Registry struct {
	log *slog.Logger
	// OnOffer, when set, is called (outside the lock) when a tab is
	// offered: the phone push / HA notification "Needs you: sign in".
	OnOffer func(Need)
	// OnEvent, when set, journals every input and hand-back.
	OnEvent func(Event)

	mu   sync.Mutex
	next int
	tabs map[string]*offered
}

// New returns an empty registry.
func New(log *slog.Logger) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{log: log.With("component", "takeover"), tabs: map[string]*offered{}}
}

// Offer lists tab as needing a person and blocks until the person hands it
// back with Done (nil) or ctx ends.
func (r *Registry) Offer(ctx context.Context, tab Tab, reason, item string) error {
	r.mu.Lock()
	r.next++
	id := "t" + strconv.Itoa(r.next)
	o := &offered{need: Need{Tab: id, Reason: reason, Item: item}, tab: tab, done: make(chan struct{})}
	r.tabs[id] = o
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.tabs, id)
		r.mu.Unlock()
	}()
	r.log.Info("a tab needs a person", "tab", id, "reason", reason, "item", item)
	r.event(Event{Tab: id, Reason: reason, Item: item, Kind: "offered"})
	if r.OnOffer != nil {
		r.OnOffer(o.need)
	}
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("takeover: waiting for a person: %w", ctx.Err())
	}
}

// Needs lists the tabs waiting for a person, oldest first.
func (r *Registry) Needs() []Need {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Need, 0, len(r.tabs))
	for i := 1; i <= r.next; i++ {
		if o, ok := r.tabs["t"+strconv.Itoa(i)]; ok {
			out = append(out, o.need)
		}
	}
	return out
}

func (r *Registry) get(id string) (*offered, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.tabs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTab, id)
	}
	return o, nil
}

// Tab returns the offered tab by id (the guide and the screenshot read it).
func (r *Registry) Tab(id string) (Tab, error) {
	o, err := r.get(id)
	if err != nil {
		return nil, err
	}
	return o.tab, nil
}

func (r *Registry) input(id string, e Event, do func(Tab) error) error {
	o, err := r.get(id)
	if err != nil {
		return err
	}
	e.Tab, e.Reason, e.Item = id, o.need.Reason, o.need.Item
	err = do(o.tab)
	if err != nil {
		e.Err = err.Error()
	}
	r.log.Info("take-over input", "tab", id, "kind", e.Kind, "length", e.Length, "err", e.Err)
	r.event(e)
	return err
}

// Click sends a click at (x, y), 0–999 screen coordinates, to tab id.
func (r *Registry) Click(ctx context.Context, id string, x, y int) error {
	return r.input(id, Event{Kind: "click", X: x, Y: y}, func(t Tab) error { return t.Click(ctx, x, y) })
}

// Type types text into tab id; only its length is logged and journaled.
func (r *Registry) Type(ctx context.Context, id, text string) error {
	return r.input(id, Event{Kind: "type", Length: len([]rune(text))}, func(t Tab) error { return t.Type(ctx, text) })
}

// Key presses one key in tab id.
func (r *Registry) Key(ctx context.Context, id, key string) error {
	return r.input(id, Event{Kind: "key", Key: key}, func(t Tab) error { return t.Key(ctx, key) })
}

// Done hands tab id back to whoever offered it.
func (r *Registry) Done(id string) error {
	r.mu.Lock()
	o, ok := r.tabs[id]
	if ok {
		delete(r.tabs, id)
	}
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownTab, id)
	}
	r.log.Info("the person handed the tab back", "tab", id, "reason", o.need.Reason)
	r.event(Event{Tab: id, Reason: o.need.Reason, Item: o.need.Item, Kind: "done"})
	close(o.done)
	return nil
}

func (r *Registry) event(e Event) {
	if r.OnEvent != nil {
		r.OnEvent(e)
	}
}
