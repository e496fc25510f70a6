package testbroker

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// connect tries one MQTT login and returns its error.
func connect(t *testing.T, url, user, pass string, tc *tls.Config) error {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID("testbroker-test").
		SetUsername(user).SetPassword(pass).SetConnectTimeout(5 * time.Second)
	if tc != nil {
		o.SetTLSConfig(tc)
	}
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(10 * time.Second) {
		t.Fatalf("connecting to %s did not finish", url)
	}
	if tok.Error() == nil {
		c.Disconnect(0)
	}
	return tok.Error()
}

// TestRestartOnSamePort: Stop closes the port, Start opens the same one
// again, and the log spans both runs.
func TestRestartOnSamePort(t *testing.T) {
	b := Start(t, Options{})
	if !strings.HasPrefix(b.URL(), "tcp://127.0.0.1:") || b.CAPool() != nil {
		t.Fatalf("URL %q, CA %v: want a plain tcp loopback broker", b.URL(), b.CAPool())
	}
	if err := connect(t, b.URL(), "", "", nil); err != nil {
		t.Fatalf("anonymous login: %v\n%s", err, b.Log())
	}
	port := b.Port()
	b.Stop()
	if c, err := net.DialTimeout("tcp", b.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("the stopped broker still accepts connections")
	}
	b.Stop() // stopping twice is harmless
	b.Start()
	if b.Port() != port {
		t.Fatalf("port changed across a restart: %d → %d", port, b.Port())
	}
	if err := connect(t, b.URL(), "", "", nil); err != nil {
		t.Fatalf("login after the restart: %v\n%s", err, b.Log())
	}
	if n := strings.Count(b.Log(), "running"); n < 2 {
		t.Errorf("the log holds %d start-ups, want both:\n%s", n, b.Log())
	}
}

// TestUsersAndTLS: a broker with users accepts only their logins, over TLS
// verified against CAPool.
func TestUsersAndTLS(t *testing.T) {
	b := Start(t, Options{Users: map[string]string{"addons": "pw-1"}, TLS: true})
	if !strings.HasPrefix(b.URL(), "ssl://") || b.CAPool() == nil {
		t.Fatalf("URL %q, CA %v: want ssl:// with a CA", b.URL(), b.CAPool())
	}
	trusted := &tls.Config{RootCAs: b.CAPool(), ServerName: b.Host(), MinVersion: tls.VersionTLS12}
	tests := []struct {
		name, user, pass string
		tls              *tls.Config
		ok               bool
	}{
		{"login", "addons", "pw-1", trusted, true},
		{"wrong password", "addons", "nope", trusted, false},
		{"anonymous", "", "", trusted, false},
		{"untrusted certificate", "addons", "pw-1", &tls.Config{ServerName: b.Host(), MinVersion: tls.VersionTLS12}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := connect(t, b.URL(), tc.user, tc.pass, tc.tls)
			if (err == nil) != tc.ok {
				t.Fatalf("connect = %v, want ok=%v\n%s", err, tc.ok, b.Log())
			}
		})
	}
}
