// Command gemini-supply fills an online grocery cart from a shopping list with
// a Gemini Computer Use agent. This package only wires: flags and subcommands
// here, everything else in internal/.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand. Each lives in its own file.
type command struct {
	name    string
	summary string
	// run returns the process exit code: 0 ok, 1 failure, 2 usage error.
	run func(ctx context.Context, args []string, stdio stdio) int
}

// stdio is the command's view of the process streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func commands() []command {
	return []command{shopCommand, serveCommand, demoCommand, evalCommand, loginCommand, testTelegramCommand, productsCommand, preferencesCommand, usualCommand, slotsCommand, versionCommand}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal cancels ctx and the command stops cleanly; from then
	// on the default handling is back, so a second Ctrl-C ends the process
	// at once instead of waiting for the clean-up.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, s stdio) int {
	if len(args) == 0 {
		usage(s.err)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if name == "help" && len(args) > 1 {
			// "help shop" is "shop -h".
			return run(ctx, []string{args[1], "-h"}, s)
		}
		usage(s.out)
		return 0
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], s)
		}
	}
	fmt.Fprintf(s.err, "gemini-supply: unknown command %q; run 'gemini-supply help' for the list\n", name)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: gemini-supply <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-14s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-14s %s\n", "help", "show this help")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'gemini-supply <command> -h' (or 'gemini-supply help <command>') for a command's flags.")
}
