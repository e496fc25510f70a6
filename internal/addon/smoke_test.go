package addon

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"

	paho "github.com/eclipse/paho.mqtt.golang"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool, logs func() string) {
	t.Helper()
	testwait.Until(t, what, limit, cond, logs)
}

// built is the binary buildBinary built for every test of the package,
// removed by TestMain.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildBinary returns cmd/gemini-supply built into a temp dir: built once
// for the package, tests only run it.
func buildBinary(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "addon-test-bin-")
		if built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "gemini-supply")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/gemini-supply")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
			return
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// TestAddonSmoke runs the binary the way the add-on's s6 service does:
// `serve` with add-on options, SUPERVISOR_TOKEN, Home Assistant behind the
// Supervisor and the MQTT broker offered by the Supervisor. It must connect,
// publish its discovery entities and availability, and stop on SIGTERM.
func TestAddonSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts mosquitto and the binary")
	}
	const supervisorToken = "smoke-supervisor-token"
	broker := testbroker.Start(t, testbroker.Options{})
	ha, err := fakeha.Start(fakeha.Options{
		SupervisorToken: supervisorToken,
		MQTT:            &fakeha.MQTTService{Host: broker.Host(), Port: broker.Port(), Protocol: "3.1.1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ha.Close()
	ha.AddTodoList("todo.shopping_list", "Shopping List", 0)

	// A broker client that records retained discovery and availability.
	seen := map[string][]byte{}
	var mu sync.Mutex
	watcher := paho.NewClient(paho.NewClientOptions().
		AddBroker(broker.URL()).SetClientID("smoke-watcher"))
	if tok := watcher.Connect(); !tok.WaitTimeout(60*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher connect: %v", tok.Error())
	}
	defer watcher.Disconnect(100)
	if tok := watcher.Subscribe("#", 1, func(_ paho.Client, m paho.Message) {
		mu.Lock()
		defer mu.Unlock()
		seen[m.Topic()] = append([]byte(nil), m.Payload()...)
	}); !tok.WaitTimeout(60*time.Second) || tok.Error() != nil {
		t.Fatalf("watcher subscribe: %v", tok.Error())
	}
	topic := func(pred func(topic string, payload []byte) bool) bool {
		mu.Lock()
		defer mu.Unlock()
		for k, v := range seen {
			if pred(k, v) {
				return true
			}
		}
		return false
	}

	// The add-on's options, as the Supervisor writes /data/options.json.
	dir := t.TempDir()
	options := map[string]any{
		"gemini_api_key": "", "gemini_model": "scripted", "store": "demo",
		"metro_username": "", "metro_password": "", "postal_code": "H2X 1Y4", "replay": "", "replay_max_price_change": 20, "product_memory_days": 180, "review_price_change": 10,
		"todo_entity": "todo.shopping_list", "ha_notify": []string{}, "concurrency": 1, "time_budget": "5m", "max_turns": 40,
		"retry_tagged": false, "telegram_bot_token": "", "telegram_chat_id": 0,
		"telegram_response_timeout": "10m", "slot_scout_interval": "0s", "slot_watch": "", "takeover_wait": "5m", "mqtt_broker": "", "mqtt_username": "", "mqtt_password": "",
		"mqtt_cleanup": false, "trace_dir": "", "trace_keep_runs": 20, "log_level": "debug",
		"review_model": "", "thinking_level": "", "media_resolution": "medium", "prompt_injection_detection": true,
		"model_rpm": 0, "model_concurrency": 0, "language": "auto",
	}
	// Every option of config.yaml is in this file, so a new option without a
	// default the Go config accepts fails here.
	for key := range loadManifest(t).Options {
		if _, ok := options[key]; !ok {
			t.Fatalf("smoke test options lack %q (added to config.yaml?)", key)
		}
	}
	optPath := filepath.Join(dir, "options.json")
	b, _ := json.Marshal(options)
	if err := os.WriteFile(optPath, b, 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(buildBinary(t), "serve", "--config", optPath)
	cmd.Env = append(os.Environ(),
		"SUPERVISOR_TOKEN="+supervisorToken,
		"GEMINI_SUPPLY_SUPERVISOR_URL="+ha.URL(),
		"GEMINI_SUPPLY_DATA_DIR="+filepath.Join(dir, "data"),
		"GEMINI_SUPPLY_BROWSER_PROFILE_DIR="+filepath.Join(dir, "profile"),
	)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var logs syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	waitFor(t, "the websocket connection with the Supervisor token", 90*time.Second, func() bool {
		return ha.ActiveConnections() > 0
	}, logs.String)
	waitFor(t, "the gemini_supply_start subscription", 90*time.Second, func() bool {
		return ha.Subscriptions("gemini_supply_start") > 0
	}, logs.String)
	waitFor(t, "discovery of the Start button and availability online", 90*time.Second, func() bool {
		button := topic(func(k string, v []byte) bool {
			if !strings.HasPrefix(k, "homeassistant/button/") || !strings.HasSuffix(k, "/config") {
				return false
			}
			var cfg map[string]any
			return json.Unmarshal(v, &cfg) == nil && cfg["unique_id"] != nil && cfg["command_topic"] != nil
		})
		online := topic(func(k string, v []byte) bool {
			return strings.HasSuffix(k, "/availability") && string(v) == "online"
		})
		return button && online
	}, logs.String)
	for _, secret := range []string{supervisorToken} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the add-on log shows the Supervisor token")
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) || err != nil {
			t.Fatalf("serve did not exit cleanly on SIGTERM: %v\nlog:\n%s", err, logs.String())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("serve did not stop within 30s of SIGTERM\nlog:\n%s", logs.String())
	}
	waitFor(t, "availability offline after shutdown", 90*time.Second, func() bool {
		return topic(func(k string, v []byte) bool {
			return strings.HasSuffix(k, "/availability") && string(v) == "offline"
		})
	}, logs.String)
}
