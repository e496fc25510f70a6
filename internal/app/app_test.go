package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

func TestNewRunnerChecks(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"scripted needs the demo store", config.Config{Store: "metro", GeminiModel: config.ScriptedModel}, "--store demo"},
		{"a real model needs a key", config.Config{Store: "demo", GeminiModel: "gemini-2.5-computer-use-preview-10-2025"}, "GEMINI_API_KEY"},
		{"unknown store", config.Config{Store: "costco", GeminiModel: config.ScriptedModel}, "unknown store"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRunner(tc.cfg, Deps{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := NewRunner(config.Config{Store: "demo", GeminiModel: config.ScriptedModel}, Deps{}); err != nil {
		t.Errorf("demo + scripted: %v", err)
	}
}

func TestReviewModel(t *testing.T) {
	if got := ReviewModel("gemini-2.5-computer-use-preview-10-2025"); got != DefaultReviewModel {
		t.Errorf("computer use model reviewed by %s", got)
	}
	if got := ReviewModel("gemini-3-flash-preview"); got != "gemini-3-flash-preview" {
		t.Errorf("general model reviewed by %s", got)
	}
}

// memList is an in-memory provider whose Items can be held.
type memList struct {
	mu       sync.Mutex
	items    []shoppinglist.Item
	hold     chan struct{}
	entered  chan struct{}
	done     map[string]string
	summarys int
}

func newMemList(names ...string) *memList {
	l := &memList{done: map[string]string{}}
	for i, n := range names {
		it := shoppinglist.Item{ID: string(rune('a' + i)), Status: shoppinglist.StatusNeedsAction}
		it.SetName(n)
		l.items = append(l.items, it)
	}
	return l
}

func (l *memList) Item(ctx context.Context, id string) (shoppinglist.Item, error) {
	items, err := l.Items(ctx)
	if err != nil {
		return shoppinglist.Item{}, err
	}
	return shoppinglist.Find(items, id)
}

func (l *memList) Items(ctx context.Context) ([]shoppinglist.Item, error) {
	if l.entered != nil {
		close(l.entered)
		select {
		case <-l.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]shoppinglist.Item(nil), l.items...), nil
}
func (l *memList) mark(id, what string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done[id] = what
	return nil
}
func (l *memList) MarkCompleted(_ context.Context, id string, _ shoppinglist.Added) error {
	return l.mark(id, "completed")
}
func (l *memList) MarkNotFound(_ context.Context, id, _ string) error { return l.mark(id, "#404") }
func (l *memList) MarkFailed(_ context.Context, id, _ string) error   { return l.mark(id, "#failed") }
func (l *memList) SendSummary(context.Context, report.Summary) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.summarys++
	return nil
}

// TestRunnerBusy: a second run while one is in progress gets ErrBusy.
func TestRunnerBusy(t *testing.T) {
	l := newMemList("milk")
	l.hold, l.entered = make(chan struct{}), make(chan struct{})
	r, err := NewRunner(config.Config{Store: "demo", GeminiModel: config.ScriptedModel, DataDir: t.TempDir()}, Deps{Provider: l})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(context.Background()) }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx, runstatus.Request{Source: "test"}); done <- err }()
	select {
	case <-l.entered:
	case <-time.After(90 * time.Second): // bounds a hang only
		t.Fatal("the first run did not start")
	}
	if _, err := r.Run(context.Background(), runstatus.Request{Source: "test"}); !errors.Is(err, runstatus.ErrBusy) {
		t.Errorf("second run: %v, want ErrBusy", err)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the cancelled run reported no error")
		}
	case <-time.After(90 * time.Second): // bounds a hang only
		t.Fatal("the first run did not stop")
	}
}

// TestSecretsNeverLogged: the API key and the store password appear in no
// log line, journal or summary, even when the run fails.
func TestSecretsNeverLogged(t *testing.T) {
	const key, pass = "AIzaSECRET-api-key-123", "hunter2-store-password"
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yaml")
	if err := os.WriteFile(list, []byte("items:\n  - name: milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{
		Store: "metro", GeminiModel: "gemini-2.5-computer-use-preview-10-2025", GeminiAPIKey: config.Secret(key),
		MetroUsername: "me@example.com", MetroPassword: config.Secret(pass), ShoppingList: list, DataDir: filepath.Join(dir, "data"),
		BrowserExecutable: filepath.Join(dir, "no-such-browser"), BrowserHeadless: true, Concurrency: 1,
	}
	r, err := NewRunner(cfg, Deps{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(context.Background()) }()
	res, err := r.Shop(context.Background(), runstatus.Request{Source: "test"})
	if err == nil {
		t.Fatal("a run with no browser succeeded")
	}
	var all strings.Builder
	all.WriteString(logs.String())
	all.WriteString(err.Error())
	all.WriteString(res.Summary.Markdown())
	if res.JournalPath != "" {
		b, _ := os.ReadFile(res.JournalPath)
		all.Write(b)
	}
	b, _ := os.ReadFile(list)
	all.Write(b)
	for _, secret := range []string{key, pass} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("a secret leaked into logs, errors, summary, journal or list")
		}
	}
	if logs.Len() == 0 {
		t.Error("nothing was logged: the test proves nothing")
	}
}

// TestRunnerWithAnyProvider: serve's Runner shops any provider (here an
// in-memory one standing in for Home Assistant) with --store demo and the
// scripted model.
func TestRunnerWithAnyProvider(t *testing.T) {
	exe := requireBrowser(t)
	l := newMemList("bananas", "dragon fruit")
	cfg := newE2EConfig(exe, "", t.TempDir())
	r, err := NewRunner(cfg, Deps{Provider: l, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := r.Run(ctx, runstatus.Request{Source: "mqtt"})
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.Counts(); c.Added != 1 || c.NotFound != 1 {
		t.Errorf("counts %s", c)
	}
	if l.done["a"] != "completed" || l.done["b"] != "#404" || l.summarys != 1 {
		t.Errorf("provider saw %v and %d summaries", l.done, l.summarys)
	}
	// A second run on the same Runner reuses the demo store and model.
	sum2, err := r.Run(ctx, runstatus.Request{Source: "mqtt"})
	if err != nil || len(sum2.Items) != 2 {
		t.Errorf("second run: %v, %d items", err, len(sum2.Items))
	}
}
