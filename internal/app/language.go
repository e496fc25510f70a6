package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
)

// languageTimeout bounds reading Home Assistant's language at start-up.
const languageTimeout = 10 * time.Second

// Language is the language the household is told in, as a catalogue
// language ("en", "fr"): cfg.Language when it names one; for "auto", Home
// Assistant's language read through c (get_config), English when c is nil,
// does not answer in time or speaks a language the catalogue lacks.
// Callers set cfg.Language to it once, so every channel built from cfg
// (messages.For(cfg.Language)) speaks it.
func Language(ctx context.Context, cfg config.Config, c *homeassistant.Client, logger *slog.Logger) string {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Language != config.DefaultLanguage && cfg.Language != "" {
		return messages.For(cfg.Language).Lang()
	}
	if c == nil {
		return messages.Languages[0]
	}
	ctx, cancel := context.WithTimeout(ctx, languageTimeout)
	defer cancel()
	ha, err := c.Language(ctx)
	if err != nil {
		logger.Warn("cannot read Home Assistant's language; speaking English (set language: fr to choose)", "error", err)
		return messages.Languages[0]
	}
	lang := messages.For(ha).Lang()
	logger.Info("speaking Home Assistant's language", "home_assistant", ha, "language", lang)
	return lang
}
