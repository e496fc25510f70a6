package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/takeover"
)

// needsYouID is the persistent notification "Needs you: sign in".
const needsYouID = "gemini_supply_needs_person"

// NeedsYouNotice is the Home Assistant notification "Needs you: sign in"
// when a tab is offered to a person (takeover.Registry.OnOffer); it points
// to the panel.
func NeedsYouNotice(cfg config.Config, c *homeassistant.Client, logger *slog.Logger) func(takeover.Need) {
	n := Notifier(cfg, c)
	m := messages.For(cfg.Language)
	return func(need takeover.Need) {
		if need.Reason != takeover.ReasonSignIn {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := n.Notify(ctx, needsYouID, m.T("notify.needs_you_sign_in_title"), m.T("notify.needs_you_sign_in_body")); err != nil {
			logger.Warn("the notification that the sign-in needs a person could not be sent", "err", err)
		}
	}
}
