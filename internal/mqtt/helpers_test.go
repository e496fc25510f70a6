package mqtt

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

const waitLimit = 15 * time.Second

// ---------------------------------------------------------------- mosquitto

// mosquitto is a real broker on a loopback port, started and stopped by a test.
type mosquitto struct {
	t      testing.TB
	bin    string
	dir    string
	port   int
	conf   string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *syncBuffer
}

type brokerConfig struct {
	users map[string]string // user → password; empty: anonymous
	tls   *testCerts
}

func mosquittoBinary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("GEMINI_SUPPLY_TEST_MOSQUITTO")
	if bin == "" {
		if testing.Short() {
			t.Skip("broker test skipped in -short mode")
		}
		t.Fatal("GEMINI_SUPPLY_TEST_MOSQUITTO is not set: run `make test`, or `eval \"$(bash scripts/setup.sh)\"` first")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("GEMINI_SUPPLY_TEST_MOSQUITTO=%s: %v (run scripts/setup.sh)", bin, err)
	}
	return bin
}

func startMosquitto(t testing.TB, bc brokerConfig) *mosquitto {
	t.Helper()
	m := &mosquitto{t: t, bin: mosquittoBinary(t), dir: t.TempDir(), port: freePort(t), log: &syncBuffer{}}
	var conf strings.Builder
	fmt.Fprintf(&conf, "listener %d 127.0.0.1\n", m.port)
	conf.WriteString("persistence false\nlog_dest stderr\nlog_type all\n")
	if os.Geteuid() == 0 {
		conf.WriteString("user root\n") // keep access to the test's private temp dir
	}
	if len(bc.users) == 0 {
		conf.WriteString("allow_anonymous true\n")
	} else {
		pw := filepath.Join(m.dir, "passwd")
		if err := os.WriteFile(pw, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for u, p := range bc.users {
			out, err := exec.Command("mosquitto_passwd", "-b", pw, u, p).CombinedOutput()
			if err != nil {
				t.Fatalf("mosquitto_passwd: %v: %s", err, out)
			}
		}
		fmt.Fprintf(&conf, "allow_anonymous false\npassword_file %s\n", pw)
	}
	if c := bc.tls; c != nil {
		fmt.Fprintf(&conf, "certfile %s\nkeyfile %s\n", c.certFile, c.keyFile)
	}
	m.conf = filepath.Join(m.dir, "mosquitto.conf")
	if err := os.WriteFile(m.conf, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	m.start()
	t.Cleanup(m.stop)
	return m
}

func (m *mosquitto) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(m.port)) }
func (m *mosquitto) url() string  { return "tcp://" + m.addr() }

// start runs the broker and waits until it accepts connections.
func (m *mosquitto) start() {
	m.t.Helper()
	m.cmd = exec.Command(m.bin, "-c", m.conf)
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("starting mosquitto: %v", err)
	}
	m.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(m.cmd, m.exited)
	deadline := time.Now().Add(waitLimit)
	for {
		c, err := net.DialTimeout("tcp", m.addr(), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		select {
		case <-m.exited:
			m.t.Fatalf("mosquitto exited at start-up:\n%s", m.log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("mosquitto did not accept connections on %s within %s:\n%s", m.addr(), waitLimit, m.log.String())
		}
	}
}

// stop terminates the broker (SIGTERM, then SIGKILL) and waits for it.
func (m *mosquitto) stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	select {
	case <-m.exited:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.exited:
	case <-time.After(5 * time.Second):
		_ = m.cmd.Process.Kill()
		<-m.exited
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

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

// ---------------------------------------------------------------- TLS

type testCerts struct {
	caPool            *x509.CertPool
	certFile, keyFile string
}

// newTestCerts makes a CA and a server certificate for 127.0.0.1 and localhost.
func newTestCerts(t testing.TB) *testCerts {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gemini-supply test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCerts{caPool: x509.NewCertPool(), certFile: filepath.Join(dir, "server.crt"), keyFile: filepath.Join(dir, "server.key")}
	c.caPool.AddCert(ca)
	if err := os.WriteFile(c.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}
