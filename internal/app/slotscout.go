package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/slots"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
)

// MinSlotScoutInterval is the shortest interval between two readings of
// the delivery slots on a timer: the store's page is not polled harder.
const MinSlotScoutInterval = 5 * time.Minute

// SlotAlert tells the household that a watched delivery window opened
// (Home Assistant's notification, the phones of ha_notify, Telegram).
type SlotAlert func(ctx context.Context, title, body string) error

// SlotScout reads the store's delivery slots after every run and, with an
// Interval, on a timer — one reading at a time, each bounded — and
// publishes a reading on the bus (runstatus.KindSlotsRead: the MQTT
// sensors, the gemini_supply_slots event) only when it differs from the
// last one published. With a Watch it tells Alerts of each watched
// window that opens, at most once per opening. It never chooses or books
// a slot.
type SlotScout struct {
	// Read reads the slots (Runner.ReadSlots).
	Read func(ctx context.Context) (slots.Reading, error)
	Bus  *runstatus.Bus
	// Interval between readings on the timer; 0: after runs only. A
	// shorter one than MinSlotScoutInterval is raised to it.
	Interval time.Duration
	Watch    slots.Watch
	Alerts   []SlotAlert
	Messages messages.Catalog
	Logger   *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	last    *slots.Reading
	watcher slots.Watcher
}

// busyRetry is how long the scout waits to read again when a run or a
// cart action still holds the browser after a run finished.
const busyRetry = 30 * time.Second

// Run reads the slots after every finished run — or takes the run's own
// reading, from its review pack's slots section — and, with an Interval,
// at start and on the timer, until ctx ends or the bus closes.
func (s *SlotScout) Run(ctx context.Context) error {
	var sub *runstatus.Subscription
	var runs <-chan runstatus.Event
	if s.Bus != nil {
		sub = s.Bus.Subscribe(64)
		defer sub.Close()
		runs = sub.C
	}
	var tick <-chan time.Time
	if s.Interval > 0 {
		t := time.NewTicker(max(s.Interval, MinSlotScoutInterval))
		defer t.Stop()
		tick = t.C
	}
	var retry <-chan time.Time
	read := func() {
		if err := s.Check(ctx); errors.Is(err, runstatus.ErrBusy) {
			retry = time.After(busyRetry)
		}
	}
	if s.Interval > 0 {
		read() // with a timer, at once; else after the first run
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-runs:
			if !ok {
				return nil
			}
			if ev.Kind == runstatus.KindRunFinished && !s.tookRun(ctx, ev) {
				read()
			}
		case <-tick:
			read()
		case <-retry:
			retry = nil
			read()
		}
	}
}

// tookRun takes the slots a finished run read itself after its review
// (its pack's slots section), and says whether it did: they are not read
// twice. A run that could not read them is not followed by another
// reading either (the next run, or the timer, reads them).
func (s *SlotScout) tookRun(ctx context.Context, ev runstatus.Event) bool {
	if ev.Pack == nil || ev.Pack.Slots == nil {
		return false
	}
	if r, ok := ev.Pack.Slots.Reading(); ok {
		s.take(ctx, r)
	}
	return true
}

// Check reads the slots once: it publishes the reading when it changed
// and tells of the watched windows that opened.
func (s *SlotScout) Check(ctx context.Context) error {
	r, err := s.Read(ctx)
	if err != nil {
		s.log().Warn("could not read the delivery slots", "err", err)
		return err
	}
	s.take(ctx, r)
	return nil
}

// take publishes a reading when it changed and tells of the watched
// windows that opened.
func (s *SlotScout) take(ctx context.Context, r slots.Reading) {
	if s.last != nil && slots.SameSlots(*s.last, r) {
		s.log().Debug("the delivery slots did not change")
	} else {
		s.last = &r
		if s.Bus != nil {
			s.Bus.Publish(runstatus.Event{Time: r.ReadAt, Kind: runstatus.KindSlotsRead, Slots: &r})
		}
	}
	if !s.Watch.Active() {
		return
	}
	s.watcher.Watch = s.Watch
	for _, o := range s.watcher.Openings(r, s.now()) {
		title, body := slots.OpenedText(s.Messages, o)
		for _, alert := range s.Alerts {
			if err := alert(ctx, title, body); err != nil {
				s.log().Warn("could not tell of an open delivery window", "err", err)
			}
		}
	}
}

func (s *SlotScout) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *SlotScout) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// slotNotificationID is the Home Assistant persistent notification of an
// open delivery window.
const slotNotificationID = "gemini_supply_slot"

// SlotPushTag is the tag of the phones' notification of an open delivery
// window (ha_notify): a newer opening replaces it on the phone.
const SlotPushTag = "gemini_supply_slot"

// SlotScoutWanted says whether serve reads the slots at all: when someone
// can see them — Home Assistant (haConnected: its event; as the add-on, the
// Supervisor's MQTT broker), an MQTT broker, a watch or an interval. A
// plain `serve` with none of them does not start a browser after every run
// for nobody.
func SlotScoutWanted(cfg config.Config, haConnected bool) bool {
	return haConnected || cfg.SupervisorToken.IsSet() || strings.TrimSpace(cfg.MQTTBroker) != "" ||
		strings.TrimSpace(cfg.SlotWatch) != "" || cfg.SlotScoutInterval > 0
}

// NewSlotScout is serve's slot scout: it reads through r, publishes on
// deps.Bus, and tells of the watched windows (cfg.SlotWatch) through Home
// Assistant's persistent notification (ha, when set), a push to the phones
// of ha_notify (the companion app's notify service, as questions and the
// usual use; a tap opens the panel) and Telegram (when deps has the bot).
// A watch it cannot read is an error.
func NewSlotScout(cfg config.Config, r *Runner, ha *homeassistant.Client, deps Deps, logger *slog.Logger) (*SlotScout, error) {
	w, err := slots.ParseWatch(cfg.SlotWatch)
	if err != nil {
		return nil, fmt.Errorf("slot_watch: %w", err)
	}
	s := &SlotScout{Read: r.ReadSlots, Bus: deps.Bus, Interval: cfg.SlotScoutInterval, Watch: w,
		Messages: messages.For(cfg.Language), Logger: logger}
	if ha != nil {
		n := Notifier(cfg, ha)
		s.Alerts = append(s.Alerts, func(ctx context.Context, title, body string) error {
			return n.Notify(ctx, slotNotificationID, title, body)
		})
	}
	if ha != nil && len(cfg.HANotify) > 0 {
		phone, err := homeassistant.NewPhone(ha, phoneOptions(cfg, logger))
		if err != nil {
			return nil, fmt.Errorf("ha_notify: %w", err)
		}
		// A tap opens the panel, where the slots card shows every window.
		s.Alerts = append(s.Alerts, func(ctx context.Context, title, body string) error {
			return phone.PushOpen(ctx, SlotPushTag, title, body, AddOnPanelPath)
		})
	}
	if bot, ok := deps.Resolver.(*telegram.Bot); ok {
		s.Alerts = append(s.Alerts, func(ctx context.Context, title, body string) error {
			return bot.Notify(ctx, title+"\n"+body)
		})
	}
	return s, nil
}
