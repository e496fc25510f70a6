package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
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

// TestDemoOptions: Deps.DemoOptions reaches the demo store a Runner
// starts (the bench's store without the express widget; demostore's
// TestExpressWidgetOption checks the option itself, and every end-to-end
// test the default).
func TestDemoOptions(t *testing.T) {
	r, err := NewRunner(config.Config{Store: "demo", GeminiModel: config.ScriptedModel},
		Deps{DemoOptions: func(o *demostore.Options) { o.NoExpressWidget = true }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	if _, err := r.environment(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := r.DemoStore()
	resp, err := srv.Client().Get(demostore.ProductURL("bananas-bunch"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || !bytes.Contains(body, []byte(`id="product-name"`)) {
		t.Fatalf("product page: %d %v", resp.StatusCode, err)
	}
	if bytes.Contains(body, []byte(`id="express-checkout"`)) {
		t.Error("the product page frames the express widget; DemoOptions asked for none")
	}
}

func TestReviewModel(t *testing.T) {
	before := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	after := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) // gemini-2.5-flash's shutdown day
	tests := []struct {
		name, agentModel, configured string
		now                          time.Time
		want                         string
		warns                        bool
	}{
		{"the agent's model by default", "gemini-3.8-flash", "", before, "gemini-3.8-flash", false},
		{"an older agent model reads too", "gemini-3.6-flash", "", before, "gemini-3.6-flash", false},
		{"configured wins", "gemini-3.8-flash", "gemini-3.7-flash", before, "gemini-3.7-flash", false},
		{"a Computer-Use-only agent model cannot read", "gemini-2.5-computer-use-preview-10-2025", "", before, agent.DefaultModel, false},
		{"a configured model that cannot read is replaced", "gemini-3.8-flash", "gemini-2.5-computer-use-preview-10-2025", before, agent.DefaultModel, true},
		{"before its shutdown a retiring model is kept, with a warning", "gemini-3.8-flash", "gemini-2.5-flash", before, "gemini-2.5-flash", true},
		{"never a retired one", "gemini-3.8-flash", "gemini-2.5-flash", after, agent.DefaultModel, true},
		{"an unknown configured model is used, with a warning", "gemini-3.8-flash", "gemini-9-flash", before, "gemini-9-flash", true},
		{"an unknown agent model reads as given", "gemini-9-flash", "", before, "gemini-9-flash", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, warn := ReviewModel(tc.agentModel, tc.configured, tc.now)
			if got != tc.want || (warn != "") != tc.warns {
				t.Errorf("ReviewModel(%q, %q) = %q, warning %q; want %q, warning %v", tc.agentModel, tc.configured, got, warn, tc.want, tc.warns)
			}
		})
	}
}

// TestDefaultModelAgrees: the configuration's default is the agent's.
func TestDefaultModelAgrees(t *testing.T) {
	if config.DefaultModel != agent.DefaultModel {
		t.Errorf("config.DefaultModel %s, agent.DefaultModel %s", config.DefaultModel, agent.DefaultModel)
	}
	m, ok := agent.LookupModel(agent.DefaultModel)
	if !ok || !m.GA || !m.ComputerUse {
		t.Errorf("the default model %s is not a GA Computer Use model in the table: %+v", agent.DefaultModel, m)
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
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	const key, pass = "AIzaSECRET-api-key-123", "hunter2-store-password"
	var logs bytes.Buffer
	logger := debugLogger(&logs)
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
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
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

// TestRunWarnsAboutTheModel: a run with an unknown, retiring or retired
// model logs a warning that names the problem (the run itself goes on; here
// it fails later for want of a browser).
func TestRunWarnsAboutTheModel(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	tests := []struct {
		model, day, want string
	}{
		{"gemini-9-ultra", "2026-11-23", "is not in the model table"},
		{"gemini-2.5-pro", "2026-11-23", "will be shut down on 2026-12-01"},
		{"gemini-2.5-pro", "2026-12-02", "was shut down on 2026-12-01"},
		{agent.DefaultModel, "2026-11-23", ""},
	}
	for _, tc := range tests {
		t.Run(tc.model+"@"+tc.day, func(t *testing.T) {
			var logs syncbuf.Buffer
			dir := t.TempDir()
			list := filepath.Join(dir, "list.yaml")
			if err := os.WriteFile(list, []byte("items:\n  - name: milk\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			day, _ := time.Parse(time.DateOnly, tc.day)
			cfg := config.Config{
				Store: "metro", GeminiModel: tc.model, GeminiAPIKey: config.Secret("key"),
				MetroUsername: "me@example.com", MetroPassword: config.Secret("pw"), ShoppingList: list, DataDir: filepath.Join(dir, "data"),
				BrowserExecutable: filepath.Join(dir, "no-such-browser"), BrowserHeadless: true, Concurrency: 1,
			}
			r, err := NewRunner(cfg, Deps{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Now: func() time.Time { return day }})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = r.Close(context.Background()) }()
			_, _ = r.Shop(context.Background(), runstatus.Request{Source: "test"})
			got := logs.String()
			if tc.want == "" {
				if strings.Contains(got, "model table") || strings.Contains(got, "shut down") {
					t.Errorf("a warning for the default model:\n%s", got)
				}
			} else if !strings.Contains(got, "level=WARN") || !strings.Contains(got, tc.want) {
				t.Errorf("log lacks a warning %q:\n%s", tc.want, got)
			}
		})
	}
}
