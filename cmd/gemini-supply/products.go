package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

var productsCommand = command{
	name:    "products",
	summary: "list or forget the remembered products (agent picks and ⭐ choices)",
	run:     func(ctx context.Context, args []string, s stdio) int { return runProducts(ctx, "products", args, s) },
}

// preferencesCommand is the older name of products: the ⭐ preferences are
// now the pinned part of the product memory.
var preferencesCommand = command{
	name:    "preferences",
	summary: "the older name of 'products'",
	run:     func(ctx context.Context, args []string, s stdio) int { return runProducts(ctx, "preferences", args, s) },
}

const productsAbout = `The product memory of the configured store: the product each item got last
time, and the products chosen with ⭐ in Telegram (PINNED), which are bought
again without asking. 'list' shows them by item key; 'forget KEY' removes one
(KEY may be any spelling of the item, like "2x Milk"); 'forget --all' removes
every one. Flags may come before or after the subcommand. See docs/replay.md.`

func runProducts(_ context.Context, name string, args []string, s stdio) int {
	fs := newFlagSet(name, "list | forget KEY | forget --all  [flags]", productsAbout)
	flags := config.BindFlags(fs, "data-dir", "store")
	all := fs.Bool("all", false, "with forget: forget every remembered product of the store")
	if err := parseFlags(fs, args, s.err, true); err != nil {
		return exitCode(err)
	}
	if fs.NArg() == 0 {
		return exitCode(usageFailure(name, s.err, errors.New("say list, forget KEY or forget --all")))
	}
	sub := fs.Arg(0)
	if err := parseFlags(fs, fs.Args()[1:], s.err, true); err != nil {
		return exitCode(err)
	}
	rest := fs.Args()
	switch {
	case sub == "list" && len(rest) == 0 && !*all:
	case sub == "list":
		return exitCode(usageFailure(name, s.err, fmt.Errorf("list takes no argument (got %q)", strings.Join(rest, " "))))
	case sub == "forget" && *all && len(rest) > 0:
		return exitCode(usageFailure(name, s.err, errors.New("forget takes a KEY or --all, not both")))
	case sub == "forget" && len(rest) == 0 && !*all:
		return exitCode(usageFailure(name, s.err, fmt.Errorf("forget which item? give its KEY ('gemini-supply %s list' shows them) or --all", name)))
	case sub != "forget":
		return exitCode(usageFailure(name, s.err, fmt.Errorf("unknown subcommand %q: use list or forget", sub)))
	}

	load := loadOptions
	load.Flags = flags
	cfg, err := loadConfig(load, s.err)
	if err != nil {
		return exitCode(configFailure(name, s.err, err))
	}
	storeGiven := false
	fs.Visit(func(f *flag.Flag) { storeGiven = storeGiven || f.Name == "store" })
	st := productsStore(cfg, storeGiven)
	if sub == "list" && !products.Exists(cfg.DataDir, st) {
		// Reading creates nothing.
		fmt.Fprintf(s.out, "No products are remembered yet for %s (%s). A run remembers what it adds; ⭐ on a question pins one.\n",
			st, filepath.Join(cfg.DataDir, products.FileName(st)))
		return 0
	}
	mem, err := app.OpenProducts(cfg.DataDir, st, cfg.ProductExpiry(), quietLogger(s.err, cfg))
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", name, err)
		return 1
	}
	switch {
	case sub == "list":
		return listProducts(name, mem, s)
	case *all:
		n, err := mem.ForgetAll()
		if err != nil {
			fmt.Fprintf(s.err, "gemini-supply %s: %v\n", name, err)
			return 1
		}
		fmt.Fprintf(s.out, "Forgot %d remembered products of %s.\n", n, st)
		return 0
	}
	return forgetProduct(name, mem, strings.Join(rest, " "), s)
}

// productsStore is the store whose memory the command reads: the one
// given with --store; else the configured one, unless it has no memory in
// the data directory while another store has one — after
// `shop --store demo` with the default configuration (metro), `products
// list` shows the demo store's.
func productsStore(cfg config.Config, given bool) string {
	st := storeName(cfg)
	if given || products.Exists(cfg.DataDir, st) {
		return st
	}
	var others []string
	for _, name := range store.Names() {
		if name != st && products.Exists(cfg.DataDir, name) {
			others = append(others, name)
		}
	}
	if len(others) == 1 {
		return others[0]
	}
	return st
}

func storeName(cfg config.Config) string {
	if cfg.Store == "" {
		return config.DefaultStore
	}
	return cfg.Store
}

func listProducts(name string, mem *products.Memory, s stdio) int {
	entries, err := mem.List()
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", name, err)
		return 1
	}
	if len(entries) == 0 {
		fmt.Fprintf(s.out, "No products are remembered yet (%s). A run remembers what it adds; ⭐ on a Telegram question pins one.\n", mem.Path())
		return 0
	}
	w := tabwriter.NewWriter(s.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tPRODUCT\tSIZE\tPRICE\tQTY\tCHOSEN\tPINNED\tLAST SEEN\tPRODUCT ID\tURL\tSUBSTITUTE\tPOLICY")
	for _, e := range entries {
		when, pinned := "", "-"
		if !e.LastSeen.IsZero() {
			when = e.LastSeen.Local().Format("2006-01-02 15:04")
		}
		if e.Pinned {
			pinned = "⭐"
		}
		qty := ""
		if e.Quantity > 0 {
			qty = fmt.Sprint(e.Quantity)
		}
		sub := ""
		if e.Substitute != nil {
			sub = e.Substitute.Name
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Key, orDash(e.Name), orDash(e.Size), orDash(e.Price), orDash(qty),
			e.TimesChosen, pinned, orDash(when), orDash(e.ProductID), orDash(e.URL), orDash(sub), orDash(e.Policy.String()))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", name, err)
		return 1
	}
	return 0
}

func forgetProduct(name string, mem *products.Memory, key string, s stdio) int {
	e, known := mem.Lookup(key)
	if err := mem.Forget(key); err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", name, err)
		return 1
	}
	if known {
		fmt.Fprintf(s.out, "Forgot %s (%s). The next run will search (and ask) again.\n", products.Key(key), e.Name)
	} else {
		fmt.Fprintf(s.out, "Forgot %s.\n", products.Key(key))
	}
	return 0
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
