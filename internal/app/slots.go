package app

import (
	"context"
	"errors"
	"fmt"
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
	if !r.busy.TryLock() {
		return slots.Reading{}, fmt.Errorf("the delivery slots cannot be read while a shopping run is going: %w", runstatus.ErrBusy)
	}
	defer r.busy.Unlock()
	ctx, cancel := context.WithTimeout(ctx, slotsTimeout)
	defer cancel()
	env, err := r.environment(ctx)
	if err != nil {
		return slots.Reading{}, err
	}
	rd := shop.NewPageSlotsReader(env.profile)
	if rd == nil {
		return slots.Reading{}, fmt.Errorf("%s: %w", env.profile.Name, ErrNoSlotsReader)
	}
	rd.Now = r.now
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
