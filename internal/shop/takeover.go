package shop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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

	// looked is when a panel last asked for the waiting tabs (UnixNano).
	looked atomic.Int64

	mu   sync.Mutex
	host *browser.Host // the run whose tab waits; nil when none
	// items are the item tabs offered to a person (itemtakeover.go), by
	// tab name; running are the running items a person may ask to take
	// over, by tab name: the function stops the item's agent.
	items        map[string]*itemHold
	runningItems map[string]func()
	changed      chan struct{} // closed when items or runningItems change
	// note journals an input or guide step in that run (nil: none).
	note func(TakeoverEntry)
	// onNeeds is told when a tab starts waiting (the phone push).
	onNeeds func(context.Context, runstatus.NeedsPerson) error
}

// NewDesk returns a Desk whose guide uses planner (and grounder, nil for
// a planner that grounds its own tasks, like guide.Scripted).
func NewDesk(log *slog.Logger, planner guide.Planner, grounder guide.Grounder) *Desk {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Desk{log: log.With("component", "takeover"), guide: &guide.Guide{Planner: planner, Grounder: grounder}}
}

// needsPushWait bounds the push that a tab needs a person.
const needsPushWait = 30 * time.Second

// OnNeedsPerson sets the function told when a tab starts waiting for a
// person (the phones' "Needs you" push). It runs beside the wait, bounded
// by needsPushWait and the run; its error is logged.
func (d *Desk) OnNeedsPerson(f func(context.Context, runstatus.NeedsPerson) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onNeeds = f
}

// offer puts h's tabs that wait for a person on the Desk; note journals
// what is done on them in the run. The push goes out beside the wait
// (bounded; wait waits for it).
func (d *Desk) offer(ctx context.Context, h *browser.Host, note func(TakeoverEntry)) (wait func()) {
	d.mu.Lock()
	d.host, d.note = h, note
	f := d.onNeeds
	d.mu.Unlock()
	return d.announce(ctx, f, note, h.NeedsPersons()...)
}

// announce logs and journals the tabs now waiting for a person and pushes
// each to the phones (f) beside the wait, bounded by needsPushWait and
// ctx; wait waits for the pushes.
func (d *Desk) announce(ctx context.Context, f func(context.Context, runstatus.NeedsPerson) error,
	note func(TakeoverEntry), nps ...runstatus.NeedsPerson) (wait func()) {
	var wg sync.WaitGroup
	for _, np := range nps {
		d.log.Warn("a tab needs a person", "tab", np.Tab, "reason", np.Reason, "item", np.Item)
		if note != nil {
			note(TakeoverEntry{At: time.Now(), Tab: np.Tab, Item: np.Item, Kind: TakeoverOffered, Reason: np.Reason})
		}
		if f != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pctx, cancel := context.WithTimeout(ctx, needsPushWait)
				defer cancel()
				if err := f(pctx, np); err != nil {
					d.log.Warn("could not tell the phones that a tab needs a person", "tab", np.Tab, "error", err)
				}
			}()
		}
	}
	return wg.Wait
}

func (d *Desk) withdraw(h *browser.Host) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.host == h {
		d.host, d.note = nil, nil
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

// TakeoverEntry is one take-over input or guide step, as the run's journal
// keeps it and History shows it. Typed text is kept only as its length and
// the guide's sentence not at all (it may quote a code the person reads).
type TakeoverEntry struct {
	At   time.Time `json:"at"`
	Tab  string    `json:"tab"`
	Item string    `json:"item,omitempty"`
	Kind string    `json:"kind"` // TakeoverOffered, …
	By   string    `json:"by,omitempty"`
	// Reason is why the tab was offered (Kind offered).
	Reason string `json:"reason,omitempty"`
	X      *int   `json:"x,omitempty"`
	Y      *int   `json:"y,omitempty"`
	Chars  int    `json:"chars,omitempty"` // typed: how many characters
	Key    string `json:"key,omitempty"`
	// Step is the guide's step number (1 for the first of a goal), Box
	// its box, Done whether the guide said the goal is complete.
	Step int     `json:"step,omitempty"`
	Box  *[4]int `json:"box,omitempty"`
	Done bool    `json:"done,omitempty"`
	// SignedIn: the hand-back found the store signed in (Kind done of
	// the sign-in); Decision and Outcome: what the household decided for
	// an item's tab ("" when it added the product) and the item's outcome.
	SignedIn *bool  `json:"signed_in,omitempty"`
	Decision string `json:"decision,omitempty"`
	Outcome  string `json:"outcome,omitempty"`
	// Refused is the store policy's reason for refusing what the input
	// asked for; Error any other failure.
	Refused string `json:"refused,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Kinds of TakeoverEntry.
const (
	TakeoverOffered = "offered"
	TakeoverClick   = "click"
	TakeoverType    = "type"
	TakeoverKey     = "key"
	TakeoverGuide   = "guide"
	TakeoverDone    = "done"
)

// journal returns the function that notes an entry, with who asked and
// how the input ended, in the run whose tab it is now: taken before the
// input, as a hand-back ends the run's wait (and its offer) before the
// input returns.
func (d *Desk) journal() func(ctx context.Context, e TakeoverEntry, err error) {
	d.mu.Lock()
	note := d.note
	d.mu.Unlock()
	return func(ctx context.Context, e TakeoverEntry, err error) {
		if note != nil {
			note(journalEntry(ctx, e, err))
		}
	}
}

func journalEntry(ctx context.Context, e TakeoverEntry, err error) TakeoverEntry {
	e.At, e.By = time.Now(), runstatus.ByFrom(ctx)
	var refused *browser.RefusedError
	switch {
	case errors.As(err, &refused):
		e.Refused = refused.Reason
	case err != nil:
		e.Error = err.Error()
	}
	return e
}

// panelOpenWindow is how recently a panel must have asked for the tabs
// waiting for a person (NeedsPersons: the page asks every 3 s) for the
// Desk to count as watched.
const panelOpenWindow = 30 * time.Second

// Watched reports whether a panel asked for the tabs waiting for a person
// within panelOpenWindow: somebody has the panel open. An item whose agent
// gives up is offered only then (an unattended run is not held for a
// person nobody is there to be).
func (d *Desk) Watched() bool {
	at := d.looked.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < panelOpenWindow
}

// NeedsPersons lists the tabs waiting for a person: the sign-in, then the
// items' tabs by name. Asking marks the Desk watched (Watched).
func (d *Desk) NeedsPersons() []runstatus.NeedsPerson {
	d.looked.Store(time.Now().UnixNano())
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
	return d.input(ctx, TakeoverEntry{Tab: tab, Kind: TakeoverClick, X: &x, Y: &y},
		func(ih *itemHold) error { return ih.click(ctx, x, y) },
		func(h *browser.Host) error { return h.TakeoverClick(ctx, tab, x, y) })
}

// Type types text in the tab; only its length is logged.
func (d *Desk) Type(ctx context.Context, tab, text string) error {
	n := len([]rune(text))
	d.log.Info("take-over input", "tab", tab, "kind", "type", "chars", n)
	return d.input(ctx, TakeoverEntry{Tab: tab, Kind: TakeoverType, Chars: n},
		func(ih *itemHold) error { return ih.typeText(ctx, text) },
		func(h *browser.Host) error { return h.TakeoverType(ctx, tab, text) })
}

// Key presses one key in the tab.
func (d *Desk) Key(ctx context.Context, tab, key string) error {
	d.log.Info("take-over input", "tab", tab, "kind", "key", "key", key)
	return d.input(ctx, TakeoverEntry{Tab: tab, Kind: TakeoverKey, Key: key},
		func(ih *itemHold) error { return ih.key(ctx, key) },
		func(h *browser.Host) error { return h.TakeoverKey(ctx, tab, key) })
}

// input sends one input to e.Tab — an item's tab (onItem) or the held
// sign-in tab (onHost) — and journals it in that tab's run with how it
// ended.
func (d *Desk) input(ctx context.Context, e TakeoverEntry, onItem func(*itemHold) error, onHost func(*browser.Host) error) error {
	if ih := d.item(e.Tab); ih != nil {
		err := onItem(ih)
		ih.journal(ctx, e, err)
		return err
	}
	h, err := d.current()
	if err != nil {
		return err
	}
	journal := d.journal()
	err = onHost(h)
	journal(ctx, e, err)
	return err
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
		ih.journal(ctx, TakeoverEntry{Tab: tab, Kind: TakeoverDone, Decision: decision, Outcome: hb.Outcome}, err)
		return hb, err
	}
	if decision != "" {
		return HandedBack{}, &browser.InputError{Input: decision, Reason: "a decision is for an item's tab"}
	}
	h, err := d.current()
	if err != nil {
		return HandedBack{}, err
	}
	journal := d.journal()
	ok, err := h.TakeoverDone(ctx, tab)
	d.log.Info("take-over input", "tab", tab, "kind", "done", "signed_in", ok)
	journal(ctx, TakeoverEntry{Tab: tab, Kind: TakeoverDone, SignedIn: &ok}, err)
	return HandedBack{SignedIn: ok}, err
}

// guideStepWait bounds one turn of "Show me" (reading the tab, a model
// planner's and grounder's calls).
const guideStepWait = 90 * time.Second

// Guide runs one turn of "Show me" for goal on the tab (bounded by
// guideStepWait), journaled without its sentence.
func (d *Desk) Guide(ctx context.Context, tab, goal string) (guide.Step, error) {
	if ih := d.item(tab); ih != nil {
		return d.guideItem(ctx, ih, goal)
	}
	h, err := d.current()
	if err != nil {
		return guide.Step{}, err
	}
	journal := d.journal()
	ctx, cancel := context.WithTimeout(ctx, guideStepWait)
	defer cancel()
	step, n, err := d.guideStep(ctx, h, tab, goal)
	e := TakeoverEntry{Tab: tab, Kind: TakeoverGuide, Step: n, Done: step.Done}
	if err == nil && !step.Done {
		b := step.Box
		e.Box = &b
	}
	journal(ctx, e, err)
	return step, err
}

// guideItem runs one turn of "Show me" on an item's tab. Only a model
// planner can (it reads the screenshot: "find the 2 L lactose-free milk");
// the scripted one knows sign-in pages only, so it is refused then.
func (d *Desk) guideItem(ctx context.Context, ih *itemHold, goal string) (guide.Step, error) {
	if _, isScripted := d.guide.Planner.(guide.Scripted); isScripted {
		return guide.Step{}, errItemGuide
	}
	ctx, cancel := context.WithTimeout(ctx, guideStepWait)
	defer cancel()
	step, n, err := func() (guide.Step, int, error) {
		shot, err := ih.screenshot(ctx)
		if err != nil {
			return guide.Step{}, 0, err
		}
		step, st, err := d.guide.Next(ctx, ih.np.Tab, goal, guide.Page{Screenshot: shot})
		if err != nil {
			return guide.Step{}, 0, fmt.Errorf("show me: %w", err)
		}
		d.log.Info("guide step", "tab", ih.np.Tab, "done", step.Done, "history", len(st.TaskHistory))
		return step, len(st.TaskHistory) + 1, nil
	}()
	e := TakeoverEntry{Tab: ih.np.Tab, Kind: TakeoverGuide, Step: n, Done: step.Done}
	if err == nil && !step.Done {
		b := step.Box
		e.Box = &b
	}
	ih.journal(ctx, e, err)
	return step, err
}

func (d *Desk) guideStep(ctx context.Context, h *browser.Host, tab, goal string) (guide.Step, int, error) {
	pr, err := h.TakeoverRead(ctx, tab)
	if err != nil {
		return guide.Step{}, 0, err
	}
	p := guide.Page{URL: pr.URL, SignedIn: pr.SignedIn, Text: pr.Text}
	for _, e := range pr.Elements {
		p.Elements = append(p.Elements, guide.Element{Tag: e.Tag, Type: e.Type, ID: e.ID, Label: e.Label,
			Autocomplete: e.Auto, Checked: e.Checked, Filled: e.Filled, Box: e.Box})
	}
	if _, isScripted := d.guide.Planner.(guide.Scripted); !isScripted {
		if p.Screenshot, err = h.TakeoverScreenshot(ctx, tab); err != nil {
			return guide.Step{}, 0, err
		}
	}
	step, st, err := d.guide.Next(ctx, tab, goal, p)
	if err != nil {
		return guide.Step{}, 0, fmt.Errorf("show me: %w", err)
	}
	d.log.Info("guide step", "tab", tab, "done", step.Done, "history", len(st.TaskHistory)) // not the task: it may quote a code
	return step, len(st.TaskHistory) + 1, nil
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
	pushed := r.cfg.Desk.offer(ctx, bh.h, func(e TakeoverEntry) {
		_ = r.journal.Update(func(rec *JournalRecord) { rec.TakeOver = append(rec.TakeOver, e) })
	})
	defer pushed()
	// The guide's model calls for this tab count in the run's usage.
	defer func() { r.addUsage(r.cfg.Desk.guide.TakeUsage()) }()
	defer r.cfg.Desk.withdraw(bh.h)
	if err := bh.h.AwaitSignIn(ctx); err != nil {
		return fmt.Errorf("%w (after: %v)", err, loginErr)
	}
	r.log.Info("the household signed in; the run goes on")
	return nil
}
