package mqtt

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// DefaultNodeID is the node id in discovery topics, the root of the state
// topics and the prefix of every unique id.
const DefaultNodeID = "gemini_supply"

// Starter asks for a shopping run. The single-run gate implements it: Start
// returns once the run has been accepted (the run then goes on by itself and
// must not depend on ctx, which only bounds the request) or refused —
// runstatus.ErrBusy while another run is in progress.
type Starter interface {
	Start(ctx context.Context, req runstatus.Request) error
}

// Stopper stops the run in progress (serve's Server): Stop returns at once,
// nil when a run was told to stop, runstatus.ErrNoRun when none was going.
type Stopper interface {
	Stop(ctx context.Context, source string) error
}

// Options configure a Client. Broker is required; everything else has a default.
type Options struct {
	Broker Broker
	// DiscoveryPrefix is Home Assistant's discovery prefix (default "homeassistant").
	DiscoveryPrefix string
	// NodeID names this installation in topics and unique ids (default
	// "gemini_supply"; letters, digits, '_' and '-').
	NodeID string
	// ClientID is the MQTT client id (default NodeID plus a random suffix).
	ClientID string
	// SWVersion is shown on the Home Assistant device.
	SWVersion string
	// Starter receives button presses. Nil: presses are answered with an "error" event.
	Starter Starter
	// Stopper receives presses of the stop button. Nil: they are answered
	// with an "error" event.
	Stopper Stopper
	// Logger receives the client's logs, tagged component=mqtt (default slog.Default()).
	Logger *slog.Logger
	// Messages is the household's language: the Last run sensor's title and
	// summary attributes (the zero value speaks English).
	Messages messages.Catalog

	// KeepAlive is the MQTT keep-alive (default 30 s).
	KeepAlive time.Duration
	// ConnectTimeout bounds one connection attempt (default 10 s).
	ConnectTimeout time.Duration
	// MaxReconnectInterval caps the wait between reconnection attempts after
	// the connection is lost (default 30 s).
	MaxReconnectInterval time.Duration
	// RetryInterval caps the wait between attempts while Connect waits for a
	// broker that is not reachable yet (default 30 s; attempts start 1 s apart).
	RetryInterval time.Duration
	// StartTimeout bounds one Starter.Start call (default 30 s).
	StartTimeout time.Duration
	// DialContext opens the TCP connection (default net.Dialer). TLS, for
	// ssl:// brokers, is layered on top of it.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
}

var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func (o Options) withDefaults() (Options, error) {
	if o.Broker.URL == "" {
		return o, fmt.Errorf("mqtt: no broker given: %w", ErrNoBroker)
	}
	u, err := url.Parse(o.Broker.URL)
	if err != nil || (u.Scheme != "tcp" && u.Scheme != "ssl") || u.Host == "" || u.User != nil {
		return o, fmt.Errorf("mqtt: broker URL %q must be tcp://host:port or ssl://host:port without credentials (use ParseBroker)", redactURL(o.Broker.URL))
	}
	if o.DiscoveryPrefix == "" {
		o.DiscoveryPrefix = config.DefaultDiscoveryPrefix
	}
	if o.NodeID == "" {
		o.NodeID = DefaultNodeID
	}
	if !nodeIDPattern.MatchString(o.NodeID) {
		return o, fmt.Errorf("mqtt: node id %q may hold only letters, digits, '_' and '-'", o.NodeID)
	}
	if o.ClientID == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.ClientID = o.NodeID + "-" + hex.EncodeToString(b[:])
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Logger = o.Logger.With("component", "mqtt")
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.KeepAlive, 30*time.Second)
	def(&o.ConnectTimeout, 10*time.Second)
	def(&o.MaxReconnectInterval, 30*time.Second)
	def(&o.RetryInterval, 30*time.Second)
	def(&o.StartTimeout, 30*time.Second)
	if o.DialContext == nil {
		o.DialContext = (&net.Dialer{}).DialContext
	}
	return o, nil
}

// Client is a live connection to the broker that keeps the Home Assistant
// entities discovered, available and up to date, and turns button presses
// into run requests. Create it with Connect; stop it with Close or Cleanup.
type Client struct {
	opts     Options
	log      *slog.Logger
	topics   Topics
	entities []Entity

	// ctx lives until Close; it bounds handlers and connection attempts.
	ctx    context.Context
	cancel context.CancelFunc

	// pubMu serialises everything published from the model so a snapshot
	// published on (re)connect can never overtake a newer change.
	pubMu   sync.Mutex
	pc      paho.Client // nil until the first connection
	model   *model
	sent    map[string]string // retained state topic → payload last published on this connection
	closed  bool
	ready   chan struct{} // closed once the first connection has published everything
	readyMu sync.Once

	// handler bookkeeping: paho runs callbacks on its own goroutines.
	hmu      sync.Mutex
	stopping bool
	handlers sync.WaitGroup
}

// Topics returns the topics the client uses.
func (c *Client) Topics() Topics { return c.topics }

// Connect connects to the broker and returns once it is connected and has
// published availability ("online"), every discovery config and the current
// state. While the broker is unreachable it keeps trying (1 s, 2 s, … up to
// RetryInterval apart) until ctx ends; refused credentials and certificate
// errors fail at once. After that the client reconnects by itself, and on
// every (re)connection re-subscribes and re-publishes discovery and state.
func Connect(ctx context.Context, opts Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t := newTopics(o.DiscoveryPrefix, o.NodeID)
	c := &Client{
		opts:     o,
		log:      o.Logger,
		topics:   t,
		entities: entities(o.DiscoveryPrefix, o.NodeID, o.SWVersion, t),
		model:    newModelIn(t, o.Messages),
		sent:     map[string]string{},
		ready:    make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())

	pc, err := dial(ctx, c.ctx, o, c.log, c.pahoOptions)
	if err != nil {
		c.shutdown()
		return nil, err
	}
	c.pubMu.Lock()
	if c.pc == nil {
		c.pc = pc
	}
	c.pubMu.Unlock()

	select {
	case <-c.ready:
		return c, nil
	case <-ctx.Done():
		_ = c.Close(context.Background())
		return nil, fmt.Errorf("mqtt: connected to %s but could not publish discovery before giving up: %w", o.Broker.URL, ctx.Err())
	}
}

// shutdown stops handlers; used when Connect gives up.
func (c *Client) shutdown() {
	c.pubMu.Lock()
	c.closed = true
	c.pubMu.Unlock()
	c.stopHandlers(context.Background())
}

func (c *Client) pahoOptions() *paho.ClientOptions {
	po := baseOptions(c.opts)
	po.SetWill(c.topics.Availability, PayloadOffline, 1, true)
	po.SetOnConnectHandler(c.onConnect)
	po.SetConnectionLostHandler(func(_ paho.Client, err error) {
		c.log.Warn("lost the MQTT connection; reconnecting", "broker", c.opts.Broker, "err", err)
	})
	po.SetReconnectingHandler(func(paho.Client, *paho.ClientOptions) {
		c.log.Debug("reconnecting to the MQTT broker", "broker", c.opts.Broker)
	})
	return po
}

// baseOptions are the paho options shared by Connect and Cleanup.
func baseOptions(o Options) *paho.ClientOptions {
	po := paho.NewClientOptions()
	po.AddBroker(o.Broker.URL)
	po.SetClientID(o.ClientID)
	po.SetUsername(o.Broker.Username)
	po.SetPassword(o.Broker.Password.Reveal())
	po.SetCleanSession(true)
	po.SetOrderMatters(false) // handlers run on their own goroutines and may publish
	po.SetKeepAlive(o.KeepAlive)
	po.SetPingTimeout(10 * time.Second)
	po.SetConnectTimeout(o.ConnectTimeout)
	po.SetWriteTimeout(10 * time.Second)
	po.SetAutoReconnect(true)
	po.SetMaxReconnectInterval(o.MaxReconnectInterval)
	po.SetConnectRetry(false) // Connect retries itself, stopping on refused credentials
	if v := o.Broker.ProtocolVersion; v == 3 || v == 4 {
		po.SetProtocolVersion(v)
	}
	po.SetCustomOpenConnectionFn(func(uri *url.URL, _ paho.ClientOptions) (net.Conn, error) {
		return openConn(uri, o)
	})
	return po
}

// openConn dials the broker, adding TLS for ssl:// brokers.
func openConn(uri *url.URL, o Options) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.ConnectTimeout)
	defer cancel()
	conn, err := o.DialContext(ctx, "tcp", uri.Host)
	if err != nil {
		return nil, err
	}
	if uri.Scheme != "ssl" {
		return conn, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.Broker.TLS != nil {
		cfg = o.Broker.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = uri.Hostname()
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("TLS handshake with %s: %w", uri.Host, err)
	}
	return tc, nil
}

// dial connects a paho client built by mk, retrying until ctx ends or the
// broker refuses us for good. life stops the retry loop as well.
func dial(ctx, life context.Context, o Options, log *slog.Logger, mk func() *paho.ClientOptions) (paho.Client, error) {
	backoff := time.Second
	for attempt := 1; ; attempt++ {
		pc := paho.NewClient(mk())
		tok := pc.Connect()
		select {
		case <-tok.Done():
		case <-ctx.Done():
			pc.Disconnect(0)
			return nil, fmt.Errorf("mqtt: could not connect to %s before giving up: %w", o.Broker.URL, ctx.Err())
		}
		err := tok.Error()
		if err == nil {
			return pc, nil
		}
		if permanent(err) {
			return nil, fmt.Errorf("mqtt: connecting to %s: %s: %w", o.Broker.URL, advice(err), err)
		}
		log.Warn("MQTT broker not reachable; will retry", "broker", o.Broker, "attempt", attempt, "retry_in", backoff, "err", err)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("mqtt: could not connect to %s before giving up (last error: %v): %w", o.Broker.URL, err, ctx.Err())
		case <-life.Done():
			t.Stop()
			return nil, fmt.Errorf("mqtt: client closed while connecting to %s: %w", o.Broker.URL, context.Canceled)
		}
		backoff = min(backoff*2, o.RetryInterval)
	}
}

// permanent reports whether retrying a connection cannot help.
func permanent(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var certInvalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	return errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword) ||
		errors.Is(err, packets.ErrorRefusedNotAuthorised) ||
		errors.Is(err, packets.ErrorRefusedBadProtocolVersion) ||
		errors.Is(err, packets.ErrorRefusedIDRejected) ||
		errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &certInvalid) ||
		errors.As(err, &verify)
}

func advice(err error) string {
	switch {
	case errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword), errors.Is(err, packets.ErrorRefusedNotAuthorised):
		return "the broker refused the credentials (check mqtt_username and mqtt_password, or the Mosquitto add-on's logins)"
	case errors.Is(err, packets.ErrorRefusedBadProtocolVersion):
		return "the broker does not speak MQTT 3.1/3.1.1"
	case errors.Is(err, packets.ErrorRefusedIDRejected):
		return "the broker rejected the client id"
	default:
		return "the broker's TLS certificate is not trusted for this host name (use a certificate valid for it, or a tcp:// broker)"
	}
}

// track registers a running handler; false once the client is stopping.
func (c *Client) track() bool {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if c.stopping {
		return false
	}
	c.handlers.Add(1)
	return true
}

func (c *Client) stopHandlers(ctx context.Context) error {
	c.hmu.Lock()
	c.stopping = true
	c.hmu.Unlock()
	c.cancel()
	done := make(chan struct{})
	go func() { c.handlers.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mqtt: handlers still running at close: %w", ctx.Err())
	}
}

const opTimeout = 10 * time.Second

// liveQoS is the QoS of everything the connected client publishes. QoS 0
// keeps messages out of paho's outbound store: paho re-sends stored QoS 1
// messages on reconnect while OnConnect is already publishing, and races on
// them. Nothing is lost by it: every (re)connection publishes the complete
// state again, and the broker keeps the retained copies.
const liveQoS = 0

// onConnect runs (on its own goroutine) after every connection and reconnection.
func (c *Client) onConnect(pc paho.Client) {
	if !c.track() {
		return
	}
	defer c.handlers.Done()
	c.log.Info("connected to the MQTT broker", "broker", c.opts.Broker, "client_id", c.opts.ClientID)

	subs := map[string]byte{
		c.topics.StartCommand: 1,
		c.topics.RetryCommand: 1,
		c.topics.StopCommand:  1,
		c.topics.HAStatus:     1,
		c.topics.Availability: 1,
	}
	tok := pc.SubscribeMultiple(subs, c.onMessage)
	if err := waitToken(c.ctx, tok, opTimeout); err != nil {
		c.log.Error("subscribing to the command topics failed; buttons will not work until the next reconnect", "err", err)
	} else if st, ok := tok.(*paho.SubscribeToken); ok {
		for topic, code := range st.Result() {
			if code == 0x80 {
				c.log.Error("the broker refused a subscription (check its ACL)", "topic", topic)
			}
		}
	}
	c.publishAll(pc, "connected")
	c.readyMu.Do(func() { close(c.ready) })
}

// publishAll publishes availability, every discovery config and the whole state.
func (c *Client) publishAll(pc paho.Client, why string) {
	c.pubMu.Lock()
	if c.closed {
		c.pubMu.Unlock()
		return
	}
	c.pc = pc
	var toks []namedToken
	pub := func(topic string, qos byte, payload []byte) {
		toks = append(toks, namedToken{topic, pc.Publish(topic, qos, true, payload)})
	}
	pub(c.topics.Availability, liveQoS, []byte(PayloadOnline))
	for _, e := range c.entities {
		pub(e.Topic, liveQoS, e.Payload())
	}
	c.sent = map[string]string{}
	msgs := c.model.messages()
	for _, topic := range sortedKeys(msgs) {
		pub(topic, liveQoS, []byte(msgs[topic]))
		c.sent[topic] = msgs[topic]
	}
	c.pubMu.Unlock()

	failed := waitAll(c.ctx, toks)
	if len(failed) > 0 {
		c.log.Warn("publishing discovery and state failed; they are published again on the next connection", "why", why, "failed", len(failed), "err", failed[0])
		return
	}
	c.log.Debug("published discovery and state", "why", why, "entities", len(c.entities), "states", len(msgs))
}

// publishChangesLocked publishes the retained states that differ from what
// this connection last published. c.pubMu must be held.
func (c *Client) publishChangesLocked() []namedToken {
	pc := c.pc
	if c.closed || pc == nil || !pc.IsConnectionOpen() {
		return nil // publishAll sends everything on the next connection
	}
	msgs := c.model.messages()
	var toks []namedToken
	for _, topic := range sortedKeys(msgs) {
		if p := msgs[topic]; c.sent[topic] != p {
			toks = append(toks, namedToken{topic, pc.Publish(topic, liveQoS, true, []byte(p))})
			c.sent[topic] = p
		}
	}
	return toks
}

func (c *Client) onMessage(pc paho.Client, msg paho.Message) {
	if !c.track() {
		return
	}
	defer c.handlers.Done()
	payload := string(msg.Payload())
	switch msg.Topic() {
	case c.topics.HAStatus:
		if payload == PayloadOnline {
			c.log.Info("Home Assistant came online; publishing discovery again")
			c.publishAll(pc, "home assistant online")
		}
	case c.topics.Availability:
		// A will from an earlier connection of ours can land after we came
		// back (the broker noticed the dead connection late): say online again.
		if payload == PayloadOffline && pc.IsConnectionOpen() {
			c.pubMu.Lock()
			closed := c.closed
			var tok paho.Token
			if !closed {
				tok = pc.Publish(c.topics.Availability, liveQoS, true, PayloadOnline)
			}
			c.pubMu.Unlock()
			if tok != nil {
				c.log.Debug("availability was set offline while connected; set online again")
				if err := waitToken(c.ctx, tok, opTimeout); err != nil {
					c.log.Warn("restoring availability failed", "err", err)
				}
			}
		}
	case c.topics.StartCommand, c.topics.RetryCommand, c.topics.StopCommand:
		c.press(msg)
	}
}

// press turns a button press into a run request.
func (c *Client) press(msg paho.Message) {
	if msg.Retained() {
		c.log.Warn("ignoring a retained button press (clear it by publishing an empty retained message)", "topic", msg.Topic())
		return
	}
	if p := string(msg.Payload()); p != PayloadPress {
		c.log.Warn("ignoring an unknown command payload", "topic", msg.Topic(), "payload", truncateRunes(p, 64))
		return
	}
	req := runstatus.Request{Source: "mqtt", RetryFailed: msg.Topic() == c.topics.RetryCommand}
	res := requestResult{Source: req.Source, RetryTagged: req.RetryFailed, At: time.Now().UTC()}
	if msg.Topic() == c.topics.StopCommand {
		res = c.pressStop(res)
	} else {
		res = c.pressStart(req, res)
	}
	c.pubMu.Lock()
	c.model.request(res)
	toks := c.publishChangesLocked()
	if pc := c.pc; !c.closed && pc != nil && pc.IsConnectionOpen() {
		ev := mustJSON(struct {
			EventType   string `json:"event_type"`
			Source      string `json:"source"`
			RetryTagged bool   `json:"retry_tagged"`
			Message     string `json:"message,omitempty"`
		}{res.Result, res.Source, res.RetryTagged, res.Message})
		toks = append(toks, namedToken{c.topics.Event, pc.Publish(c.topics.Event, liveQoS, false, []byte(ev))})
	}
	c.pubMu.Unlock()
	if failed := waitAll(c.ctx, toks); len(failed) > 0 {
		c.log.Warn("publishing the request outcome failed", "err", failed[0])
	}
}

// pressStart asks the Starter for a run.
func (c *Client) pressStart(req runstatus.Request, res requestResult) requestResult {
	var err error
	if c.opts.Starter == nil {
		err = errors.New("this instance does not run shopping runs (no runner configured)")
	} else {
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.StartTimeout)
		err = c.opts.Starter.Start(ctx, req)
		cancel()
	}
	switch {
	case err == nil:
		res.Result = EventAccepted
		c.log.Info("run requested from the Home Assistant button", "retry_failed", req.RetryFailed)
	case errors.Is(err, runstatus.ErrBusy):
		res.Result, res.Message = EventBusy, err.Error()
		c.log.Info("run request from the Home Assistant button refused: a run is already in progress", "retry_failed", req.RetryFailed)
	default:
		res.Result, res.Message = EventError, err.Error()
		c.log.Warn("run request from the Home Assistant button failed", "retry_failed", req.RetryFailed, "err", err)
	}
	return res
}

// pressStop asks the Stopper to stop the run in progress.
func (c *Client) pressStop(res requestResult) requestResult {
	var err error
	if c.opts.Stopper == nil {
		err = errors.New("this instance does not run shopping runs (no runner configured)")
	} else {
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.StartTimeout)
		err = c.opts.Stopper.Stop(ctx, res.Source)
		cancel()
	}
	switch {
	case err == nil:
		res.Result = EventStopping
		c.log.Info("run stop requested from the Home Assistant button")
	case errors.Is(err, runstatus.ErrNoRun):
		res.Result, res.Message = EventNoRun, err.Error()
	default:
		res.Result, res.Message = EventError, err.Error()
		c.log.Warn("stop request from the Home Assistant button failed", "err", err)
	}
	return res
}

// Follow subscribes to bus at once — no event published after Follow
// returns is missed — and drives the sensors from a goroutine the Client owns,
// until ctx ends, the bus closes, stop is called or the Client closes. Every
// change is published as soon as it is seen; a burst of events is coalesced
// into one publication per changed topic. stop cancels and waits; it is safe
// to call more than once.
func (c *Client) Follow(ctx context.Context, bus *runstatus.Bus) (stop func()) {
	if !c.track() {
		return func() {}
	}
	sub := bus.Subscribe(256)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer c.handlers.Done()
		defer close(done)
		defer sub.Close()
		c.consume(ctx, sub)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Consume drives the sensors from sub on the caller's goroutine, like
// Follow, until sub's channel closes (the bus closed: every event published
// before is applied and published), ctx ends or the Client closes. It has
// the shape of serve.Subscriber, for a caller that subscribed before the
// broker answered (so a run started meanwhile is shown) or that must know
// when the last events went out. The caller closes sub. It returns nil
// when the bus closed, otherwise why it stopped.
func (c *Client) Consume(ctx context.Context, sub *runstatus.Subscription) error {
	if !c.track() {
		return errors.New("mqtt: Consume on a closed client")
	}
	defer c.handlers.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return c.consume(ctx, sub)
}

// consume is Follow's and Consume's loop, stopped by c.ctx as well as ctx.
func (c *Client) consume(ctx context.Context, sub *runstatus.Subscription) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unlink := context.AfterFunc(c.ctx, cancel)
	defer unlink()
	if c.follow(ctx, sub) {
		return nil
	}
	if c.ctx.Err() != nil {
		return errors.New("mqtt: client closed")
	}
	return ctx.Err()
}

// follow applies sub's events until ctx ends (false) or sub closes (true).
func (c *Client) follow(ctx context.Context, sub *runstatus.Subscription) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case e, ok := <-sub.C:
			if !ok {
				return true
			}
			batch := []runstatus.Event{e}
		drain:
			for len(batch) < 256 {
				select {
				case e, ok := <-sub.C:
					if !ok {
						break drain
					}
					batch = append(batch, e)
				default:
					break drain
				}
			}
			c.apply(batch)
			if n := sub.Dropped(); n > 0 {
				c.log.Debug("the status sensors fell behind the run and skipped events", "dropped", n)
			}
		}
	}
}

// apply folds events into the model and publishes what changed.
func (c *Client) apply(events []runstatus.Event) {
	c.pubMu.Lock()
	for _, e := range events {
		c.model.apply(e)
	}
	toks := c.publishChangesLocked()
	c.pubMu.Unlock()
	if failed := waitAll(c.ctx, toks); len(failed) > 0 {
		c.log.Warn("publishing run status failed; it is published again on the next connection", "err", failed[0])
	}
}

// Close publishes "offline" on the availability topic (retained), stops the
// handlers and disconnects. The sensors keep their last retained states.
// ctx bounds the wait. Close is safe to call more than once.
func (c *Client) Close(ctx context.Context) error {
	c.pubMu.Lock()
	if c.closed {
		c.pubMu.Unlock()
		return nil
	}
	c.closed = true
	pc := c.pc
	var tok paho.Token
	if pc != nil && pc.IsConnectionOpen() {
		tok = pc.Publish(c.topics.Availability, 1, true, PayloadOffline)
	}
	c.pubMu.Unlock()

	var errs []error
	if tok != nil {
		if err := waitToken(ctx, tok, opTimeout); err != nil {
			errs = append(errs, fmt.Errorf("mqtt: publishing offline: %w", err))
		}
	}
	if err := c.stopHandlers(ctx); err != nil {
		errs = append(errs, err)
	}
	if pc != nil {
		pc.Disconnect(250)
	}
	c.log.Info("disconnected from the MQTT broker")
	return errors.Join(errs...)
}

// Cleanup deletes every entity from Home Assistant — empty retained payloads
// on every discovery topic, state topic and the availability topic — then
// disconnects without a will. The client is closed afterwards.
func (c *Client) Cleanup(ctx context.Context) error {
	c.pubMu.Lock()
	if c.closed {
		c.pubMu.Unlock()
		return errors.New("mqtt: Cleanup on a closed client (use the package-level Cleanup)")
	}
	c.closed = true
	pc := c.pc
	var toks []namedToken
	if pc != nil && pc.IsConnectionOpen() {
		toks = publishEmpty(pc, c.entities, c.topics)
	}
	c.pubMu.Unlock()

	var errs []error
	if pc == nil || len(toks) == 0 {
		errs = append(errs, errors.New("mqtt: not connected; nothing was deleted"))
	}
	if failed := waitAll(ctx, toks); len(failed) > 0 {
		errs = append(errs, fmt.Errorf("mqtt: deleting %d retained topics failed: %w", len(failed), failed[0]))
	}
	if err := c.stopHandlers(ctx); err != nil {
		errs = append(errs, err)
	}
	if pc != nil {
		pc.Disconnect(250)
	}
	if len(errs) == 0 {
		c.log.Info("removed the Home Assistant entities from MQTT", "entities", len(c.entities))
	}
	return errors.Join(errs...)
}

// Cleanup connects without a will, deletes every entity the integration
// creates (see (*Client).Cleanup) and disconnects. It is what --mqtt-cleanup
// and the mqtt_cleanup option run. Only Broker, DiscoveryPrefix, NodeID,
// ClientID, Logger and the timeouts of opts are used.
func Cleanup(ctx context.Context, opts Options) error {
	o, err := opts.withDefaults()
	if err != nil {
		return err
	}
	t := newTopics(o.DiscoveryPrefix, o.NodeID)
	ents := entities(o.DiscoveryPrefix, o.NodeID, o.SWVersion, t)
	pc, err := dial(ctx, ctx, o, o.Logger, func() *paho.ClientOptions { return baseOptions(o) })
	if err != nil {
		return err
	}
	defer pc.Disconnect(250)
	if failed := waitAll(ctx, publishEmpty(pc, ents, t)); len(failed) > 0 {
		return fmt.Errorf("mqtt: deleting %d retained topics failed: %w", len(failed), failed[0])
	}
	o.Logger.Info("removed the Home Assistant entities from MQTT", "broker", o.Broker, "entities", len(ents))
	return nil
}

func publishEmpty(pc paho.Client, ents []Entity, t Topics) []namedToken {
	var toks []namedToken
	del := func(topic string) { toks = append(toks, namedToken{topic, pc.Publish(topic, 1, true, []byte{})}) }
	for _, e := range ents {
		del(e.Topic)
	}
	for _, topic := range t.stateTopics() {
		del(topic)
	}
	del(t.Availability)
	return toks
}

type namedToken struct {
	topic string
	tok   paho.Token
}

// waitAll waits for every token (each bounded by opTimeout and ctx) and
// returns the failures.
func waitAll(ctx context.Context, toks []namedToken) []error {
	var failed []error
	for _, t := range toks {
		if err := waitToken(ctx, t.tok, opTimeout); err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", t.topic, err))
		}
	}
	return failed
}

func waitToken(ctx context.Context, tok paho.Token, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("no answer from the broker within %s", d)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// redactURL drops user information from a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}
