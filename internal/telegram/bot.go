// Package telegram connects a shopping run to the user's phone through a
// Telegram bot (go-telegram-bot-api/v5): it asks the ambiguous product
// choices (Choose, the run's ChoiceResolver), the agent's safety
// confirmations (Confirm), sends session notices (Follow: run started,
// waiting for input, run finished with the summary) and answers the
// `test-telegram` command (Ping).
//
// Only the configured chat is spoken to and listened to; updates from other
// chats are ignored and logged once per chat. Questions from concurrent agents
// are queued so exactly one is open at a time. The bot token never appears in
// logs or errors: the library puts it in every request URL, so transport
// errors are rebuilt with a redacted URL and the library's logger is replaced.
//
// When Telegram cannot be reached at start-up, New retries getMe with backoff
// and then returns an unavailable Bot (with a warning) instead of failing the
// run: its methods return an error wrapping ErrUnavailable at once, which the
// run turns into "not found" for the item.
package telegram

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/messages"
)

// Defaults for Options.
const (
	DefaultResponseTimeout = config.DefaultTelegramTimeout
	DefaultRequestTimeout  = 30 * time.Second
	DefaultPollTimeout     = 30 * time.Second
	DefaultStartupRetries  = 3
	DefaultStartupBackoff  = time.Second
	maxBackoff             = 30 * time.Second
	maxIgnoredChats        = 256
)

var (
	// ErrNotConfigured: no bot token or no chat id.
	ErrNotConfigured = errors.New("telegram is not configured")
	// ErrUnavailable: Telegram could not be reached at start-up, or refused
	// the bot (revoked token, bot blocked); the run goes on without it.
	ErrUnavailable = errors.New("telegram is unavailable")
	// ErrClosed: the Bot was closed.
	ErrClosed = errors.New("telegram bot closed")
)

// Options configure New.
type Options struct {
	// Token is the bot token from @BotFather.
	Token config.Secret
	// ChatID is the only chat the bot talks to and listens to.
	ChatID int64
	// Endpoint is the Bot API endpoint in go-telegram-bot-api's format ("%s"
	// for the token, then "%s" for the method); empty = api.telegram.org.
	Endpoint string
	// HTTPClient makes the requests (default: a new http.Client). Every
	// request gets its own deadline, so the client needs no Timeout; if it
	// has one, the long poll is shortened to fit in it.
	HTTPClient *http.Client
	// ResponseTimeout is how long a question waits for the user (default 10 min).
	ResponseTimeout time.Duration
	// RequestTimeout bounds each API call other than the long poll (default 30 s).
	RequestTimeout time.Duration
	// PollTimeout is the long-poll wait of getUpdates (default 30 s, at least 1 s).
	PollTimeout time.Duration
	// StartupRetries is how many times getMe is retried at start-up before
	// the Bot degrades to unavailable (0 = default 3, negative = none).
	StartupRetries int
	// StartupBackoff is the first wait between those retries, doubling each
	// time (default 1 s).
	StartupBackoff time.Duration
	// Logger receives the bot's logs (default slog.Default); component=telegram is added.
	Logger *slog.Logger
	// Messages is the language the bot speaks (the zero value: English).
	Messages messages.Catalog
}

// OptionsFromConfig takes the Telegram settings of cfg.
func OptionsFromConfig(cfg config.Config, log *slog.Logger) Options {
	return Options{
		Token:           cfg.TelegramBotToken,
		ChatID:          cfg.TelegramChatID,
		Endpoint:        cfg.TelegramAPIEndpoint,
		ResponseTimeout: cfg.TelegramResponseTimeout,
		Logger:          log,
		Messages:        messages.For(cfg.Language),
	}
}

// Bot is a Telegram bot bound to one chat. It is safe for concurrent use.
// Create it with New and stop it with Close.
type Bot struct {
	log      *slog.Logger
	red      redactor
	token    string
	chatID   int64
	client   *http.Client
	api      *tgbotapi.BotAPI // template: copied per request with a context-bound client
	userName string
	session  string // random prefix of question ids: old buttons never match new questions

	msg             messages.Catalog
	responseTimeout time.Duration
	requestTimeout  time.Duration
	pollTimeout     time.Duration

	life      context.Context // cancelled by Close: stops the poller and in-flight requests
	stop      context.CancelFunc
	closing   chan struct{} // closed when Close starts: followers drain and stop
	followers sync.WaitGroup
	poller    sync.WaitGroup

	mu      sync.Mutex
	err     error // non-nil: unavailable, and why
	closed  bool
	busy    bool            // a conversation holds the turn
	waiters []chan struct{} // conversations queued for the turn, FIFO
	open    *conversation   // the conversation receiving updates, if any
	nextID  int
	ignored map[int64]time.Time // other chats: when each last wrote

	// onForeign, when set (DiscoverChat), sees every update from another chat.
	onForeign func(tgbotapi.Update)
}

// conversation is one question waiting for the user; the poller hands it the
// configured chat's updates.
type conversation struct {
	id    string
	inbox chan tgbotapi.Update
}

// New connects to the Bot API: getMe (retried with backoff), then it forgets
// updates left from before (so an old reply is never taken as an answer) and
// starts the long-poll loop. A missing token or chat id is an error wrapping
// ErrNotConfigured; an unreachable or refusing Telegram is not an error: New
// logs a warning and returns an unavailable Bot (see Available). Only a
// cancelled ctx makes New fail otherwise.
func New(ctx context.Context, o Options) (*Bot, error) {
	return newBot(ctx, o, nil)
}

// newBot is New; with onForeign set (chat discovery) updates waiting from
// before start-up are kept and every update from another chat is passed on.
func newBot(ctx context.Context, o Options, onForeign func(tgbotapi.Update)) (*Bot, error) {
	if !o.Token.IsSet() {
		return nil, fmt.Errorf("%w: telegram_bot_token is empty; create a bot with @BotFather and set it (see docs/telegram.md)", ErrNotConfigured)
	}
	if o.ChatID == 0 {
		return nil, fmt.Errorf("%w: telegram_chat_id is not set; message your bot, then find the chat id as docs/telegram.md explains", ErrNotConfigured)
	}
	if o.Endpoint == "" {
		o.Endpoint = tgbotapi.APIEndpoint
	}
	if strings.Count(o.Endpoint, "%s") != 2 {
		return nil, fmt.Errorf("telegram: telegram_api_endpoint %q must hold two %%s (token, then method), like %q", o.Endpoint, tgbotapi.APIEndpoint)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.ResponseTimeout <= 0 {
		o.ResponseTimeout = DefaultResponseTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = DefaultPollTimeout
	}
	if t := o.HTTPClient.Timeout; t > 0 && o.PollTimeout+5*time.Second > t {
		// A client timeout shorter than the long poll would cut every poll.
		o.PollTimeout = t - 5*time.Second
	}
	o.PollTimeout = max(o.PollTimeout.Truncate(time.Second), time.Second)
	switch {
	case o.StartupRetries == 0:
		o.StartupRetries = DefaultStartupRetries
	case o.StartupRetries < 0:
		o.StartupRetries = 0
	}
	if o.StartupBackoff <= 0 {
		o.StartupBackoff = DefaultStartupBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	token := o.Token.Reveal()
	b := &Bot{
		log:             o.Logger.With("component", "telegram"),
		red:             redactor{token: token},
		token:           token,
		chatID:          o.ChatID,
		client:          o.HTTPClient,
		session:         randomID(),
		msg:             o.Messages,
		responseTimeout: o.ResponseTimeout,
		requestTimeout:  o.RequestTimeout,
		pollTimeout:     o.PollTimeout,
		closing:         make(chan struct{}),
		ignored:         map[int64]time.Time{},
		onForeign:       onForeign,
	}
	b.life, b.stop = context.WithCancel(context.Background())
	lib.register(token, b.log)

	api, err := b.connect(ctx, o.Endpoint, o.StartupRetries, o.StartupBackoff)
	if err != nil {
		if ctx.Err() != nil {
			b.shutdown()
			return nil, fmt.Errorf("telegram: start-up interrupted: %w", ctx.Err())
		}
		b.degrade(err)
		return b, nil
	}
	b.api = api
	b.userName = api.Self.UserName
	offset, err := 0, error(nil)
	if onForeign == nil {
		offset, err = b.dropPending(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			b.shutdown()
			return nil, fmt.Errorf("telegram: start-up interrupted: %w", ctx.Err())
		}
		var apiErr *tgbotapi.Error
		if errors.As(err, &apiErr) && apiErr.Code == http.StatusConflict {
			b.degrade(fmt.Errorf("another program is reading this bot's updates (%w); stop it (another gemini-supply, or a webhook) so replies reach this one", err))
			return b, nil
		}
		// The poller retries; a transient failure here only means old updates may come in.
		b.log.Warn("could not skip old Telegram updates; continuing", "err", err)
	}
	b.log.Info("Telegram bot connected", "bot", "@"+b.userName, "chat_id", b.chatID)
	b.poller.Add(1)
	go b.poll(offset)
	return b, nil
}

// connect calls getMe until it answers, at most retries+1 times.
func (b *Bot) connect(ctx context.Context, endpoint string, retries int, backoff time.Duration) (*tgbotapi.BotAPI, error) {
	var lastErr error
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, b.requestTimeout)
		api, err := tgbotapi.NewBotAPIWithClient(b.token, endpoint, ctxClient{ctx: actx, c: b.client})
		cancel()
		if err == nil {
			return api, nil
		}
		lastErr = b.red.Err(err)
		if ctx.Err() != nil {
			return nil, lastErr
		}
		var apiErr *tgbotapi.Error
		if errors.As(lastErr, &apiErr) && (apiErr.Code == http.StatusUnauthorized || apiErr.Code == http.StatusNotFound) {
			return nil, fmt.Errorf("Telegram refused the bot token (%w); check telegram_bot_token", lastErr)
		}
		if attempt >= retries {
			return nil, fmt.Errorf("getMe failed %d times, last: %w", attempt+1, lastErr)
		}
		b.log.Warn("Telegram getMe failed; retrying", "attempt", attempt+1, "retry_in", backoff, "err", lastErr)
		if err := sleep(ctx, backoff); err != nil {
			return nil, lastErr
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

// degrade makes the Bot unavailable for good.
func (b *Bot) degrade(cause error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = fmt.Errorf("%w: %w", ErrUnavailable, cause)
	}
	b.mu.Unlock()
	b.log.Warn("Telegram is unavailable; the run goes on without it (questions are answered 'not found')", "err", cause)
}

// Available reports whether the bot can talk to the chat.
func (b *Bot) Available() bool { return b.Err() == nil }

// Err is why the bot is unavailable (wrapping ErrUnavailable or ErrClosed),
// or nil.
func (b *Bot) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	return b.err
}

// UserName is the bot's @username (without the @), empty when unavailable.
func (b *Bot) UserName() string { return b.userName }

// ChatID is the configured chat.
func (b *Bot) ChatID() int64 { return b.chatID }

// Close stops the long-poll loop and the notice followers. Followers first
// send the events already published (within ctx), then everything stops;
// questions still waiting return ErrClosed. Safe to call more than once.
func (b *Bot) Close(ctx context.Context) error {
	b.mu.Lock()
	already := b.closed
	b.closed = true
	b.mu.Unlock()
	if already {
		return nil
	}
	close(b.closing)
	done := make(chan struct{})
	go func() { b.followers.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("telegram: close: pending notices not sent: %w", ctx.Err())
	}
	b.shutdown()
	// Cancelling life ends the rest promptly: every request is bound to it.
	<-done
	b.poller.Wait()
	return err
}

func (b *Bot) shutdown() {
	b.stop()
	lib.unregister(b.token)
}

// usable returns the error to give callers when the bot cannot be used.
func (b *Bot) usable() error {
	if err := b.Err(); err != nil {
		return fmt.Errorf("telegram: %w", err)
	}
	return nil
}

// --- requests -------------------------------------------------------------

// ctxClient gives every request the library makes a context: the library
// builds requests with http.NewRequest (no context), so this is how requests
// get deadlines and are cancelled by Close.
type ctxClient struct {
	ctx context.Context
	c   *http.Client
}

func (c ctxClient) Do(req *http.Request) (*http.Response, error) {
	return c.c.Do(req.WithContext(c.ctx))
}

// apiFor returns a copy of the API client whose requests are bound to ctx.
func (b *Bot) apiFor(ctx context.Context) *tgbotapi.BotAPI {
	cp := *b.api
	cp.Client = ctxClient{ctx: ctx, c: b.client}
	return &cp
}

// reqCtx bounds one request by the request timeout, ctx and the Bot's life.
func (b *Bot) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithTimeout(ctx, b.requestTimeout)
	stop := context.AfterFunc(b.life, cancel)
	return rctx, func() { stop(); cancel() }
}

// call makes one API request (no retry) and returns its result, with the
// token removed from any error. 401/403 make the bot unavailable: the token
// was revoked or the user blocked the bot.
func (b *Bot) call(ctx context.Context, c tgbotapi.Chattable) (*tgbotapi.APIResponse, error) {
	if b.api == nil {
		return nil, b.usable()
	}
	rctx, cancel := b.reqCtx(ctx)
	defer cancel()
	resp, err := b.apiFor(rctx).Request(c)
	if err == nil {
		return resp, nil
	}
	err = b.red.Err(err)
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) {
		switch apiErr.Code {
		case http.StatusUnauthorized:
			b.degrade(fmt.Errorf("Telegram refused the bot token (%w); check telegram_bot_token", err))
		case http.StatusForbidden:
			b.degrade(fmt.Errorf("Telegram refused to deliver to chat %d (%w); unblock the bot or check telegram_chat_id", b.chatID, err))
		}
	}
	return nil, err
}

// transient reports whether a failed request is worth one retry.
func transient(err error) (bool, time.Duration) {
	var apiErr *tgbotapi.Error
	if errors.As(err, &apiErr) {
		switch {
		case apiErr.Code == http.StatusTooManyRequests:
			return true, min(time.Duration(apiErr.RetryAfter)*time.Second+200*time.Millisecond, 5*time.Second)
		case apiErr.Code >= 500:
			return true, 500 * time.Millisecond
		}
		return false, 0
	}
	if errors.Is(err, context.Canceled) {
		return false, 0
	}
	return true, 500 * time.Millisecond // transport error
}

// send sends a message to the configured chat, retrying once after a
// transient failure.
func (b *Bot) send(ctx context.Context, c tgbotapi.MessageConfig) (tgbotapi.Message, error) {
	// Not usable(): while Close drains the notices, a closing bot still sends.
	b.mu.Lock()
	unavailable := b.err
	b.mu.Unlock()
	if unavailable != nil {
		return tgbotapi.Message{}, fmt.Errorf("telegram: %w", unavailable)
	}
	if b.life.Err() != nil {
		return tgbotapi.Message{}, fmt.Errorf("telegram: %w", ErrClosed)
	}
	c.ChatID = b.chatID
	// A send that started is finished even if ctx ends meanwhile (it is still
	// bounded by the request timeout and Close): a question whose message id
	// is unknown could never be closed.
	sctx := context.WithoutCancel(ctx)
	resp, err := b.call(sctx, c)
	if err != nil {
		if retry, wait := transient(err); retry && ctx.Err() == nil && b.life.Err() == nil {
			if sleep(ctx, wait) == nil {
				resp, err = b.call(sctx, c)
			}
		}
	}
	if err != nil {
		if b.life.Err() != nil {
			return tgbotapi.Message{}, fmt.Errorf("telegram: send message: %w", ErrClosed)
		}
		return tgbotapi.Message{}, fmt.Errorf("telegram: send message to chat %d: %w", b.chatID, err)
	}
	var m tgbotapi.Message
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		return tgbotapi.Message{}, fmt.Errorf("telegram: send message: unexpected answer: %w", err)
	}
	return m, nil
}

// Notify sends text to the configured chat (split when longer than a
// Telegram message allows).
func (b *Bot) Notify(ctx context.Context, text string) error {
	for _, part := range splitText(text, maxMessageRunes) {
		if _, err := b.send(ctx, tgbotapi.NewMessage(b.chatID, part)); err != nil {
			return err
		}
	}
	return nil
}

// edit replaces a message's text and removes its keyboard. It is best effort
// (logged): the answer is already known. It runs even when ctx is cancelled.
func (b *Bot) edit(ctx context.Context, messageID int, text string) {
	if b.api == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	c := tgbotapi.NewEditMessageText(b.chatID, messageID, truncate(text, maxMessageRunes))
	if _, err := b.call(ctx, c); err != nil {
		var apiErr *tgbotapi.Error
		if errors.As(err, &apiErr) && strings.Contains(apiErr.Message, "message is not modified") {
			return
		}
		b.log.Warn("could not update the question message", "message_id", messageID, "err", err)
	}
}

// ack answers a button press so the user's client stops its spinner.
func (b *Bot) ack(ctx context.Context, callbackID, text string) {
	if _, err := b.call(context.WithoutCancel(ctx), tgbotapi.NewCallback(callbackID, text)); err != nil {
		b.log.Warn("could not acknowledge a button press", "err", err)
	}
}

// --- updates --------------------------------------------------------------

// dropPending confirms every update left from before start-up and returns the
// offset to poll from.
func (b *Bot) dropPending(ctx context.Context) (int, error) {
	rctx, cancel := b.reqCtx(ctx)
	defer cancel()
	ups, err := b.apiFor(rctx).GetUpdates(tgbotapi.UpdateConfig{Offset: -1, Timeout: 0})
	if err != nil {
		return 0, b.red.Err(err)
	}
	offset := 0
	for _, u := range ups {
		offset = max(offset, u.UpdateID+1)
	}
	if offset > 0 {
		b.log.Info("skipped Telegram messages sent before start-up")
	}
	return offset, nil
}

// poll is the one long-poll loop. It ends when Close cancels b.life.
func (b *Bot) poll(offset int) {
	defer b.poller.Done()
	backoff := time.Second
	failing := false
	for b.life.Err() == nil {
		b.mu.Lock()
		err := b.err
		b.mu.Unlock()
		if err != nil {
			b.log.Warn("Telegram polling stopped", "err", err)
			return
		}
		ctx, cancel := context.WithTimeout(b.life, b.pollTimeout+b.requestTimeout)
		ups, err := b.apiFor(ctx).GetUpdates(tgbotapi.UpdateConfig{
			Offset:         offset,
			Timeout:        int(b.pollTimeout / time.Second),
			AllowedUpdates: []string{"message", "edited_message", "callback_query"},
		})
		cancel()
		if err != nil {
			if b.life.Err() != nil {
				return
			}
			err = b.red.Err(err)
			if !failing {
				b.log.Warn("Telegram getUpdates failed; retrying", "retry_in", backoff, "err", err)
			} else {
				b.log.Debug("Telegram getUpdates still failing", "retry_in", backoff, "err", err)
			}
			failing = true
			if sleep(b.life, backoff) != nil {
				return
			}
			backoff = min(backoff*2, maxBackoff)
			continue
		}
		if failing {
			b.log.Info("Telegram getUpdates works again")
			failing = false
		}
		backoff = time.Second
		for _, u := range ups {
			if u.UpdateID < offset {
				continue
			}
			offset = u.UpdateID + 1
			b.dispatch(u)
		}
	}
}

// updateMessage is the message an update carries: a new one, an edited
// one, or a channel post (nil for button presses and other updates).
func updateMessage(u tgbotapi.Update) *tgbotapi.Message {
	switch {
	case u.Message != nil:
		return u.Message
	case u.EditedMessage != nil:
		return u.EditedMessage
	case u.ChannelPost != nil:
		return u.ChannelPost
	case u.EditedChannelPost != nil:
		return u.EditedChannelPost
	}
	return nil
}

// updateChat is the chat an update comes from (0 when none): an edited
// message or a channel post is attributed to its own chat like a message.
func updateChat(u tgbotapi.Update) int64 {
	if m := updateMessage(u); m != nil {
		if m.Chat != nil {
			return m.Chat.ID
		}
		return 0
	}
	switch {
	case u.CallbackQuery != nil && u.CallbackQuery.Message != nil && u.CallbackQuery.Message.Chat != nil:
		return u.CallbackQuery.Message.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.From != nil:
		return u.CallbackQuery.From.ID
	case u.MyChatMember != nil:
		return u.MyChatMember.Chat.ID
	case u.ChatMember != nil:
		return u.ChatMember.Chat.ID
	case u.ChatJoinRequest != nil:
		return u.ChatJoinRequest.Chat.ID
	}
	return 0
}

// dispatch routes an update from the poller: other chats are ignored, the
// configured chat's updates go to the open conversation or get a short answer.
func (b *Bot) dispatch(u tgbotapi.Update) {
	chat := updateChat(u)
	if chat != b.chatID {
		b.ignore(chat)
		if b.onForeign != nil {
			b.onForeign(u)
		}
		return
	}
	b.mu.Lock()
	c := b.open
	if c != nil {
		select {
		case c.inbox <- u:
			b.mu.Unlock()
			return
		default:
		}
	}
	b.mu.Unlock()
	if c != nil {
		b.log.Warn("dropped a Telegram update: the open question is not reading", "question", c.id)
	}
	b.handleIdle(u)
}

// ignore logs, once per chat, that another chat wrote to the bot.
func (b *Bot) ignore(chat int64) {
	b.mu.Lock()
	_, seen := b.ignored[chat]
	if seen || len(b.ignored) < maxIgnoredChats {
		b.ignored[chat] = time.Now()
	}
	b.mu.Unlock()
	if !seen && b.onForeign == nil {
		b.log.Warn("ignoring Telegram messages from a chat that is not the configured one", "chat_id", chat, "configured_chat_id", b.chatID)
	}
}

// ignoredSince lists the other chats that wrote at or after t.
func (b *Bot) ignoredSince(t time.Time) []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int64
	for id, when := range b.ignored {
		if !when.Before(t) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// handleIdle answers an update that no question is waiting for.
func (b *Bot) handleIdle(u tgbotapi.Update) {
	ctx := b.life
	switch {
	case u.CallbackQuery != nil:
		b.ack(ctx, u.CallbackQuery.ID, b.msg.T("telegram.toast_closed"))
	case u.Message != nil:
		text := strings.TrimSpace(u.Message.Text)
		reply := b.msg.T("telegram.idle")
		if strings.HasPrefix(text, "/start") || strings.HasPrefix(text, "/help") {
			reply = b.msg.T("telegram.hello", "chat_id", b.chatID)
		}
		if _, err := b.send(ctx, tgbotapi.NewMessage(b.chatID, reply)); err != nil {
			b.log.Warn("could not answer a message", "err", err)
		}
	}
}

// --- the one open question --------------------------------------------------

// acquire waits for the turn to have the one open question.
func (b *Bot) acquire(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fmt.Errorf("telegram: %w", ErrClosed)
	}
	if !b.busy {
		b.busy = true
		b.mu.Unlock()
		return nil
	}
	w := make(chan struct{})
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	var cause error
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		cause = ctx.Err()
	case <-b.life.Done():
		cause = ErrClosed
	}
	b.mu.Lock()
	if i := slices.Index(b.waiters, w); i >= 0 {
		b.waiters = slices.Delete(b.waiters, i, i+1)
		b.mu.Unlock()
	} else {
		b.mu.Unlock()
		b.release() // granted while giving up: pass it on
	}
	return fmt.Errorf("telegram: waiting for an earlier question to be answered: %w", cause)
}

// release passes the turn to the next queued question.
func (b *Bot) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		close(w)
		return
	}
	b.busy = false
}

// begin opens a conversation: from now on the chat's updates go to it.
func (b *Bot) begin() *conversation {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextID++
	c := &conversation{id: fmt.Sprintf("%s.%d", b.session, b.nextID), inbox: make(chan tgbotapi.Update, 32)}
	b.open = c
	return c
}

// end closes the conversation and answers what reached it too late (a second
// button press), then passes the turn on.
func (b *Bot) end(c *conversation) {
	b.mu.Lock()
	if b.open == c {
		b.open = nil
	}
	b.mu.Unlock()
	for {
		select {
		case u := <-c.inbox:
			b.handleIdle(u)
			continue
		default:
		}
		break
	}
	b.release()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func randomID() string {
	var p [3]byte
	_, _ = rand.Read(p[:])
	return hex.EncodeToString(p[:])
}
