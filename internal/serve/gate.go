package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Runner runs one shopping run to its end (or until ctx is cancelled, when
// it stops its agents, writes what it has and returns).
type Runner interface {
	Run(ctx context.Context, req runstatus.Request) (report.Summary, error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, req runstatus.Request) (report.Summary, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, req runstatus.Request) (report.Summary, error) {
	return f(ctx, req)
}

// ErrShuttingDown is returned by Start once the gate is closing.
var ErrShuttingDown = errors.New("gemini-supply is shutting down; no new run is started")

// ErrNoRun is returned by Stop when no run is in progress.
var ErrNoRun = runstatus.ErrNoRun

// ErrStopped is the cause of a run's context when it was stopped on request
// (context.Cause).
var ErrStopped = errors.New("the grocery run was stopped on request")

// Gate lets one run happen at a time. Start begins a run in the background
// and returns at once; while it is going, Start returns runstatus.ErrBusy.
// The run's context belongs to the gate, not to the trigger: it ends when
// the run ends or when Close cancels it.
type Gate struct {
	runner Runner
	log    *slog.Logger
	base   context.Context
	stop   context.CancelFunc

	mu     sync.Mutex
	active *activeRun
	closed bool
	seq    int
}

type activeRun struct {
	req     runstatus.Request
	started time.Time
	done    chan struct{}
	ctx     context.Context
	cancel  context.CancelCauseFunc
	// stoppedBy is the source that stopped the run ("" when not stopped); guarded by Gate.mu.
	stoppedBy string
}

// NewGate returns a gate running runs with runner.
func NewGate(runner Runner, logger *slog.Logger) *Gate {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	base, stop := context.WithCancel(context.Background())
	return &Gate{runner: runner, log: logger.With("component", "serve"), base: base, stop: stop}
}

// Start begins a run for req unless one is in progress (runstatus.ErrBusy)
// or the gate is closing (ErrShuttingDown). ctx only bounds the start.
func (g *Gate) Start(ctx context.Context, req runstatus.Request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrShuttingDown
	}
	if g.active != nil {
		return runstatus.ErrBusy
	}
	g.seq++
	rctx, cancel := context.WithCancelCause(g.base)
	a := &activeRun{req: req, started: time.Now(), done: make(chan struct{}), ctx: rctx, cancel: cancel}
	g.active = a
	go g.run(a, g.seq)
	return nil
}

func (g *Gate) run(a *activeRun, n int) {
	defer func() {
		g.mu.Lock()
		g.active = nil
		g.mu.Unlock()
		a.cancel(nil)
		close(a.done)
	}()
	req := a.req
	g.log.Info("run started", "run", n, "source", req.Source, "retry_tagged", req.RetryTagged, "retry_failed", req.RetryFailed,
		"concurrency", req.Concurrency, "items", req.Items)
	summary, err := g.call(a.ctx, req)
	took := time.Since(a.started).Round(time.Second)
	g.mu.Lock()
	stoppedBy := a.stoppedBy
	g.mu.Unlock()
	switch {
	case stoppedBy != "" && g.base.Err() == nil:
		attrs := []any{"run", n, "source", req.Source, "stopped_by", stoppedBy, "took", took, "result", summary.Counts().String()}
		if err != nil {
			attrs = append(attrs, "error", err)
		}
		g.log.Warn("run stopped on request", attrs...)
	case err != nil && g.base.Err() != nil:
		g.log.Warn("run cancelled by shutdown", "run", n, "source", req.Source, "took", took, "error", err)
	case err != nil:
		g.log.Error("run failed", "run", n, "source", req.Source, "took", took, "error", err)
	case summary.Cancelled:
		g.log.Warn("run cancelled", "run", n, "source", req.Source, "took", took, "result", summary.Counts().String())
	default:
		g.log.Info("run finished", "run", n, "source", req.Source, "took", took, "result", summary.Counts().String())
	}
}

// call runs the runner; a panic is reported as an error so serve survives it.
func (g *Gate) call(ctx context.Context, req runstatus.Request) (s report.Summary, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("run panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return g.runner.Run(ctx, req)
}

// Stop cancels the run in progress, as shutdown does (its agents stop, it
// writes its journal and summary and returns), without closing the gate.
// It returns the stopped run's request, or ErrNoRun. It does not wait for
// the run to end (Wait does).
func (g *Gate) Stop(source string) (runstatus.Request, error) { return g.StopBy(source, "") }

// StopBy is Stop by a known person (a Home Assistant user's name): the run's
// context is cancelled with a runstatus.StopCause naming them (errors.Is
// ErrStopped), which the run's journal records.
func (g *Gate) StopBy(source, by string) (runstatus.Request, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.active
	if a == nil {
		return runstatus.Request{}, ErrNoRun
	}
	if a.stoppedBy == "" {
		a.stoppedBy = source
	}
	a.cancel(&runstatus.StopCause{Err: ErrStopped, Source: source, By: by})
	return a.req, nil
}

// Active returns the request of the run in progress, if any.
func (g *Gate) Active() (runstatus.Request, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.active == nil {
		return runstatus.Request{}, false
	}
	return g.active.req, true
}

// Wait blocks until no run is in progress (or ctx is done).
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	a := g.active
	g.mu.Unlock()
	if a == nil {
		return nil
	}
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close refuses new runs, cancels the one in progress and waits for it to
// return, at most until ctx is done.
func (g *Gate) Close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	a := g.active
	g.mu.Unlock()
	g.stop()
	if a == nil {
		return nil
	}
	g.log.Info("cancelling the run in progress", "source", a.req.Source)
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the run in progress did not stop in time after being cancelled: %w", ctx.Err())
	}
}
