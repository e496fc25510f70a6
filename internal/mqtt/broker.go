package mqtt

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
)

// ErrNoBroker means no MQTT broker is configured or offered by the
// Supervisor. Callers treat it as "run without MQTT", not as a failure.
var ErrNoBroker = errors.New("no MQTT broker available")

// ErrSupervisorRefused means the Supervisor refused the add-on's request for
// the MQTT service (401: the token is not accepted; 403: the add-on does not
// declare the mqtt service). Asking again does not help: it needs a fixed
// token or add-on manifest. Other Supervisor failures (unreachable, 5xx, no
// MQTT service yet) may pass.
var ErrSupervisorRefused = errors.New("the Supervisor refused the request")

// Broker says where and how to connect. Its String and LogValue never show
// the username or the password.
type Broker struct {
	// URL is tcp://host:port or ssl://host:port, without user information.
	URL      string
	Username string
	Password config.Secret
	// TLS is used for ssl:// brokers (nil: system roots, server name from the URL).
	TLS *tls.Config
	// ProtocolVersion is 3 (MQTT 3.1) or 4 (MQTT 3.1.1); 0 means 4.
	ProtocolVersion uint
}

// String is the URL, which never holds credentials.
func (b Broker) String() string { return b.URL }

// GoString keeps %#v from printing the credentials.
func (b Broker) GoString() string {
	return fmt.Sprintf("mqtt.Broker{URL: %q, TLS: %t, ProtocolVersion: %d, authenticated: %t}",
		b.URL, b.TLS != nil, b.ProtocolVersion, b.Username != "" || b.Password.IsSet())
}

// LogValue keeps credentials out of slog output.
func (b Broker) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("url", b.URL),
		slog.Bool("tls", b.isTLS()),
		slog.Bool("authenticated", b.Username != "" || b.Password.IsSet()),
	)
}

func (b Broker) isTLS() bool { return strings.HasPrefix(b.URL, "ssl://") }

// ParseBroker reads a broker address as users write it — tcp://host:1883,
// mqtt://host, ssl://host:8883, mqtts://host, host:port or host — into a
// Broker. Credentials in the URL (tcp://user:pass@host) are moved into
// Username/Password unless username/password are given; they never stay in URL.
func ParseBroker(raw, username string, password config.Secret) (Broker, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Broker{}, ErrNoBroker
	}
	if !strings.Contains(raw, "://") {
		raw = "tcp://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote the input, which may hold a password.
		return Broker{}, fmt.Errorf("mqtt_broker is not a valid address (expected tcp://host:1883 or ssl://host:8883)")
	}
	var scheme string
	defPort := "1883"
	switch strings.ToLower(u.Scheme) {
	case "tcp", "mqtt":
		scheme = "tcp"
	case "ssl", "tls", "mqtts", "tcps":
		scheme, defPort = "ssl", "8883"
	default:
		return Broker{}, fmt.Errorf("mqtt_broker scheme %q is not supported: use tcp:// or ssl://", u.Scheme)
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return Broker{}, fmt.Errorf("mqtt_broker has no host name (expected tcp://host:1883)")
	}
	if port == "" {
		port = defPort
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return Broker{}, fmt.Errorf("mqtt_broker port %q is not a port number", port)
	}
	b := Broker{URL: scheme + "://" + net.JoinHostPort(host, port), Username: username, Password: password}
	if u.User != nil {
		if b.Username == "" {
			b.Username = u.User.Username()
		}
		if p, ok := u.User.Password(); ok && !b.Password.IsSet() {
			b.Password = config.Secret(p)
		}
	}
	if scheme == "ssl" {
		b.TLS = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	return b, nil
}

// supervisorResponse is the Supervisor's envelope.
type supervisorResponse struct {
	Result  string          `json:"result"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type supervisorMQTT struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	SSL      bool   `json:"ssl"`
	Username string `json:"username"`
	Password string `json:"password"`
	Protocol string `json:"protocol"`
}

// BrokerFromSupervisor asks the Supervisor which broker the MQTT service
// (normally the Mosquitto add-on) offers: GET {supervisorURL}/services/mqtt
// with the add-on's token. It returns an error wrapping ErrNoBroker when the
// Supervisor has no MQTT service (the Mosquitto add-on is not installed or
// not started yet) and one wrapping ErrSupervisorRefused on 401/403. A nil httpClient uses a client with a 10 s
// timeout. The token never appears in errors or logs.
func BrokerFromSupervisor(ctx context.Context, supervisorURL string, token config.Secret, httpClient *http.Client) (Broker, error) {
	if !token.IsSet() {
		return Broker{}, fmt.Errorf("asking the Supervisor for the MQTT broker: SUPERVISOR_TOKEN is not set (only add-ons have one): %w", ErrNoBroker)
	}
	if supervisorURL == "" {
		supervisorURL = config.DefaultSupervisorURL
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Second}
	}
	endpoint := strings.TrimRight(supervisorURL, "/") + "/services/mqtt"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return Broker{}, fmt.Errorf("asking the Supervisor for the MQTT broker: bad Supervisor URL %q: %w", supervisorURL, err)
	}
	req.Header.Set("Authorization", "Bearer "+token.Reveal())
	req.Header.Set("Accept", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return Broker{}, fmt.Errorf("asking the Supervisor for the MQTT broker at %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Broker{}, fmt.Errorf("reading the Supervisor's MQTT service answer: %w", err)
	}
	var env supervisorResponse
	jsonErr := json.Unmarshal(body, &env)
	msg := env.Message
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return Broker{}, fmt.Errorf("%w: it refused the add-on token (401 %s): check that SUPERVISOR_TOKEN is the one the Supervisor gave this add-on", ErrSupervisorRefused, msg)
	case resp.StatusCode == http.StatusForbidden:
		return Broker{}, fmt.Errorf("%w: it denied access to the MQTT service (403 %s): the add-on's config.yaml must declare services: [mqtt:want]", ErrSupervisorRefused, msg)
	case resp.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "not enabled"):
		return Broker{}, fmt.Errorf("the Supervisor offers no MQTT service (%s): install and start the Mosquitto broker add-on, or set mqtt_broker: %w", msg, ErrNoBroker)
	case resp.StatusCode != http.StatusOK || jsonErr != nil || env.Result != "ok":
		return Broker{}, fmt.Errorf("the Supervisor answered GET /services/mqtt with %d %s", resp.StatusCode, msg)
	}
	var m supervisorMQTT
	if err := json.Unmarshal(env.Data, &m); err != nil {
		return Broker{}, fmt.Errorf("the Supervisor's MQTT service data is not understood: %w", err)
	}
	if m.Host == "" || m.Port <= 0 || m.Port > 65535 {
		return Broker{}, fmt.Errorf("the Supervisor's MQTT service has no usable host/port (host %q, port %d)", m.Host, m.Port)
	}
	scheme := "tcp"
	if m.SSL {
		scheme = "ssl"
	}
	b := Broker{
		URL:      scheme + "://" + net.JoinHostPort(m.Host, strconv.Itoa(m.Port)),
		Username: m.Username,
		Password: config.Secret(m.Password),
	}
	if m.SSL {
		b.TLS = &tls.Config{ServerName: m.Host, MinVersion: tls.VersionTLS12}
	}
	switch m.Protocol {
	case "3.1":
		b.ProtocolVersion = 3
	case "", "3.1.1":
		b.ProtocolVersion = 4
	default:
		return Broker{}, fmt.Errorf("the Supervisor's MQTT service speaks protocol %q; only 3.1 and 3.1.1 are supported", m.Protocol)
	}
	return b, nil
}

// ResolveBroker picks the broker for cfg: mqtt_broker when set; otherwise,
// as an add-on (SupervisorToken set), the Supervisor's MQTT service. It
// returns an error wrapping ErrNoBroker when there is none, so the caller can
// run without MQTT.
func ResolveBroker(ctx context.Context, cfg config.Config, httpClient *http.Client) (Broker, error) {
	if strings.TrimSpace(cfg.MQTTBroker) != "" {
		return ParseBroker(cfg.MQTTBroker, cfg.MQTTUsername, cfg.MQTTPassword)
	}
	if cfg.SupervisorToken.IsSet() {
		return BrokerFromSupervisor(ctx, cfg.SupervisorURL, cfg.SupervisorToken, httpClient)
	}
	return Broker{}, fmt.Errorf("mqtt_broker is not set and this is not an add-on: %w", ErrNoBroker)
}
