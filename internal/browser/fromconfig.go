package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// OptionsFromConfig maps the configuration onto Options: the store profile
// by name, the browser binary, profile directory, remote URL, headless
// mode, viewport and the store account. Callers running the demo store add
// its --host-resolver-rules to ExtraArgs and its account.
func OptionsFromConfig(cfg config.Config, logger *slog.Logger) (Options, error) {
	p, err := store.Lookup(cfg.Store)
	if err != nil {
		return Options{}, fmt.Errorf("browser: %w", err)
	}
	return Options{
		ExecutablePath: cfg.BrowserExecutable,
		ProfileDir:     cfg.BrowserProfileDir,
		RemoteURL:      cfg.BrowserRemoteURL,
		Headless:       cfg.BrowserHeadless,
		Width:          cfg.ViewportWidth,
		Height:         cfg.ViewportHeight,
		Store:          p,
		Username:       cfg.MetroUsername,
		Password:       cfg.MetroPassword,
		Logger:         logger,
	}, nil
}

// LoginOnce launches the browser with opts, runs the store's login (or
// finds the session still valid), checks the signed-in marker in a tab of
// its own and closes the browser, leaving the session in the profile
// directory. It backs the `gemini-supply login` command.
func LoginOnce(ctx context.Context, opts Options) error {
	h, err := Launch(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		_ = h.Close(cctx)
	}()
	if err := h.Login(ctx); err != nil {
		return err
	}
	tab, err := h.NewTab(ctx)
	if err != nil {
		return err
	}
	defer tab.Close()
	ok, err := h.IsAuthenticated(ctx, tab)
	if err != nil {
		return fmt.Errorf("browser: checking the new session: %w", err)
	}
	if !ok {
		return errors.New("browser: the login finished but the store shows no signed-in marker; try `gemini-supply login --headful` and sign in by hand")
	}
	return nil
}
