package telegram

import (
	"context"
	"errors"
	"net/http"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Follow sends session notices for the runs published on bus: run started
// (with the item count), waiting for your input (naming the item), run
// finished (with the summary) and run failed. It subscribes before it
// returns, so no event published afterwards is missed, and delivers from a
// goroutine the Bot owns. That goroutine stops when ctx ends or the bus
// closes; Close lets it send the events already published first. An
// unavailable bot follows nothing.
func (b *Bot) Follow(ctx context.Context, bus *runstatus.Bus) {
	b.mu.Lock()
	if b.closed || b.err != nil {
		b.mu.Unlock()
		b.log.Debug("not following run events: the bot is unavailable")
		return
	}
	sub := bus.Subscribe(64)
	b.followers.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.followers.Done()
		defer sub.Close()
		for {
			select {
			case e, ok := <-sub.C:
				if !ok {
					return
				}
				b.notice(e)
			case <-ctx.Done():
				return
			case <-b.closing:
				for {
					select {
					case e, ok := <-sub.C:
						if !ok {
							return
						}
						b.notice(e)
					default:
						return
					}
				}
			}
		}
	}()
}

// notice sends the message for one event, if it warrants one. Failures are
// logged: notices never stop a run.
func (b *Bot) notice(e runstatus.Event) {
	var err error
	if e.Kind == runstatus.KindRunFinished && e.Summary != nil {
		err = b.NotifyMarkdown(b.life, e.Summary.MarkdownIn(b.msg))
	} else if text := noticeText(b.msg, e); text != "" {
		err = b.Notify(b.life, text)
	}
	if err != nil {
		b.log.Warn("could not send a session notice", "kind", e.Kind, "err", err)
	}
}

// NotifyMarkdown sends markdown (the subset report.Summary.Markdown writes)
// to the configured chat, formatted with Telegram's HTML mode; a part
// Telegram refuses to parse is sent again as plain text.
func (b *Bot) NotifyMarkdown(ctx context.Context, md string) error {
	for _, part := range splitText(md, maxMessageRunes/2) { // HTML tags need room
		m := tgbotapi.NewMessage(b.chatID, markdownToHTML(part))
		m.ParseMode = tgbotapi.ModeHTML
		m.DisableWebPagePreview = true
		if _, err := b.send(ctx, m); err != nil {
			var apiErr *tgbotapi.Error
			if !errors.As(err, &apiErr) || apiErr.Code != http.StatusBadRequest {
				return err
			}
			b.log.Warn("Telegram refused the formatted summary; sending it as plain text", "err", err)
			if err := b.Notify(ctx, part); err != nil {
				return err
			}
		}
	}
	return nil
}

// noticeText is the message for an event ("" = none).
func noticeText(m messages.Catalog, e runstatus.Event) string {
	switch e.Kind {
	case runstatus.KindRunStarted:
		return m.T("telegram.run_started", "items", plural(m, e.Progress.Total, "common.items"))
	case runstatus.KindWaitingForUser:
		item := ""
		if e.Item != nil {
			item = e.Item.ItemName
		}
		if item == "" {
			return m.T("telegram.waiting")
		}
		return m.T("telegram.waiting_item", "item", item)
	case runstatus.KindRunFinished:
		p := e.Progress // with a Summary, notice sends Summary.Markdown instead
		return m.T("telegram.run_finished", "added", p.Added, "not_found", p.NotFound, "failed", p.Failed, "total", p.Total)
	case runstatus.KindStateChanged:
		if e.State == runstatus.StateFailed {
			msg := strings.TrimSpace(e.Message)
			if msg == "" {
				msg = m.T("telegram.no_reason")
			}
			return m.T("telegram.run_failed", "reason", msg)
		}
	}
	return ""
}
