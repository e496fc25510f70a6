package homeassistant

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

const (
	testToken           = "llat-test-token-0123456789abcdef"
	testSupervisorToken = "supervisor-test-token-fedcba9876543210"
	testWait            = 90 * time.Second // bounds a hang only
)

func startFake(t *testing.T, opts fakeha.Options) *fakeha.Server {
	t.Helper()
	if opts.Token == "" {
		opts.Token = testToken
	}
	if opts.SupervisorToken == "" {
		opts.SupervisorToken = testSupervisorToken
	}
	f, err := fakeha.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// testOptions are fast-reconnecting client options pointed at f (URL mode).
func testOptions(f *fakeha.Server, logs *syncbuf.Buffer) Options {
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return Options{
		URL:              f.URL(),
		Token:            config.Secret(testToken),
		Logger:           logger,
		PingInterval:     time.Hour,
		BackoffBase:      time.Millisecond,
		BackoffMax:       10 * time.Millisecond,
		HandshakeTimeout: 5 * time.Second,
	}
}

func dialTest(t *testing.T, opts Options) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	c, err := Dial(ctx, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, what, testWait, cond)
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", what)
		}
		return v
	case <-time.After(testWait):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
