// Package serve is gemini-supply's long-running mode (the Home Assistant
// add-on): it waits for triggers — a Home Assistant event, a stdin command,
// an MQTT button, anything that implements Source — runs one shopping run at
// a time through a Gate, hands the run's status events to subscribers (Home
// Assistant events, MQTT sensors, Telegram), and on shutdown cancels the run
// in progress and waits for it, bounded, before returning.
//
// A run can also be stopped on request (Stop: the gemini_supply_stop event,
// the MQTT stop button, the stdin stop command); it ends as cleanly as on
// SIGTERM and serve goes on.
//
// It logs one line per change: serving, each run started/finished/failed/
// stopped, a trigger refused because a run is going, a stop with no run,
// each run state change seen on the bus, shutting down, stopped.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// StartFunc asks for a run. It returns at once: nil when the run started,
// runstatus.ErrBusy while another run is going, ErrShuttingDown on the way
// out. (An alias, so sources in other packages can name the plain func type.)
type StartFunc = func(ctx context.Context, req runstatus.Request) error

// StopFunc stops the run in progress on behalf of source ("event", "mqtt",
// "stdin"): nil when a run was told to stop, ErrNoRun when none was going.
// It returns at once; the run ends as on SIGTERM. (Server.Stop.)
type StopFunc = func(ctx context.Context, source string) error

// Source produces run requests until ctx is done. Run returns nil when it
// stops normally (ctx done, input ended) and an error when it can no longer
// work (a revoked token), which stops serve.
type Source interface {
	Run(ctx context.Context, start StartFunc) error
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context, start StartFunc) error

// Run calls f.
func (f SourceFunc) Run(ctx context.Context, start StartFunc) error { return f(ctx, start) }

// Subscriber consumes a run's status events until sub.C closes (serve
// closes the bus after the last run has stopped) or ctx ends.
type Subscriber interface {
	Consume(ctx context.Context, sub *runstatus.Subscription) error
}

// SubscriberFunc adapts a function to Subscriber.
type SubscriberFunc func(ctx context.Context, sub *runstatus.Subscription) error

// Consume calls f.
func (f SubscriberFunc) Consume(ctx context.Context, sub *runstatus.Subscription) error {
	return f(ctx, sub)
}

// DefaultShutdownTimeout bounds the wait for the cancelled run, and then for
// subscribers to deliver its last events.
const DefaultShutdownTimeout = 30 * time.Second

// subscriberBuffer is each subscriber's room on the bus.
const subscriberBuffer = 256

// Options configures a Server.
type Options struct {
	// Runner runs the shopping runs. Required.
	Runner Runner
	Logger *slog.Logger
	// Sources are the triggers (HA event, stdin, MQTT button…).
	Sources []Source
	// Bus is where the Runner publishes run events. Serve subscribes the
	// Subscribers (and its own state logger) to it and closes it when it
	// stops, after the last run. Nil: no subscribers.
	Bus *runstatus.Bus
	// Subscribers consume the bus (HA events, MQTT status, Telegram…).
	Subscribers []Subscriber
	// OnBusy are called (in the background, bounded by BusyTimeout) when a
	// trigger is refused because a run is going: Home Assistant fires
	// gemini_supply_busy.
	OnBusy []func(ctx context.Context, req runstatus.Request)
	// ShutdownTimeout bounds waiting for the cancelled run and then for
	// subscribers to drain (default 30 s each).
	ShutdownTimeout time.Duration
	// BusyTimeout bounds each OnBusy call (default 30 s).
	BusyTimeout time.Duration
}

// Server is serve's state: the gate and the busy handlers.
type Server struct {
	opts Options
	log  *slog.Logger
	gate *Gate

	hooksCtx    context.Context
	cancelHooks context.CancelFunc
	hooks       sync.WaitGroup

	runOnce sync.Once
}

// New checks opts and returns a Server. Start works from New on, so it can
// be handed to a trigger built before Run (an MQTT button).
func New(opts Options) (*Server, error) {
	if opts.Runner == nil {
		return nil, errors.New("serve: no Runner")
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultShutdownTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	hooksCtx, cancel := context.WithCancel(context.Background())
	return &Server{
		opts: opts, log: opts.Logger.With("component", "serve"),
		gate:     NewGate(opts.Runner, opts.Logger),
		hooksCtx: hooksCtx, cancelHooks: cancel,
	}, nil
}

// Start asks for a run (see StartFunc). A refusal because a run is going is
// logged and reported to the OnBusy hooks.
func (s *Server) Start(ctx context.Context, req runstatus.Request) error {
	err := s.gate.Start(ctx, req)
	if errors.Is(err, runstatus.ErrBusy) {
		active, _ := s.gate.Active()
		s.log.Warn("run refused: another run is in progress", "source", req.Source, "active_source", active.Source)
		for _, h := range s.opts.OnBusy {
			s.hooks.Add(1)
			go func() {
				defer s.hooks.Done()
				hctx, cancel := context.WithTimeout(s.hooksCtx, s.opts.BusyTimeout)
				defer cancel()
				h(hctx, req)
			}()
		}
	}
	return err
}

// Stop stops the run in progress for source (see StopFunc): its context is
// cancelled as on SIGTERM — agents stop, its journal and summary are
// written, its events say it was cancelled — but serve goes on waiting for
// triggers. With no run going it logs that and returns ErrNoRun.
func (s *Server) Stop(ctx context.Context, source string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	by := runstatus.ByFrom(ctx)
	req, err := s.gate.StopBy(source, by)
	if err != nil {
		s.log.Info("stop requested, but no run is in progress: nothing to stop", "source", source)
		return err
	}
	s.log.Warn("stopping the run in progress on request", "source", source, "by", by, "run_source", req.Source)
	return nil
}

// Busy reports whether a run is in progress, and which.
func (s *Server) Busy() (runstatus.Request, bool) { return s.gate.Active() }

// Run serves until ctx is done or a source fails, then shuts down: it stops
// the sources, cancels the run in progress and waits for it (at most
// ShutdownTimeout), closes the bus and lets subscribers drain (at most
// ShutdownTimeout). It returns the failing source's error, or an error when
// the run did not stop in time; nil otherwise. Run can be called once.
func (s *Server) Run(ctx context.Context) error {
	err := errors.New("serve: Run called twice")
	s.runOnce.Do(func() { err = s.run(ctx) })
	return err
}

func (s *Server) run(ctx context.Context) error {
	// Subscribers first, so no event of an early run is missed.
	subCtx, cancelSubs := context.WithCancel(context.Background())
	defer cancelSubs()
	var subs sync.WaitGroup
	if s.opts.Bus != nil {
		consumers := append([]Subscriber{SubscriberFunc(s.logStates)}, s.opts.Subscribers...)
		for _, c := range consumers {
			sub := s.opts.Bus.Subscribe(subscriberBuffer)
			subs.Add(1)
			go func() {
				defer subs.Done()
				if err := c.Consume(subCtx, sub); err != nil && !errors.Is(err, context.Canceled) {
					s.log.Warn("event subscriber stopped", "error", err)
				}
				sub.Close()
			}()
		}
	}

	srcCtx, stopSources := context.WithCancel(ctx)
	defer stopSources()
	failed := make(chan error, len(s.opts.Sources))
	var srcs sync.WaitGroup
	for _, src := range s.opts.Sources {
		srcs.Add(1)
		go func() {
			defer srcs.Done()
			if err := src.Run(srcCtx, s.Start); err != nil && srcCtx.Err() == nil {
				failed <- err
			}
		}()
	}
	s.log.Info("serving: waiting for triggers", "sources", len(s.opts.Sources), "subscribers", len(s.opts.Subscribers))

	var result error
	select {
	case <-ctx.Done():
		s.log.Info("shutting down")
	case err := <-failed:
		s.log.Error("a trigger source failed; shutting down", "error", err)
		result = err
	}
	stopSources()

	deadline, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	if err := s.gate.Close(deadline); err != nil {
		s.log.Error("shutdown: the run did not stop in time", "timeout", s.opts.ShutdownTimeout, "error", err)
		result = errors.Join(result, err)
	}
	if !wait(deadline, &srcs) {
		s.log.Warn("shutdown: a trigger source did not stop in time")
	}
	s.cancelHooks()
	if !wait(deadline, &s.hooks) {
		s.log.Warn("shutdown: a busy handler did not stop in time")
	}

	// Let the subscribers deliver the last run's final events, then stop them.
	if s.opts.Bus != nil {
		s.opts.Bus.Close()
		drain, cancelDrain := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
		defer cancelDrain()
		if !wait(drain, &subs) {
			s.log.Warn("shutdown: subscribers did not finish in time; stopping them")
		}
		cancelSubs()
		subs.Wait()
	}
	s.log.Info("stopped")
	if result != nil {
		return fmt.Errorf("serve: %w", result)
	}
	return nil
}

// logStates writes one line per run state change seen on the bus.
func (s *Server) logStates(ctx context.Context, sub *runstatus.Subscription) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-sub.C:
			if !ok {
				return nil
			}
			if ev.Kind != runstatus.KindStateChanged {
				continue
			}
			attrs := []any{"run_id", ev.RunID, "state", ev.State, "done", ev.Progress.Done, "total", ev.Progress.Total}
			if ev.Message != "" {
				attrs = append(attrs, "message", ev.Message)
			}
			if ev.State == runstatus.StateFailed {
				s.log.Warn("run state", attrs...)
			} else {
				s.log.Info("run state", attrs...)
			}
		}
	}
}

// wait waits for wg, at most until ctx is done; false when it timed out.
func wait(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// Run is New(opts) then Server.Run(ctx).
func Run(ctx context.Context, opts Options) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
