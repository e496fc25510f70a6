package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/preferences"
)

var preferencesCommand = command{
	name:    "preferences",
	summary: "list or forget remembered product choices",
	run:     runPreferences,
}

const preferencesAbout = `Products chosen with ⭐ in Telegram are bought again without asking.
'list' shows them by item key; 'forget' removes one (KEY may be any spelling
of the item, like "2x Milk"). Flags may come before or after the subcommand.
See docs/telegram.md.`

func runPreferences(_ context.Context, args []string, s stdio) int {
	fs := newFlagSet("preferences", "list | forget KEY  [flags]", preferencesAbout)
	flags := config.BindFlags(fs, "data-dir")
	if err := parseFlags(fs, args, s.err, true); err != nil {
		return exitCode(err)
	}
	if fs.NArg() == 0 {
		return exitCode(usageFailure("preferences", s.err, errors.New("say list or forget KEY")))
	}
	sub := fs.Arg(0)
	if err := parseFlags(fs, fs.Args()[1:], s.err, true); err != nil {
		return exitCode(err)
	}
	rest := fs.Args()
	switch {
	case sub == "list" && len(rest) == 0:
	case sub == "list":
		return exitCode(usageFailure("preferences", s.err, fmt.Errorf("list takes no argument (got %q)", strings.Join(rest, " "))))
	case sub == "forget" && len(rest) == 0:
		return exitCode(usageFailure("preferences", s.err, errors.New("forget which item? give its KEY ('gemini-supply preferences list' shows them)")))
	case sub != "forget":
		return exitCode(usageFailure("preferences", s.err, fmt.Errorf("unknown subcommand %q: use list or forget", sub)))
	}

	load := loadOptions
	load.Flags = flags
	cfg, err := config.Load(load)
	if err != nil {
		return exitCode(configFailure("preferences", s.err, err))
	}
	store, err := preferences.Open(cfg.DataDir, preferences.WithLogger(quietLogger(s.err, cfg)))
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply preferences: %v\n", err)
		return 1
	}
	if sub == "list" {
		return listPreferences(store, s)
	}
	return forgetPreference(store, strings.Join(rest, " "), s)
}

func listPreferences(store *preferences.Store, s stdio) int {
	entries, err := store.List()
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply preferences: %v\n", err)
		return 1
	}
	if len(entries) == 0 {
		fmt.Fprintf(s.out, "No products are remembered yet (%s). Press ⭐ on a Telegram question to remember one.\n", store.Path())
		return 0
	}
	w := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tPRODUCT\tPRICE\tPRODUCT ID\tREMEMBERED\tURL")
	for _, e := range entries {
		when := ""
		if !e.When.IsZero() {
			when = e.When.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Key, e.Name, orDash(e.Price), orDash(e.ProductID), orDash(when), orDash(e.URL))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(s.err, "gemini-supply preferences: %v\n", err)
		return 1
	}
	return 0
}

func forgetPreference(store *preferences.Store, key string, s stdio) int {
	p, known := store.Lookup(key)
	if err := store.Forget(key); err != nil {
		fmt.Fprintf(s.err, "gemini-supply preferences: %v\n", err)
		return 1
	}
	if known {
		fmt.Fprintf(s.out, "Forgot %s (%s). The next run will ask again.\n", preferences.Key(key), p.Name)
	} else {
		fmt.Fprintf(s.out, "Forgot %s.\n", preferences.Key(key))
	}
	return 0
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
