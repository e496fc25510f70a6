package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// slotsTimeout bounds one reading of the delivery slots: the browser's
// start, the page and its close.
const slotsTimeout = 3 * time.Minute

// ErrNoSlotsReader: the store profile has no delivery slots page.
var ErrNoSlotsReader = errors.New("the store profile has no delivery slots reader")

// ReadSlots reads the store's delivery slots by code, in a reader tab of a
// browser of its own (started and closed here): only GETs and HEADs leave
// it, and it never chooses, reserves or books a slot. It refuses while a
// shopping run or a cart action holds the browser (runstatus.ErrBusy).
func (r *Runner) ReadSlots(ctx context.Context) (slots.Reading, error) {
	ctx, cancel := context.WithTimeout(ctx, slotsTimeout)
	defer cancel()
	// Known as the slots' reading before it holds busy, so a run never
	// finds busy held by a reading it cannot stop.
	r.slotsRead.start(cancel)
	if !r.busy.TryLock() {
		r.slotsRead.end()
		return slots.Reading{}, fmt.Errorf("the delivery slots cannot be read while a shopping run is going: %w", runstatus.ErrBusy)
	}
	defer func() {
		r.busy.Unlock()
		r.slotsRead.end()
	}()
	env, err := r.environment(ctx)
	if err != nil {
		return slots.Reading{}, err
	}
	rd := r.slotsReader(env)
	if rd == nil {
		return slots.Reading{}, fmt.Errorf("%s: %w", env.profile.Name, ErrNoSlotsReader)
	}
	h, err := browser.Launch(ctx, r.browserOptions(env))
	if err != nil {
		return slots.Reading{}, fmt.Errorf("read the delivery slots: start the browser: %w", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			r.log.Warn("closing the slots reader's browser", "err", err)
		}
	}()
	return rd.ReadSlots(ctx, h)
}

// slotsReader is the store's delivery slots reader on the Runner's clock
// (nil: the store profile has none). A run reads the slots with it too,
// after its review, in its own browser (shop.Config.Slots).
func (r *Runner) slotsReader(env *environment) *shop.PageSlotsReader {
	rd := shop.NewPageSlotsReader(env.profile)
	if rd != nil {
		rd.Now = r.now
	}
	return rd
}

// runSlots is a run's shop.Config.Slots: nil (not an interface holding a
// nil reader) when the store has no slots page.
func (r *Runner) runSlots(env *environment) shop.SlotsSource {
	if rd := r.slotsReader(env); rd != nil {
		return rd
	}
	return nil
}

// slotsReading is the reading of the slots going on, if any: a run that
// finds busy held by it stops it and waits for it to end, instead of
// being refused as busy.
type slotsReading struct {
	mu     sync.Mutex
	cancel context.CancelFunc // nil: no reading
}

func (s *slotsReading) start(cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = cancel
}

func (s *slotsReading) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = nil
}

// stop stops the reading going on, and says whether there was one.
func (s *slotsReading) stop() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return false
	}
	s.cancel()
	return true
}

// lockForRun takes busy for a run: at once, or after stopping the slots'
// reading that holds it (its browser closes first); false when a run or
// a cart action holds it, or ctx ends.
func (r *Runner) lockForRun(ctx context.Context) bool {
	for {
		if r.busy.TryLock() {
			return true
		}
		if !r.slotsRead.stop() {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}
