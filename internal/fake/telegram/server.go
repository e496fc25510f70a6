// Package telegram is a protocol-faithful fake of the Telegram Bot API for
// tests: an httptest server that answers at the endpoint format the real
// client library uses ("http://127.0.0.1:PORT/bot%s/%s"), so
// go-telegram-bot-api talks to it exactly as it talks to api.telegram.org.
//
// It implements getMe, sendMessage (form-encoded, JSON and query parameters),
// editMessageText, answerCallbackQuery, deleteWebhook and getUpdates with
// offsets and bounded long polling. Tests inject user messages and button
// presses from any chat, switch on failure modes (connection drops, 500, 401)
// and wait for what the bot sent through notifications rather than sleeps.
//
// It is a non-test package so tests of other packages (the shopping run, the
// command line) can use it too.
package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxPollTimeout caps the long-poll wait a client may ask getUpdates for, so
// a test can never hang on the fake.
const MaxPollTimeout = 10 * time.Second

// Mode is a failure mode of the fake.
type Mode int

const (
	// ModeOK answers normally.
	ModeOK Mode = iota
	// ModeDown drops the connection without an HTTP response, as an
	// unreachable server or a broken network does.
	ModeDown
	// Mode500 answers 500 Internal Server Error.
	Mode500
	// Mode401 answers 401 Unauthorized, as for a revoked token.
	Mode401
	// Mode403 answers 403 Forbidden ("bot was blocked by the user").
	Mode403
	// Mode409 answers 409 Conflict, as Telegram does to getUpdates while
	// another program polls the same bot (or a webhook is set).
	Mode409
)

// Button is one inline keyboard button.
type Button struct {
	Text string `json:"text"`
	Data string `json:"callback_data,omitempty"`
}

// Message is a message the bot sent, in its current state (after edits).
type Message struct {
	ID        int
	ChatID    int64
	Text      string
	ParseMode string
	// Keyboard is the inline keyboard, row by row; nil when there is none.
	Keyboard [][]Button
	// Edits counts editMessageText calls on this message.
	Edits int
	// Seq orders messages and edits: it grows with every send or edit.
	Seq int
}

// Buttons returns every button of the keyboard in row order.
func (m Message) Buttons() []Button {
	var out []Button
	for _, row := range m.Keyboard {
		out = append(out, row...)
	}
	return out
}

// Callback is an answerCallbackQuery the bot made.
type Callback struct {
	ID   string
	Text string
}

// Server is the fake Bot API. Create it with NewServer; Close it when done.
type Server struct {
	srv   *httptest.Server
	token string
	bot   user

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	nextMsgID int
	seq       int
	messages  []*Message
	updates   []update // pending (unconfirmed) updates, ascending IDs
	nextUpd   int
	nextCB    int
	callbacks []Callback
	userMsgs  map[int]*wireMessage // messages the users wrote, for EditText
	// allowed is the last allowed_updates a getUpdates asked for (nil: never
	// set, Telegram's default of every common type). Like Telegram, it
	// applies to updates created after it was set: ones already waiting
	// are still delivered.
	allowed  []string
	calls    map[string]int
	failures map[string]Mode // method ("" = all) → mode
	closed   bool
}

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	UserName  string `json:"username,omitempty"`
}

type chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

type wireMessage struct {
	MessageID   int             `json:"message_id"`
	From        *user           `json:"from,omitempty"`
	Chat        chat            `json:"chat"`
	Date        int64           `json:"date"`
	EditDate    int64           `json:"edit_date,omitempty"`
	Text        string          `json:"text,omitempty"`
	ReplyMarkup *inlineKeyboard `json:"reply_markup,omitempty"`
}

type inlineKeyboard struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"`
}

type callbackQuery struct {
	ID           string       `json:"id"`
	From         user         `json:"from"`
	Message      *wireMessage `json:"message,omitempty"`
	ChatInstance string       `json:"chat_instance"`
	Data         string       `json:"data,omitempty"`
}

type update struct {
	UpdateID      int            `json:"update_id"`
	Message       *wireMessage   `json:"message,omitempty"`
	EditedMessage *wireMessage   `json:"edited_message,omitempty"`
	CallbackQuery *callbackQuery `json:"callback_query,omitempty"`
}

// kind is the update's type as allowed_updates names it.
func (u update) kind() string {
	switch {
	case u.Message != nil:
		return "message"
	case u.EditedMessage != nil:
		return "edited_message"
	case u.CallbackQuery != nil:
		return "callback_query"
	}
	return ""
}

// NewServer starts a fake Bot API on 127.0.0.1 that accepts token.
func NewServer(token string) *Server {
	s := &Server{
		token:     token,
		bot:       user{ID: 7000001, IsBot: true, FirstName: "Gemini Supply", UserName: "gemini_supply_bot"},
		changed:   make(chan struct{}),
		nextMsgID: 1,
		nextUpd:   1,
		calls:     map[string]int{},
		failures:  map[string]Mode{},
		userMsgs:  map[int]*wireMessage{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Close stops the server; pending long polls return at once.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.notifyLocked()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Endpoint is the API endpoint in go-telegram-bot-api's format: "%s" for the
// token, then "%s" for the method.
func (s *Server) Endpoint() string { return s.srv.URL + "/bot%s/%s" }

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Token is the token the server accepts.
func (s *Server) Token() string { return s.token }

// BotUserName is the bot's @username reported by getMe.
func (s *Server) BotUserName() string { return s.bot.UserName }

// SetFailure makes the named methods (all methods when none are named) fail
// in the given mode. ModeOK restores the named methods, or every method when
// none are named.
func (s *Server) SetFailure(mode Mode, methods ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(methods) == 0 {
		if mode == ModeOK {
			clear(s.failures)
			s.notifyLocked()
			return
		}
		methods = []string{""}
	}
	for _, m := range methods {
		if mode == ModeOK {
			delete(s.failures, m)
		} else {
			s.failures[m] = mode
		}
	}
	s.notifyLocked()
}

// Calls is how many requests the server received for method (any outcome).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Messages returns every message the bot sent, in send order, as they are now.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = cloneMessage(m)
	}
	return out
}

// Message returns the message with the given id.
func (s *Server) Message(id int) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		if m.ID == id {
			return cloneMessage(m), true
		}
	}
	return Message{}, false
}

// Callbacks returns the answerCallbackQuery calls received, in order.
func (s *Server) Callbacks() []Callback {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.callbacks)
}

// WaitMessage waits until a sent message (in its current state, so edits
// count) satisfies match, and returns the first one in send order. It returns
// ctx's error, wrapped, when ctx ends first.
func (s *Server) WaitMessage(ctx context.Context, match func(Message) bool) (Message, error) {
	for {
		s.mu.Lock()
		for _, m := range s.messages {
			if c := cloneMessage(m); match(c) {
				s.mu.Unlock()
				return c, nil
			}
		}
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if closed {
			return Message{}, errors.New("fake telegram: server closed while waiting for a message")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Message{}, fmt.Errorf("fake telegram: no matching message sent: %w", ctx.Err())
		}
	}
}

// WaitCalls waits until the server has received at least n requests for method.
func (s *Server) WaitCalls(ctx context.Context, method string, n int) error {
	for {
		s.mu.Lock()
		got, ch := s.calls[method], s.changed
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("fake telegram: %d of %d %s calls: %w", got, n, method, ctx.Err())
		}
	}
}

// WaitCallback waits until the bot has answered at least n callback queries
// and returns them.
func (s *Server) WaitCallback(ctx context.Context, n int) ([]Callback, error) {
	for {
		s.mu.Lock()
		got, ch := slices.Clone(s.callbacks), s.changed
		s.mu.Unlock()
		if len(got) >= n {
			return got, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return got, fmt.Errorf("fake telegram: %d of %d callback answers: %w", len(got), n, ctx.Err())
		}
	}
}

// SendText injects a text message written by the user of chatID and returns
// the update id.
func (s *Server) SendText(chatID int64, text string) int {
	u, _ := s.Write(chatID, text)
	return u
}

// Write is SendText returning the message id as well (for EditText).
func (s *Server) Write(chatID int64, text string) (updateID, messageID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextMsgID
	s.nextMsgID++
	m := &wireMessage{
		MessageID: id,
		From:      &user{ID: chatID, FirstName: "User"},
		Chat:      chat{ID: chatID, Type: chatType(chatID)},
		Date:      time.Now().Unix(),
		Text:      text,
	}
	s.userMsgs[id] = m
	cp := *m
	return s.pushLocked(update{Message: &cp}), id
}

// EditText injects the user's edit of a message they wrote (Write, SendText):
// an edited_message update carrying the message's id, chat and first date,
// its new text and an edit_date, as Telegram sends it. A user can edit only
// their own messages: an unknown message or another chat's is an error. It
// returns the update id (0 when Telegram would not create the update because
// the bot's allowed_updates leave edits out).
func (s *Server) EditText(chatID int64, messageID int, text string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.userMsgs[messageID]
	if !ok || m.Chat.ID != chatID {
		return 0, fmt.Errorf("fake telegram: chat %d wrote no message %d", chatID, messageID)
	}
	m.Text = text
	cp := *m
	cp.EditDate = max(time.Now().Unix(), m.Date+1)
	return s.pushLocked(update{EditedMessage: &cp}), nil
}

// Press injects a press of the button with callback data data on message
// messageID in chatID (the chat the button is in, and the user who pressed
// it). It returns the update id.
func (s *Server) Press(chatID int64, messageID int, data string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var msg *wireMessage
	for _, m := range s.messages {
		if m.ID == messageID && m.ChatID == chatID {
			msg = toWire(m, s.bot)
		}
	}
	if msg == nil { // not a message of this chat (or one the fake never saw): a bare message in the presser's chat
		msg = &wireMessage{MessageID: messageID, Chat: chat{ID: chatID, Type: chatType(chatID)}, Date: time.Now().Unix()}
	}
	s.nextCB++
	u := update{CallbackQuery: &callbackQuery{
		ID:           "cb" + strconv.Itoa(s.nextCB),
		From:         user{ID: chatID, FirstName: "User"},
		Message:      msg,
		ChatInstance: "ci" + strconv.FormatInt(chatID, 10),
		Data:         data,
	}}
	return s.pushLocked(u)
}

// PressButton presses the button whose text contains label on message
// messageID, as the user of chatID. It fails when there is no such button.
func (s *Server) PressButton(chatID int64, messageID int, label string) error {
	m, ok := s.Message(messageID)
	if !ok {
		return fmt.Errorf("fake telegram: no message %d", messageID)
	}
	for _, b := range m.Buttons() {
		if strings.Contains(b.Text, label) {
			s.Press(chatID, messageID, b.Data)
			return nil
		}
	}
	return fmt.Errorf("fake telegram: message %d has no button %q (buttons: %v)", messageID, label, m.Buttons())
}

// PendingUpdates is how many injected updates the bot has not confirmed yet.
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

func chatType(id int64) string {
	if id < 0 {
		return "group"
	}
	return "private"
}

func (s *Server) pushLocked(u update) int {
	if s.allowed != nil && !slices.Contains(s.allowed, u.kind()) {
		return 0 // Telegram does not create updates the bot did not ask for
	}
	u.UpdateID = s.nextUpd
	s.nextUpd++
	s.updates = append(s.updates, u)
	s.notifyLocked()
	return u.UpdateID
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func cloneMessage(m *Message) Message {
	c := *m
	if m.Keyboard != nil {
		c.Keyboard = make([][]Button, len(m.Keyboard))
		for i, row := range m.Keyboard {
			c.Keyboard[i] = slices.Clone(row)
		}
	}
	return c
}

func toWire(m *Message, bot user) *wireMessage {
	w := &wireMessage{
		MessageID: m.ID,
		From:      &bot,
		Chat:      chat{ID: m.ChatID, Type: chatType(m.ChatID)},
		Date:      time.Now().Unix(),
		Text:      m.Text,
	}
	if m.Keyboard != nil {
		w.ReplyMarkup = &inlineKeyboard{InlineKeyboard: cloneMessage(m).Keyboard}
	}
	return w
}

// --- HTTP -----------------------------------------------------------------

type apiResponse struct {
	OK          bool   `json:"ok"`
	Result      any    `json:"result,omitempty"`
	ErrorCode   int    `json:"error_code,omitempty"`
	Description string `json:"description,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, r apiResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(r)
}

func apiError(w http.ResponseWriter, status int, desc string) {
	writeJSON(w, status, apiResponse{OK: false, ErrorCode: status, Description: desc})
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	// Path: /bot<token>/<method>
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || method == "" {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.mu.Lock()
	s.calls[method]++
	mode, ok := s.failures[method]
	if !ok {
		mode = s.failures[""]
	}
	s.notifyLocked()
	s.mu.Unlock()

	switch mode {
	case ModeDown:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	case Mode500:
		apiError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	case Mode401:
		apiError(w, http.StatusUnauthorized, "Unauthorized")
		return
	case Mode403:
		apiError(w, http.StatusForbidden, "Forbidden: bot was blocked by the user")
		return
	case Mode409:
		apiError(w, http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
		return
	}
	if token != s.token {
		apiError(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		apiError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	params, err := readParams(r)
	if err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	switch method {
	case "getMe":
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: s.bot})
	case "sendMessage":
		s.sendMessage(w, params)
	case "editMessageText":
		s.editMessageText(w, params)
	case "answerCallbackQuery":
		s.answerCallbackQuery(w, params)
	case "getUpdates":
		s.getUpdates(w, r, params)
	case "deleteWebhook":
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
	default:
		apiError(w, http.StatusNotFound, "Not Found: method "+method+" is not implemented by the fake")
	}
}

// params holds request parameters; values from a JSON body keep their JSON
// form (objects stay raw) while form values are strings.
type params map[string]json.RawMessage

// str returns a parameter as a string (a JSON string is unquoted; numbers and
// objects are returned as their JSON text, which is how form values look).
func (p params) str(key string) string {
	raw, ok := p[key]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func (p params) has(key string) bool { _, ok := p[key]; return ok }

func (p params) int64(key string) (int64, error) {
	v := p.str(key)
	if v == "" {
		return 0, fmt.Errorf("parameter %s is required", key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parameter %s: %q is not an integer", key, v)
	}
	return n, nil
}

// keyboard decodes reply_markup (a JSON string in forms, an object in JSON).
func (p params) keyboard() ([][]Button, error) {
	v := p.str("reply_markup")
	if v == "" || v == "null" {
		return nil, nil
	}
	var kb inlineKeyboard
	if err := json.Unmarshal([]byte(v), &kb); err != nil {
		return nil, fmt.Errorf("reply_markup: %v", err)
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if len(b.Data) > 64 {
				return nil, fmt.Errorf("BUTTON_DATA_INVALID: callback_data %q longer than 64 bytes", b.Data)
			}
			if b.Text == "" {
				return nil, errors.New("BUTTON_TEXT_INVALID: empty button text")
			}
		}
	}
	if kb.InlineKeyboard == nil {
		return nil, nil
	}
	return kb.InlineKeyboard, nil
}

func readParams(r *http.Request) (params, error) {
	p := params{}
	add := func(vals url.Values) {
		for k, v := range vals {
			if len(v) > 0 {
				b, _ := json.Marshal(v[0])
				p[k] = b
			}
		}
	}
	add(r.URL.Query())
	if r.Body == nil {
		return p, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return p, nil
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, fmt.Errorf("body is not a JSON object: %v", err)
		}
		for k, v := range obj {
			p[k] = v
		}
	case "application/x-www-form-urlencoded", "":
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		add(vals)
	default:
		return nil, fmt.Errorf("unsupported content type %q", ct)
	}
	return p, nil
}

func (s *Server) sendMessage(w http.ResponseWriter, p params) {
	chatID, err := p.int64("chat_id")
	if err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	text := p.str("text")
	if strings.TrimSpace(text) == "" {
		apiError(w, http.StatusBadRequest, "Bad Request: message text is empty")
		return
	}
	if n := len([]rune(text)); n > 4096 {
		apiError(w, http.StatusBadRequest, "Bad Request: message is too long")
		return
	}
	kb, err := p.keyboard()
	if err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	s.mu.Lock()
	s.seq++
	m := &Message{ID: s.nextMsgID, ChatID: chatID, Text: text, ParseMode: p.str("parse_mode"), Keyboard: kb, Seq: s.seq}
	s.nextMsgID++
	s.messages = append(s.messages, m)
	wm := toWire(m, s.bot)
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: wm})
}

func (s *Server) editMessageText(w http.ResponseWriter, p params) {
	chatID, err := p.int64("chat_id")
	if err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	msgID, err := p.int64("message_id")
	if err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	text := p.str("text")
	if strings.TrimSpace(text) == "" {
		apiError(w, http.StatusBadRequest, "Bad Request: message text is empty")
		return
	}
	kb, err := p.keyboard()
	if err != nil {
		apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.messages {
		if m.ID != int(msgID) || m.ChatID != chatID {
			continue
		}
		if m.Text == text && slices.EqualFunc(m.Keyboard, kb, slices.Equal) {
			apiError(w, http.StatusBadRequest, "Bad Request: message is not modified")
			return
		}
		s.seq++
		m.Text, m.Keyboard, m.Seq = text, kb, s.seq
		m.ParseMode = p.str("parse_mode")
		m.Edits++
		s.notifyLocked()
		writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: toWire(m, s.bot)})
		return
	}
	apiError(w, http.StatusBadRequest, "Bad Request: message to edit not found")
}

func (s *Server) answerCallbackQuery(w http.ResponseWriter, p params) {
	id := p.str("callback_query_id")
	if id == "" {
		apiError(w, http.StatusBadRequest, "Bad Request: parameter callback_query_id is required")
		return
	}
	s.mu.Lock()
	s.callbacks = append(s.callbacks, Callback{ID: id, Text: p.str("text")})
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: true})
}

// getUpdates follows the Bot API: updates with an id below offset are
// confirmed and forgotten; a negative offset returns the last -offset updates
// and forgets the ones before; with none pending it waits up to timeout
// seconds (capped by MaxPollTimeout) for one to arrive.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p params) {
	var offset, limit, timeout int64
	var err error
	if p.has("offset") {
		if offset, err = p.int64("offset"); err != nil {
			apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
			return
		}
	}
	limit = 100
	if p.has("limit") {
		if limit, err = p.int64("limit"); err != nil || limit < 1 || limit > 100 {
			limit = 100
		}
	}
	if p.has("timeout") {
		if timeout, err = p.int64("timeout"); err != nil {
			apiError(w, http.StatusBadRequest, "Bad Request: "+err.Error())
			return
		}
	}
	if p.has("allowed_updates") {
		var allowed []string
		if err := json.Unmarshal([]byte(p.str("allowed_updates")), &allowed); err != nil {
			apiError(w, http.StatusBadRequest, "Bad Request: allowed_updates: "+err.Error())
			return
		}
		s.mu.Lock()
		if len(allowed) == 0 {
			s.allowed = nil // an empty list means the default: every common type
		} else {
			s.allowed = allowed
		}
		s.mu.Unlock()
	}
	wait := min(time.Duration(timeout)*time.Second, MaxPollTimeout)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if offset < 0 {
			if n := int(-offset); len(s.updates) > n {
				s.updates = slices.Clone(s.updates[len(s.updates)-n:])
			}
		} else if offset > 0 {
			s.updates = slices.DeleteFunc(s.updates, func(u update) bool { return u.UpdateID < int(offset) })
		}
		out := s.updates
		if len(out) > int(limit) {
			out = out[:limit]
		}
		out = slices.Clone(out)
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if len(out) > 0 || wait <= 0 || closed {
			if out == nil {
				out = []update{}
			}
			writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: out})
			return
		}
		select {
		case <-ch:
			// Something changed (maybe a failure mode): answer normally only
			// if the mode still allows it; otherwise finish this poll empty.
			s.mu.Lock()
			_, failing := s.failures["getUpdates"]
			_, failingAll := s.failures[""]
			s.mu.Unlock()
			if failing || failingAll {
				writeJSON(w, http.StatusOK, apiResponse{OK: true, Result: []update{}})
				return
			}
		case <-timer.C:
			wait = 0
		case <-r.Context().Done():
			return
		}
	}
}
