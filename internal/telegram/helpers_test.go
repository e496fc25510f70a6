package telegram

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
)

// A realistic token, so the shape-based redaction is exercised as well.
const (
	testToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"
	testChat  = int64(4242)
	otherChat = int64(9999)
	// hang bounds a step that waits for an event: generous, so a busy
	// machine never fails a test; it only ends a hang.
	hang = 90 * time.Second
	// testWait is a wait the user would have (Ping): long, the reply ends it.
	testWait = hang
)

func newTestLogger(w *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type harness struct {
	t    *testing.T
	fake *faketg.Server
	bot  *Bot
	logs *syncbuf.Buffer
}

// newHarness starts a fake Bot API and a Bot talking to it through the real
// library. mod adjusts the options.
func newHarness(t *testing.T, mod ...func(*Options)) *harness {
	t.Helper()
	fake := faketg.NewServer(testToken)
	t.Cleanup(fake.Close)
	logs := &syncbuf.Buffer{}
	o := Options{
		Token:           config.Secret(testToken),
		ChatID:          testChat,
		Endpoint:        fake.Endpoint(),
		ResponseTimeout: time.Minute,
		PollTimeout:     5 * time.Second,
		RequestTimeout:  5 * time.Second,
		StartupRetries:  -1,
		Logger:          newTestLogger(logs),
	}
	for _, m := range mod {
		m(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	bot, err := New(ctx, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h := &harness{t: t, fake: fake, bot: bot, logs: logs}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hang)
		defer cancel()
		if err := bot.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if t.Failed() {
			t.Logf("bot logs:\n%s", logs.String())
		}
		if strings.Contains(logs.String(), testToken) {
			t.Errorf("the bot token appears in the logs:\n%s", logs.String())
		}
	})
	return h
}

// ctx is a per-step deadline so a broken test fails instead of hanging.
func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	h.t.Cleanup(cancel)
	return ctx
}

// waitText waits for a sent message containing all the given substrings.
func (h *harness) waitText(subs ...string) faketg.Message {
	h.t.Helper()
	m, err := h.fake.WaitMessage(h.ctx(), func(m faketg.Message) bool {
		for _, s := range subs {
			if !strings.Contains(m.Text, s) {
				return false
			}
		}
		return true
	})
	if err != nil {
		h.t.Fatalf("waiting for a message with %q: %v\nsent: %+v", subs, err, h.fake.Messages())
	}
	return m
}

// result is the outcome of a call run in the background.
type result[T any] struct {
	v   T
	err error
}

func async[T any](f func() (T, error)) <-chan result[T] {
	ch := make(chan result[T], 1)
	go func() {
		v, err := f()
		ch <- result[T]{v, err}
	}()
	return ch
}

func await[T any](t *testing.T, ch <-chan result[T]) (T, error) {
	t.Helper()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(hang):
		t.Fatal("call did not return")
		var zero T
		return zero, nil
	}
}
