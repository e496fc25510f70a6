package shop

import (
	"context"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

// SlotsSource reads the store's delivery slots in a reader tab of a
// browser (*PageSlotsReader): read only, it never chooses or books one.
type SlotsSource interface {
	ReadSlots(ctx context.Context, h SlotsHost) (slots.Reading, error)
}

// slotsWait bounds the reading of the delivery slots after a run.
const slotsWait = 45 * time.Second

// readSlots reads the delivery slots once the run's cart was reviewed, in
// a reader tab of the run's browser (only GETs and HEADs leave it), for
// the review pack's slots section and the summary's next delivery: a
// page that cannot be read is said in the section, never fatal. nil when
// they are not read: no slots reader, a browser without reader tabs, or
// the run stopped.
func (r *run) readSlots(ctx context.Context) *reviewpack.Slots {
	if r.cfg.Slots == nil || r.host == nil || ctx.Err() != nil {
		return nil
	}
	h, ok := r.host.(SlotsHost)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, slotsWait)
	defer cancel()
	rd, err := r.cfg.Slots.ReadSlots(ctx, h)
	if err != nil && ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded {
		return nil // stopped: not a reading that failed
	}
	if err != nil {
		r.log.Warn("could not read the delivery slots after the run", "err", err)
	} else {
		r.log.Info("read the delivery slots", "windows", len(rd.Slots))
	}
	return reviewpack.NewSlots(rd, err)
}

// NewReader opens a reader tab: only GETs and HEADs leave it (SlotsHost).
func (b *browserHost) NewReader(ctx context.Context) (*browser.Tab, error) { return b.h.NewReader(ctx) }
