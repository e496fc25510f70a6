package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/ask"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// The question fan-out and the phone satisfy the interfaces a run consumes.
var (
	_ shop.ChoiceResolver = (*ask.Asker)(nil)
	_ agent.Confirmer     = (*ask.Asker)(nil)
	_ ask.Chooser         = (*homeassistant.Phone)(nil)
	_ ask.Confirmer       = (*homeassistant.Phone)(nil)
)

// HomeAssistantConfigured reports whether cfg reaches a Home Assistant (a
// URL and token, or the add-on's Supervisor).
func HomeAssistantConfigured(cfg config.Config) bool {
	return cfg.SupervisorToken.IsSet() || cfg.HomeAssistantURL != ""
}

// HomeAssistantOptions are the client options cfg gives.
func HomeAssistantOptions(cfg config.Config, logger *slog.Logger) homeassistant.Options {
	return homeassistant.Options{
		URL: cfg.HomeAssistantURL, Token: cfg.HomeAssistantToken,
		SupervisorToken: cfg.SupervisorToken, SupervisorURL: cfg.SupervisorURL, Logger: logger,
	}
}

// TodoList is the Home Assistant to-do list cfg.TodoEntity on c, checked to
// exist and to support what a run does — the provider `serve` and `shop`
// share. Its SendSummary is the summary notification.
func TodoList(ctx context.Context, c *homeassistant.Client, cfg config.Config, logger *slog.Logger) (*homeassistant.TodoProvider, error) {
	todo := homeassistant.NewTodoProvider(c, homeassistant.TodoOptions{Entity: cfg.TodoEntity, Logger: logger,
		Notifier: Notifier(cfg, c)})
	if err := todo.Check(ctx); err != nil {
		return nil, err
	}
	return todo, nil
}

// Notifier is Home Assistant's persistent notifications on c in cfg's
// language.
func Notifier(cfg config.Config, c *homeassistant.Client) *homeassistant.Notifier {
	return homeassistant.NewNotifier(c, homeassistant.NotifierOptions{Messages: messages.For(cfg.Language)})
}

// EventSink fires the run's events on c for automations; the events Home
// Assistant could not take wait in the data folder's outbox (fired late,
// surviving a restart), in memory only without a data folder.
func EventSink(cfg config.Config, c *homeassistant.Client, logger *slog.Logger) *homeassistant.EventSink {
	opts := homeassistant.EventSinkOptions{Logger: logger, Notifier: Notifier(cfg, c)}
	if cfg.DataDir != "" && os.MkdirAll(cfg.DataDir, 0o755) == nil {
		opts.OutboxPath = filepath.Join(cfg.DataDir, homeassistant.EventOutboxFile)
	}
	return homeassistant.NewEventSink(c, opts)
}

// phoneOptions are the phones of ha_notify, speaking cfg's language.
func phoneOptions(cfg config.Config, logger *slog.Logger) homeassistant.PhoneOptions {
	return homeassistant.PhoneOptions{Services: cfg.HANotify, Logger: logger, Messages: messages.For(cfg.Language)}
}

// ReviewOnPhones is the review pack on the phones of ha_notify (nil
// without Home Assistant or phones); act carries out the actions pressed
// (CartActions).
func ReviewOnPhones(cfg config.Config, c *homeassistant.Client, logger *slog.Logger,
	act func(context.Context, reviewpack.Request) (reviewpack.Action, error)) (*homeassistant.ReviewPhone, error) {
	if c == nil || len(cfg.HANotify) == 0 {
		return nil, nil
	}
	phone, err := homeassistant.NewPhone(c, phoneOptions(cfg, logger))
	if err != nil {
		return nil, fmt.Errorf("ha_notify: %w", err)
	}
	return homeassistant.NewReviewPhone(phone, act), nil
}

// WireQuestions sets deps.Resolver and deps.Confirmer to ask on every
// configured channel at once: extra (the panel), the phones of ha_notify
// (through c, when connected) and Telegram (deps.Resolver/Confirmer as
// wireTelegram left them). With Telegram alone they stay Telegram's. The first answer wins;
// questions wait cfg.TelegramResponseTimeout on every channel.
func WireQuestions(cfg config.Config, c *homeassistant.Client, deps *Deps, logger *slog.Logger, extra ...ask.Channel) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := messages.For(cfg.Language)
	channels := append([]ask.Channel(nil), extra...)
	if c != nil && len(cfg.HANotify) > 0 {
		phone, err := homeassistant.NewPhone(c, phoneOptions(cfg, logger))
		if err != nil {
			return fmt.Errorf("ha_notify: %w", err)
		}
		channels = append(channels, ask.Channel{Name: m.T("question.on_phone"), Chooser: phone, Confirmer: phone})
	}
	if len(channels) == len(extra) && len(cfg.HANotify) > 0 {
		logger.Warn("ha_notify is set but Home Assistant is not connected: questions go to Telegram only, if configured")
	}
	if len(channels) == 0 {
		if deps.Resolver == nil && deps.Confirmer == nil {
			logger.Info("no channel can ask (no panel, ha_notify phone or Telegram): the agent decides ambiguous items itself, sold-out items are reported not found, safety confirmations are denied")
		}
		return nil
	}
	if deps.Resolver != nil || deps.Confirmer != nil {
		channels = append(channels, ask.Channel{Name: m.T("question.on_telegram"), Chooser: deps.Resolver, Confirmer: deps.Confirmer})
	}
	asker, err := ask.New(ask.Options{Timeout: cfg.TelegramResponseTimeout, Logger: logger, Messages: m}, channels...)
	if err != nil {
		return err
	}
	deps.Resolver, deps.Confirmer = asker, asker
	logger.Info("questions and safety checks are asked on", "channels", asker.Channels())
	return nil
}

// AddOnPanelPath is where Home Assistant shows the add-on's panel (its
// ingress page; config.yaml's slug).
const AddOnPanelPath = "/hassio/ingress/gemini_supply"

// UsualOnPhones answers gemini_supply_usual with a push to the phones of
// ha_notify that opens the panel (nil without Home Assistant or phones).
func UsualOnPhones(cfg config.Config, c *homeassistant.Client, logger *slog.Logger,
	propose func(context.Context) (items, atHome int, err error)) (*homeassistant.UsualTrigger, error) {
	if c == nil || len(cfg.HANotify) == 0 {
		return nil, nil
	}
	phone, err := homeassistant.NewPhone(c, phoneOptions(cfg, logger))
	if err != nil {
		return nil, fmt.Errorf("ha_notify: %w", err)
	}
	return homeassistant.NewUsualTrigger(c, phone, AddOnPanelPath, propose), nil
}

// NeedsYouOnPhones is the "Needs you" push to the phones of ha_notify when
// a tab needs a person (take over), a tap opening the panel; nil without
// Home Assistant or phones. For shop.Desk.OnNeedsPerson.
func NeedsYouOnPhones(cfg config.Config, c *homeassistant.Client, logger *slog.Logger) (func(context.Context, runstatus.NeedsPerson) error, error) {
	if c == nil || len(cfg.HANotify) == 0 {
		return nil, nil
	}
	phone, err := homeassistant.NewPhone(c, phoneOptions(cfg, logger))
	if err != nil {
		return nil, fmt.Errorf("ha_notify: %w", err)
	}
	return func(ctx context.Context, np runstatus.NeedsPerson) error {
		return phone.PushNeedsYou(ctx, np.Reason, AddOnPanelPath)
	}, nil
}
