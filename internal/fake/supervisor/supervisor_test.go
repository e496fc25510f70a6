package supervisor

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestServer(t *testing.T) {
	s := New("tok")
	defer s.Close()
	s.SetMQTT(&MQTTService{Host: "core-mosquitto", Port: 1883, Username: "u", Password: "p"})

	tests := []struct {
		name, method, path string
		header             [2]string
		wantStatus         int
		wantResult         string
		check              func(t *testing.T, data json.RawMessage, msg string)
	}{
		{name: "mqtt with bearer", method: "GET", path: "/services/mqtt", header: [2]string{"Authorization", "Bearer tok"},
			wantStatus: 200, wantResult: "ok", check: func(t *testing.T, data json.RawMessage, _ string) {
				var m MQTTService
				if err := json.Unmarshal(data, &m); err != nil || m.Host != "core-mosquitto" || m.Protocol != "3.1.1" || m.Password != "p" {
					t.Errorf("data = %s (%v)", data, err)
				}
			}},
		{name: "mqtt with X-Supervisor-Token", method: "GET", path: "/services/mqtt", header: [2]string{"X-Supervisor-Token", "tok"},
			wantStatus: 200, wantResult: "ok"},
		{name: "wrong token", method: "GET", path: "/services/mqtt", header: [2]string{"Authorization", "Bearer nope"},
			wantStatus: 401, wantResult: "error"},
		{name: "no token", method: "GET", path: "/services/mqtt", wantStatus: 401, wantResult: "error"},
		{name: "basic auth is not a token", method: "GET", path: "/services/mqtt", header: [2]string{"Authorization", "Basic tok"},
			wantStatus: 401, wantResult: "error"},
		{name: "post", method: "POST", path: "/services/mqtt", header: [2]string{"Authorization", "Bearer tok"},
			wantStatus: 405, wantResult: "error"},
		{name: "addon info", method: "GET", path: "/addons/self/info", header: [2]string{"Authorization", "Bearer tok"},
			wantStatus: 200, wantResult: "ok", check: func(t *testing.T, data json.RawMessage, _ string) {
				var a AddonInfo
				if err := json.Unmarshal(data, &a); err != nil || a.Slug == "" || a.State != "started" {
					t.Errorf("data = %s (%v)", data, err)
				}
			}},
		{name: "info", method: "GET", path: "/info", header: [2]string{"Authorization", "Bearer tok"}, wantStatus: 200, wantResult: "ok"},
		{name: "ping without token", method: "GET", path: "/supervisor/ping", wantStatus: 200, wantResult: "ok"},
		{name: "unknown", method: "GET", path: "/core/api/states", header: [2]string{"Authorization", "Bearer tok"}, wantStatus: 404, wantResult: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.header[0] != "" {
				req.Header.Set(tc.header[0], tc.header[1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var env struct {
				Result  string          `json:"result"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.wantStatus || env.Result != tc.wantResult {
				t.Fatalf("got %d %q (%s), want %d %q", resp.StatusCode, env.Result, env.Message, tc.wantStatus, tc.wantResult)
			}
			if env.Result == "error" && env.Message == "" {
				t.Error("error without a message")
			}
			if tc.check != nil {
				tc.check(t, env.Data, env.Message)
			}
		})
	}

	reqs := s.Requests()
	if len(reqs) != len(tests) || !reqs[0].Authorized || reqs[2].Authorized {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestMQTTServiceStates(t *testing.T) {
	s := New("tok")
	defer s.Close()
	get := func() int {
		req, _ := http.NewRequest("GET", s.URL+"/services/mqtt", nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(); got != http.StatusBadRequest {
		t.Errorf("no broker: %d, want 400 (Service not enabled)", got)
	}
	s.SetMQTT(&MQTTService{Host: "h", Port: 1})
	s.SetMQTTAccess(false)
	if got := get(); got != http.StatusForbidden {
		t.Errorf("no access: %d, want 403", got)
	}
	s.SetMQTTAccess(true)
	if got := get(); got != http.StatusOK {
		t.Errorf("broker: %d, want 200", got)
	}
	s.SetMQTTError(http.StatusServiceUnavailable, "System is not ready")
	if got := get(); got != http.StatusServiceUnavailable {
		t.Errorf("error set: %d, want 503", got)
	}
	s.SetMQTTError(0, "")
	if got := get(); got != http.StatusOK {
		t.Errorf("error cleared: %d, want 200", got)
	}
}
