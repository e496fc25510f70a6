// Package supervisor is a protocol-faithful fake of the Home Assistant
// Supervisor HTTP API, for tests of code that runs as an add-on.
//
// It serves the few endpoints an add-on asks for:
//
//	GET /services/mqtt      the MQTT broker the Mosquitto add-on provides
//	GET /addons/self/info   this add-on's name, slug, version, state
//	GET /info               host and version information
//	GET /supervisor/ping    liveness (no token needed)
//
// Every other endpoint answers 404. Like the real Supervisor it accepts the
// add-on token as "Authorization: Bearer <token>" or "X-Supervisor-Token",
// answers 401 without a valid token, and wraps every answer in
// {"result":"ok","data":…} or {"result":"error","message":…}.
package supervisor

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// MQTTService is what GET /services/mqtt returns in "data".
type MQTTService struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	SSL      bool   `json:"ssl"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Protocol string `json:"protocol"` // "3.1" or "3.1.1"
}

// AddonInfo is the part of GET /addons/self/info the fake returns.
type AddonInfo struct {
	Name    string `json:"name"`
	Slug    string `json:"slug"`
	Version string `json:"version"`
	State   string `json:"state"`
}

// httpError is an error answer set by a test.
type httpError struct {
	status  int
	message string
}

// Request is one request the fake received.
type Request struct {
	Method string
	Path   string
	// Authorized reports whether the request carried the valid token.
	Authorized bool
}

// Server is a running fake Supervisor. Create it with New and Close it when done.
type Server struct {
	// URL is the base URL, e.g. http://127.0.0.1:PORT (the add-on's http://supervisor).
	URL string

	token string
	srv   *httptest.Server

	mu         sync.Mutex
	mqtt       *MQTTService
	mqttAccess bool
	mqttErr    *httpError
	addon      AddonInfo
	requests   []Request
}

// New starts a fake Supervisor on a loopback port that accepts token.
// The MQTT service starts unset (GET /services/mqtt answers "Service not
// enabled", as when no broker add-on is installed) and access to it allowed
// (the add-on declares services: [mqtt:want]).
func New(token string) *Server {
	s := &Server{
		token:      token,
		mqttAccess: true,
		addon:      AddonInfo{Name: "Gemini Supply", Slug: "gemini_supply", Version: "0.0.0-test", State: "started"},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/services/mqtt", s.auth(s.serviceMQTT))
	mux.HandleFunc("/addons/self/info", s.auth(s.addonInfo))
	mux.HandleFunc("/info", s.auth(s.info))
	mux.HandleFunc("/supervisor/ping", s.ping)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, s.authorized(r))
		writeError(w, http.StatusNotFound, "Not found")
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetMQTT sets the broker GET /services/mqtt returns; nil means no broker.
func (s *Server) SetMQTT(m *MQTTService) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m == nil {
		s.mqtt = nil
		return
	}
	c := *m
	if c.Protocol == "" {
		c.Protocol = "3.1.1"
	}
	s.mqtt = &c
}

// SetMQTTAccess controls whether the add-on may read the MQTT service (false:
// 403, as when config.yaml lacks services: [mqtt:want]).
func (s *Server) SetMQTTAccess(allowed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mqttAccess = allowed
}

// SetMQTTError makes GET /services/mqtt answer status with message (in the
// Supervisor's error envelope) until it is called with status 0 — e.g. 503
// or 502 while the Supervisor is restarting. It takes precedence over
// SetMQTT and SetMQTTAccess; the token is still checked first.
func (s *Server) SetMQTTError(status int, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		s.mqttErr = nil
		return
	}
	s.mqttErr = &httpError{status: status, message: message}
}

// SetAddon replaces what GET /addons/self/info returns.
func (s *Server) SetAddon(a AddonInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addon = a
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) record(r *http.Request, authorized bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Authorized: authorized})
}

func (s *Server) authorized(r *http.Request) bool {
	got := r.Header.Get("X-Supervisor-Token")
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		got = tok
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// auth wraps h with the token check and the GET-only rule, recording the request.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ok := s.authorized(r)
		s.record(r, ok)
		if !ok {
			writeError(w, http.StatusUnauthorized, "Invalid token for access")
			return
		}
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "Method not allowed")
			return
		}
		h(w, r)
	}
}

func (s *Server) serviceMQTT(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	m, access, fail := s.mqtt, s.mqttAccess, s.mqttErr
	s.mu.Unlock()
	switch {
	case fail != nil:
		writeError(w, fail.status, fail.message)
	case !access:
		writeError(w, http.StatusForbidden, "No access to mqtt service!")
	case m == nil:
		writeError(w, http.StatusBadRequest, "Service not enabled")
	default:
		writeOK(w, m)
	}
}

func (s *Server) addonInfo(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	a := s.addon
	s.mu.Unlock()
	writeOK(w, a)
}

func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	writeOK(w, map[string]any{
		"supervisor":    "2025.01.0",
		"homeassistant": "2025.1.0",
		"hassos":        nil,
		"hostname":      "homeassistant",
		"machine":       "qemux86-64",
		"arch":          "amd64",
		"channel":       "stable",
	})
}

func (s *Server) ping(w http.ResponseWriter, r *http.Request) {
	s.record(r, s.authorized(r))
	writeOK(w, map[string]any{})
}

func writeOK(w http.ResponseWriter, data any) {
	writeJSON(w, http.StatusOK, map[string]any{"result": "ok", "data": data})
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"result": "error", "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
