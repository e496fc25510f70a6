package app

import (
	"context"
	"testing"
	"time"
)

// TestARunStopsASlotsReading: a run that finds the browser held by a
// reading of the delivery slots stops that reading and runs, instead of
// being refused as busy; one held by another run is refused.
func TestARunStopsASlotsReading(t *testing.T) {
	r := &Runner{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds a hang only
	defer cancel()

	// A reading holds busy until its context is cancelled.
	readCtx, stopRead := context.WithCancel(ctx)
	r.slotsRead.start(stopRead)
	r.busy.Lock()
	go func() {
		<-readCtx.Done()
		r.busy.Unlock()
		r.slotsRead.end()
	}()
	if !r.lockForRun(ctx) {
		t.Fatal("the run was refused while only a slots reading held the browser")
	}
	if readCtx.Err() == nil {
		t.Error("the slots reading was not stopped")
	}
	// Now a run holds busy: another run is refused.
	if r.lockForRun(ctx) {
		t.Fatal("a second run got the browser while a run held it")
	}
	r.busy.Unlock()
}
