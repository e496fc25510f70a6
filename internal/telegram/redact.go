package telegram

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

const redacted = "[redacted]"

var (
	// The library puts the token in every URL: .../bot<token>/<method>.
	botPathRE = regexp.MustCompile(`/bot[^/\s"'?]+/`)
	// Anything shaped like a Bot API token (digits, colon, 30+ url-safe chars).
	tokenRE = regexp.MustCompile(`\d{5,}:[A-Za-z0-9_-]{30,}`)
)

// redactor removes one bot token (and anything that looks like one) from text
// and errors.
type redactor struct{ token string }

func (r redactor) String(s string) string {
	if r.token != "" {
		s = strings.ReplaceAll(s, r.token, redacted)
		if esc := url.PathEscape(r.token); esc != r.token {
			s = strings.ReplaceAll(s, esc, redacted)
		}
	}
	s = botPathRE.ReplaceAllString(s, "/bot"+redacted+"/")
	return tokenRE.ReplaceAllString(s, redacted)
}

// Err returns err with the token removed from its message. Transport errors
// (*url.Error) are rebuilt with a redacted URL so errors.Is still sees the
// cause (context.DeadlineExceeded, …); any other error whose text holds the
// token becomes a new error that only answers errors.Is for its original.
func (r redactor) Err(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue == err {
		inner := r.Err(ue.Err)
		return &url.Error{Op: ue.Op, URL: r.String(ue.URL), Err: inner}
	}
	msg := err.Error()
	if clean := r.String(msg); clean != msg {
		return &redactedError{msg: clean, orig: err}
	}
	return err
}

// redactedError carries a cleaned message; it does not unwrap (the chain
// would hold the token) but still matches its original with errors.Is/As.
type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }
func (e *redactedError) As(target any) bool {
	// Only the library's API error is worth exposing; it never holds the token.
	if t, ok := target.(**tgbotapi.Error); ok {
		return errors.As(e.orig, t)
	}
	return false
}

// libLogger is the logger handed to the library (tgbotapi.SetLogger is
// package-global): it redacts every known token and writes to the most recent
// bot's slog logger. This package never turns on the library's debug output
// nor uses its update loop, but anything the library does log is cleaned.
type libLogger struct {
	mu     sync.Mutex
	tokens map[string]int
	log    atomic.Pointer[slog.Logger]
}

var (
	lib         = &libLogger{tokens: map[string]int{}}
	libLoggerMu sync.Once
)

func (l *libLogger) register(token string, log *slog.Logger) {
	libLoggerMu.Do(func() {
		if err := tgbotapi.SetLogger(l); err != nil {
			log.Warn("could not install the redacting logger for the Telegram library", "err", err)
		}
	})
	l.log.Store(log)
	l.mu.Lock()
	l.tokens[token]++
	l.mu.Unlock()
}

func (l *libLogger) unregister(token string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tokens[token]--; l.tokens[token] <= 0 {
		delete(l.tokens, token)
	}
}

func (l *libLogger) clean(s string) string {
	l.mu.Lock()
	for t := range l.tokens {
		s = redactor{token: t}.String(s)
	}
	l.mu.Unlock()
	return redactor{}.String(s)
}

func (l *libLogger) emit(s string) {
	log := l.log.Load()
	if log == nil {
		log = slog.Default()
	}
	log.Debug("telegram library", "msg", l.clean(strings.TrimSpace(s)))
}

// Println implements tgbotapi.BotLogger.
func (l *libLogger) Println(v ...any) { l.emit(fmt.Sprintln(v...)) }

// Printf implements tgbotapi.BotLogger.
func (l *libLogger) Printf(format string, v ...any) { l.emit(fmt.Sprintf(format, v...)) }

var _ tgbotapi.BotLogger = (*libLogger)(nil)
