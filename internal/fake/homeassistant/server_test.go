package homeassistant

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// These tests hold the fake to Home Assistant's protocol with a raw
// websocket, so a client bug cannot hide behind a matching fake bug.

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func rawDial(t *testing.T, s *Server, path string) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.URL(), "http")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	return ws
}

func read(t *testing.T, ws *websocket.Conn) map[string]any {
	t.Helper()
	var m map[string]any
	if err := ws.ReadJSON(&m); err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

func send(t *testing.T, ws *websocket.Conn, msg string) {
	t.Helper()
	if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

func authed(t *testing.T, s *Server, path, token string) *websocket.Conn {
	t.Helper()
	ws := rawDial(t, s, path)
	if m := read(t, ws); m["type"] != "auth_required" || m["ha_version"] == nil {
		t.Fatalf("first message = %v", m)
	}
	send(t, ws, `{"type":"auth","access_token":"`+token+`"}`)
	if m := read(t, ws); m["type"] != "auth_ok" {
		t.Fatalf("auth answer = %v", m)
	}
	return ws
}

func TestAuthPhase(t *testing.T) {
	s := start(t, Options{Token: "good", SupervisorToken: "sup"})
	tests := []struct {
		name, path, msg, want string
	}{
		{"wrong token", "/api/websocket", `{"type":"auth","access_token":"bad"}`, "Invalid access token or password"},
		{"supervisor token on core endpoint only", "/api/websocket", `{"type":"auth","access_token":"sup"}`, "Invalid access token or password"},
		{"not an auth message", "/api/websocket", `{"type":"ping","id":1}`, "incorrectly formatted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := rawDial(t, s, tt.path)
			read(t, ws)
			send(t, ws, tt.msg)
			m := read(t, ws)
			if m["type"] != "auth_invalid" || !strings.Contains(m["message"].(string), tt.want) {
				t.Fatalf("answer = %v", m)
			}
			if _, _, err := ws.ReadMessage(); err == nil {
				t.Fatal("the connection stayed open after auth_invalid")
			}
		})
	}
	authed(t, s, "/core/websocket", "sup")
	if a, f := s.AuthAttempts(); a != 4 || f != 3 {
		t.Fatalf("auth attempts %d failures %d", a, f)
	}
}

func TestCommandRules(t *testing.T) {
	s := start(t, Options{Token: "good"})
	s.AddTodoList("todo.shopping_list", "Shopping List", ShoppingListFeatures, TodoItem{UID: "a", Summary: "milk"})
	ws := authed(t, s, "/api/websocket", "good")
	steps := []struct {
		send string
		want string // substring of the JSON answer
	}{
		{`{"id":5,"type":"ping"}`, `"type":"pong"`},
		{`{"id":5,"type":"ping"}`, `"code":"id_reuse"`},
		{`{"id":4,"type":"ping"}`, `"code":"id_reuse"`},
		{`{"type":"ping"}`, `"code":"invalid_format"`},
		{`{"id":6,"type":"no_such"}`, `"code":"unknown_command"`},
		{`{"id":7,"type":"todo/item/list","entity_id":"todo.nope"}`, `"code":"not_found"`},
		{`{"id":8,"type":"todo/item/list","entity_id":"todo.shopping_list"}`, `"summary":"milk"`},
		{`{"id":9,"type":"call_service","domain":"todo","service":"update_item","target":{"entity_id":"todo.shopping_list"},"service_data":{"item":"a","description":"x"}}`, `"code":"service_validation_error"`},
		{`{"id":10,"type":"call_service","domain":"todo","service":"update_item","target":{"entity_id":"todo.shopping_list"},"service_data":{"item":"zzz","status":"completed"}}`, `Unable to find`},
		{`{"id":11,"type":"call_service","domain":"todo","service":"update_item","target":{"entity_id":"todo.shopping_list"},"service_data":{"item":"a"}}`, `"code":"invalid_format"`},
		{`{"id":12,"type":"call_service","domain":"todo","service":"update_item","target":{"entity_id":"todo.shopping_list"},"service_data":{"item":"a","status":"completed"}}`, `"success":true`},
		{`{"id":13,"type":"call_service","domain":"todo","service":"get_items","target":{"entity_id":"todo.shopping_list"},"return_response":true}`, `"response":{"todo.shopping_list":{"items":[{"status":"completed","summary":"milk","uid":"a"}]}}`},
		{`{"id":14,"type":"unsubscribe_events","subscription":99}`, `"code":"not_found"`},
		{`{"id":15,"type":"call_service","domain":"persistent_notification","service":"create","service_data":{"message":"hi","notification_id":"n"}}`, `"success":true`},
	}
	for _, st := range steps {
		send(t, ws, st.send)
		_, raw, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), st.want) {
			t.Fatalf("sent %s\n got %s\n want it to contain %s", st.send, raw, st.want)
		}
	}
	if s.IDReuseErrors() != 2 {
		t.Fatalf("id_reuse count = %d", s.IDReuseErrors())
	}
	if n := s.Notifications()["n"]; n.Message != "hi" {
		t.Fatalf("notification = %+v", n)
	}
}

func TestEventsAndCoalescing(t *testing.T) {
	s := start(t, Options{Token: "good", Coalesce: true})
	ws := authed(t, s, "/api/websocket", "good")
	send(t, ws, `{"id":1,"type":"supported_features","features":{"coalesce_messages":1}}`)
	frame := func() []map[string]any {
		t.Helper()
		_, raw, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var msgs []map[string]any
		if err := json.Unmarshal(raw, &msgs); err != nil {
			t.Fatalf("frame %s is not an array: %v", raw, err)
		}
		return msgs
	}
	if m := frame(); len(m) != 1 || m[0]["success"] != true {
		t.Fatalf("supported_features answer = %v", m)
	}
	send(t, ws, `{"id":2,"type":"subscribe_events","event_type":"x"}`)
	frame()
	send(t, ws, `{"id":3,"type":"fire_event","event_type":"x","event_data":{"a":1}}`)
	msgs := frame() // the event and the result share one frame
	if len(msgs) != 2 || msgs[0]["type"] != "event" || msgs[0]["id"] != 2.0 || msgs[1]["id"] != 3.0 {
		t.Fatalf("frame = %v", msgs)
	}
	ev := msgs[0]["event"].(map[string]any)
	if ev["event_type"] != "x" || ev["data"].(map[string]any)["a"] != 1.0 || ev["time_fired"] == "" {
		t.Fatalf("event = %v", ev)
	}
	s.FireEvent("y", nil) // not subscribed: nothing arrives
	s.FireEvent("x", map[string]any{"b": 2})
	if m := frame(); m[0]["event"].(map[string]any)["data"].(map[string]any)["b"] != 2.0 {
		t.Fatalf("frame = %v", m)
	}
	if got := len(s.Events()); got != 3 {
		t.Fatalf("recorded events = %d", got)
	}
}

// A restart as Home Assistant does it, on the wire: the connection drops,
// connections are refused while down, then accepted while STARTING with the
// todo entity not loaded — its state restored as unavailable, todo/item/list
// not_found, todo.update_item answered success without effect — and then
// RUNNING with homeassistant_started fired and the items kept.
func TestRestartSemantics(t *testing.T) {
	s := start(t, Options{Token: "good"})
	s.AddTodoList("todo.shopping_list", "Shopping List", ShoppingListFeatures, TodoItem{UID: "a", Summary: "milk"})
	ws := authed(t, s, "/api/websocket", "good")
	send(t, ws, `{"id":1,"type":"get_config"}`)
	if m := read(t, ws); m["result"].(map[string]any)["state"] != CoreRunning {
		t.Fatalf("get_config = %v", m)
	}

	s.Down()
	if _, _, err := ws.ReadMessage(); err == nil {
		t.Fatal("the connection survived Down")
	}
	if _, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.URL(), "http")+"/api/websocket", nil); err == nil || resp == nil || resp.StatusCode != 503 {
		t.Fatalf("dial while down: err %v, response %v; want 503", err, resp)
	}

	s.Boot()
	ws = authed(t, s, "/api/websocket", "good")
	steps := []struct{ send, want string }{
		{`{"id":1,"type":"get_config"}`, `"state":"STARTING"`},
		{`{"id":2,"type":"get_states"}`, `"state":"unavailable"`},
		{`{"id":3,"type":"todo/item/list","entity_id":"todo.shopping_list"}`, `"code":"not_found"`},
		{`{"id":4,"type":"call_service","domain":"todo","service":"update_item","target":{"entity_id":"todo.shopping_list"},"service_data":{"item":"a","status":"completed"}}`, `"success":true`},
		{`{"id":5,"type":"subscribe_events","event_type":"homeassistant_started"}`, `"success":true`},
	}
	for _, st := range steps {
		send(t, ws, st.send)
		_, raw, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), st.want) {
			t.Fatalf("sent %s while starting\n got %s\n want %s", st.send, raw, st.want)
		}
	}
	if calls := s.Calls(); len(calls) != 1 || calls[0].Changed || calls[0].Error != "" {
		t.Fatalf("the update while starting: %+v, want accepted without effect", calls)
	}

	s.FinishStartup()
	if m := read(t, ws); m["type"] != "event" || m["event"].(map[string]any)["event_type"] != EventHomeAssistantStarted {
		t.Fatalf("after FinishStartup got %v, want homeassistant_started", m)
	}
	send(t, ws, `{"id":6,"type":"todo/item/list","entity_id":"todo.shopping_list"}`)
	if _, raw, _ := ws.ReadMessage(); !strings.Contains(string(raw), `"status":"needs_action","summary":"milk"`) {
		t.Fatalf("list after the restart = %s", raw)
	}
	if s.CoreState() != CoreRunning || s.Restarts() != 1 {
		t.Fatalf("state %q, restarts %d", s.CoreState(), s.Restarts())
	}
}
