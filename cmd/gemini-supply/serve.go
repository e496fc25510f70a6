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
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/serve"
	"github.com/gemini-supply/gemini-supply/internal/shop"
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

	cleanup, err := serveWireExtras(ctx, cfg, logger, &deps, &opts)
	if err != nil {
		return err
	}
	defer cleanup()

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
	return serve.Run(ctx, opts)
}

// serveWireExtras is where MQTT (discovery entities, status, the start
// button) and Telegram (choice resolver, safety confirmations, summary)
// join serve. WIRING (lead): add to deps (Resolver, Confirmer, Notifiers)
// and opts (Sources, Subscribers, OnBusy); the returned cleanup runs after
// serve stopped.
func serveWireExtras(_ context.Context, _ config.Config, _ *slog.Logger, _ *app.Deps, _ *serve.Options) (cleanup func(), err error) {
	return func() {}, nil
}

// The shop package's interfaces the Home Assistant side satisfies.
var (
	_ shop.Notifier = (*homeassistant.Notifier)(nil)
	_ serve.Source  = (*homeassistant.EventTrigger)(nil)
	_ serve.Source  = (*serve.StdinSource)(nil)
	_ serve.Runner  = (*app.Runner)(nil)
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
