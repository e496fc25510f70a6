package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/ask"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/mqtt"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/serve"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
)

var serveCommand = command{
	name:    "serve",
	summary: "run as the Home Assistant add-on: wait for triggers, shop",
	run:     runServe,
}

const serveAbout = `Waits for triggers (the Home Assistant event gemini_supply_start, stdin commands
from hassio.addon_stdin, the MQTT button) and runs one shopping run at a time
until SIGTERM. gemini_supply_stop, the stdin command stop and the MQTT stop
button stop the run in progress. As the add-on, the options come from ` + config.DefaultAddonOptionFile + `.
See docs/homeassistant.md.`

func runServe(ctx context.Context, args []string, s stdio) int {
	fs := newFlagSet("serve", "[flags]", serveAbout)
	flags := config.BindFlags(fs)
	mqttCleanup := fs.Bool("mqtt-cleanup", false, "delete the MQTT discovery entities from Home Assistant and serve without MQTT (mqtt_cleanup)")
	ui := fs.String("ui", "", "serve the web panel on `ADDR` (a port alone binds 127.0.0.1); as the add-on it is served through Home Assistant's ingress")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return exitCode(err)
	}
	load := loadOptions
	load.Flags = flags
	load.Need = serveNeeds // a missing credential is said with the file's problems
	cfg, err := loadConfig(load, s.err)
	if err != nil {
		return exitCode(configFailure("serve", s.err, err))
	}
	if *mqttCleanup {
		cfg.MQTTCleanup = true
	}
	if err := serveValidate(cfg); err != nil {
		return exitCode(configFailure("serve", s.err, err))
	}
	logger := slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: cfg.SlogLevel()}))
	if err := serveMain(ctx, cfg, s.in, logger, *ui); err != nil {
		logger.Error("serve stopped", "error", err)
		return 1
	}
	return 0
}

// serveNeeds is what serve needs: what a run needs. A Telegram bot token
// without a chat id is accepted: an add-on user cannot run test-telegram to
// find the chat id, so serve finds it (serveDiscoverTelegramChat) and runs
// without Telegram meanwhile.
const serveNeeds = config.NeedAll | config.AllowTelegramChatLater

// serveValidate validates cfg for serve (serveNeeds).
func serveValidate(cfg config.Config) error {
	return cfg.ValidateFor(serveNeeds)
}

// telegramNeedsChatID: a bot token is set, the chat id is not.
func telegramNeedsChatID(cfg config.Config) bool {
	return cfg.TelegramBotToken.IsSet() && cfg.TelegramChatID == 0
}

// telegramDiscoveryWait is how long one round of chat id discovery waits for
// a message to the bot before it starts another.
const telegramDiscoveryWait = time.Hour

// serveDiscoverTelegramChat is serve's answer to a bot token without a chat
// id: until ctx ends it waits for a message to the bot and logs the chat id
// it came from, saying to set telegram_chat_id to it. Telegram takes no
// part in runs meanwhile. The returned func stops it and waits.
func serveDiscoverTelegramChat(ctx context.Context, cfg config.Config, logger *slog.Logger) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		logger.Warn("telegram_chat_id is not set: Telegram is off for runs (questions go to the panel and the phones of ha_notify only). " +
			"Send any message to your bot; its chat id will be logged here.")
		opts := telegram.OptionsFromConfig(cfg, logger)
		for {
			chat, err := telegram.DiscoverChat(ctx, opts, telegramDiscoveryWait)
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, telegram.ErrNoReply):
				continue
			case err != nil:
				logger.Warn("cannot find the Telegram chat id", "error", err)
				return
			}
			name := chat.Name
			if name == "" {
				name = "no name"
			}
			logger.Warn(fmt.Sprintf("Telegram: a message arrived from chat %d (%s). If that was you, set telegram_chat_id: %d "+
				"(TELEGRAM_USER_CHAT_ID) and restart to use Telegram", chat.ID, name, chat.ID),
				"chat_id", chat.ID, "chat", name)
			return
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// serveMain connects Home Assistant, builds the run machinery and serves
// until ctx ends (SIGTERM).
func serveMain(ctx context.Context, cfg config.Config, in io.Reader, logger *slog.Logger, uiAddr string) error {
	bus := &runstatus.Bus{}
	deps := app.Deps{Bus: bus, Logger: logger}
	opts := serve.Options{Logger: logger, Bus: bus}
	// The triggers below are built before the server; they stop runs through it.
	var srv *serve.Server
	stop := func(ctx context.Context, source string) error { return srv.Stop(ctx, source) }

	// Home Assistant: the list (unless a YAML list is configured), the
	// start event, the events and notifications.
	ha, err := serveDialHomeAssistant(ctx, cfg, logger)
	if err != nil {
		return err
	}
	// The household is told things in one language: the option's, or Home
	// Assistant's.
	cfg.Language = app.Language(ctx, cfg, ha, logger)
	if ha != nil {
		defer ha.Close()
		if cfg.ShoppingList == "" {
			todo, err := app.TodoList(ctx, ha, cfg, logger)
			if err != nil {
				return err
			}
			deps.Provider = todo // its SendSummary is the summary notification
		} else {
			deps.Notifiers = append(deps.Notifiers, app.Notifier(cfg, ha))
		}
		opts.Sources = append(opts.Sources, homeassistant.NewEventTrigger(ha, logger).WithStop(stop))
		sink := app.EventSink(cfg, ha, logger)
		opts.Subscribers = append(opts.Subscribers, sink)
		opts.OnBusy = append(opts.OnBusy, sink.BusyReporter())
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
	opts.Sources = append(opts.Sources, serve.NewStdinSource(in, logger).WithStop(stop))

	if telegramNeedsChatID(cfg) {
		stopDiscovery := serveDiscoverTelegramChat(ctx, cfg, logger)
		defer stopDiscovery()
	} else {
		closeTelegram, err := wireTelegram(ctx, cfg, logger, &deps)
		if err != nil {
			return err
		}
		defer closeTelegram()
	}
	// The panel: through ingress as the add-on, on --ui elsewhere; it asks
	// the household's questions too.
	var questions []ask.Channel
	var runner *app.Runner // built below; the panel's preview reads the list through it
	if addr, ingress := panel.Address(uiAddr, cfg.AddOn()); addr != "" {
		// A sign-in that needs a person waits for one in the panel; with a
		// Gemini key its "Show me" asks Gemini, within the runs' model quota.
		desk, err := app.NewDeskFor(ctx, cfg, logger, func() agent.Limiter { return runner.ModelLimiter() })
		if err != nil {
			return err
		}
		deps.Desk = desk
		// "Needs you: sign in" on the phones, a tap opening the panel.
		if push, err := app.NeedsYouOnPhones(cfg, ha, logger); err != nil {
			return err
		} else if push != nil {
			desk.OnNeedsPerson(push)
		}
		p, err := newPanel(cfg, logger, ingress,
			func(ctx context.Context, req runstatus.Request) error { return srv.Start(ctx, req) }, stop,
			func(ctx context.Context, retry bool) (shoppinglist.Plan, error) { return runner.Preview(ctx, retry) },
			func(ctx context.Context, req reviewpack.Request) (reviewpack.Action, error) {
				return app.CartActions(runner, srv.Start)(ctx, req)
			},
			&usualHooks{
				propose: func(ctx context.Context) (panel.UsualProposal, error) { return runner.PanelUsual(ctx) },
				add:     func(ctx context.Context, names []string) error { return runner.AddUsual(ctx, names) },
			}, app.PanelTakeover(desk))
		if err != nil {
			return err
		}
		// After a restart the page shows the last run, not "No run yet".
		if err := p.Restore(ctx); err != nil {
			logger.Warn("the panel could not read the last run", "error", err)
		}
		opts.Subscribers = append(opts.Subscribers, p)
		questions = append(questions, ask.Channel{Name: messages.For(cfg.Language).T("question.on_panel"), Chooser: p, Confirmer: p})
		deps.Watcher = app.PanelWatcher(p)
		opts.Sources = append(opts.Sources, serve.SourceFunc(func(ctx context.Context, _ serve.StartFunc) error {
			// Without its panel (the port taken) serve still shops.
			if err := p.Serve(ctx, addr); err != nil {
				logger.Error("the panel is unavailable; serving without it", "error", err)
				<-ctx.Done()
			}
			return nil
		}))
	}
	// The phones of ha_notify ask too; the first answer on any channel wins.
	if err := app.WireQuestions(cfg, ha, &deps, logger, questions...); err != nil {
		return err
	}
	// They get each run's review pack too, with its actions.
	if review, err := app.ReviewOnPhones(cfg, ha, logger, func(ctx context.Context, req reviewpack.Request) (reviewpack.Action, error) {
		return app.CartActions(runner, srv.Start)(ctx, req)
	}); err != nil {
		return err
	} else if review != nil {
		opts.Subscribers = append(opts.Subscribers, review)
	}
	// gemini_supply_usual: "the usual" proposed on the phones, opening the panel.
	if usualTrigger, err := app.UsualOnPhones(cfg, ha, logger, func(ctx context.Context) (int, int, error) { return runner.UsualCounts(ctx) }); err != nil {
		return err
	} else if usualTrigger != nil {
		opts.Sources = append(opts.Sources, usualTrigger)
	}

	runner, err = app.NewRunner(cfg, deps)
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
	// The delivery slots: read after every run and on slot_scout_interval
	// (read only), for Home Assistant and the slot watch.
	if app.SlotScoutWanted(cfg, ha != nil) {
		scout, err := app.NewSlotScout(cfg, runner, ha, deps, logger)
		if err != nil {
			return err
		}
		opts.Sources = append(opts.Sources, serve.SourceFunc(func(ctx context.Context, _ serve.StartFunc) error { return scout.Run(ctx) }))
	}
	srv, err = serve.New(opts)
	if err != nil {
		return err
	}
	stopMQTT := serveWireMQTT(ctx, cfg, logger, bus, srv, defaultMQTTLookupRetry)
	defer stopMQTT()
	return srv.Run(ctx)
}

// mqttControl is what the MQTT buttons drive: serve's Server.
type mqttControl interface {
	mqtt.Starter
	mqtt.Stopper
}

// mqttDrainTimeout bounds how long stopping MQTT waits for the sensors to
// show the last run's final state (the bus is closed by then) before it
// publishes "offline" and disconnects.
const mqttDrainTimeout = 10 * time.Second

// serveWireMQTT connects MQTT in the background (a broker that is down must
// not hold up the rest of serve) and, once connected, publishes the
// discovery entities, drives the sensors from the run's events and routes
// button presses to control (start, retry, stop). With mqtt_cleanup it deletes the entities
// instead. No broker configured and not an add-on: serve runs without MQTT.
// As the add-on without mqtt_broker it asks the Supervisor for the broker
// until it gets one, with retry's backoff (serveResolveMQTTBroker).
//
// It subscribes to bus at once, so a run started before the broker answered
// is still shown, and follows it until the bus closes — serve closes it
// after the last run stopped — not until ctx ends: a run cancelled by
// SIGTERM publishes its final state after ctx was cancelled. The returned
// func, called once serve has stopped, stops connecting, lets the sensors
// publish the last events (at most mqttDrainTimeout), then publishes
// "offline" and disconnects.
func serveWireMQTT(ctx context.Context, cfg config.Config, logger *slog.Logger, bus *runstatus.Bus, control mqttControl, retry mqttLookupRetry) func() {
	sub := bus.Subscribe(256)
	connectCtx, stopConnecting := context.WithCancel(ctx)
	followCtx, stopFollowing := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer sub.Close()
		broker, err := serveResolveMQTTBroker(connectCtx, cfg, logger, retry)
		switch {
		case err != nil && connectCtx.Err() != nil:
			return // serve stopped while the lookup waited
		case errors.Is(err, mqtt.ErrNoBroker):
			logger.Info("MQTT is not available: no dashboard button or sensors", "reason", err)
			return
		case err != nil:
			logger.Warn("MQTT is not available: no dashboard button or sensors", "error", err)
			return
		}
		opts := mqtt.Options{
			Broker: broker, DiscoveryPrefix: cfg.MQTTDiscoveryPrefix, SWVersion: version,
			Starter: control, Stopper: control, Logger: logger, Messages: messages.For(cfg.Language),
		}
		if cfg.MQTTCleanup {
			if err := mqtt.Cleanup(connectCtx, opts); err != nil {
				logger.Warn("removing the MQTT entities", "error", err)
				return
			}
			logger.Info("removed the MQTT entities from Home Assistant; serving without MQTT")
			return
		}
		client, err := mqtt.Connect(connectCtx, opts)
		if err != nil {
			if connectCtx.Err() == nil {
				logger.Warn("MQTT connection failed: no dashboard button or sensors", "error", err)
			}
			return
		}
		if err := client.Consume(followCtx, sub); err != nil {
			logger.Warn("the MQTT sensors stopped before the last run's final state was published", "error", err)
		}
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer ccancel()
		if err := client.Close(cctx); err != nil {
			logger.Warn("closing MQTT", "error", err)
		}
	}()
	return func() {
		stopConnecting()
		sub.Close() // ends Consume once it has published what the bus delivered
		t := time.NewTimer(mqttDrainTimeout)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			stopFollowing()
			<-done
		}
		stopFollowing()
	}
}

// mqttLookupRetry is the backoff with which serve asks the Supervisor again
// for the MQTT broker: First after the first failure, doubling up to Max.
type mqttLookupRetry struct {
	First, Max time.Duration
}

// defaultMQTTLookupRetry: 5 s, 10 s, 20 s … up to 5 min apart, until serve stops.
var defaultMQTTLookupRetry = mqttLookupRetry{First: 5 * time.Second, Max: 5 * time.Minute}

// serveResolveMQTTBroker picks the broker for serve (mqtt.ResolveBroker).
// As the add-on without mqtt_broker, the Supervisor may be restarting
// (connection refused, 5xx) or the Mosquitto add-on not started yet
// ("Service not enabled", mqtt.ErrNoBroker): it asks again with retry's
// backoff until it gets a broker or ctx ends. A refusal
// (mqtt.ErrSupervisorRefused: 401/403) is returned at once, since asking
// again cannot fix it. The first failure is logged at Warn with what to
// do, the later ones at Debug, the broker found at Info.
func serveResolveMQTTBroker(ctx context.Context, cfg config.Config, logger *slog.Logger, retry mqttLookupRetry) (mqtt.Broker, error) {
	addon := strings.TrimSpace(cfg.MQTTBroker) == "" && cfg.SupervisorToken.IsSet()
	if retry.First <= 0 || retry.Max < retry.First {
		retry = defaultMQTTLookupRetry
	}
	delay := retry.First
	for attempt := 1; ; attempt++ {
		broker, err := mqtt.ResolveBroker(ctx, cfg, nil)
		if err == nil {
			if addon {
				logger.Info("MQTT: using the broker the Supervisor offers", "broker", broker, "attempts", attempt)
			}
			return broker, nil
		}
		if !addon || ctx.Err() != nil || errors.Is(err, mqtt.ErrSupervisorRefused) {
			return mqtt.Broker{}, err
		}
		switch {
		case attempt > 1:
			logger.Debug("MQTT: still no broker from the Supervisor; retrying", "attempt", attempt, "retry_in", delay, "error", err)
		case errors.Is(err, mqtt.ErrNoBroker):
			logger.Warn("MQTT: the Supervisor offers no MQTT broker yet; no dashboard button or sensors until it does. "+
				"Install and start the Mosquitto broker add-on (or set mqtt_broker); serve keeps asking in the background",
				"retry_in", delay, "error", err)
		default:
			logger.Warn("MQTT: cannot ask the Supervisor for the MQTT broker (it may be restarting); no dashboard button or sensors "+
				"until it answers. serve keeps asking in the background; if this persists, check the Supervisor's log",
				"retry_in", delay, "error", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return mqtt.Broker{}, fmt.Errorf("asking the Supervisor for the MQTT broker: %w", ctx.Err())
		case <-t.C:
		}
		delay = min(delay*2, retry.Max)
	}
}

// The shop package's interfaces the Home Assistant side satisfies.
var (
	_ shop.Notifier       = (*homeassistant.Notifier)(nil)
	_ serve.Source        = (*homeassistant.EventTrigger)(nil)
	_ serve.Source        = (*serve.StdinSource)(nil)
	_ serve.Runner        = (*app.Runner)(nil)
	_ mqttControl         = (*serve.Server)(nil)
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
	opts := app.HomeAssistantOptions(cfg, logger)
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
