package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/slots"
)

var slotsCommand = command{
	name:    "slots",
	summary: "read the store's delivery slots (read only: never chooses or books one)",
	run:     runSlots,
}

const slotsAbout = `Reads the store's delivery slots page by code, in a browser tab that can only
read (GET): the days and windows offered for your address, each with its fee
and whether it is full. It never chooses, reserves or books a slot. With
--json it prints {"read_at", "slots": [{"start", "end", "fee", "available"}]}
with RFC 3339 times. metro.ca's page is read best effort: when it cannot be
read, the command says so and exits 1.`

func runSlots(ctx context.Context, args []string, s stdio) int {
	fs := newFlagSet("slots", "[--json] [flags]", slotsAbout)
	flags := config.BindFlags(fs, "store", "model", "data-dir", "log-level")
	jsonOut := fs.Bool("json", false, "print the slots as JSON")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return exitCode(err)
	}
	load := loadOptions
	load.Flags = flags
	cfg, err := loadConfig(load, s.err)
	if err != nil {
		return exitCode(configFailure("slots", s.err, err))
	}
	logger := slog.New(slog.NewTextHandler(s.err, &slog.HandlerOptions{Level: cfg.SlogLevel()}))
	runner, err := app.NewRunner(cfg, app.Deps{Logger: logger})
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply slots: %v\n", err)
		return 1
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = runner.Close(cctx)
	}()
	r, err := runner.ReadSlots(ctx)
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply slots: could not read the delivery slots: %v\n", err)
		return 1
	}
	if *jsonOut {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(s.err, "gemini-supply slots: %v\n", err)
			return 1
		}
		return 0
	}
	printSlots(s, r, messages.For(cfg.Language))
	return 0
}

// printSlots writes the next available window in the household's
// language ("Next delivery: Saturday 10:00–12:00, $4.99"), then every
// window, one a line.
func printSlots(s stdio, r slots.Reading, m messages.Catalog) {
	fmt.Fprint(s.out, slots.Table(m, r))
}
