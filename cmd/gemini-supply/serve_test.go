package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
)

const serveTestToken = "serve-cmd-token-7d3a"

// serveEnv is the environment of a serve process pointed at the fake: the
// demo store and the scripted model, so no secret or network is needed.
func serveEnv(t *testing.T, f *fakeha.Server, token string, extra ...string) []string {
	dir := t.TempDir()
	env := []string{
		"HOME=" + dir,
		"PATH=" + os.Getenv("PATH"),
		"GEMINI_SUPPLY_HOME_ASSISTANT_URL=" + f.URL(),
		"GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN=" + token,
		"GEMINI_SUPPLY_STORE=demo",
		"GEMINI_SUPPLY_GEMINI_MODEL=scripted",
		"GEMINI_SUPPLY_DATA_DIR=" + filepath.Join(dir, "data"),
		"GEMINI_SUPPLY_BROWSER_PROFILE_DIR=" + filepath.Join(dir, "profile"),
	}
	return append(env, extra...)
}

func setEnv(t *testing.T, env []string) {
	for _, k := range []string{"SUPERVISOR_TOKEN", "GEMINI_SUPPLY_CONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

func startFake(t *testing.T) *fakeha.Server {
	f, err := fakeha.Start(fakeha.Options{Token: serveTestToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	f.AddTodoList("todo.shopping_list", "Shopping List", fakeha.ShoppingListFeatures)
	return f
}

// TestServeHelperProcess is not a test: it is the serve process the
// SIGTERM test starts (the test binary re-executed).
func TestServeHelperProcess(t *testing.T) {
	if os.Getenv("GEMINI_SUPPLY_SERVE_HELPER") != "1" {
		t.Skip("helper process for TestServeExitsCleanlyOnSIGTERM")
	}
	os.Args = []string{"gemini-supply", "serve"}
	main()
}

func TestServeExitsCleanlyOnSIGTERM(t *testing.T) {
	f := startFake(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeHelperProcess$")
	cmd.Env = append(serveEnv(t, f, serveTestToken), "GEMINI_SUPPLY_SERVE_HELPER=1")
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(90 * time.Second)
	for f.Subscriptions("gemini_supply_start") != 1 {
		select {
		case err := <-exited:
			t.Fatalf("serve exited early (%v):\n%s", err, stderr)
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("serve did not subscribe to gemini_supply_start:\n%s", stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := io.WriteString(stdin, "bogus\n"); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(stderr.String(), "ignored stdin input") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("stdin not read:\n%s", stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM:\n%s", err, stderr)
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("serve did not exit after SIGTERM:\n%s", stderr)
	}
	out := stderr.String()
	for _, want := range []string{"connected to Home Assistant", "serving: waiting for triggers", "shutting down", "msg=stopped"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, serveTestToken) {
		t.Errorf("the token is in the log:\n%s", out)
	}
}

func TestServeFailsClearly(t *testing.T) {
	tests := []struct {
		name  string
		token string
		extra []string
		want  []string
	}{
		{"wrong token", "not-the-token", nil, []string{"auth_invalid", "/api/websocket", "home_assistant_token"}},
		{"unknown todo entity", serveTestToken, []string{"GEMINI_SUPPLY_TODO_ENTITY=todo.groceries"}, []string{"todo.groceries", "todo.shopping_list", "todo_entity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t)
			setEnv(t, serveEnv(t, f, tt.token, tt.extra...))
			var stderr syncbuf.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			code := run(ctx, []string{"serve"}, stdio{in: strings.NewReader(""), out: io.Discard, err: &stderr})
			if code != 1 {
				t.Fatalf("exit code %d, want 1:\n%s", code, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, stderr.String())
				}
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatal("serve retried instead of failing")
			}
		})
	}
}

// TestServeFindsTelegramChatID: an add-on user who set the bot token but
// not the chat id cannot run test-telegram; serve starts anyway and logs
// the chat id of the first message to the bot, without the token.
func TestServeFindsTelegramChatID(t *testing.T) {
	f := startFake(t)
	tg := faketg.NewServer(cliToken)
	defer tg.Close()
	isolate(t)
	setEnv(t, serveEnv(t, f, serveTestToken,
		"TELEGRAM_BOT_TOKEN="+cliToken,
		"GEMINI_SUPPLY_TELEGRAM_API_ENDPOINT="+tg.Endpoint()))

	stderr := &syncbuf.Buffer{}
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"serve"}, stdio{in: strings.NewReader(""), out: io.Discard, err: stderr})
	}()
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(stderr.String(), "its chat id will be logged here") {
		select {
		case code := <-exited:
			t.Fatalf("serve exited (%d) instead of serving without a chat id:\n%s", code, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start chat id discovery:\n%s", stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	tg.SendText(98765, "hello")
	for !strings.Contains(stderr.String(), "set telegram_chat_id: 98765") {
		if time.Now().After(deadline) {
			t.Fatalf("the chat id was not logged:\n%s", stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	sigterm()
	select {
	case code := <-exited:
		if code != 0 {
			t.Fatalf("exit code %d after SIGTERM:\n%s", code, stderr)
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("serve did not stop:\n%s", stderr)
	}
	if strings.Contains(stderr.String(), cliToken) {
		t.Errorf("the bot token is in the log:\n%s", stderr)
	}
}

// TestServeSaysEveryConfigProblemAtOnce: serve reports a missing
// credential together with the file's mistakes (issue 34) — not on a
// second start once they are fixed — and still accepts a Telegram bot
// token without a chat id (it finds the chat id itself).
func TestServeSaysEveryConfigProblemAtOnce(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("store: metro\ntime_budget: 300\ntelegram_bot_token: \"123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GEMINI_SUPPLY_CONFIG", path)
	t.Setenv("GEMINI_API_KEY", "")
	var stderr syncbuf.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	code := run(ctx, []string{"serve"}, stdio{in: strings.NewReader(""), out: io.Discard, err: &stderr})
	if code == 0 {
		t.Fatalf("serve started without credentials:\n%s", stderr.String())
	}
	out := stderr.String()
	for _, w := range []string{"time_budget:", "metro_username:", "metro_password:", "gemini_api_key:"} {
		if !strings.Contains(out, w) {
			t.Errorf("serve does not say %s in its first report:\n%s", w, out)
		}
	}
	if strings.Contains(out, "telegram_chat_id") {
		t.Errorf("serve refuses a bot token without a chat id:\n%s", out)
	}
	if n := strings.Count(out, "time_budget:"); n != 1 {
		t.Errorf("time_budget is said %d times:\n%s", n, out)
	}
}
