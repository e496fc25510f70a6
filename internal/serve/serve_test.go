package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

const testWait = 90 * time.Second // bounds a hang only

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, what, testWait, cond)
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testWait):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// fakeRunner is a Runner whose runs last until released or cancelled. It
// publishes run events on bus the way the orchestrator does.
type fakeRunner struct {
	bus      *runstatus.Bus
	started  chan runstatus.Request
	release  chan struct{}
	finished chan error
	ignore   bool // keep running after cancellation until released
}

func newFakeRunner(bus *runstatus.Bus) *fakeRunner {
	return &fakeRunner{bus: bus, started: make(chan runstatus.Request, 8), release: make(chan struct{}, 8), finished: make(chan error, 8)}
}

func (r *fakeRunner) Run(ctx context.Context, req runstatus.Request) (report.Summary, error) {
	s := report.Summary{RunID: req.Source, StartedAt: time.Now()}
	if r.bus != nil {
		r.bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, RunID: s.RunID, Progress: runstatus.Progress{Total: 1}})
		r.bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, RunID: s.RunID, State: runstatus.StateShopping})
	}
	r.started <- req
	var err error
	if r.ignore {
		<-r.release
	} else {
		select {
		case <-r.release:
		case <-ctx.Done():
			err = fmt.Errorf("%w (cause: %w)", ctx.Err(), context.Cause(ctx))
			s.Cancelled = true
		}
	}
	s.FinishedAt = time.Now()
	if r.bus != nil {
		r.bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: s.RunID, Summary: &s})
	}
	r.finished <- err
	return s, err
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		line    string
		want    runstatus.Request
		ok      bool
		wantErr string
	}{
		{"", runstatus.Request{}, false, ""},
		{"   ", runstatus.Request{}, false, ""},
		{`{"command":"shop"}`, runstatus.Request{Source: "stdin"}, true, ""},
		{`{"command": "shop", "retry_tagged": true, "concurrency": 2, "items": ["milk", " "]}`,
			runstatus.Request{Source: "stdin", RetryTagged: true, Concurrency: 2, Items: []string{"milk"}}, true, ""},
		{`{"command":"retry"}`, runstatus.Request{Source: "stdin", RetryFailed: true}, true, ""},
		{`"shop"`, runstatus.Request{Source: "stdin"}, true, ""},
		{"shop", runstatus.Request{Source: "stdin"}, true, ""},
		{"  SHOP \r", runstatus.Request{Source: "stdin"}, true, ""},
		{"retry", runstatus.Request{Source: "stdin", RetryFailed: true}, true, ""},
		{"checkout", runstatus.Request{}, false, "unknown command"},
		{`{"command":"shop","concurrency":9}`, runstatus.Request{}, false, "between 1 and 8"},
		{`{"command":"shop","colour":"red"}`, runstatus.Request{}, false, "not a command object"},
		{`{"command":`, runstatus.Request{}, false, "not a command object"},
		{`"shop`, runstatus.Request{}, false, "not a JSON string"},
		{`{"command":"stop","items":["milk"]}`, runstatus.Request{}, false, "stop takes no options"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmd, ok, err := ParseCommand(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			got := cmd.Request
			if err != nil || ok != tt.ok || cmd.Stop || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v ok=%v err=%v, want %+v ok=%v", got, ok, err, tt.want, tt.ok)
			}
		})
	}
}

func TestParseStopCommand(t *testing.T) {
	for _, line := range []string{"stop", " STOP\r", `"stop"`, `{"command":"stop"}`} {
		cmd, ok, err := ParseCommand(line)
		if err != nil || !ok || !cmd.Stop {
			t.Errorf("%q: got %+v ok=%v err=%v, want a stop command", line, cmd, ok, err)
		}
	}
}

// Stop cancels the run in progress through its context (cause ErrStopped)
// and leaves the gate open; with no run it is ErrNoRun.
func TestGateStop(t *testing.T) {
	r := newFakeRunner(nil)
	g := NewGate(r, nil)
	if _, err := g.Stop("event"); !errors.Is(err, ErrNoRun) {
		t.Fatalf("Stop with no run = %v, want ErrNoRun", err)
	}
	ctx := context.Background()
	if err := g.Start(ctx, runstatus.Request{Source: "mqtt"}); err != nil {
		t.Fatal(err)
	}
	receive(t, r.started, "the run")
	req, err := g.Stop("event")
	if err != nil || req.Source != "mqtt" {
		t.Fatalf("Stop = %+v, %v", req, err)
	}
	if err := receive(t, r.finished, "the stopped run"); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrStopped) {
		t.Fatalf("run ended with %v, want its context cancelled by ErrStopped", err)
	}
	if err := g.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx, runstatus.Request{Source: "stdin"}); err != nil {
		t.Fatalf("a run after a stop: %v", err)
	}
	receive(t, r.started, "the next run")
	r.release <- struct{}{}
	if err := receive(t, r.finished, "the next run to finish"); err != nil {
		t.Fatalf("the run after a stop ended with %v", err)
	}
}

func TestGateOneRunAtATime(t *testing.T) {
	r := newFakeRunner(nil)
	g := NewGate(r, nil)
	ctx := context.Background()
	if err := g.Start(ctx, runstatus.Request{Source: "a"}); err != nil {
		t.Fatal(err)
	}
	receive(t, r.started, "run a")
	if err := g.Start(ctx, runstatus.Request{Source: "b"}); !errors.Is(err, runstatus.ErrBusy) {
		t.Fatalf("second Start = %v, want ErrBusy", err)
	}
	if active, ok := g.Active(); !ok || active.Source != "a" {
		t.Fatalf("Active = %+v, %v", active, ok)
	}
	r.release <- struct{}{}
	receive(t, r.finished, "run a to finish")
	eventually(t, "the gate to free up", func() bool { _, busy := g.Active(); return !busy })
	if err := g.Start(ctx, runstatus.Request{Source: "c"}); err != nil {
		t.Fatalf("Start after the run = %v", err)
	}
	receive(t, r.started, "run c")

	// Close cancels the run in progress and waits for it.
	cctx, cancel := context.WithTimeout(ctx, testWait)
	defer cancel()
	if err := g.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if err := receive(t, r.finished, "run c to stop"); !errors.Is(err, context.Canceled) {
		t.Fatalf("run c ended with %v, want context.Canceled", err)
	}
	if err := g.Start(ctx, runstatus.Request{}); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("Start after Close = %v, want ErrShuttingDown", err)
	}
}

func TestGateCloseIsBounded(t *testing.T) {
	r := newFakeRunner(nil)
	r.ignore = true
	g := NewGate(r, nil)
	if err := g.Start(context.Background(), runstatus.Request{Source: "stubborn"}); err != nil {
		t.Fatal(err)
	}
	receive(t, r.started, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := g.Close(ctx); err == nil || !strings.Contains(err.Error(), "did not stop in time") {
		t.Fatalf("Close = %v, want a timeout error", err)
	}
	r.release <- struct{}{}
	receive(t, r.finished, "run to end")
}

func TestGateSurvivesAPanickingRun(t *testing.T) {
	logs := &syncbuf.Buffer{}
	calls := make(chan struct{}, 2)
	g := NewGate(RunnerFunc(func(context.Context, runstatus.Request) (report.Summary, error) {
		calls <- struct{}{}
		panic("boom")
	}), slog.New(slog.NewTextHandler(logs, nil)))
	for range 2 {
		eventually(t, "the gate to be free", func() bool { _, busy := g.Active(); return !busy })
		if err := g.Start(context.Background(), runstatus.Request{}); err != nil {
			t.Fatal(err)
		}
		receive(t, calls, "run")
	}
	eventually(t, "the panic to be logged", func() bool { return strings.Count(logs.String(), "run panicked: boom") == 2 })
}

func TestStdinSourceStopsReading(t *testing.T) {
	tests := []struct {
		name string
		in   func(t *testing.T) (io.Reader, io.Closer)
	}{
		{"io.Pipe (closed on stop)", func(t *testing.T) (io.Reader, io.Closer) {
			r, w := io.Pipe()
			return r, w
		}},
		{"blocking pipe made pollable", func(t *testing.T) (io.Reader, io.Closer) {
			var fds [2]int
			if err := syscall.Pipe(fds[:]); err != nil {
				t.Fatal(err)
			}
			r := os.NewFile(uintptr(fds[0]), "stdin") // blocking: reads cannot be interrupted
			w := os.NewFile(uintptr(fds[1]), "stdin-writer")
			p, err := Pollable(r)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close(); _ = r.Close() })
			return p, w
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, w := tt.in(t)
			defer w.Close()
			logs := &syncbuf.Buffer{}
			src := NewStdinSource(in, slog.New(slog.NewTextHandler(logs, nil)))
			ctx, cancel := context.WithCancel(context.Background())
			reqs := make(chan runstatus.Request, 1)
			done := make(chan error, 1)
			go func() {
				done <- src.Run(ctx, func(_ context.Context, r runstatus.Request) error { reqs <- r; return nil })
			}()
			if _, err := io.WriteString(w.(io.Writer), "hello\n{\"command\":\"shop\"}\n"); err != nil {
				t.Fatal(err)
			}
			if r := receive(t, reqs, "the shop command"); r.Source != "stdin" {
				t.Fatalf("request = %+v", r)
			}
			cancel()
			if err := receive(t, done, "Run to return"); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(logs.String(), "could not be interrupted") {
				t.Fatalf("the reader was left blocked:\n%s", logs)
			}
			if !strings.Contains(logs.String(), `unknown command \"hello\"`) {
				t.Fatalf("unknown input not logged:\n%s", logs)
			}
		})
	}
}

func TestSourceFailureStopsServe(t *testing.T) {
	boom := errors.New("token revoked")
	err := Run(context.Background(), Options{
		Runner:  newFakeRunner(nil),
		Sources: []Source{SourceFunc(func(context.Context, StartFunc) error { return boom })},
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the source's error", err)
	}
}

// serve against the fake Home Assistant: a run from a stdin line, a run from
// the gemini_supply_start event, triggers refused while busy (with
// gemini_supply_busy fired), and a clean exit on shutdown that cancels the
// run in progress and still reports it.
func TestServeWithHomeAssistant(t *testing.T) {
	f, err := fakeha.Start(fakeha.Options{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	dctx, dcancel := context.WithTimeout(context.Background(), testWait)
	defer dcancel()
	c, err := homeassistant.Dial(dctx, homeassistant.Options{URL: f.URL(), Token: config.Secret("tok"), Logger: logger,
		BackoffBase: time.Millisecond, BackoffMax: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	bus := &runstatus.Bus{}
	runner := newFakeRunner(bus)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	srv, err := New(Options{
		Runner:      runner,
		Logger:      logger,
		Bus:         bus,
		Sources:     []Source{homeassistant.NewEventTrigger(c, logger), NewStdinSource(stdinR, logger)},
		Subscribers: []Subscriber{homeassistant.NewEventSink(c, homeassistant.EventSinkOptions{Logger: logger})},
		OnBusy:      []func(context.Context, runstatus.Request){homeassistant.BusyReporter(c, logger)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx) }()
	eventually(t, "the event trigger to subscribe", func() bool { return f.Subscriptions(homeassistant.EventStart) == 1 })

	// 1. A stdin line starts a run.
	if _, err := io.WriteString(stdinW, `{"command":"shop"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if r := receive(t, runner.started, "run from stdin"); r.Source != "stdin" {
		t.Fatalf("request = %+v", r)
	}
	runner.release <- struct{}{}
	receive(t, runner.finished, "stdin run to finish")
	eventually(t, "the run to end", func() bool { _, busy := srv.Busy(); return !busy })

	// 2. The Home Assistant event starts a run.
	f.FireEvent(homeassistant.EventStart, map[string]any{"retry_tagged": true, "items": []any{"milk"}})
	r := receive(t, runner.started, "run from the event")
	if r.Source != "event" || !r.RetryTagged || !reflect.DeepEqual(r.Items, []string{"milk"}) {
		t.Fatalf("request = %+v", r)
	}

	// 3. While it runs, both triggers are refused and reported.
	if _, err := io.WriteString(stdinW, "shop\n"); err != nil {
		t.Fatal(err)
	}
	f.FireEvent(homeassistant.EventStart, nil)
	eventually(t, "two gemini_supply_busy events", func() bool { return len(f.EventsOfType(homeassistant.EventBusy)) == 2 })
	sources := map[any]bool{}
	for _, e := range f.EventsOfType(homeassistant.EventBusy) {
		sources[e.Data["source"]] = true
	}
	if !sources["stdin"] || !sources["event"] {
		t.Fatalf("busy events from %v, want stdin and event", sources)
	}
	select {
	case r := <-runner.started:
		t.Fatalf("a second run started while busy: %+v", r)
	default:
	}

	// 4. SIGTERM: the run is cancelled, serve waits for it and exits cleanly.
	stop()
	if err := receive(t, served, "serve to return"); err != nil {
		t.Fatalf("serve.Run = %v", err)
	}
	if err := receive(t, runner.finished, "the cancelled run"); !errors.Is(err, context.Canceled) {
		t.Fatalf("in-flight run ended with %v, want context.Canceled", err)
	}
	// The sink fired each run's events in order; the cancelled run still
	// reported its end before serve returned.
	var kinds []string
	for _, e := range f.Events() {
		if e.Type == homeassistant.EventRunStarted || e.Type == homeassistant.EventRunFinished {
			kinds = append(kinds, e.Type)
		}
	}
	want := []string{homeassistant.EventRunStarted, homeassistant.EventRunFinished, homeassistant.EventRunStarted, homeassistant.EventRunFinished}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("run events = %v, want %v", kinds, want)
	}
	last := f.EventsOfType(homeassistant.EventRunFinished)
	if fin := last[len(last)-1]; fin.Data["cancelled"] != true || fin.Data["run_id"] != "event" {
		t.Fatalf("last run_finished = %v, want the cancelled event run", fin.Data)
	}
	for _, line := range []string{"run started", "run finished", "run refused", "shutting down", "run cancelled by shutdown", "stopped", "state=shopping"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("log lacks %q", line)
		}
	}
	if strings.Contains(logs.String(), "tok\"") || strings.Contains(logs.String(), "=tok ") {
		t.Error("token in logs")
	}
}

// A run stopped from Home Assistant (gemini_supply_stop) and one stopped
// from stdin (hassio.addon_stdin "stop") end as on SIGTERM — the run's
// context is cancelled and it reports a cancelled, stopped run — while serve
// goes on serving. A stop with no run going is a log line and nothing else.
func TestStopFromHomeAssistantAndStdin(t *testing.T) {
	f, err := fakeha.Start(fakeha.Options{Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	dctx, dcancel := context.WithTimeout(context.Background(), testWait)
	defer dcancel()
	c, err := homeassistant.Dial(dctx, homeassistant.Options{URL: f.URL(), Token: config.Secret("tok"), Logger: logger,
		BackoffBase: time.Millisecond, BackoffMax: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })

	bus := &runstatus.Bus{}
	runner := newFakeRunner(bus)
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	var srv *Server
	stop := func(ctx context.Context, source string) error { return srv.Stop(ctx, source) }
	srv, err = New(Options{
		Runner: runner, Logger: logger, Bus: bus,
		Sources: []Source{
			homeassistant.NewEventTrigger(c, logger).WithStop(stop),
			NewStdinSource(stdinR, logger).WithStop(stop),
		},
		Subscribers: []Subscriber{homeassistant.NewEventSink(c, homeassistant.EventSinkOptions{Logger: logger})},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx) }()
	eventually(t, "the trigger to subscribe to start and stop", func() bool {
		return f.Subscriptions(homeassistant.EventStart) == 1 && f.Subscriptions(homeassistant.EventStop) == 1
	})

	// A stop with no run going: logged, nothing else happens.
	f.FireEvent(homeassistant.EventStop, nil)
	eventually(t, "the idle stop logged", func() bool { return strings.Contains(logs.String(), "no run is in progress") })

	stopRun := func(how string, stop func()) {
		t.Helper()
		before := len(f.EventsOfType(homeassistant.EventRunFinished))
		f.FireEvent(homeassistant.EventStart, nil)
		receive(t, runner.started, "the run to stop "+how)
		stop()
		if err := receive(t, runner.finished, "the run stopped "+how); !errors.Is(err, ErrStopped) {
			t.Fatalf("run stopped %s ended with %v, want its context cancelled with ErrStopped", how, err)
		}
		eventually(t, "run_finished after the stop "+how, func() bool {
			return len(f.EventsOfType(homeassistant.EventRunFinished)) == before+1
		})
		fin := f.EventsOfType(homeassistant.EventRunFinished)[before]
		if fin.Data["cancelled"] != true || fin.Data["stopped"] != true {
			t.Errorf("run_finished after the stop %s = %v, want cancelled and stopped", how, fin.Data)
		}
		eventually(t, "the gate free again", func() bool { _, busy := srv.Busy(); return !busy })
	}
	stopRun("by the event", func() { f.FireEvent(homeassistant.EventStop, nil) })
	stopRun("from stdin", func() {
		if _, err := io.WriteString(stdinW, "stop\n"); err != nil {
			t.Fatal(err)
		}
	})
	if n := strings.Count(logs.String(), "run stopped on request"); n != 2 {
		t.Errorf("%d 'run stopped on request' log lines, want 2:\n%s", n, logs)
	}
	for _, src := range []string{"stopped_by=event", "stopped_by=stdin"} {
		if !strings.Contains(logs.String(), src) {
			t.Errorf("log lacks %s", src)
		}
	}

	sigterm()
	if err := receive(t, served, "serve to return"); err != nil {
		t.Fatalf("serve.Run = %v", err)
	}
	select {
	case r := <-runner.started:
		t.Fatalf("a stop started a run: %+v", r)
	default:
	}
}
