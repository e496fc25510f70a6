// Package homeassistant connects gemini-supply to Home Assistant over its
// websocket API: a Client that keeps one authenticated connection alive
// (reconnecting with backoff and restoring subscriptions), a TodoProvider that
// is the shopping list when the list lives in a todo entity, a Notifier for
// persistent notifications, an EventSink that turns a run's status events
// into Home Assistant events, and an EventTrigger that starts runs from the
// gemini_supply_start event.
//
// Connection modes: inside an add-on (SUPERVISOR_TOKEN set) the client talks
// to ws://supervisor/core/websocket with the Supervisor token; otherwise to
// ws(s)://host:8123/api/websocket with a long-lived access token.
//
// Delivery guarantees when the connection drops: a command that was never
// written is sent on the next connection; a command whose result was lost is
// sent again only when it is idempotent (todo.update_item by uid with absolute
// values, todo.get_items, persistent_notification.create with a
// notification_id, persistent_notification.dismiss, reads). Anything else —
// fire_event in particular — is not re-sent: the caller gets
// ErrOutcomeUnknown, because sending it twice could duplicate an automation's
// effect while dropping it at most loses one event.
//
// Home Assistant restarting: after every (re)connect the client reads the
// core state (get_config "state"). While Home Assistant is still starting it
// answers a service call on an entity that is not loaded yet with success
// and does nothing, so every command except ping and get_config waits until
// the core state is RUNNING (announced by the homeassistant_started event,
// re-read every StartupPollInterval). The TodoProvider then also checks each
// write by reading the item back.
package homeassistant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/gemini-supply/gemini-supply/internal/config"
)

// Defaults for Options.
const (
	DefaultPingInterval     = 30 * time.Second
	DefaultPongTimeout      = 10 * time.Second
	DefaultBackoffBase      = 1 * time.Second
	DefaultBackoffMax       = 30 * time.Second
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultEventBuffer      = 64
	DefaultStartupPoll      = 2 * time.Second
	writeTimeout            = 10 * time.Second
)

// Home Assistant's core states (get_config "state") and the event fired
// when it becomes RUNNING.
const (
	CoreRunning               = "RUNNING"
	EventHomeAssistantStarted = "homeassistant_started"
)

// Error codes Home Assistant puts in failed results.
const (
	CodeIDReuse                = "id_reuse"
	CodeInvalidFormat          = "invalid_format"
	CodeNotFound               = "not_found"
	CodeNotSupported           = "not_supported"
	CodeUnknownCommand         = "unknown_command"
	CodeUnauthorized           = "unauthorized"
	CodeTimeout                = "timeout"
	CodeHomeAssistantError     = "home_assistant_error"
	CodeServiceValidationError = "service_validation_error"
	CodeUnknownError           = "unknown_error"
)

var (
	// ErrClosed is returned by calls on a closed Client.
	ErrClosed = errors.New("home assistant client is closed")
	// ErrAuthInvalid is matched (errors.Is) by an *AuthError.
	ErrAuthInvalid = errors.New("auth_invalid")
	// ErrOutcomeUnknown: the connection dropped after a command that is not
	// safe to repeat was sent and before its result arrived.
	ErrOutcomeUnknown = errors.New("connection to Home Assistant lost before the result arrived; the command may or may not have run")
	// errNotSent: the command never left (dead connection); safe to send again.
	errNotSent = errors.New("command not sent")
)

// Error is a failed result from Home Assistant, with its code and message.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// TranslationKey names a service validation error (e.g. "item_not_found") when Home Assistant sends one.
	TranslationKey string `json:"translation_key,omitempty"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("home assistant answered %s: %s", e.Code, e.Message)
}

// AuthError says Home Assistant rejected the token (auth_invalid). The client
// does not retry: a wrong token does not become right by hammering.
type AuthError struct {
	URL     string
	Message string
	// Supervisor is true when the token was the add-on's SUPERVISOR_TOKEN.
	Supervisor bool
}

func (e *AuthError) Error() string {
	what := "the long-lived access token (option home_assistant_token)"
	if e.Supervisor {
		what = "the add-on's SUPERVISOR_TOKEN (does config.yaml declare homeassistant_api: true?)"
	}
	return fmt.Sprintf("home assistant at %s rejected %s: auth_invalid: %s; create a new token in your Home Assistant profile (Security → Long-lived access tokens) and restart", e.URL, what, e.Message)
}

// Is makes errors.Is(err, ErrAuthInvalid) true.
func (e *AuthError) Is(target error) bool { return target == ErrAuthInvalid }

// Options configures Dial.
type Options struct {
	// URL is Home Assistant's address: http(s)://host:8123 (the websocket
	// path /api/websocket is added) or a ws(s):// websocket URL. Used when
	// SupervisorToken is empty.
	URL string
	// Token is a long-lived access token (URL mode).
	Token config.Secret
	// SupervisorToken selects Supervisor mode (inside an add-on).
	SupervisorToken config.Secret
	// SupervisorURL is the Supervisor's address (default http://supervisor);
	// the websocket is its /core/websocket.
	SupervisorURL string
	Logger        *slog.Logger

	// PingInterval is how often an application ping checks the connection
	// (default 30 s); PongTimeout how long the pong may take (default 10 s).
	PingInterval time.Duration
	PongTimeout  time.Duration
	// BackoffBase and BackoffMax bound the reconnect delay: base, doubling,
	// up to max, each jittered to between half and all of it (1 s … 30 s).
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// HandshakeTimeout bounds connecting and authenticating (default 10 s).
	HandshakeTimeout time.Duration
	// EventBuffer is each subscription's channel capacity (default 64).
	EventBuffer int
	// StartupPollInterval is how often the core state is read again while
	// Home Assistant is starting, besides waiting for homeassistant_started
	// (default 2 s).
	StartupPollInterval time.Duration
}

// Client is a connection to Home Assistant that survives drops. Safe for
// concurrent use.
type Client struct {
	opts       Options
	log        *slog.Logger
	wsURL      string
	token      string
	supervisor bool
	dialer     websocket.Dialer

	nextID atomic.Int64
	// managerDone is closed when the reconnect loop has stopped for good.
	managerDone chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	sess   *session
	ready  chan struct{} // closed when sess is set (or on fatal/close)
	fatal  error
	closed bool
	subs   map[*Subscription]struct{}
}

// Dial connects and authenticates once (bounded by ctx and HandshakeTimeout)
// and returns a Client that keeps the connection alive until Close. A wrong
// token fails with an *AuthError; an unreachable Home Assistant with an error
// naming the URL.
func Dial(ctx context.Context, opts Options) (*Client, error) {
	if opts.PingInterval <= 0 {
		opts.PingInterval = DefaultPingInterval
	}
	if opts.PongTimeout <= 0 {
		opts.PongTimeout = DefaultPongTimeout
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = DefaultBackoffBase
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = DefaultBackoffMax
	}
	if opts.BackoffMax < opts.BackoffBase {
		opts.BackoffMax = opts.BackoffBase
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if opts.EventBuffer <= 0 {
		opts.EventBuffer = DefaultEventBuffer
	}
	if opts.StartupPollInterval <= 0 {
		opts.StartupPollInterval = DefaultStartupPoll
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	wsURL, token, supervisor, err := Endpoint(opts)
	if err != nil {
		return nil, err
	}
	c := &Client{
		opts:        opts,
		log:         logger.With("component", "homeassistant"),
		wsURL:       wsURL,
		token:       token,
		supervisor:  supervisor,
		dialer:      websocket.Dialer{HandshakeTimeout: opts.HandshakeTimeout, Proxy: http.ProxyFromEnvironment},
		ready:       make(chan struct{}),
		subs:        map[*Subscription]struct{}{},
		managerDone: make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	sess, err := c.connect(ctx)
	if err != nil {
		c.cancel()
		c.wg.Wait()
		return nil, err
	}
	c.publish(sess)
	c.wg.Add(1)
	go c.manage(sess)
	return c, nil
}

// Endpoint resolves Options to the websocket URL and token to use, and
// whether that is Supervisor mode.
func Endpoint(opts Options) (wsURL, token string, supervisor bool, err error) {
	if opts.SupervisorToken.IsSet() {
		base := opts.SupervisorURL
		if base == "" {
			base = config.DefaultSupervisorURL
		}
		u, err := websocketURL(base, "/core/websocket")
		if err != nil {
			return "", "", false, fmt.Errorf("supervisor URL %q: %w", base, err)
		}
		return u, opts.SupervisorToken.Reveal(), true, nil
	}
	if opts.URL == "" {
		return "", "", false, errors.New("home assistant: no connection configured: set home_assistant_url and home_assistant_token, or run as an add-on (SUPERVISOR_TOKEN)")
	}
	if !opts.Token.IsSet() {
		return "", "", false, fmt.Errorf("home assistant at %s: no access token: set home_assistant_token to a long-lived access token (Home Assistant profile → Security)", opts.URL)
	}
	u, err := websocketURL(opts.URL, "/api/websocket")
	if err != nil {
		return "", "", false, fmt.Errorf("home_assistant_url %q: %w", opts.URL, err)
	}
	return u, opts.Token.Reveal(), false, nil
}

func websocketURL(base, path string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return "", fmt.Errorf("want http(s)://host:port or ws(s)://…, got scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return "", errors.New("no host in URL")
	}
	if !strings.HasSuffix(u.Path, "/websocket") {
		u.Path = strings.TrimRight(u.Path, "/") + path
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String(), nil
}

// URL is the websocket URL the client connects to (it holds no secret).
func (c *Client) URL() string { return c.wsURL }

// Err is the permanent failure that stopped the client (an *AuthError after
// a token was revoked), nil while it is working, ErrClosed after Close.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fatal != nil {
		return c.fatal
	}
	if c.closed {
		return ErrClosed
	}
	return nil
}

// Connected reports whether a connection is up right now.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess != nil
}

// Running reports whether a connection is up and Home Assistant on it is
// fully started (core state RUNNING).
func (c *Client) Running() bool {
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	return sess != nil && sess.isRunning()
}

// WaitRunning waits (bounded by ctx) until a connection is up and Home
// Assistant is fully started.
func (c *Client) WaitRunning(ctx context.Context) error {
	_, err := c.waitRunning(ctx, "")
	return err
}

// Close stops the client: the connection, the reconnect loop, pings; every
// subscription channel is closed and waiting calls return ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sess := c.sess
	c.mu.Unlock()
	c.cancel()
	if sess != nil {
		sess.fail(ErrClosed)
	}
	c.wg.Wait()
	c.closeSubscriptions()
	return nil
}

// ---- connection management ----

// manage watches the live session and reconnects when it dies.
func (c *Client) manage(sess *session) {
	defer c.wg.Done()
	defer close(c.managerDone)
	for {
		select {
		case <-c.ctx.Done():
			sess.fail(ErrClosed)
			sess.wait()
			return
		case <-sess.done:
		}
		sess.wait()
		c.log.Warn("connection to Home Assistant lost; reconnecting", "url", c.wsURL, "error", sess.cause())
		next, ok := c.reconnect()
		if !ok {
			return
		}
		sess = next
	}
}

// reconnect dials with backoff until it succeeds (true), the client is
// closed or the token is rejected (false).
func (c *Client) reconnect() (*session, bool) {
	for attempt := 1; ; attempt++ {
		delay := c.backoff(attempt)
		t := time.NewTimer(delay)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
		}
		sess, err := c.connect(c.ctx)
		if err == nil {
			c.log.Info("reconnected to Home Assistant", "url", c.wsURL, "attempt", attempt)
			c.publish(sess)
			return sess, true
		}
		var authErr *AuthError
		if errors.As(err, &authErr) {
			c.log.Error("home assistant rejected the token; not reconnecting", "url", c.wsURL, "error", err)
			c.setFatal(err)
			return nil, false
		}
		if c.ctx.Err() != nil {
			return nil, false
		}
		c.log.Warn("reconnect to Home Assistant failed; retrying with backoff", "url", c.wsURL, "attempt", attempt, "error", err)
	}
}

// backoff is the delay before reconnect attempt n (1-based): base·2^(n-1)
// capped at max, jittered to [d/2, d].
func (c *Client) backoff(n int) time.Duration {
	d := c.opts.BackoffBase
	for i := 1; i < n && d < c.opts.BackoffMax; i++ {
		d *= 2
	}
	if d > c.opts.BackoffMax {
		d = c.opts.BackoffMax
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(d-half+1)
}

// publish makes sess the live session and wakes waiting calls.
func (c *Client) publish(sess *session) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		sess.fail(ErrClosed)
		return
	}
	c.sess = sess
	close(c.ready)
	c.mu.Unlock()
}

// unpublish is called when sess dies: calls wait for the next session.
func (c *Client) unpublish(sess *session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == sess {
		c.sess = nil
		c.ready = make(chan struct{})
	}
}

func (c *Client) setFatal(err error) {
	c.mu.Lock()
	if c.fatal == nil {
		c.fatal = err
	}
	if c.sess == nil {
		close(c.ready) // wake every waiting call: they will see fatal
		c.ready = make(chan struct{})
	}
	c.mu.Unlock()
	c.closeSubscriptions()
}

// waitSession returns the live session, waiting for a reconnect (bounded by ctx).
func (c *Client) waitSession(ctx context.Context) (*session, error) {
	for {
		c.mu.Lock()
		fatal, closed, sess, ready := c.fatal, c.closed, c.sess, c.ready
		c.mu.Unlock()
		switch {
		case fatal != nil:
			return nil, fatal
		case closed:
			return nil, ErrClosed
		case sess != nil:
			return sess, nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the connection to Home Assistant at %s: %w", c.wsURL, ctx.Err())
		case <-c.ctx.Done():
			return nil, ErrClosed
		}
	}
}

// startupCommands may be sent while Home Assistant is still starting; every
// other command waits for the core state RUNNING.
func startupCommand(msgType string) bool {
	switch msgType {
	case "ping", "get_config", "supported_features", "subscribe_events", "unsubscribe_events":
		return true
	}
	return false
}

// waitRunning returns the live session once Home Assistant on it is
// RUNNING (any live session for startup commands), waiting through
// reconnects, bounded by ctx.
func (c *Client) waitRunning(ctx context.Context, msgType string) (*session, error) {
	for {
		sess, err := c.waitSession(ctx)
		if err != nil {
			return nil, err
		}
		if startupCommand(msgType) {
			return sess, nil
		}
		select {
		case <-sess.running:
			return sess, nil
		case <-sess.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for Home Assistant at %s to finish starting: %w", c.wsURL, ctx.Err())
		case <-c.ctx.Done():
			return nil, ErrClosed
		}
	}
}

// connect dials, authenticates, negotiates coalescing and restores
// subscriptions; it returns a live session not yet published.
func (c *Client) connect(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.HandshakeTimeout)
	defer cancel()
	ws, resp, err := c.dialer.DialContext(ctx, c.wsURL, nil)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("connect to Home Assistant at %s: HTTP %s: %w; is Home Assistant running and the URL right?", c.wsURL, resp.Status, err)
		}
		return nil, fmt.Errorf("connect to Home Assistant at %s: %w; is Home Assistant running and the URL right?", c.wsURL, err)
	}
	haVersion, err := c.authenticate(ctx, ws)
	if err != nil {
		_ = ws.Close()
		return nil, err
	}
	s := newSession(c, ws)
	// Pings from the server are answered by gorilla's default ping handler
	// (it writes the pong with WriteControl, safe next to our writes).
	c.wg.Add(2)
	go func() { defer c.wg.Done(); s.readLoop() }()
	go func() { defer c.wg.Done(); s.pingLoop() }()

	// Ask for coalesced frames; an old Home Assistant answers unknown_command.
	if _, err := s.roundTrip(ctx, "supported_features", map[string]any{"features": map[string]any{"coalesce_messages": 1}}); err != nil {
		var haErr *Error
		if !errors.As(err, &haErr) {
			s.fail(err)
			return nil, fmt.Errorf("connect to Home Assistant at %s: %w", c.wsURL, err)
		}
	}
	for _, sub := range c.liveSubscriptions() {
		if err := s.bind(ctx, sub); err != nil {
			var haErr *Error
			if !errors.As(err, &haErr) {
				s.fail(err)
				return nil, fmt.Errorf("restore subscription to %q on %s: %w", sub.eventType, c.wsURL, err)
			}
			c.log.Error("home assistant refused a subscription", "event_type", sub.eventType, "error", err)
		}
	}
	state, err := s.coreState(ctx)
	if err != nil {
		s.fail(err)
		return nil, fmt.Errorf("connect to Home Assistant at %s: reading its state: %w", c.wsURL, err)
	}
	c.log.Info("connected to Home Assistant", "url", c.wsURL, "supervisor", c.supervisor, "ha_version", haVersion, "state", state)
	if state == CoreRunning {
		s.markRunning()
	} else {
		c.log.Info("Home Assistant is starting; updates wait until it is running", "url", c.wsURL, "state", state)
		c.wg.Add(1)
		go func() { defer c.wg.Done(); s.watchStartup() }()
	}
	return s, nil
}

// coreState reads Home Assistant's core state (get_config "state"). A Home
// Assistant that does not say is taken as RUNNING.
func (s *session) coreState(ctx context.Context) (string, error) {
	raw, err := s.roundTrip(ctx, "get_config", nil)
	if err != nil {
		var haErr *Error
		if errors.As(err, &haErr) {
			return CoreRunning, nil
		}
		return "", err
	}
	var cfg struct {
		State string `json:"state"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.State == "" {
		return CoreRunning, nil
	}
	return cfg.State, nil
}

func (s *session) markRunning() { s.runOnce.Do(func() { close(s.running) }) }

func (s *session) isRunning() bool {
	select {
	case <-s.running:
		return true
	default:
		return false
	}
}

// watchStartup waits until Home Assistant on this session is RUNNING: it
// listens for homeassistant_started and reads the core state again every
// StartupPollInterval, until then or until the session dies.
func (s *session) watchStartup() {
	c := s.c
	started := &Subscription{c: c, eventType: EventHomeAssistantStarted, ch: make(chan Event, 1)}
	if body, err := encodeCommand("subscribe_events", map[string]any{"event_type": EventHomeAssistantStarted}); err == nil {
		_, _, _ = s.send(body, started) // the answer is not needed: polling covers a refusal
	}
	t := time.NewTicker(c.opts.StartupPollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-c.ctx.Done():
			return
		case <-started.ch:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.PongTimeout)
		state, err := s.coreState(ctx)
		cancel()
		if err == nil && state == CoreRunning {
			c.log.Info("Home Assistant is running; sending updates", "url", c.wsURL)
			s.markRunning()
			return
		}
		if err == nil {
			c.log.Debug("Home Assistant is still starting", "state", state)
		}
	}
}

func (c *Client) authenticate(ctx context.Context, ws *websocket.Conn) (string, error) {
	deadline, _ := ctx.Deadline()
	_ = ws.SetReadDeadline(deadline)
	_ = ws.SetWriteDeadline(deadline)
	defer func() {
		_ = ws.SetReadDeadline(time.Time{})
		_ = ws.SetWriteDeadline(time.Time{})
	}()
	var msg struct {
		Type      string `json:"type"`
		HAVersion string `json:"ha_version"`
		Message   string `json:"message"`
	}
	if err := ws.ReadJSON(&msg); err != nil {
		return "", fmt.Errorf("connect to Home Assistant at %s: reading auth_required: %w", c.wsURL, err)
	}
	if msg.Type != "auth_required" {
		return "", fmt.Errorf("connect to Home Assistant at %s: expected auth_required, got %q: is this a Home Assistant websocket?", c.wsURL, msg.Type)
	}
	if err := ws.WriteJSON(map[string]string{"type": "auth", "access_token": c.token}); err != nil {
		return "", fmt.Errorf("connect to Home Assistant at %s: sending auth: %w", c.wsURL, err)
	}
	msg.Type, msg.Message = "", ""
	if err := ws.ReadJSON(&msg); err != nil {
		return "", fmt.Errorf("connect to Home Assistant at %s: waiting for auth_ok: %w", c.wsURL, err)
	}
	switch msg.Type {
	case "auth_ok":
		return msg.HAVersion, nil
	case "auth_invalid":
		return "", &AuthError{URL: c.wsURL, Message: msg.Message, Supervisor: c.supervisor}
	default:
		return "", fmt.Errorf("connect to Home Assistant at %s: expected auth_ok or auth_invalid, got %q", c.wsURL, msg.Type)
	}
}

// ---- commands ----

// Do sends one command of type msgType with fields (id and type are added)
// and returns its result. It waits for a connection when there is none, and
// (except ping and get_config) for Home Assistant on it to be RUNNING, both
// bounded by ctx. When the connection drops after sending, the command is
// sent again on the next connection if idempotent is true; otherwise Do
// returns ErrOutcomeUnknown. A failed result is an *Error.
func (c *Client) Do(ctx context.Context, msgType string, fields map[string]any, idempotent bool) (json.RawMessage, error) {
	body, err := encodeCommand(msgType, fields)
	if err != nil {
		return nil, err
	}
	for {
		sess, err := c.waitRunning(ctx, msgType)
		if err != nil {
			return nil, err
		}
		res, err := sess.exchange(ctx, body, nil)
		switch {
		case errors.Is(err, errNotSent):
			continue
		case errors.Is(err, errLost):
			if idempotent {
				c.log.Debug("connection lost with a command in flight; sending it again", "type", msgType)
				continue
			}
			return nil, fmt.Errorf("%s: %w", msgType, ErrOutcomeUnknown)
		case err != nil:
			var haErr *Error
			if errors.As(err, &haErr) || errors.Is(err, ErrClosed) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", msgType, err)
		}
		return res, nil
	}
}

// Target names the entities, devices or areas a service acts on.
type Target struct {
	EntityID []string `json:"entity_id,omitempty"`
	DeviceID []string `json:"device_id,omitempty"`
	AreaID   []string `json:"area_id,omitempty"`
}

// CallService calls domain.service on target with data. With returnResponse
// the service's response is returned (todo.get_items needs it), else nil.
// The call is repeated after a lost connection only for services known to be
// idempotent (see IdempotentService).
func (c *Client) CallService(ctx context.Context, domain, service string, target *Target, data map[string]any, returnResponse bool) (json.RawMessage, error) {
	fields := map[string]any{"domain": domain, "service": service}
	if target != nil {
		fields["target"] = target
	}
	if data != nil {
		fields["service_data"] = data
	}
	if returnResponse {
		fields["return_response"] = true
	}
	raw, err := c.Do(ctx, "call_service", fields, IdempotentService(domain, service, data))
	if err != nil {
		return nil, fmt.Errorf("call %s.%s: %w", domain, service, err)
	}
	if !returnResponse {
		return nil, nil
	}
	var res struct {
		Response json.RawMessage `json:"response"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("call %s.%s: decoding the result: %w", domain, service, err)
	}
	return res.Response, nil
}

// IdempotentService reports whether calling domain.service with data twice
// has the same effect as once, so it may be repeated after an unknown outcome.
func IdempotentService(domain, service string, data map[string]any) bool {
	switch domain + "." + service {
	case "todo.update_item":
		// By uid (or name) with absolute rename/status/description values.
		return true
	case "todo.get_items", "persistent_notification.dismiss":
		return true
	case "persistent_notification.create":
		// The same notification_id replaces; without one every call adds a notification.
		id, _ := data["notification_id"].(string)
		return id != ""
	}
	if domain == "notify" && strings.HasPrefix(service, "mobile_app_") {
		// A companion app notification with a tag replaces the one with
		// that tag (clear_notification clears it): sending it twice is once.
		inner, _ := data["data"].(map[string]any)
		tag, _ := inner["tag"].(string)
		return tag != ""
	}
	return false
}

// FireEvent fires eventType with data on Home Assistant's event bus. It is
// never repeated after an unknown outcome (see the package doc).
func (c *Client) FireEvent(ctx context.Context, eventType string, data any) error {
	fields := map[string]any{"event_type": eventType}
	if data != nil {
		fields["event_data"] = data
	}
	if _, err := c.Do(ctx, "fire_event", fields, false); err != nil {
		return fmt.Errorf("fire event %s: %w", eventType, err)
	}
	return nil
}

// State is one entity's state as get_states returns it.
type State struct {
	EntityID   string         `json:"entity_id"`
	State      string         `json:"state"`
	Attributes map[string]any `json:"attributes"`
	// LastChanged and LastUpdated are ISO 8601 timestamps as Home Assistant sends them.
	LastChanged string `json:"last_changed"`
	LastUpdated string `json:"last_updated"`
}

// SupportedFeatures is the entity's supported_features bit set (0 when absent).
func (s State) SupportedFeatures() int {
	switch v := s.Attributes["supported_features"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// FriendlyName is the entity's friendly_name attribute, or its id.
func (s State) FriendlyName() string {
	if n, ok := s.Attributes["friendly_name"].(string); ok && n != "" {
		return n
	}
	return s.EntityID
}

// GetStates returns every entity state.
func (c *Client) GetStates(ctx context.Context) ([]State, error) {
	raw, err := c.Do(ctx, "get_states", nil, true)
	if err != nil {
		return nil, fmt.Errorf("get_states: %w", err)
	}
	var states []State
	if err := json.Unmarshal(raw, &states); err != nil {
		return nil, fmt.Errorf("get_states: decoding the result: %w", err)
	}
	return states, nil
}

// Language is Home Assistant's language (Settings → System → General; the
// "language" of get_config, "fr" or "en-GB"); "" when it does not say.
func (c *Client) Language(ctx context.Context) (string, error) {
	raw, err := c.Do(ctx, "get_config", nil, true)
	if err != nil {
		return "", fmt.Errorf("get_config: %w", err)
	}
	var cfg struct {
		Language string `json:"language"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return "", fmt.Errorf("get_config: decoding the result: %w", err)
	}
	return cfg.Language, nil
}

// Ping sends an application-level ping and waits for the pong.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.Do(ctx, "ping", nil, true)
	return err
}

func encodeCommand(msgType string, fields map[string]any) ([]byte, error) {
	m := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		m[k] = v
	}
	m["type"] = msgType
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s command: %w", msgType, err)
	}
	return b, nil
}

// ---- session: one websocket connection ----

var errLost = errors.New("connection lost before the result arrived")

type reply struct {
	result json.RawMessage
	err    error
}

type session struct {
	c  *Client
	ws *websocket.Conn

	writeMu sync.Mutex

	mu      sync.Mutex
	dead    bool
	err     error
	pending map[int64]chan reply
	routes  map[int64]*Subscription

	done     chan struct{}
	stopped  sync.WaitGroup // reader and pinger
	failOnce sync.Once
	// running is closed once Home Assistant on this connection is RUNNING.
	running chan struct{}
	runOnce sync.Once
}

func newSession(c *Client, ws *websocket.Conn) *session {
	s := &session{c: c, ws: ws, pending: map[int64]chan reply{}, routes: map[int64]*Subscription{}, done: make(chan struct{}), running: make(chan struct{})}
	s.stopped.Add(2)
	return s
}

// wait blocks until the session's reader and pinger have stopped.
func (s *session) wait() { s.stopped.Wait() }

func (s *session) cause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// fail kills the session once: callers waiting on it learn the connection is lost.
func (s *session) fail(err error) {
	s.failOnce.Do(func() {
		s.c.unpublish(s)
		s.mu.Lock()
		s.dead = true
		s.err = err
		pending := s.pending
		s.pending = map[int64]chan reply{}
		routes := s.routes
		s.routes = map[int64]*Subscription{}
		s.mu.Unlock()
		close(s.done)
		_ = s.ws.Close()
		for _, ch := range pending {
			ch <- reply{err: errLost}
		}
		for _, sub := range routes {
			sub.unbind(s)
		}
	})
}

// send writes one command under a fresh id. The id is taken and the frame
// written under one lock, so ids strictly increase on the wire. route, when
// set, receives the events carrying this id.
func (s *session) send(body []byte, route *Subscription) (int64, chan reply, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	id := s.c.nextID.Add(1)
	ch := make(chan reply, 1)
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return 0, nil, errNotSent
	}
	s.pending[id] = ch
	if route != nil {
		s.routes[id] = route
	}
	s.mu.Unlock()
	frame := make([]byte, 0, len(body)+24)
	frame = fmt.Appendf(frame, `{"id":%d,`, id)
	frame = append(frame, body[1:]...)
	_ = s.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := s.ws.WriteMessage(websocket.TextMessage, frame); err != nil {
		// A frame that failed to write never reached Home Assistant whole.
		s.forget(id)
		s.fail(fmt.Errorf("write: %w", err))
		return 0, nil, errNotSent
	}
	return id, ch, nil
}

func (s *session) forget(id int64) {
	s.mu.Lock()
	delete(s.pending, id)
	delete(s.routes, id)
	s.mu.Unlock()
}

// exchange sends body and waits for its result.
func (s *session) exchange(ctx context.Context, body []byte, route *Subscription) (json.RawMessage, error) {
	id, ch, err := s.send(body, route)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		s.forget(id)
		return nil, ctx.Err()
	case <-s.c.ctx.Done():
		return nil, ErrClosed
	}
}

// roundTrip is exchange for a command built from fields (used while connecting).
func (s *session) roundTrip(ctx context.Context, msgType string, fields map[string]any) (json.RawMessage, error) {
	body, err := encodeCommand(msgType, fields)
	if err != nil {
		return nil, err
	}
	return s.exchange(ctx, body, nil)
}

type envelope struct {
	ID      int64           `json:"id"`
	Type    string          `json:"type"`
	Success bool            `json:"success"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
	Event   json.RawMessage `json:"event"`
}

func (s *session) readLoop() {
	defer s.stopped.Done()
	for {
		_, data, err := s.ws.ReadMessage()
		if err != nil {
			s.fail(fmt.Errorf("read: %w", err))
			return
		}
		s.handleFrame(data)
	}
}

// handleFrame dispatches one frame: a message, or a JSON array of them
// (coalesced).
func (s *session) handleFrame(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var msgs []json.RawMessage
		if err := json.Unmarshal(data, &msgs); err != nil {
			s.c.log.Warn("undecodable frame from Home Assistant", "error", err)
			return
		}
		for _, m := range msgs {
			s.dispatch(m)
		}
		return
	}
	s.dispatch(data)
}

func (s *session) dispatch(data []byte) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		s.c.log.Warn("undecodable message from Home Assistant", "error", err)
		return
	}
	switch env.Type {
	case "result", "pong":
		s.mu.Lock()
		ch, ok := s.pending[env.ID]
		delete(s.pending, env.ID)
		if env.Type == "result" && !env.Success {
			delete(s.routes, env.ID)
		}
		s.mu.Unlock()
		if !ok {
			return
		}
		switch {
		case env.Type == "pong":
			ch <- reply{}
		case env.Success:
			ch <- reply{result: env.Result}
		case env.Error != nil:
			ch <- reply{err: env.Error}
		default:
			ch <- reply{err: &Error{Code: CodeUnknownError, Message: "failed result without an error"}}
		}
	case "event":
		s.mu.Lock()
		sub := s.routes[env.ID]
		s.mu.Unlock()
		if sub == nil {
			return
		}
		var ev Event
		if err := json.Unmarshal(env.Event, &ev); err != nil {
			s.c.log.Warn("undecodable event from Home Assistant", "error", err)
			return
		}
		sub.deliver(ev)
	default:
		s.c.log.Debug("ignored message from Home Assistant", "type", env.Type)
	}
}

// pingLoop checks the connection with an application ping every
// PingInterval; a missing pong kills the session (and reconnects).
func (s *session) pingLoop() {
	defer s.stopped.Done()
	t := time.NewTicker(s.c.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.c.opts.PongTimeout)
		_, err := s.roundTrip(ctx, "ping", nil)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			s.fail(fmt.Errorf("no pong within %s: %w", s.c.opts.PongTimeout, err))
			return
		}
	}
}

// ---- subscriptions ----

// Event is one Home Assistant event.
type Event struct {
	EventType string          `json:"event_type"`
	Data      json.RawMessage `json:"data"`
	Origin    string          `json:"origin"`
	// TimeFired is zero when Home Assistant's timestamp could not be read.
	TimeFired time.Time `json:"-"`
	// UserID is the Home Assistant user the event's context names (the
	// phone's owner for the companion app's events); "" when none.
	UserID string `json:"-"`
}

// UnmarshalJSON reads an event, tolerating a time_fired it cannot parse (an
// event is never lost over its timestamp).
func (e *Event) UnmarshalJSON(b []byte) error {
	var raw struct {
		EventType string          `json:"event_type"`
		Data      json.RawMessage `json:"data"`
		Origin    string          `json:"origin"`
		TimeFired string          `json:"time_fired"`
		Context   struct {
			UserID *string `json:"user_id"`
		} `json:"context"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	e.EventType, e.Data, e.Origin = raw.EventType, raw.Data, raw.Origin
	if raw.Context.UserID != nil {
		e.UserID = *raw.Context.UserID
	}
	e.TimeFired, _ = time.Parse(time.RFC3339Nano, raw.TimeFired)
	return nil
}

// Subscription delivers the events of one type on C until Close (or until
// the client closes or fails). It is restored on every reconnect; events
// fired while disconnected are not seen. A consumer that falls more than
// EventBuffer events behind loses the newest ones (counted in Dropped).
type Subscription struct {
	C <-chan Event

	c         *Client
	eventType string
	ch        chan Event

	bindMu sync.Mutex // serialises binding to a session
	mu     sync.Mutex
	closed bool
	sess   *session
	id     int64
	drops  int
}

// SubscribeEvents subscribes to eventType ("" for every event) and returns
// once Home Assistant confirmed it.
func (c *Client) SubscribeEvents(ctx context.Context, eventType string) (*Subscription, error) {
	ch := make(chan Event, c.opts.EventBuffer)
	sub := &Subscription{C: ch, c: c, eventType: eventType, ch: ch}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.fatal != nil {
		err := c.fatal
		c.mu.Unlock()
		return nil, err
	}
	c.subs[sub] = struct{}{}
	c.mu.Unlock()
	for {
		sess, err := c.waitSession(ctx)
		if err == nil {
			err = sess.bind(ctx, sub)
			if errors.Is(err, errNotSent) || errors.Is(err, errLost) {
				continue // the reconnect restores it, or we retry on the next session
			}
		}
		if err != nil {
			sub.Close()
			return nil, fmt.Errorf("subscribe to %q events: %w", eventType, err)
		}
		return sub, nil
	}
}

// bind subscribes sub on this session unless it already is.
func (s *session) bind(ctx context.Context, sub *Subscription) error {
	sub.bindMu.Lock()
	defer sub.bindMu.Unlock()
	sub.mu.Lock()
	if sub.closed || sub.sess == s {
		sub.mu.Unlock()
		return nil
	}
	sub.mu.Unlock()
	fields := map[string]any{}
	if sub.eventType != "" {
		fields["event_type"] = sub.eventType
	}
	body, err := encodeCommand("subscribe_events", fields)
	if err != nil {
		return err
	}
	id, ch, err := s.send(body, sub)
	if err != nil {
		return err
	}
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		s.forget(id)
		return ctx.Err()
	case <-s.c.ctx.Done():
		return ErrClosed
	}
	if r.err != nil {
		return r.err
	}
	sub.mu.Lock()
	sub.sess, sub.id = s, id
	sub.mu.Unlock()
	return nil
}

func (sub *Subscription) unbind(s *session) {
	sub.mu.Lock()
	if sub.sess == s {
		sub.sess, sub.id = nil, 0
	}
	sub.mu.Unlock()
}

func (sub *Subscription) deliver(ev Event) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return
	}
	select {
	case sub.ch <- ev:
	default:
		sub.drops++
		sub.c.log.Warn("event subscriber is behind; event dropped", "event_type", ev.EventType, "dropped", sub.drops)
	}
}

// Dropped is how many events were lost because the consumer fell behind.
func (sub *Subscription) Dropped() int {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.drops
}

// Close ends the subscription (unsubscribing in Home Assistant without
// waiting for the answer) and closes C. Safe to call more than once.
func (sub *Subscription) Close() {
	sub.mu.Lock()
	if sub.closed {
		sub.mu.Unlock()
		return
	}
	sub.closed = true
	close(sub.ch)
	sess, id := sub.sess, sub.id
	sub.sess, sub.id = nil, 0
	sub.mu.Unlock()

	c := sub.c
	c.mu.Lock()
	delete(c.subs, sub)
	c.mu.Unlock()
	if sess != nil {
		sess.mu.Lock()
		delete(sess.routes, id)
		sess.mu.Unlock()
		// Nobody waits for the answer: the reader drops it into the
		// buffered reply channel and forgets the id.
		if body, err := encodeCommand("unsubscribe_events", map[string]any{"subscription": id}); err == nil {
			_, _, _ = sess.send(body, nil)
		}
	}
}

func (c *Client) liveSubscriptions() []*Subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Subscription, 0, len(c.subs))
	for s := range c.subs {
		out = append(out, s)
	}
	return out
}

func (c *Client) closeSubscriptions() {
	for _, s := range c.liveSubscriptions() {
		s.Close()
	}
}

// userNameTimeout bounds the look-up of a user's name.
const userNameTimeout = 10 * time.Second

// UserName is the name of Home Assistant user userID as the household knows
// it: the friendly name of the person entity linked to the user (person.*,
// attribute user_id), which every Home Assistant user with a login has;
// the user id itself when no person names it or the states cannot be read;
// "" for "". For journals and History ("answered by Alice").
func (c *Client) UserName(ctx context.Context, userID string) string {
	if userID == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, userNameTimeout)
	defer cancel()
	states, err := c.GetStates(ctx)
	if err != nil {
		c.log.Debug("could not read the person entities for a user's name", "user_id", userID, "error", err)
		return userID
	}
	for _, st := range states {
		if !strings.HasPrefix(st.EntityID, "person.") {
			continue
		}
		if id, _ := st.Attributes["user_id"].(string); id == userID {
			return st.FriendlyName()
		}
	}
	return userID
}
