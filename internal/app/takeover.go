package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/guide"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// NewDesk is the process's take-over desk with the offline scripted guide.
func NewDesk(logger *slog.Logger) *shop.Desk {
	return shop.NewDesk(logger, guide.Scripted{}, nil)
}

// PanelTakeover adapts a Desk to the panel's Takeover.
func PanelTakeover(d *shop.Desk) panel.Takeover { return deskPanel{d} }

type deskPanel struct{ d *shop.Desk }

// held maps the browser's "no such tab" to the panel's.
func held(err error) error {
	if errors.Is(err, browser.ErrNotHeld) {
		return fmt.Errorf("%w: %v", panel.ErrNotHeld, err)
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
