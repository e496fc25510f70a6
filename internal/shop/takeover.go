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

// NeedsPersons lists the tabs waiting for a person.
func (d *Desk) NeedsPersons() []runstatus.NeedsPerson {
	h, err := d.current()
	if err != nil {
		return []runstatus.NeedsPerson{}
	}
	if l := h.NeedsPersons(); l != nil {
		return l
	}
	return []runstatus.NeedsPerson{}
}

// Screenshot is the tab's live screen (JPEG).
func (d *Desk) Screenshot(ctx context.Context, tab string) ([]byte, error) {
	h, err := d.current()
	if err != nil {
		return nil, err
	}
	return h.TakeoverScreenshot(ctx, tab)
}

// Click clicks the tab at x, y (0–999).
func (d *Desk) Click(ctx context.Context, tab string, x, y int) error {
	h, err := d.current()
	if err != nil {
		return err
	}
	d.log.Info("take-over input", "tab", tab, "kind", "click", "x", x, "y", y)
	return h.TakeoverClick(ctx, tab, x, y)
}

// Type types text in the tab; only its length is logged.
func (d *Desk) Type(ctx context.Context, tab, text string) error {
	h, err := d.current()
	if err != nil {
		return err
	}
	d.log.Info("take-over input", "tab", tab, "kind", "type", "chars", len([]rune(text)))
	return h.TakeoverType(ctx, tab, text)
}

// Key presses one key in the tab.
func (d *Desk) Key(ctx context.Context, tab, key string) error {
	h, err := d.current()
	if err != nil {
		return err
	}
	d.log.Info("take-over input", "tab", tab, "kind", "key", "key", key)
	return h.TakeoverKey(ctx, tab, key)
}

// Done hands the tab back (the sign-in continues the run).
func (d *Desk) Done(ctx context.Context, tab string) (bool, error) {
	h, err := d.current()
	if err != nil {
		return false, err
	}
	d.guide.Forget(tab)
	ok, err := h.TakeoverDone(ctx, tab)
	d.log.Info("take-over input", "tab", tab, "kind", "done", "signed_in", ok)
	return ok, err
}

// Guide runs one turn of "Show me" for goal on the tab.
func (d *Desk) Guide(ctx context.Context, tab, goal string) (guide.Step, error) {
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
	// The guide's model calls for this tab count in the run's usage.
	defer func() { r.addUsage(r.cfg.Desk.guide.TakeUsage()) }()
	defer r.cfg.Desk.withdraw(bh.h)
	if err := bh.h.AwaitSignIn(ctx); err != nil {
		return fmt.Errorf("%w (after: %v)", err, loginErr)
	}
	r.log.Info("the household signed in; the run goes on")
	return nil
}
