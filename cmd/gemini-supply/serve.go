package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/mqtt"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/serve"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
)

var serveCommand = command{
	name:    "serve",
	summary: "run as the Home Assistant add-on: wait for triggers, shop",
	run:     runServe,
}

func runServe(ctx context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(s.err)
	flags := config.BindFlags(fs)
	mqttCleanup := fs.Bool("mqtt-cleanup", false, "delete the MQTT discovery entities from Home Assistant and serve without MQTT (mqtt_cleanup)")
	fs.Usage = func() {
		fmt.Fprintln(s.err, "Usage: gemini-supply serve [flags]")
		fmt.Fprintln(s.err, "\nWaits for triggers (Home Assistant event gemini_supply_start, stdin commands, MQTT button)")
		fmt.Fprintln(s.err, "and runs one shopping run at a time until SIGTERM. As the add-on, the options come from")
		fmt.Fprintln(s.err, config.DefaultAddonOptionFile+". See docs/homeassistant.md.")
		fmt.Fprintln(s.err)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(s.err, "gemini-supply serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg, err := config.Load(config.LoadOptions{Flags: flags})
	if *mqttCleanup {
		cfg.MQTTCleanup = true
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply serve: %v\n", err)
		return 1
	}
	logger := slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: cfg.SlogLevel()}))
	if err := serveMain(ctx, cfg, s.in, logger); err != nil {
		logger.Error("serve stopped", "error", err)
		return 1
	}
	return 0
}

// serveMain connects Home Assistant, builds the run machinery and serves
// until ctx ends (SIGTERM).
func serveMain(ctx context.Context, cfg config.Config, in io.Reader, logger *slog.Logger) error {
	bus := &runstatus.Bus{}
	deps := app.Deps{Bus: bus, Logger: logger}
	opts := serve.Options{Logger: logger, Bus: bus}

	// Home Assistant: the list (unless a YAML list is configured), the
	// start event, the events and notifications.
	ha, err := serveDialHomeAssistant(ctx, cfg, logger)
	if err != nil {
		return err
	}
	if ha != nil {
		defer ha.Close()
		if cfg.ShoppingList == "" {
			todo := homeassistant.NewTodoProvider(ha, homeassistant.TodoOptions{Entity: cfg.TodoEntity, Logger: logger})
			if err := todo.Check(ctx); err != nil {
				return err
			}
			deps.Provider = todo // its SendSummary is the summary notification
		} else {
			deps.Notifiers = append(deps.Notifiers, homeassistant.NewNotifier(ha, homeassistant.NotifierOptions{}))
		}
		opts.Sources = append(opts.Sources, homeassistant.NewEventTrigger(ha, logger))
		opts.Subscribers = append(opts.Subscribers, homeassistant.NewEventSink(ha, homeassistant.EventSinkOptions{Logger: logger}))
		opts.OnBusy = append(opts.OnBusy, homeassistant.BusyReporter(ha, logger))
	} else if cfg.ShoppingList == "" {
		return errors.New("no shopping list: configure Home Assistant (home_assistant_url and home_assistant_token, or run as the add-on) for a todo list, or set shopping_list to a YAML file")
	}

	// stdin: hassio.addon_stdin commands. Made pollable so shutdown can stop the reader.
	if f, ok := in.(*os.File); ok {
		if p, err := serve.Pollable(f); err == nil {
			defer p.Close()
			in = p
		} else {
			logger.Debug("stdin is not pollable; its reader ends with the process", "error", err)
		}
	}
	opts.Sources = append(opts.Sources, serve.NewStdinSource(in, logger))

	closeTelegram, err := serveWireTelegram(ctx, cfg, logger, &deps)
	if err != nil {
		return err
	}
	defer closeTelegram()

	runner, err := app.NewRunner(cfg, deps)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := runner.Close(cctx); err != nil {
			logger.Warn("closing the run machinery", "error", err)
		}
	}()
	opts.Runner = runner
	srv, err := serve.New(opts)
	if err != nil {
		return err
	}
	stopMQTT := serveWireMQTT(ctx, cfg, logger, bus, srv)
	defer stopMQTT()
	return srv.Run(ctx)
}

// serveWireTelegram adds the Telegram bot, when configured, as the choice
// resolver, the safety confirmer and the session notices. An unreachable
// Telegram degrades (the bot says so in the log) instead of stopping serve.
// The returned func flushes the notices and stops the bot.
func serveWireTelegram(ctx context.Context, cfg config.Config, logger *slog.Logger, deps *app.Deps) (func(), error) {
	bot, err := telegram.New(ctx, telegram.OptionsFromConfig(cfg, logger))
	if errors.Is(err, telegram.ErrNotConfigured) {
		logger.Info("Telegram is not configured: ambiguous items are reported not found, safety confirmations are denied")
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("start Telegram: %w", err)
	}
	deps.Resolver = bot
	deps.Confirmer = bot
	bot.Follow(ctx, deps.Bus)
	return func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := bot.Close(cctx); err != nil {
			logger.Warn("closing Telegram", "error", err)
		}
	}, nil
}

// serveWireMQTT connects MQTT in the background (a broker that is down must
// not hold up the rest of serve) and, once connected, publishes the
// discovery entities, follows the run's events and routes button presses to
// starter. With mqtt_cleanup it deletes the entities instead. No broker
// configured or offered by the Supervisor: serve runs without MQTT. The
// returned func stops it all and waits.
func serveWireMQTT(ctx context.Context, cfg config.Config, logger *slog.Logger, bus *runstatus.Bus, starter mqtt.Starter) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		broker, err := mqtt.ResolveBroker(ctx, cfg, nil)
		if errors.Is(err, mqtt.ErrNoBroker) {
			logger.Info("MQTT is not available: no dashboard button or sensors", "reason", err)
			return
		}
		if err != nil {
			logger.Warn("MQTT is not available: no dashboard button or sensors", "error", err)
			return
		}
		opts := mqtt.Options{
			Broker: broker, DiscoveryPrefix: cfg.MQTTDiscoveryPrefix, SWVersion: version,
			Starter: starter, Logger: logger,
		}
		if cfg.MQTTCleanup {
			if err := mqtt.Cleanup(ctx, opts); err != nil {
				logger.Warn("removing the MQTT entities", "error", err)
				return
			}
			logger.Info("removed the MQTT entities from Home Assistant; serving without MQTT")
			return
		}
		client, err := mqtt.Connect(ctx, opts)
		if err != nil {
			if ctx.Err() == nil {
				logger.Warn("MQTT connection failed: no dashboard button or sensors", "error", err)
			}
			return
		}
		stop := client.Follow(ctx, bus)
		<-ctx.Done()
		stop()
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		if err := client.Close(cctx); err != nil {
			logger.Warn("closing MQTT", "error", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// The shop package's interfaces the Home Assistant side satisfies.
var (
	_ shop.Notifier       = (*homeassistant.Notifier)(nil)
	_ serve.Source        = (*homeassistant.EventTrigger)(nil)
	_ serve.Source        = (*serve.StdinSource)(nil)
	_ serve.Runner        = (*app.Runner)(nil)
	_ mqtt.Starter        = (*serve.Server)(nil)
	_ shop.ChoiceResolver = (*telegram.Bot)(nil)
)

// serveDialHomeAssistant connects to Home Assistant when it is configured
// (nil, nil when it is not). Home Assistant may still be starting (the
// add-on starts with it): connection failures are retried with backoff
// until ctx ends; a rejected token is not.
func serveDialHomeAssistant(ctx context.Context, cfg config.Config, logger *slog.Logger) (*homeassistant.Client, error) {
	if !cfg.SupervisorToken.IsSet() && cfg.HomeAssistantURL == "" {
		logger.Warn("Home Assistant is not configured: no todo list, events or notifications")
		return nil, nil
	}
	opts := homeassistant.Options{
		URL: cfg.HomeAssistantURL, Token: cfg.HomeAssistantToken,
		SupervisorToken: cfg.SupervisorToken, SupervisorURL: cfg.SupervisorURL, Logger: logger,
	}
	delay := homeassistant.DefaultBackoffBase
	for {
		c, err := homeassistant.Dial(ctx, opts)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, homeassistant.ErrAuthInvalid) || ctx.Err() != nil {
			return nil, err
		}
		if _, _, _, cerr := homeassistant.Endpoint(opts); cerr != nil {
			return nil, cerr // misconfigured: retrying does not help
		}
		logger.Warn("Home Assistant not reachable yet; retrying", "retry_in", delay, "error", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("connect to Home Assistant: %w", ctx.Err())
		case <-t.C:
		}
		delay = min(delay*2, homeassistant.DefaultBackoffMax)
	}
}
