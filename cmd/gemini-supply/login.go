package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/config"
)

var loginCommand = command{
	name:    "login",
	summary: "log in to the store once and keep the session in the profile",
	run:     runLogin,
}

// loginManualWait is how long `login --headful` waits for a person to
// finish a login the script could not.
const loginManualWait = 5 * time.Minute

const loginAbout = `Signs in to the store with metro_username / metro_password (typed by the
browser, never shown to a model) and keeps the session in the browser profile
(browser_profile_dir), so shopping runs start signed in. A session still valid
is kept as is. With --headful the browser window shows, and if the scripted
login is stopped (a challenge on the identity site) you can finish it by hand.`

func runLogin(ctx context.Context, args []string, s stdio) int {
	return exitCode(login(ctx, args, s))
}

func login(ctx context.Context, args []string, s stdio) error {
	fs := newFlagSet("login", "[flags]", loginAbout)
	flags := config.BindFlags(fs, "store", "data-dir", "log-level")
	headful := fs.Bool("headful", false, "show the browser window and let you finish a login by hand")
	wait := fs.Duration("wait", loginManualWait, "with --headful, how long to wait for you to finish a login by hand")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return err
	}
	if *wait <= 0 {
		return usageFailure("login", s.err, errors.New("--wait must be positive"))
	}
	load := loadOptions
	load.Flags = flags
	cfg, err := loadConfig(load, s.err)
	if err != nil {
		return configFailure("login", s.err, err)
	}
	if cfg.Store == "demo" {
		return usageFailure("login", s.err, errors.New("the demo store runs in memory with its own account; `gemini-supply demo` signs in by itself"))
	}
	if err := cfg.ValidateFor(config.NeedStoreLogin); err != nil {
		return configFailure("login", s.err, err)
	}
	logger := slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: cfg.SlogLevel()}))
	opts, err := browser.OptionsFromConfig(cfg, logger)
	if err != nil {
		return configFailure("login", s.err, err)
	}
	if *headful {
		opts.Headless = false
		opts.ManualLoginWait = *wait
	}
	kept := fmt.Sprintf("The session is kept in %s; shopping runs will use it.", cfg.BrowserProfileDir)
	if cfg.BrowserRemoteURL != "" {
		// A remote browser gets a fresh context routed through the policy
		// proxy (docs/browser.md): its session ends with the connection.
		kept = "With a remote browser the session lasts only as long as this connection; shopping runs sign in again when needed."
	}
	// The username is personal (an email address): it is not printed.
	fmt.Fprintf(s.out, "Logging in to %s with the configured account…\n", opts.Store.Name)
	if err := browser.LoginOnce(ctx, opts); err != nil {
		fmt.Fprintf(s.err, "gemini-supply login: %v\n", err)
		return err
	}
	fmt.Fprintf(s.out, "Logged in. %s\n", kept)
	return nil
}
