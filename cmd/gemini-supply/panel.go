package main

import (
	"context"
	"log/slog"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// newPanel builds the web panel of serve and shop --ui: start and stop
// drive runs, preview reads the list; the history and the product memory
// come from the configuration's directories.
func newPanel(cfg config.Config, logger *slog.Logger, ingress bool,
	start func(context.Context, runstatus.Request) error, stop func(context.Context, string) error,
	preview func(context.Context, bool) (shoppinglist.Plan, error),
	cartAction func(context.Context, reviewpack.Request) (reviewpack.Action, error), usual *usualHooks, takeover panel.Takeover) (*panel.Panel, error) {
	opts := panel.Options{
		Ingress: ingress, Logger: logger, Start: start, Stop: stop, Preview: preview,
		History: app.PanelHistory(cfg), Products: app.PanelProducts(cfg, logger), CartAction: cartAction,
		Messages: messages.For(cfg.Language), Takeover: takeover,
	}
	if usual != nil {
		opts.Usual, opts.AddUsual = usual.propose, usual.add
	}
	return panel.New(opts)
}

// usualHooks are the panel's "Start from the usual" (nil: none).
type usualHooks struct {
	propose func(context.Context) (panel.UsualProposal, error)
	add     func(context.Context, []string) error
}
