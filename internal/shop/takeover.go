package shop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/guide"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Desk is where a run offers the tabs that need a person (take over) and
// where the panel finds them: the run's browser while its sign-in waits
// for a person, and the guide ("Show me") for those tabs. One Desk lives
// as long as the process; runs come and go. Its methods are safe for
// concurrent use. Every input is logged — typed text only as its length.
type Desk struct {
	log   *slog.Logger
	guide *guide.Guide

	mu   sync.Mutex
	host *browser.Host // the run whose tab waits; nil when none
	// items are the item tabs offered to a person (itemtakeover.go), by
	// tab name; running are the running items a person may ask to take
	// over, by tab name: the function stops the item's agent.
	items        map[string]*itemHold
	runningItems map[string]func()
	changed      chan struct{} // closed when items or runningItems change
	// OnNeedsPerson is told when a tab starts waiting (the phone push).
	onNeeds func(runstatus.NeedsPerson)
}

// NewDesk returns a Desk whose guide uses planner (and grounder, nil for
// a planner that grounds its own tasks, like guide.Scripted).
func NewDesk(log *slog.Logger, planner guide.Planner, grounder guide.Grounder) *Desk {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Desk{log: log.With("component", "takeover"), guide: &guide.Guide{Planner: planner, Grounder: grounder}}
}

// OnNeedsPerson sets the function told when a tab starts waiting for a
// person (the panel's push); it must return at once.
func (d *Desk) OnNeedsPerson(f func(runstatus.NeedsPerson)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onNeeds = f
}

func (d *Desk) offer(h *browser.Host) {
	d.mu.Lock()
	d.host = h
	f := d.onNeeds
	d.mu.Unlock()
	for _, np := range h.NeedsPersons() {
		d.log.Warn("a tab needs a person", "tab", np.Tab, "reason", np.Reason)
		if f != nil {
			f(np)
		}
	}
}

func (d *Desk) withdraw(h *browser.Host) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.host == h {
		d.host = nil
	}
}

func (d *Desk) current() (*browser.Host, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.host == nil {
		return nil, browser.ErrNotHeld
	}
	return d.host, nil
}

// NeedsPersons lists the tabs waiting for a person: the sign-in, then the
// items' tabs by name.
func (d *Desk) NeedsPersons() []runstatus.NeedsPerson {
	out := []runstatus.NeedsPerson{}
	if h, err := d.current(); err == nil {
		out = append(out, h.NeedsPersons()...)
	}
	return append(out, d.itemNeeds()...)
}

// Screenshot is the tab's live screen (JPEG, or PNG for an item's tab).
func (d *Desk) Screenshot(ctx context.Context, tab string) ([]byte, error) {
	if ih := d.item(tab); ih != nil {
		return ih.screenshot(ctx)
	}
	h, err := d.current()
	if err != nil {
		return nil, err
	}
	return h.TakeoverScreenshot(ctx, tab)
}

// Click clicks the tab at x, y (0–999).
func (d *Desk) Click(ctx context.Context, tab string, x, y int) error {
	d.log.Info("take-over input", "tab", tab, "kind", "click", "x", x, "y", y)
	if ih := d.item(tab); ih != nil {
		return ih.click(ctx, x, y)
	}
	h, err := d.current()
	if err != nil {
		return err
	}
	return h.TakeoverClick(ctx, tab, x, y)
}

// Type types text in the tab; only its length is logged.
func (d *Desk) Type(ctx context.Context, tab, text string) error {
	d.log.Info("take-over input", "tab", tab, "kind", "type", "chars", len([]rune(text)))
	if ih := d.item(tab); ih != nil {
		return ih.typeText(ctx, text)
	}
	h, err := d.current()
	if err != nil {
		return err
	}
	return h.TakeoverType(ctx, tab, text)
}

// Key presses one key in the tab.
func (d *Desk) Key(ctx context.Context, tab, key string) error {
	d.log.Info("take-over input", "tab", tab, "kind", "key", "key", key)
	if ih := d.item(tab); ih != nil {
		return ih.key(ctx, key)
	}
	h, err := d.current()
	if err != nil {
		return err
	}
	return h.TakeoverKey(ctx, tab, key)
}

// HandedBack is what Done says: for the sign-in, whether the store shows
// the shopper signed in; for an item's tab, the item's outcome and, when
// the household added it, the product.
type HandedBack struct {
	SignedIn bool   `json:"signed_in"`
	Item     string `json:"item,omitempty"`
	Outcome  string `json:"outcome,omitempty"`
	Product  string `json:"product,omitempty"`
}

// Done hands the tab back: the sign-in continues the run; an item's tab
// ends the item with what the household added (decision ""), or as the
// household decided (DecisionNotFound, DecisionSkip). A decision is only
// for an item's tab.
func (d *Desk) Done(ctx context.Context, tab, decision string) (HandedBack, error) {
	d.guide.Forget(tab)
	if ih := d.item(tab); ih != nil {
		hb, err := ih.handBack(ctx, decision)
		d.log.Info("take-over input", "tab", tab, "kind", "done", "decision", decision, "outcome", hb.Outcome)
		return hb, err
	}
	if decision != "" {
		return HandedBack{}, &browser.InputError{Input: decision, Reason: "a decision is for an item's tab"}
	}
	h, err := d.current()
	if err != nil {
		return HandedBack{}, err
	}
	ok, err := h.TakeoverDone(ctx, tab)
	d.log.Info("take-over input", "tab", tab, "kind", "done", "signed_in", ok)
	return HandedBack{SignedIn: ok}, err
}

// Guide runs one turn of "Show me" for goal on the tab.
func (d *Desk) Guide(ctx context.Context, tab, goal string) (guide.Step, error) {
	if d.item(tab) != nil {
		return guide.Step{}, errItemGuide
	}
	h, err := d.current()
	if err != nil {
		return guide.Step{}, err
	}
	pr, err := h.TakeoverRead(ctx, tab)
	if err != nil {
		return guide.Step{}, err
	}
	p := guide.Page{URL: pr.URL, SignedIn: pr.SignedIn, Text: pr.Text}
	for _, e := range pr.Elements {
		p.Elements = append(p.Elements, guide.Element{Tag: e.Tag, Type: e.Type, ID: e.ID, Label: e.Label,
			Autocomplete: e.Auto, Checked: e.Checked, Filled: e.Filled, Box: e.Box})
	}
	if _, isScripted := d.guide.Planner.(guide.Scripted); !isScripted {
		if p.Screenshot, err = h.TakeoverScreenshot(ctx, tab); err != nil {
			return guide.Step{}, err
		}
	}
	step, st, err := d.guide.Next(ctx, tab, goal, p)
	if err != nil {
		return guide.Step{}, fmt.Errorf("show me: %w", err)
	}
	d.log.Info("guide step", "tab", tab, "done", step.Done, "history", len(st.TaskHistory)) // not the task: it may quote a code
	return step, nil
}

// awaitPerson turns a sign-in that needs a person into a wait for one: the
// tab is offered on the Desk, the run says so (needs_person) and goes on
// once the person hands a signed-in tab back. Any other error, or no Desk,
// is returned as it is.
func (r *run) awaitPerson(ctx context.Context, loginErr error) error {
	bh, ok := r.host.(*browserHost)
	if r.cfg.Desk == nil || !ok || !errors.Is(loginErr, browser.ErrNeedsPerson) {
		return loginErr
	}
	r.log.Warn("the sign-in needs a person: waiting for the household to take over in the panel", "err", loginErr)
	r.cfg.Desk.offer(bh.h)
	defer r.cfg.Desk.withdraw(bh.h)
	if err := bh.h.AwaitSignIn(ctx); err != nil {
		return fmt.Errorf("%w (after: %v)", err, loginErr)
	}
	r.log.Info("the household signed in; the run goes on")
	return nil
}
