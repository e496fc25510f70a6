package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/serve"
)

// startTestBroker runs a real mosquitto on a free loopback port until the
// test ends and returns its tcp:// URL.
func startTestBroker(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("GEMINI_SUPPLY_TEST_MOSQUITTO")
	if bin == "" {
		if testing.Short() {
			t.Skip("broker test skipped in -short mode")
		}
		t.Fatal("GEMINI_SUPPLY_TEST_MOSQUITTO is not set: run make test (scripts/setup.sh installs mosquitto)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	body := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mosquitto: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	pollUntil(t, "mosquitto to accept connections", func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, out.String)
	return "tcp://" + addr
}

// pollUntil polls cond (every 10 ms, at most 20 s) and fails with logs().
func pollUntil(t *testing.T, what string, cond func() bool, logs func() string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; log:\n%s", what, logs())
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	if tok := w.pc.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher connect: %v", tok.Error())
	}
	t.Cleanup(func() { w.pc.Disconnect(50) })
	if tok := w.pc.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.last[m.Topic()] = string(m.Payload())
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
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
	if tok := w.pc.Publish(topic, 1, false, "PRESS"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
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
	url := startTestBroker(t)
	w := watchBroker(t, url, "gemini_supply/#")

	logs := &lockedBuffer{}
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
	stopMQTT := serveWireMQTT(ctx, cfg, logger, bus, srv)
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
	case <-time.After(20 * time.Second):
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
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not stop; log:\n%s", logs.String())
	}
	stopMQTT()
	pollUntil(t, "availability offline", func() bool { return w.get("gemini_supply/availability") == "offline" }, logs.String)
	if got := w.get("gemini_supply/status"); got != string(runstatus.StateCancelled) {
		t.Errorf("status after shutdown = %q, want %q (the cancelled run's final state was not published before going offline); log:\n%s",
			got, runstatus.StateCancelled, logs.String())
	}
}
