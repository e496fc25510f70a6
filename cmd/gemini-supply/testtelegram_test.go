package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"

	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
)

const cliToken = "111222333:AAcliTestTokenValue_abcdefghijklmnopq"

// isolate makes config.Load see only what the test sets: no user config
// file, no add-on, no inherited Telegram settings.
func isolate(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "SUPERVISOR_TOKEN", "GEMINI_SUPPLY_CONFIG",
		"TELEGRAM_BOT_TOKEN", "TELEGRAM_USER_CHAT_ID", "GEMINI_SUPPLY_TELEGRAM_BOT_TOKEN",
		"GEMINI_SUPPLY_TELEGRAM_CHAT_ID", "GEMINI_SUPPLY_TELEGRAM_API_ENDPOINT", "GEMINI_SUPPLY_DATA_DIR"} {
		t.Setenv(k, "")
	}
}

type cliResult struct {
	code     int
	out, err string
}

func runCLI(t *testing.T, args ...string) (<-chan cliResult, *syncbuf.Buffer) {
	out, errb := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	ch := make(chan cliResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		code := run(ctx, args, stdio{in: strings.NewReader(""), out: out, err: errb})
		ch <- cliResult{code, out.String(), errb.String()}
	}()
	return ch, out
}

func waitCLI(t *testing.T, ch <-chan cliResult) cliResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(150 * time.Second):
		t.Fatal("command did not finish")
		return cliResult{}
	}
}

func TestTestTelegramReply(t *testing.T) {
	isolate(t)
	fake := faketg.NewServer(cliToken)
	defer fake.Close()
	t.Setenv("TELEGRAM_BOT_TOKEN", cliToken)
	t.Setenv("TELEGRAM_USER_CHAT_ID", "31337")
	t.Setenv("GEMINI_SUPPLY_TELEGRAM_API_ENDPOINT", fake.Endpoint())

	ch, _ := runCLI(t, "test-telegram")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m, err := fake.WaitMessage(ctx, func(m faketg.Message) bool { return strings.Contains(m.Text, "Test message from gemini-supply") })
	if err != nil {
		t.Fatal(err)
	}
	if m.ChatID != 31337 || !strings.Contains(m.Text, "within 1 minute") {
		t.Errorf("test message = %+v", m)
	}
	fake.SendText(31337, "hello bot")
	r := waitCLI(t, ch)
	if r.code != 0 || !strings.Contains(r.out, `Your reply arrived: "hello bot"`) || !strings.Contains(r.out, "Telegram works.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.err)
	}
	if strings.Contains(r.out+r.err, cliToken) {
		t.Error("token printed")
	}
}

func TestTestTelegramNoReply(t *testing.T) {
	isolate(t)
	fake := faketg.NewServer(cliToken)
	defer fake.Close()
	t.Setenv("TELEGRAM_BOT_TOKEN", cliToken)
	t.Setenv("TELEGRAM_USER_CHAT_ID", "31337")
	t.Setenv("GEMINI_SUPPLY_TELEGRAM_API_ENDPOINT", fake.Endpoint())

	ch, _ := runCLI(t, "test-telegram", "--wait", "5s") // the wait is the scenario: long enough to see the other chat
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := fake.WaitMessage(ctx, func(m faketg.Message) bool { return m.Keyboard != nil }); err != nil {
		t.Fatal(err)
	}
	fake.SendText(4444, "wrong chat")
	r := waitCLI(t, ch)
	if r.code != 1 || !strings.Contains(r.err, "no reply") || !strings.Contains(r.err, "4444") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.err)
	}
}

func TestTestTelegramNotConfigured(t *testing.T) {
	isolate(t)
	r := waitCLI(t, func() <-chan cliResult { ch, _ := runCLI(t, "test-telegram"); return ch }())
	if r.code != 1 || !strings.Contains(r.err, "telegram_bot_token") {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.err)
	}
}

func TestTestTelegramTelegramDown(t *testing.T) {
	isolate(t)
	fake := faketg.NewServer(cliToken)
	defer fake.Close()
	fake.SetFailure(faketg.Mode401)
	t.Setenv("TELEGRAM_BOT_TOKEN", cliToken)
	t.Setenv("TELEGRAM_USER_CHAT_ID", "31337")
	t.Setenv("GEMINI_SUPPLY_TELEGRAM_API_ENDPOINT", fake.Endpoint())
	r := waitCLI(t, func() <-chan cliResult { ch, _ := runCLI(t, "test-telegram"); return ch }())
	if r.code != 1 || !strings.Contains(r.err, "refused the bot token") || strings.Contains(r.err, cliToken) {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.err)
	}
}

// TestTestTelegramFindsChatID: with only the token set, the command waits
// for a message and prints the chat id to configure.
func TestTestTelegramFindsChatID(t *testing.T) {
	isolate(t)
	fake := faketg.NewServer(cliToken)
	defer fake.Close()
	t.Setenv("TELEGRAM_BOT_TOKEN", cliToken)
	t.Setenv("GEMINI_SUPPLY_TELEGRAM_API_ENDPOINT", fake.Endpoint())
	fake.SendText(98765, "/start") // sent before the command runs, as the setup steps say
	ch, _ := runCLI(t, "test-telegram")
	r := waitCLI(t, ch)
	if r.code != 1 || !strings.Contains(r.out, "set telegram_chat_id: 98765") || !strings.Contains(r.out, "Send any message to your bot now") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.err)
	}
}
