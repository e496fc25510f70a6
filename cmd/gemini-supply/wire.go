package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
)

// telegramCloseTimeout bounds the flush of the last notices (the summary of
// a run stopped by SIGTERM) when the bot stops.
const telegramCloseTimeout = 10 * time.Second

// wireTelegram adds the Telegram bot, when configured, as the choice
// resolver, the safety confirmer and the session notices of deps.Bus (for
// `serve`, `shop` and `demo` alike). An unreachable Telegram degrades (the
// bot says so in the log) instead of stopping the command.
//
// The notices follow the bus until the returned func stops the bot, not
// until ctx ends: a run stopped by SIGTERM publishes its summary after ctx
// was cancelled, and that summary must still reach the chat. The returned
// func flushes the notices already published (bounded by
// telegramCloseTimeout) and stops the bot.
func wireTelegram(ctx context.Context, cfg config.Config, logger *slog.Logger, deps *app.Deps) (func(), error) {
	bot, err := telegram.New(ctx, telegram.OptionsFromConfig(cfg, logger))
	if errors.Is(err, telegram.ErrNotConfigured) {
		logger.Info("Telegram is not configured: questions go to the panel and the phones of ha_notify, when there are any")
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("start Telegram: %w", err)
	}
	deps.Resolver = bot
	deps.Confirmer = bot
	if deps.Bus != nil {
		bot.Follow(context.WithoutCancel(ctx), deps.Bus)
	}
	return func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), telegramCloseTimeout)
		defer cancel()
		if err := bot.Close(cctx); err != nil {
			logger.Warn("closing Telegram", "error", err)
		}
	}, nil
}
