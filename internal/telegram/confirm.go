package telegram

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
)

// Confirm asks the user to allow an action the model flagged with a safety
// decision ("require_confirmation"): the message shows the action and the
// model's explanation with Yes and No buttons ("yes"/"no" replies work too).
// No answer within the response timeout is No (false, nil). It queues behind
// other questions like Choose. A Telegram failure, an unavailable or closed
// bot or a cancelled ctx give (false, error): never an automatic yes.
func (b *Bot) Confirm(ctx context.Context, explanation, action string) (bool, error) {
	if err := b.usable(); err != nil {
		return false, fmt.Errorf("ask for confirmation: %w", err)
	}
	if err := b.acquire(ctx); err != nil {
		return false, fmt.Errorf("ask for confirmation: %w", err)
	}
	c := b.begin()
	defer b.end(c)
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("telegram: confirmation: %w", err)
	}

	text := confirmText(b.msg, explanation, action)
	msg := tgbotapi.NewMessage(b.chatID, text)
	msg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData(b.msg.T("telegram.yes_button"), cbData(c.id, actYes)),
		tgbotapi.NewInlineKeyboardButtonData(b.msg.T("telegram.no_button"), cbData(c.id, actNo)),
	))
	sent, err := b.send(ctx, msg)
	if err != nil {
		return false, fmt.Errorf("ask for confirmation: %w", err)
	}
	b.log.Info("asked the user to confirm an action", "action", action)

	timer := time.NewTimer(b.responseTimeout)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			b.edit(ctx, sent.MessageID, text+"\n\n"+closedLine(b.msg, ctx))
			return false, fmt.Errorf("telegram: confirmation: %w", ctx.Err())
		case <-b.life.Done():
			return false, fmt.Errorf("telegram: confirmation: %w", ErrClosed)
		case <-timer.C:
			b.edit(ctx, sent.MessageID, text+"\n\n"+b.msg.T("telegram.timeout_no", "timeout", human(b.msg, b.responseTimeout)))
			b.log.Info("no confirmation in time: treated as no", "action", action)
			return false, nil
		case u := <-c.inbox:
			yes, decided, say := interpretConfirm(b.msg, c.id, sent.MessageID, u)
			if u.CallbackQuery != nil {
				toast := b.msg.T("telegram.toast_closed")
				if decided {
					toast = b.msg.T("telegram.toast_got_it")
				}
				b.ack(ctx, u.CallbackQuery.ID, toast)
			}
			if say != "" {
				if _, err := b.send(ctx, tgbotapi.NewMessage(b.chatID, say)); err != nil {
					return false, fmt.Errorf("ask for confirmation: %w", err)
				}
			}
			if !decided {
				continue
			}
			line := b.msg.T("telegram.said_no")
			if yes {
				line = b.msg.T("telegram.said_yes")
			}
			b.edit(ctx, sent.MessageID, text+"\n\n"+line)
			b.log.Info("the user answered the confirmation", "action", action, "allowed", yes)
			return yes, nil
		}
	}
}

// interpretConfirm reads one update for the confirmation qid asked in
// message msgID.
func interpretConfirm(m messages.Catalog, qid string, msgID int, u tgbotapi.Update) (yes, decided bool, say string) {
	if cq := u.CallbackQuery; cq != nil {
		act, _, ok := ownCallback(qid, msgID, cq)
		switch {
		case ok && act == actYes:
			return true, true, ""
		case ok && act == actNo:
			return false, true, ""
		}
		return false, false, ""
	}
	if u.EditedMessage != nil {
		return false, false, editedHint(m)
	}
	if u.Message == nil {
		return false, false, ""
	}
	if yes, ok := choice.ParseYesNo(u.Message.Text); ok {
		return yes, true, ""
	}
	return false, false, m.T("telegram.yes_or_no")
}

func confirmText(m messages.Catalog, explanation, action string) string {
	var sb strings.Builder
	sb.WriteString(m.T("question.safety_title") + "\n\n")
	if a := oneLine(action, 300); a != "" {
		sb.WriteString(m.T("question.safety_action", "action", a) + "\n\n")
	}
	if e := strings.TrimSpace(explanation); e != "" {
		sb.WriteString(m.T("question.safety_why", "why", truncate(e, maxContextRunes)) + "\n\n")
	}
	sb.WriteString(m.T("question.safety_allow"))
	return sb.String()
}

// ErrNoReply is returned by Ping when nobody answered in time.
var ErrNoReply = errors.New("no reply from the chat")

// PingResult is what arrived for Ping.
type PingResult struct {
	// Text is the reply text, or the label of the pressed button.
	Text string
	// Button is set when the reply was a button press.
	Button bool
	// IgnoredChats are other chats that wrote to the bot during the wait
	// (a wrong telegram_chat_id shows up here).
	IgnoredChats []int64
}

// Ping sends a test message to the configured chat and waits up to wait for
// a reply (a message or the button), for `gemini-supply test-telegram`. No
// reply gives an error wrapping ErrNoReply that names any other chats that
// wrote meanwhile.
func (b *Bot) Ping(ctx context.Context, wait time.Duration) (PingResult, error) {
	if err := b.usable(); err != nil {
		return PingResult{}, err
	}
	if err := b.acquire(ctx); err != nil {
		return PingResult{}, err
	}
	c := b.begin()
	defer b.end(c)
	start := time.Now()
	text := fmt.Sprintf("👋 Test message from gemini-supply. Reply with anything (or press the button) within %s so I know I can hear you.", human(messages.Catalog{}, wait))
	msg := tgbotapi.NewMessage(b.chatID, text)
	msg.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData("👍 Got it", cbData(c.id, actPing)),
	))
	sent, err := b.send(ctx, msg)
	if err != nil {
		return PingResult{}, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return PingResult{IgnoredChats: b.ignoredSince(start)}, fmt.Errorf("telegram: test: %w", ctx.Err())
		case <-b.life.Done():
			return PingResult{}, fmt.Errorf("telegram: test: %w", ErrClosed)
		case <-timer.C:
			res := PingResult{IgnoredChats: b.ignoredSince(start)}
			b.edit(ctx, sent.MessageID, text+"\n\n⏱ No reply arrived.")
			err := fmt.Errorf("telegram: %w within %s in chat %d", ErrNoReply, human(messages.Catalog{}, wait), b.chatID)
			if len(res.IgnoredChats) > 0 {
				err = fmt.Errorf("%w; messages did arrive from chat(s) %v — if that is you, set telegram_chat_id to it", err, res.IgnoredChats)
			}
			return res, err
		case u := <-c.inbox:
			var res PingResult
			switch {
			case u.CallbackQuery != nil:
				if _, _, ok := ownCallback(c.id, sent.MessageID, u.CallbackQuery); !ok {
					b.ack(ctx, u.CallbackQuery.ID, "This question is already closed.")
					continue
				}
				b.ack(ctx, u.CallbackQuery.ID, "It works!")
				res = PingResult{Text: "👍 Got it", Button: true}
			case u.Message != nil:
				res = PingResult{Text: u.Message.Text}
			default:
				continue
			}
			res.IgnoredChats = b.ignoredSince(start)
			b.edit(ctx, sent.MessageID, text+"\n\n✅ Received. Telegram works.")
			return res, nil
		}
	}
}

// Chat is a chat that wrote to the bot.
type Chat struct {
	ID int64
	// Name is the chat's title, or the sender's name or @username.
	Name string
	// Text is the message (or the button data) that arrived.
	Text string
}

// discoveryChatID stands in for the chat id while discovering it: no real
// chat has this id, so every update counts as coming from another chat.
const discoveryChatID = math.MinInt64

// DiscoverChat is for setting up telegram_chat_id: it connects with o (whose
// ChatID is ignored) and waits up to wait for any message to the bot,
// including one sent just before, and returns the chat it came from. An
// unreachable Telegram gives an error wrapping ErrUnavailable, no message one
// wrapping ErrNoReply.
func DiscoverChat(ctx context.Context, o Options, wait time.Duration) (Chat, error) {
	found := make(chan Chat, 1)
	o.ChatID = discoveryChatID
	b, err := newBot(ctx, o, func(u tgbotapi.Update) {
		c := chatOf(u)
		if c.ID == 0 {
			return
		}
		select {
		case found <- c:
		default:
		}
	})
	if err != nil {
		return Chat{}, err
	}
	defer b.Close(context.WithoutCancel(ctx))
	if err := b.Err(); err != nil {
		return Chat{}, fmt.Errorf("telegram: %w", err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case c := <-found:
		return c, nil
	case <-timer.C:
		return Chat{}, fmt.Errorf("telegram: %w within %s: send any message to @%s and try again", ErrNoReply, human(messages.Catalog{}, wait), b.UserName())
	case <-ctx.Done():
		return Chat{}, fmt.Errorf("telegram: waiting for a message: %w", ctx.Err())
	}
}

// chatOf describes the chat an update came from.
func chatOf(u tgbotapi.Update) Chat {
	var chat *tgbotapi.Chat
	var from *tgbotapi.User
	text := ""
	switch m := updateMessage(u); {
	case m != nil:
		chat, from, text = m.Chat, m.From, m.Text
	case u.CallbackQuery != nil:
		from, text = u.CallbackQuery.From, u.CallbackQuery.Data
		if u.CallbackQuery.Message != nil {
			chat = u.CallbackQuery.Message.Chat
		}
	}
	c := Chat{ID: updateChat(u), Text: text}
	switch {
	case chat != nil && chat.Title != "":
		c.Name = chat.Title
	case from != nil && strings.TrimSpace(from.FirstName+" "+from.LastName) != "":
		c.Name = strings.TrimSpace(from.FirstName + " " + from.LastName)
	case from != nil && from.UserName != "":
		c.Name = "@" + from.UserName
	}
	return c
}
