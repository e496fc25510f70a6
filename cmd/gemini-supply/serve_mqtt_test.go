package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/fake/supervisor"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/serve"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
)

// pollUntil polls cond (every 10 ms, at most 20 s) and fails with logs().
func pollUntil(t *testing.T, what string, cond func() bool, logs func() string) {
	t.Helper()
	testwait.Until(t, what, 90*time.Second, cond, logs)
}

// retainedWatcher records the last payload of every topic under root.
type retainedWatcher struct {
	mu   sync.Mutex
	last map[string]string
	pc   paho.Client
}

func watchBroker(t *testing.T, url, filter string) *retainedWatcher {
	t.Helper()
	w := &retainedWatcher{last: map[string]string{}}
	w.pc = paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("serve-test-watcher"))
	if tok := w.pc.Connect(); !tok.WaitTimeout(60*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher connect: %v", tok.Error())
	}
	t.Cleanup(func() { w.pc.Disconnect(50) })
	if tok := w.pc.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.last[m.Topic()] = string(m.Payload())
	}); !tok.WaitTimeout(60*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher subscribe: %v", tok.Error())
	}
	return w
}

func (w *retainedWatcher) get(topic string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[topic]
}

func (w *retainedWatcher) press(t *testing.T, topic string) {
	t.Helper()
	if tok := w.pc.Publish(topic, 1, false, "PRESS"); !tok.WaitTimeout(60*time.Second) || tok.Error() != nil {
		t.Fatalf("press %s: %v", topic, tok.Error())
	}
}

// blockingRunner is a fake shopping run: it reports itself started and
// shopping, then runs until it is cancelled, and reports that as a run that
// publishes its cancelled summary afterwards — as the real run does on SIGTERM.
type blockingRunner struct {
	bus      *runstatus.Bus
	requests chan runstatus.Request
}

func (r *blockingRunner) Run(ctx context.Context, req runstatus.Request) (report.Summary, error) {
	r.requests <- req
	now := time.Now()
	r.bus.Publish(runstatus.Event{Time: now, Kind: runstatus.KindRunStarted, RunID: "run-1", State: runstatus.StateInitializing, Progress: runstatus.Progress{Total: 3}})
	r.bus.Publish(runstatus.Event{Time: now, Kind: runstatus.KindStateChanged, RunID: "run-1", State: runstatus.StateShopping, Progress: runstatus.Progress{Total: 3}})
	<-ctx.Done()
	s := report.Summary{StartedAt: now, FinishedAt: time.Now(), Cancelled: true}
	r.bus.Publish(runstatus.Event{Time: time.Now(), Kind: runstatus.KindRunFinished, RunID: "run-1", Summary: &s, Progress: runstatus.Progress{Total: 3}})
	return s, nil
}

// TestServeMQTTButtonStartsRun: serve's MQTT wiring against a real broker.
// A press on the dashboard button starts a run through the serve gate, the
// status sensor follows it, a second press is refused as busy, and on
// shutdown (SIGTERM: ctx cancelled) the cancelled run's final state is
// published before availability goes offline.
func TestServeMQTTButtonStartsRun(t *testing.T) {
	url := testbroker.Start(t, testbroker.Options{}).URL()
	w := watchBroker(t, url, "gemini_supply/#")

	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bus := &runstatus.Bus{}
	runner := &blockingRunner{bus: bus, requests: make(chan runstatus.Request, 4)}
	srv, err := serve.New(serve.Options{Runner: runner, Bus: bus, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{MQTTBroker: url}

	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	stopMQTT := serveWireMQTT(ctx, cfg, logger, bus, srv, defaultMQTTLookupRetry)
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx) }()

	pollUntil(t, "availability online", func() bool { return w.get("gemini_supply/availability") == "online" }, logs.String)
	pollUntil(t, "status idle", func() bool { return w.get("gemini_supply/status") == "idle" }, logs.String)

	w.press(t, "gemini_supply/command/start")
	select {
	case req := <-runner.requests:
		if req.Source != "mqtt" || req.RetryTagged {
			t.Errorf("run request %+v, want source mqtt without retry_tagged", req)
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("the button press started no run; log:\n%s", logs.String())
	}
	pollUntil(t, "status shopping", func() bool { return w.get("gemini_supply/status") == "shopping" }, logs.String)

	w.press(t, "gemini_supply/command/retry")
	pollUntil(t, "the busy event", func() bool { return strings.Contains(w.get("gemini_supply/event"), `"busy"`) }, logs.String)
	pollUntil(t, "busy in the status attributes", func() bool {
		return strings.Contains(w.get("gemini_supply/status/attributes"), `"busy":true`)
	}, logs.String)
	select {
	case req := <-runner.requests:
		t.Fatalf("a press during a run started another run: %+v", req)
	default:
	}

	sigterm()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("serve did not stop; log:\n%s", logs.String())
	}
	stopMQTT()
	pollUntil(t, "availability offline", func() bool { return w.get("gemini_supply/availability") == "offline" }, logs.String)
	if got := w.get("gemini_supply/status"); got != string(runstatus.StateCancelled) {
		t.Errorf("status after shutdown = %q, want %q (the cancelled run's final state was not published before going offline); log:\n%s",
			got, runstatus.StateCancelled, logs.String())
	}
}

// TestServeMQTTStopButton: the dashboard's "Stop grocery run" button
// against a real broker. Pressed with no run going it only answers
// "no_run"; pressed during a run it stops the run through the run's context
// as SIGTERM would — the run publishes its cancelled summary, the status
// sensor says cancelled — and serve keeps serving: the next press of start
// starts a run.
func TestServeMQTTStopButton(t *testing.T) {
	url := testbroker.Start(t, testbroker.Options{}).URL()
	w := watchBroker(t, url, "gemini_supply/#")

	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bus := &runstatus.Bus{}
	runner := &blockingRunner{bus: bus, requests: make(chan runstatus.Request, 4)}
	srv, err := serve.New(serve.Options{Runner: runner, Bus: bus, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	stopMQTT := serveWireMQTT(ctx, config.Config{MQTTBroker: url}, logger, bus, srv, defaultMQTTLookupRetry)
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx) }()
	pollUntil(t, "status idle", func() bool { return w.get("gemini_supply/status") == "idle" }, logs.String)

	w.press(t, "gemini_supply/command/stop")
	pollUntil(t, "the no_run event", func() bool { return strings.Contains(w.get("gemini_supply/event"), `"no_run"`) }, logs.String)
	if !strings.Contains(logs.String(), "no run is in progress") {
		t.Errorf("the stop with no run was not logged:\n%s", logs)
	}

	w.press(t, "gemini_supply/command/start")
	select {
	case <-runner.requests:
	case <-time.After(30 * time.Second):
		t.Fatalf("the start button started no run; log:\n%s", logs)
	}
	pollUntil(t, "status shopping", func() bool { return w.get("gemini_supply/status") == "shopping" }, logs.String)

	w.press(t, "gemini_supply/command/stop")
	pollUntil(t, "the stopping event", func() bool { return strings.Contains(w.get("gemini_supply/event"), `"stopping"`) }, logs.String)
	pollUntil(t, "status cancelled", func() bool { return w.get("gemini_supply/status") == string(runstatus.StateCancelled) }, logs.String)
	pollUntil(t, "the run to end", func() bool { _, busy := srv.Busy(); return !busy }, logs.String)
	if !strings.Contains(logs.String(), "run stopped on request") || !strings.Contains(logs.String(), "stopped_by=mqtt") {
		t.Errorf("the stop is not logged as a stop from MQTT:\n%s", logs)
	}

	w.press(t, "gemini_supply/command/start")
	select {
	case <-runner.requests:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve started no run after a stop; log:\n%s", logs)
	}
	sigterm()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop; log:\n%s", logs)
	}
	stopMQTT()
}

// fastLookup is a backoff that keeps the Supervisor lookup tests quick.
var fastLookup = mqttLookupRetry{First: time.Millisecond, Max: 20 * time.Millisecond}

// mqttLookups counts the GET /services/mqtt requests sv received.
func mqttLookups(sv *supervisor.Server) int {
	n := 0
	for _, r := range sv.Requests() {
		if r.Path == "/services/mqtt" {
			n++
		}
	}
	return n
}

// wireMQTTForTest starts serveWireMQTT with a fake run and a debug logger;
// the returned stop func may be called more than once.
func wireMQTTForTest(t *testing.T, cfg config.Config, retry mqttLookupRetry) (stop func(), logs *syncbuf.Buffer) {
	t.Helper()
	logs = &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bus := &runstatus.Bus{}
	srv, err := serve.New(serve.Options{Runner: &blockingRunner{bus: bus, requests: make(chan runstatus.Request, 4)}, Bus: bus, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop = sync.OnceFunc(serveWireMQTT(ctx, cfg, logger, bus, srv, retry))
	t.Cleanup(func() { cancel(); stop() })
	return stop, logs
}

// stopWithin calls stop and fails if it does not return within 20 s.
func stopWithin(t *testing.T, stop func(), logs *syncbuf.Buffer) {
	t.Helper()
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(90 * time.Second):
		t.Fatalf("stopping MQTT did not return; log:\n%s", logs.String())
	}
}

// logLines returns the log lines at level (e.g. "WARN") that contain s.
func logLines(logs *syncbuf.Buffer, level, s string) []string {
	var out []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level="+level+" ") && strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// TestServeMQTTWaitsForSupervisorBroker: as the add-on (SUPERVISOR_TOKEN,
// no mqtt_broker), serve keeps asking the Supervisor for the broker while
// the Supervisor is unavailable (503) and while the Mosquitto add-on is not
// started ("Service not enabled"), then connects and publishes discovery and
// "online" — without a restart. Only the first failure is a warning; the
// broker found is logged at Info; the token is never logged.
func TestServeMQTTWaitsForSupervisorBroker(t *testing.T) {
	const token = "sv-token-QWERTY-123"
	broker := testbroker.Start(t, testbroker.Options{})
	w := watchBroker(t, broker.URL(), "#")
	sv := supervisor.New(token)
	defer sv.Close()
	sv.SetMQTTError(http.StatusServiceUnavailable, "System is not ready")

	stop, logs := wireMQTTForTest(t, config.Config{SupervisorToken: token, SupervisorURL: sv.URL}, fastLookup)

	pollUntil(t, "lookups while the Supervisor answers 503", func() bool { return mqttLookups(sv) >= 3 }, logs.String)
	sv.SetMQTTError(0, "") // the Supervisor is back; the Mosquitto add-on is not started yet
	n := mqttLookups(sv)
	pollUntil(t, "lookups while the MQTT service is not enabled", func() bool { return mqttLookups(sv) >= n+2 }, logs.String)
	pollUntil(t, "the not-enabled answer in the debug log", func() bool {
		return len(logLines(logs, "DEBUG", "Service not enabled")) > 0
	}, logs.String)
	sv.SetMQTT(&supervisor.MQTTService{Host: broker.Host(), Port: broker.Port()})

	pollUntil(t, "discovery of the Start button", func() bool {
		return strings.Contains(w.get("homeassistant/button/gemini_supply/start/config"), `"command_topic"`)
	}, logs.String)
	pollUntil(t, "availability online", func() bool { return w.get("gemini_supply/availability") == "online" }, logs.String)

	if warns := logLines(logs, "WARN", "MQTT"); len(warns) != 1 || !strings.Contains(warns[0], "503") ||
		!strings.Contains(warns[0], "keeps asking") {
		t.Errorf("want exactly one MQTT warning, for the first (503) failure, saying serve keeps asking; got %q", warns)
	}
	if len(logLines(logs, "INFO", "MQTT: using the broker the Supervisor offers")) != 1 {
		t.Errorf("the broker found is not logged at Info; log:\n%s", logs.String())
	}
	stopWithin(t, stop, logs)
	pollUntil(t, "availability offline", func() bool { return w.get("gemini_supply/availability") == "offline" }, logs.String)
	if strings.Contains(logs.String(), token) {
		t.Errorf("the log shows the Supervisor token:\n%s", logs.String())
	}
}

// TestServeMQTTLookupGivesUp: a refusal by the Supervisor (401, 403) is not
// retried, and without mqtt_broker outside an add-on the Supervisor is not
// asked at all: serve runs without MQTT, saying why.
func TestServeMQTTLookupGivesUp(t *testing.T) {
	tests := []struct {
		name        string
		token       string // the add-on's token; the Supervisor accepts "tok"
		noAccess    bool
		wantLookups int
		wantLog     string
	}{
		{name: "token refused (401)", token: "stale-token", wantLookups: 1,
			wantLog: `level=WARN msg="MQTT is not available: no dashboard button or sensors" error="the Supervisor refused the request: it refused the add-on token (401`},
		{name: "no access to the MQTT service (403)", token: "tok", noAccess: true, wantLookups: 1,
			wantLog: `level=WARN msg="MQTT is not available: no dashboard button or sensors" error="the Supervisor refused the request: it denied access`},
		{name: "not an add-on, no mqtt_broker", wantLookups: 0,
			wantLog: `level=INFO msg="MQTT is not available: no dashboard button or sensors" reason="mqtt_broker is not set and this is not an add-on`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sv := supervisor.New("tok")
			defer sv.Close()
			sv.SetMQTT(&supervisor.MQTTService{Host: "127.0.0.1", Port: 1})
			sv.SetMQTTAccess(!tc.noAccess)
			cfg := config.Config{SupervisorURL: sv.URL, SupervisorToken: config.Secret(tc.token)}

			stop, logs := wireMQTTForTest(t, cfg, fastLookup)
			// This line is logged only once the lookup gave up and the
			// goroutine is returning: no request can follow it.
			pollUntil(t, "serve giving up on MQTT", func() bool { return strings.Contains(logs.String(), tc.wantLog) }, logs.String)
			stopWithin(t, stop, logs)
			if got := mqttLookups(sv); got != tc.wantLookups {
				t.Errorf("the Supervisor was asked %d times, want %d; log:\n%s", got, tc.wantLookups, logs.String())
			}
			if strings.Contains(logs.String(), "keeps asking") {
				t.Errorf("serve said it keeps asking; log:\n%s", logs.String())
			}
		})
	}
}

// TestServeMQTTLookupStopsDuringBackoff: stopping serve ends a lookup that
// waits between attempts at once, not after the backoff.
func TestServeMQTTLookupStopsDuringBackoff(t *testing.T) {
	sv := supervisor.New("tok")
	defer sv.Close()
	sv.SetMQTTError(http.StatusBadGateway, "Bad Gateway")
	stop, logs := wireMQTTForTest(t, config.Config{SupervisorToken: "tok", SupervisorURL: sv.URL},
		mqttLookupRetry{First: time.Hour, Max: time.Hour})
	pollUntil(t, "the first failure's warning", func() bool {
		return len(logLines(logs, "WARN", "keeps asking")) == 1
	}, logs.String)
	stopWithin(t, stop, logs)
	if got := mqttLookups(sv); got != 1 {
		t.Errorf("the Supervisor was asked %d times, want 1", got)
	}
	if strings.Contains(logs.String(), "MQTT is not available") {
		t.Errorf("stopping serve was reported as MQTT failing; log:\n%s", logs.String())
	}
}
