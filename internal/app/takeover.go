package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/guide"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// NewDesk is the process's take-over desk with the offline scripted guide.
func NewDesk(logger *slog.Logger) *shop.Desk {
	return shop.NewDesk(logger, guide.Scripted{}, nil)
}

// NewDeskFor is the process's take-over desk for the configuration: with
// a Gemini key (and a model other than the scripted one) "Show me" plans
// and grounds with Gemini calls (GuideModel); otherwise the offline
// scripted guide reads the page's elements. limiter (nil: none) gives the
// model-call limiter the guide's calls share with the runs' agents
// (Runner.ModelLimiter).
func NewDeskFor(ctx context.Context, cfg config.Config, logger *slog.Logger, limiter func() agent.Limiter) (*shop.Desk, error) {
	if cfg.GeminiModel == config.ScriptedModel || !cfg.GeminiAPIKey.IsSet() {
		return NewDesk(logger), nil
	}
	g, err := geminiGuide(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	g.Limiter = limiter
	return shop.NewDesk(logger, g, g), nil
}

// geminiGuide is the guide's Gemini planner and grounder for the
// configuration's key, model, language and prices.
func geminiGuide(ctx context.Context, cfg config.Config, logger *slog.Logger) (*guide.Gemini, error) {
	c, err := geminiClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &guide.Gemini{Client: c, Model: GuideModel(cfg.GeminiModel, time.Now()), Language: cfg.Language,
		Price: configuredPrice(cfg), Logger: logger}, nil
}

// GuideModel is the model of the Gemini guide: the agent's model, or
// agent.DefaultModel when the table says that one cannot read screenshots
// into structured output (the Computer-Use-only preview) or is retired.
// No option of its own: the guide's calls are few and short.
func GuideModel(agentModel string, now time.Time) string {
	if agentModel == "" {
		return agent.DefaultModel
	}
	if m, known := agent.LookupModel(agentModel); known && (!m.ReadsPages || m.Retired(now)) {
		return agent.DefaultModel
	}
	return agentModel
}

// PanelTakeover adapts a Desk to the panel's Takeover.
func PanelTakeover(d *shop.Desk) panel.Takeover { return deskPanel{d} }

type deskPanel struct{ d *shop.Desk }

// held maps the browser's "no such tab" and refusals to the panel's.
func held(err error) error {
	var refused *browser.RefusedError
	switch {
	case errors.Is(err, browser.ErrNotHeld):
		return fmt.Errorf("%w: %v", panel.ErrNotHeld, err)
	case errors.As(err, &refused):
		return &panel.RefusedError{Rule: refused.Rule, Reason: refused.Reason}
	}
	return err
}

func (a deskPanel) NeedsPersons() []runstatus.NeedsPerson { return a.d.NeedsPersons() }
func (a deskPanel) Screenshot(ctx context.Context, tab string) ([]byte, error) {
	b, err := a.d.Screenshot(ctx, tab)
	return b, held(err)
}
func (a deskPanel) Click(ctx context.Context, tab string, x, y int) error {
	return held(a.d.Click(ctx, tab, x, y))
}
func (a deskPanel) Type(ctx context.Context, tab, text string) error {
	return held(a.d.Type(ctx, tab, text))
}
func (a deskPanel) Key(ctx context.Context, tab, key string) error {
	return held(a.d.Key(ctx, tab, key))
}
func (a deskPanel) Done(ctx context.Context, tab, decision string) (panel.HandedBack, error) {
	hb, err := a.d.Done(ctx, tab, decision)
	return panel.HandedBack{SignedIn: hb.SignedIn, Item: hb.Item, Outcome: hb.Outcome, Product: hb.Product}, held(err)
}
func (a deskPanel) Request(ctx context.Context, tab string) error {
	return held(a.d.Request(ctx, tab))
}
func (a deskPanel) Guide(ctx context.Context, tab, goal string) (panel.GuideStep, error) {
	s, err := a.d.Guide(ctx, tab, goal)
	if err != nil {
		return panel.GuideStep{}, held(err)
	}
	return panel.GuideStep{Task: s.Task, Description: s.Description, Box: s.Box, Done: s.Done}, nil
}
