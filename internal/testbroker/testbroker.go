// Package testbroker runs a real mosquitto MQTT broker for tests. It is for
// tests only: production code must not import it (it imports "testing").
//
// The broker is the mosquitto binary named by $GEMINI_SUPPLY_TEST_MOSQUITTO
// (scripts/setup.sh installs it and prints the export; `make test` sets it).
// Each broker listens on a free loopback port with a temporary config
// (no persistence, everything logged), optionally with a password file
// (made with mosquitto_passwd) and a TLS listener signed by a test CA. It can
// be stopped and started again on the same port, and t.Cleanup stops it.
//
//	b := testbroker.Start(t, testbroker.Options{Users: map[string]string{"addons": "pw"}})
//	client := connect(b.URL(), "addons", "pw")
//	b.Stop(); …; b.Start() // a broker restart without persistence
package testbroker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
)

// EnvBinary names the environment variable that holds the mosquitto binary.
const EnvBinary = "GEMINI_SUPPLY_TEST_MOSQUITTO"

const (
	// startLimit bounds how long Start waits for the broker to accept connections.
	startLimit = 15 * time.Second
	// stopLimit bounds how long Stop waits after SIGTERM before it kills.
	stopLimit = 5 * time.Second
)

// Options configure a broker. The zero value is an anonymous plain-TCP broker.
type Options struct {
	// Users maps user names to passwords. Empty: anonymous clients are
	// allowed; otherwise only these logins are.
	Users map[string]string
	// TLS makes the listener speak TLS (ssl://) with a server certificate
	// for 127.0.0.1 and localhost, signed by a fresh test CA (see CAPool).
	TLS bool
}

// Broker is a running (or stopped) mosquitto on a fixed loopback port.
// Start and Stop are for the test goroutine; the other methods are safe
// from any goroutine.
type Broker struct {
	t      testing.TB
	bin    string
	port   int
	conf   string
	caPool *x509.CertPool
	log    *syncbuf.Buffer

	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts a broker on a free loopback port and waits until it accepts
// connections; the test's cleanup stops it. Without $GEMINI_SUPPLY_TEST_MOSQUITTO
// the test fails (run make test / scripts/setup.sh), or is skipped under -short.
func Start(t testing.TB, opts Options) *Broker {
	t.Helper()
	b := &Broker{t: t, bin: binary(t), port: freePort(t), log: &syncbuf.Buffer{}}
	dir := t.TempDir()
	var conf strings.Builder
	fmt.Fprintf(&conf, "listener %d 127.0.0.1\n", b.port)
	conf.WriteString("persistence false\nlog_dest stderr\nlog_type all\n")
	if os.Geteuid() == 0 {
		conf.WriteString("user root\n") // keep access to the test's private temp dir
	}
	if len(opts.Users) == 0 {
		conf.WriteString("allow_anonymous true\n")
	} else {
		pw := filepath.Join(dir, "passwd")
		if err := os.WriteFile(pw, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		passwd := filepath.Join(filepath.Dir(b.bin), "mosquitto_passwd")
		if _, err := os.Stat(passwd); err != nil {
			passwd = "mosquitto_passwd" // from PATH
		}
		for u, p := range opts.Users {
			out, err := exec.Command(passwd, "-b", pw, u, p).CombinedOutput()
			if err != nil {
				t.Fatalf("testbroker: mosquitto_passwd: %v: %s (run make test / scripts/setup.sh)", err, out)
			}
		}
		fmt.Fprintf(&conf, "allow_anonymous false\npassword_file %s\n", pw)
	}
	if opts.TLS {
		pool, certFile, keyFile := writeCerts(t, dir)
		b.caPool = pool
		fmt.Fprintf(&conf, "certfile %s\nkeyfile %s\n", certFile, keyFile)
	}
	b.conf = filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(b.conf, []byte(conf.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	b.Start()
	t.Cleanup(b.Stop)
	return b
}

// Host is the address the broker listens on: 127.0.0.1.
func (b *Broker) Host() string { return "127.0.0.1" }

// Port is the broker's TCP port; it stays the same across Stop and Start.
func (b *Broker) Port() int { return b.port }

// Addr is host:port.
func (b *Broker) Addr() string { return net.JoinHostPort(b.Host(), strconv.Itoa(b.port)) }

// URL is tcp://host:port, or ssl://host:port for a TLS broker.
func (b *Broker) URL() string {
	if b.caPool != nil {
		return "ssl://" + b.Addr()
	}
	return "tcp://" + b.Addr()
}

// CAPool holds the CA that signed a TLS broker's certificate (nil without TLS).
func (b *Broker) CAPool() *x509.CertPool { return b.caPool }

// Log is everything the broker process wrote so far, across restarts.
func (b *Broker) Log() string { return b.log.String() }

// Start (re)starts a stopped broker on the same port and waits until it
// accepts connections. Starting a running broker fails the test.
func (b *Broker) Start() {
	b.t.Helper()
	if b.running() {
		b.t.Fatal("testbroker: Start on a running broker")
	}
	b.cmd = exec.Command(b.bin, "-c", b.conf)
	b.cmd.Stdout, b.cmd.Stderr = b.log, b.log
	if err := b.cmd.Start(); err != nil {
		b.t.Fatalf("testbroker: starting mosquitto %s: %v (run make test / scripts/setup.sh)", b.bin, err)
	}
	b.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(b.cmd, b.exited)
	deadline := time.NewTimer(startLimit)
	defer deadline.Stop()
	for {
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		retry := time.NewTimer(20 * time.Millisecond)
		select {
		case <-b.exited:
			retry.Stop()
			b.t.Fatalf("testbroker: mosquitto exited at start-up:\n%s", b.Log())
		case <-deadline.C:
			retry.Stop()
			b.t.Fatalf("testbroker: mosquitto did not accept connections on %s within %s:\n%s", b.Addr(), startLimit, b.Log())
		case <-retry.C:
		}
	}
}

// Stop terminates the broker (SIGTERM, then SIGKILL after 5 s) and waits
// for it to exit. Stopping a stopped broker does nothing.
func (b *Broker) Stop() {
	if !b.running() {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(stopLimit)
	defer t.Stop()
	select {
	case <-b.exited:
	case <-t.C:
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
}

func (b *Broker) running() bool {
	if b.cmd == nil || b.cmd.Process == nil {
		return false
	}
	select {
	case <-b.exited:
		return false
	default:
		return true
	}
}

// binary returns the mosquitto binary from the environment.
func binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(EnvBinary)
	if bin == "" {
		if testing.Short() {
			t.Skip("broker test skipped in -short mode")
		}
		t.Fatalf("%s is not set: run make test / scripts/setup.sh (`eval \"$(bash scripts/setup.sh)\"`) first", EnvBinary)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=%s: %v (run make test / scripts/setup.sh)", EnvBinary, bin, err)
	}
	return bin
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

// writeCerts makes a CA and a server certificate for 127.0.0.1 and
// localhost in dir and returns the CA pool and the certificate and key files.
func writeCerts(t testing.TB, dir string) (pool *x509.CertPool, certFile, keyFile string) {
	t.Helper()
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
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
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
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return pool, certFile, keyFile
}
