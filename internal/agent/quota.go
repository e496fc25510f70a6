package agent

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Clock is the time source of a Quota; tests pass a faster one.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// QuotaWindow is the window of a requests-per-minute limit.
const QuotaWindow = time.Minute

// Quota guards the model's quota for every agent of a process: at most
// Concurrency requests in flight, at most RPM requests in any QuotaWindow,
// and a pause of all of them when the server says the quota is exhausted
// (429). It satisfies Limiter; share one Quota between all tabs.
//
// A request counts against the window from the moment it is granted until
// QuotaWindow after it was released, so that however late it reaches the
// server, no window of arrivals there holds more than RPM requests.
type Quota struct {
	rpm, conc int
	clock     Clock

	mu       sync.Mutex
	inFlight int
	released []time.Time // release times younger than QuotaWindow, oldest first
	paused   time.Time   // no grant before this
	changed  chan struct{}
}

// NewQuota returns a quota guard; rpm or concurrency ≤ 0 means no such
// limit. clock nil is the wall clock.
func NewQuota(rpm, concurrency int, clock Clock) *Quota {
	if clock == nil {
		clock = realClock{}
	}
	return &Quota{rpm: rpm, conc: concurrency, clock: clock, changed: make(chan struct{})}
}

var _ Limiter = (*Quota)(nil)

// Acquire waits until n requests may start, or ctx ends.
func (q *Quota) Acquire(ctx context.Context, n int64) error {
	for i := int64(0); i < n; i++ {
		if err := q.acquireOne(ctx); err != nil {
			q.Release(i)
			return err
		}
	}
	return nil
}

func (q *Quota) acquireOne(ctx context.Context) error {
	for {
		q.mu.Lock()
		now := q.clock.Now()
		q.prune(now)
		var wait time.Duration // 0: wait for a change only
		switch {
		case now.Before(q.paused):
			wait = q.paused.Sub(now)
		case q.conc > 0 && q.inFlight >= q.conc:
		case q.rpm > 0 && q.inFlight+len(q.released) >= q.rpm:
			if len(q.released) > 0 {
				wait = q.released[0].Add(QuotaWindow).Sub(now)
			}
		default:
			q.inFlight++
			q.mu.Unlock()
			return nil
		}
		changed := q.changed
		q.mu.Unlock()
		var timer <-chan time.Time
		if wait > 0 {
			timer = q.clock.After(wait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the model quota: %w", context.Cause(ctx))
		case <-changed:
		case <-timer:
		}
	}
}

// Release ends n requests (in any order: only counts and times matter).
func (q *Quota) Release(n int64) {
	if n <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for ; n > 0 && q.inFlight > 0; n-- {
		q.inFlight--
		q.released = append(q.released, now)
	}
	q.prune(now)
	q.notify()
}

// Pause stops every grant for d from now (a 429's advised wait); a longer
// pause already in force is kept.
func (q *Quota) Pause(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if until := q.clock.Now().Add(d); until.After(q.paused) {
		q.paused = until
		q.notify()
	}
}

// Wait is about how long a request asked for now would wait for the
// quota: the pause, or until the window has room (0: none, or only for
// the requests in flight to end).
func (q *Quota) Wait() time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	q.prune(now)
	switch {
	case now.Before(q.paused):
		return q.paused.Sub(now)
	case q.rpm > 0 && q.inFlight+len(q.released) >= q.rpm && len(q.released) > 0:
		return q.released[0].Add(QuotaWindow).Sub(now)
	}
	return 0
}

// PausedUntil is the end of the current pause (zero or past: none).
func (q *Quota) PausedUntil() time.Time {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.paused
}

func (q *Quota) prune(now time.Time) {
	i := 0
	for i < len(q.released) && !now.Before(q.released[i].Add(QuotaWindow)) {
		i++
	}
	q.released = q.released[i:]
}

func (q *Quota) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}
