package mqtt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

const waitLimit = 90 * time.Second // bounds a hang only

// ---------------------------------------------------------------- observer

type obsMsg struct {
	topic    string
	payload  string
	retained bool
}

// observer is a second, raw paho client that records what the broker delivers.
type observer struct {
	t       testing.TB
	pc      paho.Client
	filters []string

	mu      sync.Mutex
	last    map[string]obsMsg
	hist    []obsMsg
	changed chan struct{}
}

// newObserver connects (retrying until the broker is up) and subscribes to
// filters; it re-subscribes after reconnecting.
func newObserver(t testing.TB, brokerURL string, opts func(*paho.ClientOptions), filters ...string) *observer {
	t.Helper()
	o := &observer{t: t, filters: filters, last: map[string]obsMsg{}, changed: make(chan struct{})}
	po := paho.NewClientOptions().AddBroker(brokerURL).SetClientID(fmt.Sprintf("observer-%d", time.Now().UnixNano())).
		SetOrderMatters(true).SetAutoReconnect(true).SetMaxReconnectInterval(500 * time.Millisecond).
		SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond)
	if opts != nil {
		opts(po)
	}
	subscribed := make(chan struct{}, 8)
	po.SetOnConnectHandler(func(c paho.Client) {
		f := map[string]byte{}
		for _, x := range filters {
			f[x] = 1
		}
		tok := c.SubscribeMultiple(f, o.record)
		if tok.WaitTimeout(waitLimit) && tok.Error() == nil {
			subscribed <- struct{}{}
		}
	})
	o.pc = paho.NewClient(po)
	o.pc.Connect()
	select {
	case <-subscribed:
	case <-time.After(waitLimit):
		t.Fatalf("observer could not subscribe on %s", brokerURL)
	}
	t.Cleanup(func() { o.pc.Disconnect(0) })
	return o
}

func (o *observer) record(_ paho.Client, m paho.Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	msg := obsMsg{m.Topic(), string(m.Payload()), m.Retained()}
	o.last[msg.topic] = msg
	o.hist = append(o.hist, msg)
	close(o.changed)
	o.changed = make(chan struct{})
}

// waitFor polls cond (under the observer's lock) until it holds or the deadline passes.
func (o *observer) waitFor(what string, cond func(last map[string]obsMsg, hist []obsMsg) bool) {
	o.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		ok := cond(o.last, o.hist)
		ch := o.changed
		o.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			o.t.Fatalf("timed out after %s waiting for %s; last messages:\n%s", waitLimit, what, o.dump())
		}
	}
}

// waitPayload waits until topic's latest message is want.
func (o *observer) waitPayload(topic, want string) {
	o.t.Helper()
	o.waitFor(fmt.Sprintf("%s = %q", topic, want), func(last map[string]obsMsg, _ []obsMsg) bool {
		m, ok := last[topic]
		return ok && m.payload == want
	})
}

// sync publishes a marker and waits for it: every retained message the broker
// had for the observer's subscriptions has been delivered by then.
func (o *observer) sync(markerTopic string) {
	o.t.Helper()
	marker := fmt.Sprintf("marker-%d", time.Now().UnixNano())
	tok := o.pc.Publish(markerTopic, 1, false, marker)
	if !tok.WaitTimeout(waitLimit) || tok.Error() != nil {
		o.t.Fatalf("publishing marker: %v", tok.Error())
	}
	o.waitPayload(markerTopic, marker)
}

func (o *observer) get(topic string) (obsMsg, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m, ok := o.last[topic]
	return m, ok
}

func (o *observer) count(topic string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, m := range o.hist {
		if m.topic == topic {
			n++
		}
	}
	return n
}

func (o *observer) snapshot() map[string]obsMsg {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]obsMsg, len(o.last))
	for k, v := range o.last {
		out[k] = v
	}
	return out
}

func (o *observer) dump() string {
	var b strings.Builder
	for k, v := range o.snapshot() {
		p := v.payload
		if len(p) > 120 {
			p = p[:120] + "…"
		}
		fmt.Fprintf(&b, "  %s (retained=%v): %s\n", k, v.retained, p)
	}
	return b.String()
}

func (o *observer) publish(topic string, retained bool, payload string) {
	o.t.Helper()
	tok := o.pc.Publish(topic, 1, retained, payload)
	if !tok.WaitTimeout(waitLimit) || tok.Error() != nil {
		o.t.Fatalf("publishing %s: %v", topic, tok.Error())
	}
}

// ---------------------------------------------------------------- fakes

// fakeStarter records requests and answers with err.
type fakeStarter struct {
	mu   sync.Mutex
	err  error
	reqs []runstatus.Request
	got  chan runstatus.Request
}

func newFakeStarter(err error) *fakeStarter {
	return &fakeStarter{err: err, got: make(chan runstatus.Request, 16)}
}

var _ Starter = (*fakeStarter)(nil)

func (f *fakeStarter) Start(ctx context.Context, req runstatus.Request) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	err := f.err
	f.mu.Unlock()
	f.got <- req
	return err
}

func (f *fakeStarter) requests() []runstatus.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]runstatus.Request(nil), f.reqs...)
}

func (f *fakeStarter) next(t testing.TB) runstatus.Request {
	t.Helper()
	select {
	case r := <-f.got:
		return r
	case <-time.After(waitLimit):
		t.Fatal("the starter was not called")
		return runstatus.Request{}
	}
}

// killDialer hands out TCP connections it can later sever abruptly, and can
// refuse new ones.
type killDialer struct {
	mu     sync.Mutex
	conns  []*killableConn
	refuse bool
}

func (d *killDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refuse {
		return nil, errors.New("test dialer: refusing connections")
	}
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	kc := &killableConn{Conn: c}
	d.conns = append(d.conns, kc)
	return kc, nil
}

// kill resets every open connection (RST, no MQTT DISCONNECT), as a crash or
// a network cut would, and refuses new ones while refuse is true.
func (d *killDialer) kill(refuse bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = refuse
	for _, c := range d.conns {
		c.kill()
	}
	d.conns = nil
}

func (d *killDialer) allow() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refuse = false
}

// killableConn reports a killed connection to its reader as a reset by the
// peer — what the client would see on a real network failure — rather than
// as a connection it closed itself.
type killableConn struct {
	net.Conn
	mu     sync.Mutex
	killed bool
}

func (c *killableConn) kill() {
	c.mu.Lock()
	c.killed = true
	c.mu.Unlock()
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // RST rather than a graceful FIN
	}
	_ = c.Conn.Close()
}

func (c *killableConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.mu.Lock()
		killed := c.killed
		c.mu.Unlock()
		if killed {
			return n, syscall.ECONNRESET
		}
	}
	return n, err
}

func (c *killableConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		c.mu.Lock()
		killed := c.killed
		c.mu.Unlock()
		if killed {
			return n, syscall.ECONNRESET
		}
	}
	return n, err
}

// syncBuffer is a goroutine-safe bytes.Buffer (for logs and process output)
// that signals every write.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// next returns a channel closed by the next write.
func (s *syncBuffer) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = make(chan struct{})
	}
	return s.written
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testLogger logs everything, debug included, into the returned buffer.
func testLogger() (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// waitLog waits until buf contains s.
func waitLog(t testing.TB, buf *syncBuffer, s string) {
	t.Helper()
	waitLogCount(t, buf, s, 1)
}

// waitLogCount waits until buf contains s at least n times.
func waitLogCount(t testing.TB, buf *syncBuffer, s string, n int) {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		next := buf.next()
		if strings.Count(buf.String(), s) >= n {
			return
		}
		select {
		case <-next:
		case <-deadline.C:
			t.Fatalf("log never contained %q %d times:\n%s", s, n, buf.String())
		}
	}
}
