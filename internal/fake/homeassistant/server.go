// Package homeassistant is a protocol-faithful fake of Home Assistant's
// websocket API (and the small part of the Supervisor HTTP API gemini-supply
// uses), for tests of the real clients.
//
// It follows the protocol as Home Assistant implements it: auth_required →
// auth → auth_ok | auth_invalid (then the server closes); every command has
// an integer id that must strictly increase per connection (else an id_reuse
// error); results are {"id","type":"result","success",…} with
// {"code","message"} errors; ping/pong; supported_features with
// coalesce_messages (frames become JSON arrays); get_states;
// subscribe_events/unsubscribe_events; fire_event (delivered to subscribers);
// call_service for the todo and persistent_notification services; and
// todo/item/list. Todo entities carry supported_features bits the way
// Home Assistant's todo integration checks them.
//
// For assertions it records every service call and fired event, counts
// connection and auth attempts, and it can misbehave on demand: drop every
// connection, drop a connection before or after applying a service call,
// refuse connections, change the accepted token.
//
// It restarts the way Home Assistant does (Down, Boot, FinishStartup, or the
// Restart faults on a service call): every connection drops, connections are
// refused while it is down, then accepted while the core state (get_config
// "state") is STARTING and the todo entities are not loaded yet — get_states
// shows them "unavailable" (restored), todo/item/list answers not_found, and
// a todo service call on them answers success and changes nothing, as Home
// Assistant only logs that the referenced entities are missing — and finally
// RUNNING with the entities loaded and homeassistant_started fired. The
// lists' items survive the restart (Home Assistant stores them).
//
// Endpoints on http://127.0.0.1:PORT:
//
//	/api/websocket   Home Assistant's own websocket (long-lived access token)
//	/core/websocket  the Supervisor's proxy of it (SUPERVISOR_TOKEN)
//	/services/mqtt   the Supervisor's MQTT service discovery (Bearer SUPERVISOR_TOKEN)
//
// so the fake's URL works both as a Home Assistant URL and as a Supervisor URL.
package homeassistant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Version is the ha_version the fake announces.
const Version = "2025.10.0"

// Todo entity feature bits (TodoListEntityFeature in Home Assistant).
const (
	FeatureCreateItem         = 1
	FeatureDeleteItem         = 2
	FeatureUpdateItem         = 4
	FeatureMoveItem           = 8
	FeatureSetDueDate         = 16
	FeatureSetDueDatetime     = 32
	FeatureSetDescription     = 64
	ShoppingListFeatures      = FeatureCreateItem | FeatureDeleteItem | FeatureUpdateItem | FeatureMoveItem
	LocalTodoFeatures         = ShoppingListFeatures | FeatureSetDueDate | FeatureSetDueDatetime | FeatureSetDescription
	todoStatusNeedsAction     = "needs_action"
	todoStatusCompleted       = "completed"
	defaultAuthTimeout        = 10 * time.Second
	defaultOutboundQueueDepth = 4096
)

// Options configures a fake.
type Options struct {
	// Token is the long-lived access token /api/websocket accepts.
	Token string
	// SupervisorToken is the token /core/websocket and /services/mqtt accept.
	SupervisorToken string
	// Coalesce makes the fake honour a client's coalesce_messages feature by
	// sending every frame as a JSON array (of one or more messages), the way
	// Home Assistant may.
	Coalesce bool
	// AuthTimeout is how long the fake waits for the auth message (default 10 s).
	AuthTimeout time.Duration
	// MQTT is what /services/mqtt answers; nil answers "no service".
	MQTT *MQTTService
}

// MQTTService is the Supervisor's description of the MQTT broker.
type MQTTService struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	SSL      bool   `json:"ssl"`
	Username string `json:"username"`
	Password string `json:"password"`
	Protocol string `json:"protocol"`
}

// TodoItem is one item of a fake todo list.
type TodoItem struct {
	UID         string `json:"uid"`
	Summary     string `json:"summary"`
	Status      string `json:"status"`
	Description string `json:"description,omitempty"`
}

// ServiceCall is one call_service the fake received.
type ServiceCall struct {
	ConnID         int
	Domain         string
	Service        string
	EntityIDs      []string
	Data           map[string]any
	ReturnResponse bool
	// Applied: the call took effect (false when it failed or a fault dropped it first).
	Applied bool
	// Changed: applying it changed some state (a second identical update does not).
	Changed bool
	// Error is the error code sent back, if any.
	Error string
}

// FiredEvent is one event fired on the fake's bus (by a client or the test).
type FiredEvent struct {
	Type string
	Data map[string]any
}

// Notification is a persistent notification currently shown.
type Notification struct {
	ID      string
	Title   string
	Message string
}

// Fault is what the fake does with a service call (see SetServiceHook).
type Fault int

const (
	// FaultNone handles the call normally.
	FaultNone Fault = iota
	// FaultDropBeforeApply drops the connection without applying the call.
	FaultDropBeforeApply
	// FaultDropAfterApply applies the call, then drops the connection
	// before the result is sent: the client cannot know it happened.
	FaultDropAfterApply
	// FaultRestartBeforeApply takes Home Assistant down (Down) without
	// applying the call: the connection drops and new ones are refused until
	// the test calls Boot.
	FaultRestartBeforeApply
	// FaultRestartAfterApply applies the call, then takes Home Assistant
	// down before the result is sent.
	FaultRestartAfterApply
)

// Core states of Home Assistant (CoreState), as get_config reports them.
const (
	CoreNotRunning = "NOT_RUNNING"
	CoreStarting   = "STARTING"
	CoreRunning    = "RUNNING"
	CoreStopping   = "STOPPING"
)

// EventHomeAssistantStarted is fired when the core state becomes RUNNING.
const EventHomeAssistantStarted = "homeassistant_started"

type entityState struct {
	EntityID    string         `json:"entity_id"`
	State       string         `json:"state"`
	Attributes  map[string]any `json:"attributes"`
	LastChanged string         `json:"last_changed"`
	LastUpdated string         `json:"last_updated"`
	Context     map[string]any `json:"context"`
}

type todoList struct {
	name     string
	features int
	items    []*TodoItem
}

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	opts Options
	http *httptest.Server
	up   websocket.Upgrader

	mu              sync.Mutex
	token           string
	supervisorToken string
	refuse          bool
	states          map[string]*entityState
	lists           map[string]*todoList
	notifications   map[string]Notification
	mobileApps      map[string]*mobileApp // notify service name → phone
	calls           []ServiceCall
	events          []FiredEvent
	conns           map[*conn]struct{}
	connSeq         int
	upgrades        int
	authAttempts    int
	authFailures    int
	idReuse         int
	hook            func(ServiceCall) Fault
	eventHook       func(eventType string) Fault
	commandHook     func(msgType string) Fault
	arrayFrames     int
	uidSeq          int
	wg              sync.WaitGroup
	closed          bool

	// restart model
	down           bool   // refusing connections (Home Assistant stopped)
	coreState      string // get_config "state"
	language       string // get_config "language"
	entitiesLoaded bool   // the todo entities are set up
	restarts       int
}

// Start starts a fake on 127.0.0.1 with an empty state machine. Close it when done.
func Start(opts Options) (*Server, error) {
	if opts.AuthTimeout <= 0 {
		opts.AuthTimeout = defaultAuthTimeout
	}
	s := &Server{
		opts:            opts,
		token:           opts.Token,
		supervisorToken: opts.SupervisorToken,
		states:          map[string]*entityState{},
		lists:           map[string]*todoList{},
		notifications:   map[string]Notification{},
		mobileApps:      map[string]*mobileApp{},
		conns:           map[*conn]struct{}{},
		coreState:       CoreRunning,
		language:        "en",
		entitiesLoaded:  true,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/websocket", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, false) })
	mux.HandleFunc("/core/websocket", func(w http.ResponseWriter, r *http.Request) { s.serveWS(w, r, true) })
	mux.HandleFunc("/services/mqtt", s.serveMQTT)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake home assistant: listen on 127.0.0.1: %w", err)
	}
	s.http = &httptest.Server{Listener: l, Config: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	s.http.Start()
	return s, nil
}

// URL is the fake's base URL, usable as a Home Assistant URL
// (ws …/api/websocket) and as a Supervisor URL (ws …/core/websocket).
func (s *Server) URL() string { return s.http.URL }

// Close drops every connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.DropAll()
	s.http.CloseClientConnections()
	s.http.Close()
	s.wg.Wait()
}

// ---- state set-up and inspection ----

// AddTodoList creates (or replaces) a todo entity with the given feature bits
// and items. Items without a UID get one; items without a status are needs_action.
func (s *Server) AddTodoList(entityID, friendlyName string, features int, items ...TodoItem) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &todoList{name: friendlyName, features: features}
	for _, it := range items {
		it := it
		if it.UID == "" {
			it.UID = s.newUIDLocked()
		}
		if it.Status == "" {
			it.Status = todoStatusNeedsAction
		}
		l.items = append(l.items, &it)
	}
	s.lists[entityID] = l
	s.refreshTodoStateLocked(entityID)
}

// AddTodoItem appends an item as a person would in the UI and returns its uid.
func (s *Server) AddTodoItem(entityID, summary string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lists[entityID]
	if !ok {
		return "", fmt.Errorf("fake home assistant: no todo entity %s", entityID)
	}
	it := &TodoItem{UID: s.newUIDLocked(), Summary: summary, Status: todoStatusNeedsAction}
	l.items = append(l.items, it)
	s.refreshTodoStateLocked(entityID)
	return it.UID, nil
}

// EditTodoItem changes the item with uid as a person would in the UI (rename
// it, check it off, edit its description).
func (s *Server) EditTodoItem(entityID, uid string, edit func(*TodoItem)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lists[entityID]
	if !ok {
		return fmt.Errorf("fake home assistant: no todo entity %s", entityID)
	}
	for _, it := range l.items {
		if it.UID == uid {
			edit(it)
			s.refreshTodoStateLocked(entityID)
			return nil
		}
	}
	return fmt.Errorf("fake home assistant: no item %s in %s", uid, entityID)
}

// RemoveTodoItem deletes the item with uid as a person would in the UI.
func (s *Server) RemoveTodoItem(entityID, uid string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lists[entityID]
	if !ok {
		return fmt.Errorf("fake home assistant: no todo entity %s", entityID)
	}
	for i, it := range l.items {
		if it.UID == uid {
			l.items = append(l.items[:i], l.items[i+1:]...)
			s.refreshTodoStateLocked(entityID)
			return nil
		}
	}
	return fmt.Errorf("fake home assistant: no item %s in %s", uid, entityID)
}

// TodoItems returns a copy of a todo entity's items in list order.
func (s *Server) TodoItems(entityID string) []TodoItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lists[entityID]
	if !ok {
		return nil
	}
	out := make([]TodoItem, 0, len(l.items))
	for _, it := range l.items {
		out = append(out, *it)
	}
	return out
}

// SetState sets a plain entity state (for get_states).
func (s *Server) SetState(entityID, state string, attributes map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setStateLocked(entityID, state, attributes)
}

// Notifications returns the persistent notifications currently shown, by id.
func (s *Server) Notifications() map[string]Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Notification, len(s.notifications))
	for k, v := range s.notifications {
		out[k] = v
	}
	return out
}

// Calls returns every service call received so far, in order.
func (s *Server) Calls() []ServiceCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ServiceCall(nil), s.calls...)
}

// Events returns every event fired so far (by clients and by FireEvent), in order.
func (s *Server) Events() []FiredEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FiredEvent(nil), s.events...)
}

// EventsOfType returns the fired events of one type, in order.
func (s *Server) EventsOfType(eventType string) []FiredEvent {
	var out []FiredEvent
	for _, e := range s.Events() {
		if e.Type == eventType {
			out = append(out, e)
		}
	}
	return out
}

// Upgrades is how many websocket connections were accepted so far.
func (s *Server) Upgrades() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.upgrades
}

// AuthAttempts is how many auth messages were received; AuthFailures how many got auth_invalid.
func (s *Server) AuthAttempts() (attempts, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authAttempts, s.authFailures
}

// IDReuseErrors is how many id_reuse errors the fake has sent.
func (s *Server) IDReuseErrors() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.idReuse
}

// ActiveConnections is the number of authenticated connections now open.
func (s *Server) ActiveConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if c.authed {
			n++
		}
	}
	return n
}

// Subscriptions is the number of live subscribe_events subscriptions for
// eventType ("" counts subscriptions to every event type) across connections.
func (s *Server) Subscriptions(eventType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		for _, t := range c.subs {
			if t == eventType {
				n++
			}
		}
	}
	return n
}

// ---- misbehaviour ----

// SetToken changes the accepted long-lived token (a revoked token).
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = token
}

// SetRefuse makes the websocket endpoints answer 503 (Home Assistant down) while on.
func (s *Server) SetRefuse(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = refuse
}

// SetServiceHook installs a function deciding, per service call, whether to
// misbehave. nil removes it.
func (s *Server) SetServiceHook(hook func(ServiceCall) Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = hook
}

// SetEventHook is SetServiceHook for fire_event commands from clients.
func (s *Server) SetEventHook(hook func(eventType string) Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eventHook = hook
}

// SetCommandHook is SetServiceHook for every other command (get_states,
// todo/item/list, subscribe_events, ping…); any fault drops the connection
// without an answer.
func (s *Server) SetCommandHook(hook func(msgType string) Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commandHook = hook
}

// MuteAll makes every open connection stop answering (a half-open TCP
// connection): commands are read and ignored. New connections are not muted.
func (s *Server) MuteAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.muted = true
	}
}

// ArrayFrames is how many coalesced (JSON array) frames the fake has sent.
func (s *Server) ArrayFrames() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.arrayFrames
}

// DropAll closes every open connection abruptly (no close frame), as a
// network failure or a Home Assistant restart would.
func (s *Server) DropAll() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
		delete(s.conns, c) // gone at once: no event reaches a dropped connection
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.drop()
	}
}

// dropConn removes c from the server and closes it (s.mu not held).
func (s *Server) dropConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.drop()
}

// FireEvent fires an event on the fake's bus as Home Assistant itself (an
// automation, a script) would, delivering it to subscribers.
func (s *Server) FireEvent(eventType string, data map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fireLocked(eventType, data, nil, nil)
}

// PingClients sends a websocket-level ping to every authenticated connection
// and waits for each pong (bounded by ctx).
func (s *Server) PingClients(ctx context.Context) error {
	s.mu.Lock()
	var conns []*conn
	for c := range s.conns {
		if c.authed {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	if len(conns) == 0 {
		return errors.New("fake home assistant: no authenticated connection to ping")
	}
	for _, c := range conns {
		payload := []byte(fmt.Sprintf("fake-%d", time.Now().UnixNano()))
		if err := c.ws.WriteControl(websocket.PingMessage, payload, time.Now().Add(5*time.Second)); err != nil {
			return fmt.Errorf("fake home assistant: ping: %w", err)
		}
		select {
		case got := <-c.pongs:
			if got != string(payload) {
				return fmt.Errorf("fake home assistant: pong carried %q, want %q", got, payload)
			}
		case <-ctx.Done():
			return fmt.Errorf("fake home assistant: no pong: %w", ctx.Err())
		}
	}
	return nil
}

// ---- restarts ----

// Down stops Home Assistant: every connection drops at once and new ones are
// refused (503, as the Supervisor's proxy answers) until Boot. The core state
// is NOT_RUNNING and the todo entities are unloaded; their items are kept.
func (s *Server) Down() {
	s.mu.Lock()
	s.down = true
	s.restarts++
	s.coreState = CoreNotRunning
	s.entitiesLoaded = false
	for eid := range s.lists {
		s.refreshTodoStateLocked(eid)
	}
	s.mu.Unlock()
	s.DropAll()
}

// Boot starts Home Assistant again after Down: connections are accepted, the
// core state is STARTING and the todo entities are not loaded yet (see the
// package doc) until FinishStartup.
func (s *Server) Boot() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
	s.coreState = CoreStarting
	s.fireLocked("homeassistant_start", nil, nil, nil)
}

// FinishStartup loads the todo entities, makes the core state RUNNING and
// fires homeassistant_started.
func (s *Server) FinishStartup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
	s.entitiesLoaded = true
	for eid := range s.lists {
		s.refreshTodoStateLocked(eid)
	}
	s.coreState = CoreRunning
	s.fireLocked(EventHomeAssistantStarted, nil, nil, nil)
}

// SetEntitiesLoaded loads or unloads the todo entities without changing the
// core state (an integration still setting up after startup, or reloaded).
func (s *Server) SetEntitiesLoaded(loaded bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entitiesLoaded = loaded
	for eid := range s.lists {
		s.refreshTodoStateLocked(eid)
	}
}

// SetLanguage sets the language get_config reports (default "en").
func (s *Server) SetLanguage(lang string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.language = lang
}

// CoreState is the core state get_config reports ("" while down: nothing answers).
func (s *Server) CoreState() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return ""
	}
	return s.coreState
}

// Restarts is how many times Home Assistant went down (Down or a Restart fault).
func (s *Server) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// AppliedUpdates is how many todo service calls changed the item with uid
// (an update applied twice counts twice; one that changed nothing, not at all).
func (s *Server) AppliedUpdates(uid string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c.Domain == "todo" && c.Changed && c.Data["item"] == uid {
			n++
		}
	}
	return n
}

// list returns the loaded todo list eid (nil when it does not exist or is
// not loaded yet). s.mu must be held.
func (s *Server) listLocked(eid string) *todoList {
	if !s.entitiesLoaded {
		return nil
	}
	return s.lists[eid]
}

// ---- Supervisor HTTP API ----

func (s *Server) serveMQTT(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	tok := s.supervisorToken
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if tok == "" || r.Header.Get("Authorization") != "Bearer "+tok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"result":"error","message":"Unauthorized"}`))
		return
	}
	if r.Method != http.MethodGet {
		w.WriteHeader(http.StatusMethodNotAllowed)
		_, _ = w.Write([]byte(`{"result":"error","message":"Method not allowed"}`))
		return
	}
	if s.opts.MQTT == nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"result":"error","message":"No mqtt service available"}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"result": "ok", "data": s.opts.MQTT})
}

// ---- websocket ----

type conn struct {
	s          *Server
	id         int
	ws         *websocket.Conn
	supervisor bool
	out        chan []any
	pongs      chan string
	done       chan struct{}
	dropOnce   sync.Once

	// guarded by s.mu
	authed   bool
	muted    bool
	coalesce bool
	lastID   int64
	subs     map[int64]string
}

func (c *conn) drop() {
	c.dropOnce.Do(func() {
		close(c.done)
		_ = c.ws.UnderlyingConn().Close()
	})
}

// enqueue queues one frame's worth of messages; a client too slow to keep up
// is dropped, as Home Assistant does.
func (c *conn) enqueue(batch []any) {
	if len(batch) == 0 {
		return
	}
	select {
	case <-c.done:
	case c.out <- batch:
	default:
		c.drop()
	}
}

func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, supervisor bool) {
	s.mu.Lock()
	refuse := s.refuse || s.down || s.closed
	s.mu.Unlock()
	if refuse {
		http.Error(w, "503: Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	ws, err := s.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.connSeq++
	s.upgrades++
	c := &conn{
		s: s, id: s.connSeq, ws: ws, supervisor: supervisor,
		out: make(chan []any, defaultOutboundQueueDepth), pongs: make(chan string, 4),
		done: make(chan struct{}), subs: map[int64]string{},
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	closing := s.closed
	s.mu.Unlock()
	defer s.wg.Done()
	if closing {
		c.drop()
	}
	defer func() {
		c.drop()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	ws.SetPongHandler(func(p string) error {
		select {
		case c.pongs <- p:
		default:
		}
		return nil
	})
	if !s.authenticate(c) {
		return
	}
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.writeLoop()
	}()
	defer func() { <-writerDone }()
	c.readLoop()
}

func (s *Server) authenticate(c *conn) bool {
	if err := c.ws.WriteJSON(map[string]any{"type": "auth_required", "ha_version": Version}); err != nil {
		return false
	}
	_ = c.ws.SetReadDeadline(time.Now().Add(s.opts.AuthTimeout))
	_, raw, err := c.ws.ReadMessage()
	if err != nil {
		return false
	}
	_ = c.ws.SetReadDeadline(time.Time{})
	var msg struct {
		Type        string  `json:"type"`
		AccessToken *string `json:"access_token"`
	}
	s.mu.Lock()
	s.authAttempts++
	want := s.token
	if c.supervisor {
		want = s.supervisorToken
	}
	s.mu.Unlock()
	invalid := func(m string) bool {
		s.mu.Lock()
		s.authFailures++
		s.mu.Unlock()
		_ = c.ws.WriteJSON(map[string]any{"type": "auth_invalid", "message": m})
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		return false
	}
	if err := json.Unmarshal(raw, &msg); err != nil || msg.Type != "auth" || msg.AccessToken == nil {
		return invalid("Auth message incorrectly formatted: expected an auth message with access_token")
	}
	if want == "" || *msg.AccessToken != want {
		return invalid("Invalid access token or password")
	}
	if err := c.ws.WriteJSON(map[string]any{"type": "auth_ok", "ha_version": Version}); err != nil {
		return false
	}
	s.mu.Lock()
	c.authed = true
	s.mu.Unlock()
	return true
}

func (c *conn) writeLoop() {
	for {
		select {
		case <-c.done:
			return
		case batch := <-c.out:
			// Take whatever else is queued too: one frame when coalescing.
		more:
			for {
				select {
				case b := <-c.out:
					batch = append(batch, b...)
				default:
					break more
				}
			}
			c.s.mu.Lock()
			coalesce := c.coalesce && c.s.opts.Coalesce
			if coalesce {
				c.s.arrayFrames++
			}
			c.s.mu.Unlock()
			if coalesce {
				if err := c.ws.WriteJSON(batch); err != nil {
					c.drop()
					return
				}
				continue
			}
			for _, m := range batch {
				if err := c.ws.WriteJSON(m); err != nil {
					c.drop()
					return
				}
			}
		}
	}
}

func (c *conn) readLoop() {
	for {
		_, raw, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		trimmed := strings.TrimSpace(string(raw))
		var msgs []map[string]any
		if strings.HasPrefix(trimmed, "[") {
			if err := json.Unmarshal(raw, &msgs); err != nil {
				c.enqueue([]any{errorMessage(nil, "invalid_format", "Message incorrectly formatted.")})
				continue
			}
		} else {
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				c.enqueue([]any{errorMessage(nil, "invalid_format", "Message incorrectly formatted.")})
				continue
			}
			msgs = []map[string]any{m}
		}
		for _, m := range msgs {
			if !c.handle(m) {
				return
			}
			select {
			case <-c.done:
				return
			default:
			}
		}
	}
}

// handle processes one command; false means the connection was dropped.
func (c *conn) handle(m map[string]any) bool {
	s := c.s
	idf, ok := m["id"].(float64)
	typ, _ := m["type"].(string)
	if !ok || idf != float64(int64(idf)) || typ == "" {
		c.enqueue([]any{errorMessage(m["id"], "invalid_format", "Message incorrectly formatted.")})
		return true
	}
	id := int64(idf)
	s.mu.Lock()
	if c.muted {
		s.mu.Unlock()
		return true
	}
	if id <= c.lastID {
		s.idReuse++
		s.mu.Unlock()
		c.enqueue([]any{errorMessage(id, "id_reuse", "Identifier values have to increase.")})
		return true
	}
	c.lastID = id
	hook := s.commandHook
	s.mu.Unlock()

	fault := FaultNone
	if hook != nil && typ != "call_service" && typ != "fire_event" {
		fault = hook(typ)
	}
	if fault != FaultNone {
		// These commands change nothing: either fault drops the connection
		// without an answer.
		s.dropConn(c)
		return false
	}

	switch typ {
	case "ping":
		c.enqueue([]any{map[string]any{"id": id, "type": "pong"}})
	case "supported_features":
		features, _ := m["features"].(map[string]any)
		s.mu.Lock()
		if v, _ := features["coalesce_messages"].(float64); v == 1 {
			c.coalesce = true
		}
		s.mu.Unlock()
		c.enqueue([]any{resultMessage(id, nil)})
	case "get_config":
		s.mu.Lock()
		cfg := map[string]any{
			"location_name": "Home", "time_zone": "America/Toronto", "version": Version,
			"state": s.coreState, "components": []string{"todo", "persistent_notification", "websocket_api"},
			"unit_system": map[string]any{"length": "km", "temperature": "°C"}, "currency": "CAD",
			"recovery_mode": false, "safe_mode": false, "language": s.language, "country": "CA",
		}
		s.mu.Unlock()
		c.enqueue([]any{resultMessage(id, cfg)})
	case "get_states":
		s.mu.Lock()
		ids := make([]string, 0, len(s.states))
		for k := range s.states {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		states := make([]any, 0, len(ids))
		for _, k := range ids {
			states = append(states, *s.states[k])
		}
		s.mu.Unlock()
		c.enqueue([]any{resultMessage(id, states)})
	case "subscribe_events":
		et, _ := m["event_type"].(string)
		s.mu.Lock()
		c.subs[id] = et
		s.mu.Unlock()
		c.enqueue([]any{resultMessage(id, nil)})
	case "unsubscribe_events":
		subf, _ := m["subscription"].(float64)
		s.mu.Lock()
		_, found := c.subs[int64(subf)]
		delete(c.subs, int64(subf))
		s.mu.Unlock()
		if !found {
			c.enqueue([]any{errorMessage(id, "not_found", "Subscription not found.")})
		} else {
			c.enqueue([]any{resultMessage(id, nil)})
		}
	case "fire_event":
		et, _ := m["event_type"].(string)
		if et == "" {
			c.enqueue([]any{errorMessage(id, "invalid_format", "required key not provided @ data['event_type']. Got None")})
			return true
		}
		data, _ := m["event_data"].(map[string]any)
		s.mu.Lock()
		hook := s.eventHook
		s.mu.Unlock()
		fault := FaultNone
		if hook != nil {
			fault = hook(et)
		}
		if fault == FaultDropBeforeApply {
			s.dropConn(c)
			return false
		}
		var batch []any
		s.mu.Lock()
		ctx := s.fireLocked(et, data, c, &batch)
		s.mu.Unlock()
		if fault == FaultDropAfterApply {
			s.dropConn(c)
			return false
		}
		c.enqueue(append(batch, resultMessage(id, map[string]any{"context": ctx})))
	case "todo/item/list":
		eid, _ := m["entity_id"].(string)
		s.mu.Lock()
		l := s.listLocked(eid)
		found := l != nil
		var items []any
		if found {
			for _, it := range l.items {
				items = append(items, todoItemJSON(it))
			}
		}
		s.mu.Unlock()
		if !found {
			c.enqueue([]any{errorMessage(id, "not_found", "Entity not found")})
			return true
		}
		if items == nil {
			items = []any{}
		}
		c.enqueue([]any{resultMessage(id, map[string]any{"items": items})})
	case "call_service":
		return c.callService(id, m)
	default:
		c.enqueue([]any{errorMessage(id, "unknown_command", "Unknown command.")})
	}
	return true
}

func (c *conn) callService(id int64, m map[string]any) bool {
	s := c.s
	domain, _ := m["domain"].(string)
	service, _ := m["service"].(string)
	data, _ := m["service_data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	returnResponse, _ := m["return_response"].(bool)
	var entityIDs []string
	if t, ok := m["target"].(map[string]any); ok {
		entityIDs = append(entityIDs, stringList(t["entity_id"])...)
	}
	if v, ok := data["entity_id"]; ok {
		entityIDs = append(entityIDs, stringList(v)...)
		delete(data, "entity_id")
	}
	call := ServiceCall{ConnID: c.id, Domain: domain, Service: service, EntityIDs: entityIDs, Data: data, ReturnResponse: returnResponse}

	s.mu.Lock()
	hook := s.hook
	s.mu.Unlock()
	fault := FaultNone
	if hook != nil {
		fault = hook(call)
	}
	switch fault {
	case FaultDropBeforeApply, FaultRestartBeforeApply:
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.mu.Unlock()
		if fault == FaultRestartBeforeApply {
			s.Down()
		} else {
			s.dropConn(c)
		}
		return false
	}

	s.mu.Lock()
	res, svcErr := s.applyServiceLocked(&call)
	if svcErr != nil {
		call.Error = svcErr.code
	}
	s.calls = append(s.calls, call)
	s.mu.Unlock()

	switch fault {
	case FaultDropAfterApply:
		s.dropConn(c)
		return false
	case FaultRestartAfterApply:
		s.Down()
		return false
	}
	if svcErr != nil {
		msg := errorMessage(id, svcErr.code, svcErr.message)
		if svcErr.translationKey != "" {
			e := msg["error"].(map[string]any)
			e["translation_key"], e["translation_domain"] = svcErr.translationKey, "todo"
		}
		c.enqueue([]any{msg})
		return true
	}
	result := map[string]any{"context": newContext()}
	if returnResponse {
		result["response"] = res
	}
	c.enqueue([]any{resultMessage(id, result)})
	return true
}

type serviceError struct{ code, message, translationKey string }

func validationError(msg string) *serviceError {
	return &serviceError{code: "service_validation_error", message: "Validation error: " + msg}
}

// itemNotFound is the todo integration's ServiceValidationError for an item
// that is not on the list (translation key item_not_found).
func itemNotFound(ref string) *serviceError {
	e := validationError("Unable to find to-do list item: " + ref)
	e.translationKey = "item_not_found"
	return e
}

// applyServiceLocked runs a service call; it sets call.Applied/Changed.
func (s *Server) applyServiceLocked(call *ServiceCall) (any, *serviceError) {
	key := call.Domain + "." + call.Service
	responds := key == "todo.get_items"
	switch key {
	case "todo.add_item", "todo.update_item", "todo.remove_item", "todo.get_items",
		"persistent_notification.create", "persistent_notification.dismiss":
	default:
		if call.Domain == "notify" && s.mobileApps[call.Service] != nil {
			break
		}
		return nil, &serviceError{code: "not_found", message: "Service not found."}
	}
	if responds && !call.ReturnResponse {
		return nil, validationError("The action requires responses and must be called with return_response=True")
	}
	if !responds && call.ReturnResponse {
		return nil, validationError("An action which does not return responses can't be called with return_response=True")
	}
	switch call.Domain {
	case "persistent_notification":
		return nil, s.notificationServiceLocked(call)
	case "notify":
		return nil, s.mobileAppServiceLocked(call)
	}
	if len(call.EntityIDs) == 0 {
		return nil, &serviceError{code: "invalid_format", message: "Entity ID is required (target entity_id)"}
	}
	// todo entity services: entities that do not exist, or are not loaded
	// yet while Home Assistant starts, are skipped, as Home Assistant does
	// (it only logs "Referenced entities … are missing or not currently
	// available") — and the call still answers success.
	response := map[string]any{}
	for _, eid := range call.EntityIDs {
		l := s.listLocked(eid)
		if l == nil {
			continue
		}
		r, err := s.todoServiceLocked(eid, l, call)
		if err != nil {
			return nil, err
		}
		if r != nil {
			response[eid] = r
		}
	}
	call.Applied = true
	if responds {
		return response, nil
	}
	return nil, nil
}

func (s *Server) notificationServiceLocked(call *ServiceCall) *serviceError {
	switch call.Service {
	case "create":
		msg, ok := call.Data["message"].(string)
		if !ok {
			return &serviceError{code: "invalid_format", message: "required key not provided @ data['message']"}
		}
		title, _ := call.Data["title"].(string)
		nid, _ := call.Data["notification_id"].(string)
		if nid == "" {
			nid = s.newUIDLocked()
		}
		n := Notification{ID: nid, Title: title, Message: msg}
		call.Changed = s.notifications[nid] != n
		s.notifications[nid] = n
	case "dismiss":
		nid, ok := call.Data["notification_id"].(string)
		if !ok {
			return &serviceError{code: "invalid_format", message: "required key not provided @ data['notification_id']"}
		}
		_, call.Changed = s.notifications[nid]
		delete(s.notifications, nid)
	}
	call.Applied = true
	return nil
}

var todoFieldFeature = map[string]int{
	"due_date":     FeatureSetDueDate,
	"due_datetime": FeatureSetDueDatetime,
	"description":  FeatureSetDescription,
}

func (s *Server) todoServiceLocked(eid string, l *todoList, call *ServiceCall) (any, *serviceError) {
	checkFields := func() *serviceError {
		for f, bit := range todoFieldFeature {
			if _, ok := call.Data[f]; ok && l.features&bit == 0 {
				return validationError("Entity does not support setting field: " + f)
			}
		}
		return nil
	}
	find := func(ref string) *TodoItem {
		for _, it := range l.items {
			if it.UID == ref || it.Summary == ref {
				return it
			}
		}
		return nil
	}
	switch call.Service {
	case "add_item":
		if l.features&FeatureCreateItem == 0 {
			return nil, &serviceError{code: "home_assistant_error", message: "Entity " + eid + " does not support this service."}
		}
		name, _ := call.Data["item"].(string)
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, &serviceError{code: "invalid_format", message: "length of value must be at least 1 for dictionary value @ data['item']"}
		}
		if err := checkFields(); err != nil {
			return nil, err
		}
		desc, _ := call.Data["description"].(string)
		l.items = append(l.items, &TodoItem{UID: s.newUIDLocked(), Summary: name, Status: todoStatusNeedsAction, Description: desc})
		call.Changed = true
	case "update_item":
		if l.features&FeatureUpdateItem == 0 {
			return nil, &serviceError{code: "home_assistant_error", message: "Entity " + eid + " does not support this service."}
		}
		ref, _ := call.Data["item"].(string)
		_, hasRename := call.Data["rename"]
		_, hasStatus := call.Data["status"]
		_, hasDesc := call.Data["description"]
		if !hasRename && !hasStatus && !hasDesc {
			return nil, &serviceError{code: "invalid_format", message: "must contain at least one of rename, status, due_date, due_datetime, description."}
		}
		if st, ok := call.Data["status"].(string); hasStatus && (!ok || (st != todoStatusNeedsAction && st != todoStatusCompleted)) {
			return nil, &serviceError{code: "invalid_format", message: "value must be one of ['completed', 'needs_action'] for dictionary value @ data['status']"}
		}
		if err := checkFields(); err != nil {
			return nil, err
		}
		it := find(ref)
		if it == nil {
			return nil, itemNotFound(ref)
		}
		before := *it
		if r, ok := call.Data["rename"].(string); ok && strings.TrimSpace(r) != "" {
			it.Summary = strings.TrimSpace(r)
		}
		if st, ok := call.Data["status"].(string); ok {
			it.Status = st
		}
		if d, ok := call.Data["description"]; ok {
			ds, _ := d.(string)
			it.Description = ds
		}
		call.Changed = *it != before
	case "remove_item":
		if l.features&FeatureDeleteItem == 0 {
			return nil, &serviceError{code: "home_assistant_error", message: "Entity " + eid + " does not support this service."}
		}
		for _, ref := range stringList(call.Data["item"]) {
			it := find(ref)
			if it == nil {
				return nil, itemNotFound(ref)
			}
			for i, x := range l.items {
				if x == it {
					l.items = append(l.items[:i], l.items[i+1:]...)
					break
				}
			}
			call.Changed = true
		}
	case "get_items":
		statuses := stringList(call.Data["status"])
		items := []any{}
		for _, it := range l.items {
			if len(statuses) == 0 || contains(statuses, it.Status) {
				items = append(items, todoItemJSON(it))
			}
		}
		return map[string]any{"items": items}, nil
	}
	s.refreshTodoStateLocked(eid)
	return nil, nil
}

// fireLocked records an event and delivers it to every subscription; the
// messages for the firing connection go into own (so they share its frame).
func (s *Server) fireLocked(eventType string, data map[string]any, self *conn, own *[]any) map[string]any {
	return s.fireOriginLocked(eventType, data, "LOCAL", self, own)
}

// fireOriginLocked is fireLocked with the event's origin ("REMOTE" for the
// events the companion app fires through the mobile_app webhook).
func (s *Server) fireOriginLocked(eventType string, data map[string]any, origin string, self *conn, own *[]any) map[string]any {
	return s.fireAsLocked(eventType, data, origin, "", self, own)
}

// fireAsLocked is fireOriginLocked with a user in the event's context ("":
// none, as for events Home Assistant fires itself).
func (s *Server) fireAsLocked(eventType string, data map[string]any, origin, userID string, self *conn, own *[]any) map[string]any {
	if data == nil {
		data = map[string]any{}
	}
	s.events = append(s.events, FiredEvent{Type: eventType, Data: data})
	ctx := newContext()
	if userID != "" {
		ctx["user_id"] = userID
	}
	ev := map[string]any{
		"event_type": eventType,
		"data":       data,
		"origin":     origin,
		"time_fired": time.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00"),
		"context":    ctx,
	}
	for c := range s.conns {
		var ids []int64
		for subID, t := range c.subs {
			if t == "" || t == eventType {
				ids = append(ids, subID)
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, subID := range ids {
			msg := map[string]any{"id": subID, "type": "event", "event": ev}
			if c == self && own != nil {
				*own = append(*own, msg)
			} else {
				c.enqueue([]any{msg})
			}
		}
	}
	return ctx
}

func (s *Server) setStateLocked(entityID, state string, attributes map[string]any) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if attributes == nil {
		attributes = map[string]any{}
	}
	s.states[entityID] = &entityState{
		EntityID: entityID, State: state, Attributes: attributes,
		LastChanged: now, LastUpdated: now, Context: newContext(),
	}
}

func (s *Server) refreshTodoStateLocked(entityID string) {
	l := s.lists[entityID]
	open := 0
	for _, it := range l.items {
		if it.Status == todoStatusNeedsAction {
			open++
		}
	}
	if !s.entitiesLoaded {
		// Restored from the entity registry until the integration loads it.
		s.setStateLocked(entityID, "unavailable", map[string]any{
			"friendly_name": l.name, "supported_features": l.features, "restored": true,
		})
		return
	}
	s.setStateLocked(entityID, fmt.Sprint(open), map[string]any{
		"friendly_name":      l.name,
		"supported_features": l.features,
	})
}

func (s *Server) newUIDLocked() string {
	s.uidSeq++
	return fmt.Sprintf("%08x-fake-%04d", s.uidSeq*2654435761%4294967296, s.uidSeq)
}

func todoItemJSON(it *TodoItem) map[string]any {
	m := map[string]any{"uid": it.UID, "summary": it.Summary, "status": it.Status}
	if it.Description != "" {
		m["description"] = it.Description
	}
	return m
}

func resultMessage(id int64, result any) map[string]any {
	return map[string]any{"id": id, "type": "result", "success": true, "result": result}
}

func errorMessage(id any, code, message string) map[string]any {
	return map[string]any{"id": id, "type": "result", "success": false,
		"error": map[string]any{"code": code, "message": message}}
}

func newContext() map[string]any {
	var b [13]byte
	_, _ = rand.Read(b[:])
	return map[string]any{"id": strings.ToUpper(hex.EncodeToString(b[:]))[:26], "parent_id": nil, "user_id": nil}
}

func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
