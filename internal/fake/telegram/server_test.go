package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

const token = "42:test-token"

func newBot(t *testing.T, s *Server) *tgbotapi.BotAPI {
	t.Helper()
	bot, err := tgbotapi.NewBotAPIWithClient(token, s.Endpoint(), &http.Client{Timeout: 15 * time.Second})
	if err != nil {
		t.Fatalf("NewBotAPIWithClient against the fake: %v", err)
	}
	return bot
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestLibraryRoundTrip(t *testing.T) {
	s := NewServer(token)
	defer s.Close()
	bot := newBot(t, s)
	if bot.Self.UserName != s.BotUserName() {
		t.Errorf("getMe username = %q", bot.Self.UserName)
	}
	msg := tgbotapi.NewMessage(7, "pick one")
	msg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData("A", "a"), tgbotapi.NewInlineKeyboardButtonData("B", "b")))
	sent, err := bot.Send(msg)
	if err != nil {
		t.Fatal(err)
	}
	if sent.MessageID == 0 || sent.Chat.ID != 7 || sent.Text != "pick one" {
		t.Errorf("sent = %+v", sent)
	}
	got, err := s.WaitMessage(ctx(t), func(m Message) bool { return m.Text == "pick one" })
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Buttons()) != 2 || got.Buttons()[1].Data != "b" {
		t.Errorf("keyboard = %+v", got.Keyboard)
	}

	// A user press and a user message reach getUpdates in order.
	if err := s.PressButton(7, sent.MessageID, "B"); err != nil {
		t.Fatal(err)
	}
	s.SendText(7, "hello")
	ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0].CallbackQuery == nil || ups[0].CallbackQuery.Data != "b" ||
		ups[0].CallbackQuery.Message.MessageID != sent.MessageID || ups[1].Message == nil || ups[1].Message.Text != "hello" ||
		ups[1].Message.Chat.ID != 7 {
		t.Fatalf("updates = %+v", ups)
	}
	if _, err := bot.Request(tgbotapi.NewCallback(ups[0].CallbackQuery.ID, "ok")); err != nil {
		t.Fatal(err)
	}
	if cbs := s.Callbacks(); len(cbs) != 1 || cbs[0].Text != "ok" {
		t.Errorf("callbacks = %+v", cbs)
	}

	// Edit without a keyboard removes it.
	if _, err := bot.Send(tgbotapi.NewEditMessageText(7, sent.MessageID, "picked B")); err != nil {
		t.Fatal(err)
	}
	m, _ := s.Message(sent.MessageID)
	if m.Text != "picked B" || m.Keyboard != nil || m.Edits != 1 {
		t.Errorf("after edit: %+v", m)
	}
	// The same edit again is "message is not modified", like Telegram.
	_, err = bot.Send(tgbotapi.NewEditMessageText(7, sent.MessageID, "picked B"))
	var apiErr *tgbotapi.Error
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, "not modified") {
		t.Errorf("repeated edit: %v", err)
	}
}

func TestOffsetsConfirmUpdates(t *testing.T) {
	s := NewServer(token)
	defer s.Close()
	bot := newBot(t, s)
	first := s.SendText(1, "one")
	s.SendText(1, "two")
	ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Offset: first + 1})
	if err != nil || len(ups) != 1 || ups[0].Message.Text != "two" {
		t.Fatalf("offset: %+v, %v", ups, err)
	}
	if s.PendingUpdates() != 1 {
		t.Errorf("pending = %d, want 1 (the first was confirmed)", s.PendingUpdates())
	}
	s.SendText(1, "three")
	s.SendText(1, "four")
	// Negative offset: only the last update, the others forgotten.
	ups, err = bot.GetUpdates(tgbotapi.UpdateConfig{Offset: -1})
	if err != nil || len(ups) != 1 || ups[0].Message.Text != "four" {
		t.Fatalf("offset -1: %+v, %v", ups, err)
	}
	ups, err = bot.GetUpdates(tgbotapi.UpdateConfig{Offset: ups[0].UpdateID + 1})
	if err != nil || len(ups) != 0 {
		t.Fatalf("after confirming everything: %+v, %v", ups, err)
	}
}

func TestLongPollWakesOnUpdate(t *testing.T) {
	s := NewServer(token)
	defer s.Close()
	bot := newBot(t, s)
	got := make(chan []tgbotapi.Update, 1)
	go func() {
		ups, _ := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 30})
		got <- ups
	}()
	if err := s.WaitCalls(ctx(t), "getUpdates", 1); err != nil {
		t.Fatal(err)
	}
	s.SendText(3, "wake up")
	select {
	case ups := <-got:
		if len(ups) != 1 {
			t.Fatalf("updates = %+v", ups)
		}
	case <-ctx(t).Done():
		t.Fatal("long poll did not return when an update arrived")
	}
}

func TestLongPollTimesOutEmpty(t *testing.T) {
	s := NewServer(token)
	defer s.Close()
	bot := newBot(t, s)
	ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(ups) != 0 {
		t.Fatalf("%+v, %v", ups, err)
	}
}

func TestJSONAndQueryParameters(t *testing.T) {
	s := NewServer(token)
	defer s.Close()
	body := `{"chat_id": 5, "text": "json body", "reply_markup": {"inline_keyboard": [[{"text": "X", "callback_data": "x"}]]}}`
	resp, err := http.Post(s.URL()+"/bot"+token+"/sendMessage", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK     bool `json:"ok"`
		Result struct {
			MessageID int `json:"message_id"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || !r.OK {
		t.Fatalf("json send: %+v, %v", r, err)
	}
	resp.Body.Close()
	m, ok := s.Message(r.Result.MessageID)
	if !ok || m.ChatID != 5 || m.Text != "json body" || len(m.Buttons()) != 1 {
		t.Errorf("json message = %+v", m)
	}
	q := url.Values{"chat_id": {"6"}, "text": {"query"}}
	resp, err = http.Get(s.URL() + "/bot" + token + "/sendMessage?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := s.WaitMessage(ctx(t), func(m Message) bool { return m.ChatID == 6 && m.Text == "query" }); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Post(s.URL()+"/bot"+token+"/sendMessage", "application/json", strings.NewReader(`{"chat_id": 5, "text": ""}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("empty text: status %d", resp.StatusCode)
	}
}

func TestFailureModes(t *testing.T) {
	s := NewServer(token)
	defer s.Close()
	bot := newBot(t, s)
	tests := []struct {
		mode Mode
		code int // 0: transport error
	}{
		{Mode500, 500}, {Mode401, 401}, {Mode403, 403}, {ModeDown, 0},
	}
	for _, tt := range tests {
		s.SetFailure(tt.mode, "sendMessage")
		_, err := bot.Send(tgbotapi.NewMessage(1, "x"))
		var apiErr *tgbotapi.Error
		switch {
		case tt.code == 0:
			var ue *url.Error
			if !errors.As(err, &ue) {
				t.Errorf("mode %d: err = %v, want a transport error", tt.mode, err)
			}
		case !errors.As(err, &apiErr) || apiErr.Code != tt.code:
			t.Errorf("mode %d: err = %v, want API error %d", tt.mode, err, tt.code)
		}
		// Other methods are unaffected.
		if _, err := bot.GetMe(); err != nil {
			t.Errorf("mode %d leaked to getMe: %v", tt.mode, err)
		}
	}
	s.SetFailure(ModeOK)
	if _, err := bot.Send(tgbotapi.NewMessage(1, "x")); err != nil {
		t.Errorf("after ModeOK: %v", err)
	}
	// Wrong token: 401.
	other, err := tgbotapi.NewBotAPIWithClient("other", s.Endpoint(), http.DefaultClient)
	var apiErr *tgbotapi.Error
	if other != nil || !errors.As(err, &apiErr) || apiErr.Code != 401 {
		t.Errorf("wrong token: %v", err)
	}
}

func TestCloseEndsLongPoll(t *testing.T) {
	s := NewServer(token)
	bot := newBot(t, s)
	done := make(chan error, 1)
	go func() {
		_, err := bot.GetUpdates(tgbotapi.UpdateConfig{Timeout: 30})
		done <- err
	}()
	if err := s.WaitCalls(ctx(t), "getUpdates", 1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case <-done:
	case <-ctx(t).Done():
		t.Fatal("long poll still running after Close")
	}
}

// Edits arrive as Telegram sends them: an edited_message update with the
// original message's id, chat and date, the new text and an edit_date. Only
// the chat that wrote a message can edit it, and a bot whose allowed_updates
// leave edits out gets none created after it asked (ones already waiting
// still come, as on Telegram).
func TestEditedMessagesAndAllowedUpdates(t *testing.T) {
	s := NewServer(token)
	defer s.Close()
	bot := newBot(t, s)
	id, msgID := s.Write(7, "1")
	if _, err := s.EditText(8, msgID, "2"); err == nil {
		t.Error("another chat edited the user's message")
	}
	if ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Offset: 0}); err != nil || len(ups) != 1 || ups[0].Message.MessageID != msgID {
		t.Fatalf("updates = %+v, %v", ups, err)
	}
	early, err := s.EditText(7, msgID, "2")
	if err != nil || early == 0 {
		t.Fatalf("EditText = %d, %v", early, err)
	}
	ups, err := bot.GetUpdates(tgbotapi.UpdateConfig{Offset: id + 1, AllowedUpdates: []string{"message", "callback_query"}})
	if err != nil || len(ups) != 1 {
		t.Fatalf("updates = %+v, %v", ups, err)
	}
	e := ups[0].EditedMessage
	if ups[0].Message != nil || e == nil || e.MessageID != msgID || e.Chat == nil || e.Chat.ID != 7 || e.Text != "2" || e.EditDate <= e.Date || e.From == nil || e.From.ID != 7 {
		t.Fatalf("edited update = %+v / %+v, want the edit that was waiting before allowed_updates was set", ups[0], e)
	}
	if late, err := s.EditText(7, msgID, "3"); err != nil || late != 0 {
		t.Errorf("edit after allowed_updates left edits out: update %d, %v; want none created", late, err)
	}
	s.SendText(7, "4")
	ups, err = bot.GetUpdates(tgbotapi.UpdateConfig{Offset: early + 1})
	if err != nil || len(ups) != 1 || ups[0].Message == nil || ups[0].Message.Text != "4" {
		t.Fatalf("updates = %+v, %v; want only the new message", ups, err)
	}
}
