package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
)

// shopDialHomeAssistant connects `shop` (and `demo`) to Home Assistant when
// it is configured and needed: for the to-do list when no shopping_list
// file is set (deps.Provider becomes the list, as in serve), or for the
// phones of ha_notify. Unlike serve it tries once: a terminal command
// should fail fast. (nil, nil) when Home Assistant is not needed. It sets
// cfg.Language to the language the household is told in (app.Language:
// Home Assistant's for "auto").
func shopDialHomeAssistant(ctx context.Context, cfg *config.Config, logger *slog.Logger, deps *app.Deps) (*homeassistant.Client, error) {
	wantList := cfg.ShoppingList == ""
	if !app.HomeAssistantConfigured(*cfg) || (!wantList && len(cfg.HANotify) == 0) {
		cfg.Language = app.Language(ctx, *cfg, nil, logger)
		return nil, nil
	}
	ha, err := homeassistant.Dial(ctx, app.HomeAssistantOptions(*cfg, logger))
	if err != nil {
		return nil, fmt.Errorf("connect to Home Assistant: %w", err)
	}
	cfg.Language = app.Language(ctx, *cfg, ha, logger)
	if wantList {
		todo, err := app.TodoList(ctx, ha, *cfg, logger)
		if err != nil {
			ha.Close()
			return nil, err
		}
		deps.Provider = todo
	}
	return ha, nil
}
