package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
)

func TestEndpoint(t *testing.T) {
	tests := []struct {
		name           string
		opts           Options
		wantURL        string
		wantSupervisor bool
		wantErr        string
	}{
		{name: "http host", opts: Options{URL: "http://homeassistant.local:8123", Token: "t"}, wantURL: "ws://homeassistant.local:8123/api/websocket"},
		{name: "https trailing slash", opts: Options{URL: "https://ha.example.org/", Token: "t"}, wantURL: "wss://ha.example.org/api/websocket"},
		{name: "websocket URL kept", opts: Options{URL: "ws://10.0.0.2:8123/api/websocket", Token: "t"}, wantURL: "ws://10.0.0.2:8123/api/websocket"},
		{name: "supervisor default", opts: Options{URL: "http://ignored:8123", SupervisorToken: "s"}, wantURL: "ws://supervisor/core/websocket", wantSupervisor: true},
		{name: "supervisor URL", opts: Options{SupervisorToken: "s", SupervisorURL: "http://127.0.0.1:9"}, wantURL: "ws://127.0.0.1:9/core/websocket", wantSupervisor: true},
		{name: "nothing configured", opts: Options{}, wantErr: "set home_assistant_url and home_assistant_token"},
		{name: "no token", opts: Options{URL: "http://ha:8123"}, wantErr: "no access token"},
		{name: "bad scheme", opts: Options{URL: "ftp://ha:8123", Token: "t"}, wantErr: `scheme "ftp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, tok, sup, err := Endpoint(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u != tt.wantURL || sup != tt.wantSupervisor {
				t.Fatalf("got %s supervisor=%v, want %s supervisor=%v", u, sup, tt.wantURL, tt.wantSupervisor)
			}
			want := tt.opts.Token.Reveal()
			if sup {
				want = tt.opts.SupervisorToken.Reveal()
			}
			if tok != want {
				t.Fatalf("token = %q, want %q", tok, want)
			}
		})
	}
}

func TestDialHandshake(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.SetState("sensor.kitchen", "21.5", map[string]any{"friendly_name": "Kitchen"})
	tests := []struct {
		name string
		opts func(Options) Options
	}{
		{"url mode", func(o Options) Options { return o }},
		{"supervisor mode", func(o Options) Options {
			o.URL, o.Token = "", ""
			o.SupervisorToken, o.SupervisorURL = config.Secret(testSupervisorToken), f.URL()
			return o
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialTest(t, tt.opts(testOptions(f, nil)))
			ctx := testCtx(t)
			if err := c.Ping(ctx); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			states, err := c.GetStates(ctx)
			if err != nil {
				t.Fatalf("GetStates: %v", err)
			}
			if len(states) != 1 || states[0].EntityID != "sensor.kitchen" || states[0].FriendlyName() != "Kitchen" {
				t.Fatalf("states = %+v", states)
			}
		})
	}
}

func TestAuthInvalid(t *testing.T) {
	t.Run("at dial", func(t *testing.T) {
		f := startFake(t, fakeha.Options{})
		opts := testOptions(f, nil)
		opts.Token = "wrong-token"
		_, err := Dial(testCtx(t), opts)
		if !errors.Is(err, ErrAuthInvalid) {
			t.Fatalf("err = %v, want auth_invalid", err)
		}
		msg := err.Error()
		for _, want := range []string{"auth_invalid", strings.TrimPrefix(f.URL(), "http://"), "home_assistant_token"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not mention %q", msg, want)
			}
		}
		if strings.Contains(msg, "wrong-token") {
			t.Errorf("error leaks the token: %q", msg)
		}
		if got := f.Upgrades(); got != 1 {
			t.Fatalf("connection attempts = %d, want 1", got)
		}
	})
	t.Run("token revoked while connected: one attempt, then stop", func(t *testing.T) {
		f := startFake(t, fakeha.Options{})
		logs := &syncbuf.Buffer{}
		c := dialTest(t, testOptions(f, logs))
		sub, err := c.SubscribeEvents(testCtx(t), "gemini_supply_start")
		if err != nil {
			t.Fatal(err)
		}
		f.SetToken("another-token")
		f.DropAll()
		select {
		case <-c.managerDone:
		case <-time.After(testWait):
			t.Fatal("the client kept reconnecting after auth_invalid")
		}
		if got := f.Upgrades(); got != 2 {
			t.Fatalf("connection attempts = %d, want 2 (the first and one reconnect)", got)
		}
		if err := c.Ping(testCtx(t)); !errors.Is(err, ErrAuthInvalid) {
			t.Fatalf("Ping after revocation = %v, want auth_invalid", err)
		}
		if !errors.Is(c.Err(), ErrAuthInvalid) {
			t.Fatalf("Err() = %v", c.Err())
		}
		if _, ok := <-sub.C; ok {
			t.Fatal("subscription channel still open after a fatal auth error")
		}
		if strings.Contains(logs.String(), testToken) {
			t.Fatal("the token appears in the logs")
		}
	})
}

func TestServerPingsAreAnswered(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	dialTest(t, testOptions(f, nil))
	if err := f.PingClients(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestMissingPongReconnects(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	opts := testOptions(f, nil)
	opts.PingInterval = 20 * time.Millisecond
	opts.PongTimeout = 50 * time.Millisecond
	c := dialTest(t, opts)
	f.MuteAll() // the connection stays open but nothing answers
	eventually(t, "a reconnect after a missing pong", func() bool { return f.Upgrades() >= 2 })
	if err := c.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping after reconnect: %v", err)
	}
}

func TestCallsWaitWhileDisconnected(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	f.SetRefuse(true)
	f.DropAll()
	eventually(t, "the client to notice the drop", func() bool { return !c.Connected() })

	// Bounded by its context while Home Assistant stays down.
	short, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := c.Ping(short); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the connection") {
		t.Fatalf("Ping while down = %v, want a deadline error while waiting for the connection", err)
	}

	done := make(chan error, 1)
	go func() { done <- c.Ping(testCtx(t)) }()
	f.SetRefuse(false)
	if err := receive(t, done, "the waiting call"); err != nil {
		t.Fatalf("Ping after Home Assistant came back: %v", err)
	}
}

func TestSubscriptionRestoredAfterDrops(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	ctx := testCtx(t)
	sub, err := c.SubscribeEvents(ctx, "gemini_supply_start")
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.SubscribeEvents(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		f.DropAll()
		eventually(t, "subscriptions restored", func() bool {
			return c.Connected() && f.Subscriptions("gemini_supply_start") == 1 && f.Subscriptions("") == 1
		})
		f.FireEvent("gemini_supply_start", map[string]any{"n": i})
		ev := receive(t, sub.C, "the event after a reconnect")
		var data struct{ N int }
		if err := json.Unmarshal(ev.Data, &data); err != nil || ev.EventType != "gemini_supply_start" || data.N != i {
			t.Fatalf("event = %+v (%s), want gemini_supply_start n=%d", ev, ev.Data, i)
		}
		if ev := receive(t, all.C, "the catch-all event"); ev.EventType != "gemini_supply_start" {
			t.Fatalf("catch-all got %q", ev.EventType)
		}
	}
	// Close unsubscribes in Home Assistant too.
	sub.Close()
	eventually(t, "unsubscribed", func() bool { return f.Subscriptions("gemini_supply_start") == 0 })
	if _, ok := <-sub.C; ok {
		t.Fatal("closed subscription delivered an event")
	}
	if f.IDReuseErrors() != 0 {
		t.Fatalf("id_reuse errors: %d", f.IDReuseErrors())
	}
}

func TestCoalescedFrames(t *testing.T) {
	f := startFake(t, fakeha.Options{Coalesce: true})
	c := dialTest(t, testOptions(f, nil))
	ctx := testCtx(t)
	sub, err := c.SubscribeEvents(ctx, "ping_test")
	if err != nil {
		t.Fatal(err)
	}
	// Our own fire_event: the event and the result share one array frame.
	for i := range 5 {
		if err := c.FireEvent(ctx, "ping_test", map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
		ev := receive(t, sub.C, "coalesced event")
		if !strings.Contains(string(ev.Data), fmt.Sprintf(`"i":%d`, i)) {
			t.Fatalf("event %d data = %s", i, ev.Data)
		}
	}
	if f.ArrayFrames() == 0 {
		t.Fatal("the fake sent no array frames: the client did not ask for coalescing")
	}
}

func TestIDsNeverReusedAcrossReconnects(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if err := c.Ping(ctx); err != nil {
					errs <- fmt.Errorf("worker %d ping %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	for range 5 {
		f.DropAll()
		eventually(t, "reconnect", c.Connected)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.IDReuseErrors(); n != 0 {
		t.Fatalf("fake sent %d id_reuse errors", n)
	}
}

func TestFireEventIsNotRepeatedAfterUnknownOutcome(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	var once sync.Once
	f.SetEventHook(func(string) fakeha.Fault {
		fault := fakeha.FaultNone
		once.Do(func() { fault = fakeha.FaultDropAfterApply })
		return fault
	})
	err := c.FireEvent(testCtx(t), "gemini_supply_item_finished", map[string]any{"item": "milk"})
	if !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	if got := len(f.EventsOfType("gemini_supply_item_finished")); got != 1 {
		t.Fatalf("event fired %d times, want exactly 1", got)
	}
	// A fire_event that never reached Home Assistant is sent after the reconnect.
	var once2 sync.Once
	f.SetEventHook(func(string) fakeha.Fault {
		fault := fakeha.FaultNone
		once2.Do(func() { fault = fakeha.FaultDropBeforeApply })
		return fault
	})
	err = c.FireEvent(testCtx(t), "gemini_supply_run_started", nil)
	// Dropped before applying looks the same to the client (no result): unknown.
	if !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
}

func TestErrorResultsAreTyped(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	c := dialTest(t, testOptions(f, nil))
	ctx := testCtx(t)
	tests := []struct {
		name     string
		call     func() error
		wantCode string
	}{
		{"unknown command", func() error { _, err := c.Do(ctx, "no/such/command", nil, true); return err }, CodeUnknownCommand},
		{"unknown service", func() error {
			_, err := c.CallService(ctx, "light", "explode", &Target{EntityID: []string{"light.x"}}, nil, false)
			return err
		}, CodeNotFound},
		{"unknown todo entity", func() error {
			_, err := c.Do(ctx, "todo/item/list", map[string]any{"entity_id": "todo.nope"}, true)
			return err
		}, CodeNotFound},
		{"get_items without return_response", func() error {
			_, err := c.CallService(ctx, "todo", "get_items", &Target{EntityID: []string{"todo.x"}}, nil, false)
			return err
		}, CodeServiceValidationError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var haErr *Error
			if err := tt.call(); !errors.As(err, &haErr) || haErr.Code != tt.wantCode || haErr.Message == "" {
				t.Fatalf("err = %v, want *Error with code %s", err, tt.wantCode)
			}
		})
	}
}

func TestCallServiceReturnResponse(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList("todo.shopping_list", "Shopping List", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{Summary: "milk"}, fakeha.TodoItem{Summary: "eggs", Status: "completed"})
	c := dialTest(t, testOptions(f, nil))
	raw, err := c.CallService(testCtx(t), "todo", "get_items", &Target{EntityID: []string{"todo.shopping_list"}},
		map[string]any{"status": []string{"needs_action"}}, true)
	if err != nil {
		t.Fatal(err)
	}
	var resp map[string]struct {
		Items []struct{ Summary string } `json:"items"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}
	if got := resp["todo.shopping_list"].Items; len(got) != 1 || got[0].Summary != "milk" {
		t.Fatalf("response = %s", raw)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	before := runtime.NumGoroutine()
	opts := testOptions(f, nil)
	opts.PingInterval = 10 * time.Millisecond
	c, err := Dial(testCtx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.SubscribeEvents(testCtx(t), "x")
	if err != nil {
		t.Fatal(err)
	}
	f.SetRefuse(true)
	f.DropAll() // Close must also stop a reconnect loop in progress
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping after Close = %v, want ErrClosed", err)
	}
	if _, ok := <-sub.C; ok {
		t.Fatal("subscription open after Close")
	}
	eventually(t, "client goroutines to stop", func() bool { return runtime.NumGoroutine() <= before })
}

// Neither token ever reaches the logs: not while connecting, reconnecting,
// failing auth or calling services, even at debug level.
func TestTokensNeverLogged(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList("todo.shopping_list", "Shopping List", fakeha.ShoppingListFeatures, fakeha.TodoItem{UID: "a", Summary: "milk"})
	logs := &syncbuf.Buffer{}
	for _, supervisor := range []bool{false, true} {
		opts := testOptions(f, logs)
		if supervisor {
			opts.URL, opts.Token = "", ""
			opts.SupervisorToken, opts.SupervisorURL = config.Secret(testSupervisorToken), f.URL()
		}
		c := dialTest(t, opts)
		p := NewTodoProvider(c, TodoOptions{})
		if _, err := p.Items(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		f.DropAll()
		if err := p.MarkNotFound(testCtx(t), "a", "x"); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	f.SetToken("rotated")
	opts := testOptions(f, logs)
	if _, err := Dial(testCtx(t), opts); !errors.Is(err, ErrAuthInvalid) {
		t.Fatalf("err = %v", err)
	}
	out := logs.String()
	if !strings.Contains(out, "connected to Home Assistant") || !strings.Contains(out, "reconnected") {
		t.Fatalf("expected connection logs, got:\n%s", out)
	}
	for _, secret := range []string{testToken, testSupervisorToken} {
		if strings.Contains(out, secret) {
			t.Fatalf("a token appears in the logs:\n%s", out)
		}
	}
}
