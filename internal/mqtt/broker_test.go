package mqtt

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/fake/supervisor"
	"github.com/gemini-supply/gemini-supply/internal/testbroker"
)

func TestParseBroker(t *testing.T) {
	tests := []struct {
		raw, user string
		pass      config.Secret
		wantURL   string
		wantUser  string
		wantPass  string
		wantTLS   bool
		wantErr   string
	}{
		{raw: "tcp://broker:1883", wantURL: "tcp://broker:1883"},
		{raw: "mqtt://broker", wantURL: "tcp://broker:1883"},
		{raw: "broker.lan:1884", wantURL: "tcp://broker.lan:1884"},
		{raw: "core-mosquitto", wantURL: "tcp://core-mosquitto:1883"},
		{raw: "ssl://broker", wantURL: "ssl://broker:8883", wantTLS: true},
		{raw: "mqtts://broker:9999", wantURL: "ssl://broker:9999", wantTLS: true},
		{raw: "tcp://[::1]:1883", wantURL: "tcp://[::1]:1883"},
		{raw: "tcp://u:p%40ss@broker:1883", wantURL: "tcp://broker:1883", wantUser: "u", wantPass: "p@ss"},
		{raw: "tcp://u:p@broker", user: "cfg", pass: "cfgpw", wantURL: "tcp://broker:1883", wantUser: "cfg", wantPass: "cfgpw"},
		{raw: "ws://broker:9001", wantErr: "not supported"},
		{raw: "tcp://broker:99999", wantErr: "not a port"},
		{raw: "tcp://:1883", wantErr: "no host"},
		{raw: "tcp://user:hunter2@bro ker", wantErr: "not a valid address"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			b, err := ParseBroker(tc.raw, tc.user, tc.pass)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.URL != tc.wantURL || b.Username != tc.wantUser || b.Password.Reveal() != tc.wantPass || (b.TLS != nil) != tc.wantTLS {
				t.Errorf("got %#v user %q pass %q, want %s %q %q tls=%v", b, b.Username, b.Password.Reveal(), tc.wantURL, tc.wantUser, tc.wantPass, tc.wantTLS)
			}
		})
	}
	if _, err := ParseBroker(" ", "", ""); !errors.Is(err, ErrNoBroker) {
		t.Errorf("empty broker: %v", err)
	}
}

func TestBrokerFromSupervisor(t *testing.T) {
	const token = "supervisor-token-XYZ"
	sv := supervisor.New(token)
	defer sv.Close()
	ctx := context.Background()

	tests := []struct {
		name     string
		token    config.Secret
		service  *supervisor.MQTTService
		access   bool
		wantURL  string
		wantTLS  bool
		wantProt uint
		wantErr  string
		noBroker bool
		refused  bool
		// failStatus, when set, is the Supervisor's error answer.
		failStatus int
	}{
		{name: "tcp", token: token, access: true,
			service: &supervisor.MQTTService{Host: "core-mosquitto", Port: 1883, Username: "addons", Password: "pw"},
			wantURL: "tcp://core-mosquitto:1883", wantProt: 4},
		{name: "ssl", token: token, access: true,
			service: &supervisor.MQTTService{Host: "core-mosquitto", Port: 8883, SSL: true, Protocol: "3.1"},
			wantURL: "ssl://core-mosquitto:8883", wantTLS: true, wantProt: 3},
		{name: "bad token", token: "nope", access: true, service: &supervisor.MQTTService{Host: "h", Port: 1},
			wantErr: "refused the add-on token (401", refused: true},
		{name: "no access", token: token, access: false, service: &supervisor.MQTTService{Host: "h", Port: 1},
			wantErr: "services: [mqtt:want]", refused: true},
		{name: "no broker add-on", token: token, access: true, wantErr: "install and start the Mosquitto", noBroker: true},
		{name: "no token", token: "", access: true, wantErr: "SUPERVISOR_TOKEN is not set", noBroker: true},
		{name: "supervisor unavailable", token: token, access: true, service: &supervisor.MQTTService{Host: "h", Port: 1},
			failStatus: http.StatusServiceUnavailable, wantErr: "with 503 System is not ready"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sv.SetMQTT(tc.service)
			sv.SetMQTTAccess(tc.access)
			sv.SetMQTTError(tc.failStatus, "System is not ready")
			b, err := BrokerFromSupervisor(ctx, sv.URL, tc.token, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if errors.Is(err, ErrNoBroker) != tc.noBroker {
					t.Errorf("errors.Is(err, ErrNoBroker) = %v, want %v", !tc.noBroker, tc.noBroker)
				}
				if errors.Is(err, ErrSupervisorRefused) != tc.refused {
					t.Errorf("errors.Is(err, ErrSupervisorRefused) = %v, want %v", !tc.refused, tc.refused)
				}
				if strings.Contains(err.Error(), token) {
					t.Errorf("error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.URL != tc.wantURL || (b.TLS != nil) != tc.wantTLS || b.ProtocolVersion != tc.wantProt {
				t.Errorf("broker = %#v", b)
			}
			if tc.wantTLS && (b.TLS.ServerName != tc.service.Host || b.TLS.MinVersion < tls.VersionTLS12) {
				t.Errorf("TLS config = %+v", b.TLS)
			}
			if b.Username != tc.service.Username || b.Password.Reveal() != tc.service.Password {
				t.Errorf("credentials not taken from the service")
			}
		})
	}
	for _, r := range sv.Requests() {
		if r.Method != http.MethodGet || r.Path != "/services/mqtt" {
			t.Errorf("unexpected request %+v", r)
		}
	}
}

func TestResolveBroker(t *testing.T) {
	sv := supervisor.New("tok")
	defer sv.Close()
	sv.SetMQTT(&supervisor.MQTTService{Host: "core-mosquitto", Port: 1883})
	ctx := context.Background()

	b, err := ResolveBroker(ctx, config.Config{MQTTBroker: "tcp://mine:1883", SupervisorToken: "tok", SupervisorURL: sv.URL}, nil)
	if err != nil || b.URL != "tcp://mine:1883" {
		t.Errorf("configured broker: %v %v", b, err)
	}
	b, err = ResolveBroker(ctx, config.Config{SupervisorToken: "tok", SupervisorURL: sv.URL}, nil)
	if err != nil || b.URL != "tcp://core-mosquitto:1883" {
		t.Errorf("supervisor broker: %v %v", b, err)
	}
	if _, err := ResolveBroker(ctx, config.Config{}, nil); !errors.Is(err, ErrNoBroker) {
		t.Errorf("no broker: %v", err)
	}
	if n := len(sv.Requests()); n != 1 {
		t.Errorf("supervisor asked %d times, want 1 (configured broker wins)", n)
	}
}

// TestSupervisorBrokerOverTLS: the Supervisor says ssl; the client speaks TLS
// to a real TLS listener, with the service's login.
func TestSupervisorBrokerOverTLS(t *testing.T) {
	m := testbroker.Start(t, testbroker.Options{Users: map[string]string{"addons": "tls-pw-123"}, TLS: true})
	sv := supervisor.New("tok")
	defer sv.Close()
	sv.SetMQTT(&supervisor.MQTTService{Host: "127.0.0.1", Port: m.Port(), SSL: true, Username: "addons", Password: "tls-pw-123"})

	ctx := context.Background()
	b, err := BrokerFromSupervisor(ctx, sv.URL, "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Without the test CA the certificate is not trusted: a permanent error.
	log, _ := testLogger()
	_, err = Connect(ctx, Options{Broker: b, Logger: log})
	if err == nil || !strings.Contains(err.Error(), "TLS certificate is not trusted") {
		t.Fatalf("Connect with an untrusted certificate = %v", err)
	}

	b.TLS.RootCAs = m.CAPool()
	c, _ := connectTest(t, m, func(o *Options) { o.Broker = b })
	obs := newObserver(t, m.URL(), func(po *paho.ClientOptions) {
		po.SetUsername("addons").SetPassword("tls-pw-123").SetTLSConfig(&tls.Config{RootCAs: m.CAPool(), ServerName: "127.0.0.1"})
	}, "gemini_supply/#")
	obs.waitPayload(c.Topics().Availability, "online")
}

// TestCredentialsNeverLogged runs a Supervisor lookup, a refused login, a
// connection, a severed connection with its reconnection, a failing press
// and a close, and checks that no log line and no error shows the username,
// the password or the Supervisor token.
func TestCredentialsNeverLogged(t *testing.T) {
	const (
		user  = "mqtt-user-QWERTY"
		pass  = "mqtt-pass-ASDFGH"
		token = "sv-token-ZXCVBN"
	)
	m := testbroker.Start(t, testbroker.Options{Users: map[string]string{user: pass}})
	sv := supervisor.New(token)
	defer sv.Close()
	sv.SetMQTT(&supervisor.MQTTService{Host: "127.0.0.1", Port: m.Port(), Username: user, Password: pass})

	log, logs := testLogger()
	orig := slog.Default()
	slog.SetDefault(log) // anything logging through the default logger is captured too
	defer slog.SetDefault(orig)
	var errs []error
	ctx := context.Background()

	if _, err := BrokerFromSupervisor(ctx, sv.URL, "wrong-"+token, nil); err != nil {
		errs = append(errs, err)
	} else {
		t.Error("a wrong token was accepted")
	}
	b, err := BrokerFromSupervisor(ctx, sv.URL, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("broker resolved", "broker", b, "printed", fmt.Sprintf("%v %+v %#v %s", b, b, b, b))

	wrong := b
	wrong.Password = config.Secret(pass + "-wrong")
	if _, err := Connect(ctx, Options{Broker: wrong, Logger: log}); err != nil {
		errs = append(errs, err)
	} else {
		t.Error("a wrong password was accepted")
	}

	d := &killDialer{}
	starter := newFakeStarter(errors.New("gate exploded"))
	c, _ := connectTest(t, m, func(o *Options) {
		o.Broker, o.Logger, o.DialContext, o.Starter = b, log, d.DialContext, starter
	})
	obs := newObserver(t, m.URL(), func(po *paho.ClientOptions) { po.SetUsername(user).SetPassword(pass) }, "gemini_supply/#")
	obs.waitPayload(c.Topics().Availability, "online")
	d.kill(false)
	waitLog(t, logs, "lost the MQTT connection")
	waitLogCount(t, logs, "published discovery and state", 2) // reconnected and subscribed again
	obs.publish(c.Topics().StartCommand, false, "PRESS")
	starter.next(t)
	waitLog(t, logs, "gate exploded")
	if err := c.Close(ctx); err != nil {
		errs = append(errs, err)
	}

	out := logs.String()
	if !strings.Contains(out, "connected to the MQTT broker") {
		t.Fatalf("the log does not show the run it should cover:\n%s", out)
	}
	for _, secret := range []string{user, pass, token} {
		if strings.Contains(out, secret) {
			t.Errorf("the log shows %q:\n%s", secret, out)
		}
		for _, err := range errs {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("an error shows %q: %v", secret, err)
			}
		}
	}
}
