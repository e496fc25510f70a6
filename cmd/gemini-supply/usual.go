package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/usual"
)

var usualCommand = command{
	name:    "usual",
	summary: "propose the usual items from past orders, runs and favourites (--add puts them on the list)",
	run:     runUsual,
}

const usualAbout = `Proposes "the usual": what the household buys again and again, from
gemini-supply's own runs (journals, product memory) and the store's past
orders and favourites (read by code in a tab that only reads), leaving out
what is already on the list. Each item says its restock cycle; an item
bought less than 70 % of its cycle ago is shown as probably still at home.
Nothing is added to the list unless you say so: --add asks before adding
the items proposed (not the ones at home), or the ones named with --item
(repeatable; "add anyway" for an item at home); --yes answers for you.
See docs/usual.md.`

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func runUsual(ctx context.Context, args []string, s stdio) int {
	fs := newFlagSet("usual", "[flags]", usualAbout)
	flags := config.BindFlags(fs, "store", "model", "shopping-list", "todo-entity", "data-dir", "log-level")
	from := fs.String("from", usual.Combined, "latest (the last order) or combined (the last --orders orders)")
	orders := fs.Int("orders", usual.DefaultOrders, "with --from combined: how many of the newest orders")
	favs := fs.Bool("favourites", true, "also propose the store's favourites (--favourites=false: not)")
	noStore := fs.Bool("no-store", false, "do not read the store's pages: only gemini-supply's own runs")
	jsonOut := fs.Bool("json", false, "print the proposal as JSON")
	add := fs.Bool("add", false, "add the chosen items to the list, after you confirm")
	yes := fs.Bool("yes", false, "with --add: do not ask")
	var chosen stringsFlag
	fs.Var(&chosen, "item", "with --add: add this proposed item (repeatable; default: every item not probably at home)")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return exitCode(err)
	}
	if *from != usual.Latest && *from != usual.Combined {
		return exitCode(usageFailure("usual", s.err, fmt.Errorf("--from must be latest or combined, not %q", *from)))
	}
	if *orders < 1 {
		return exitCode(usageFailure("usual", s.err, errors.New("--orders must be at least 1")))
	}
	load := loadOptions
	load.Flags = flags
	cfg, err := loadConfig(load, s.err)
	if err != nil {
		return exitCode(configFailure("usual", s.err, err))
	}
	if err := useTodoEntity(fs, &cfg, "usual", s.err); err != nil {
		return exitCode(err)
	}
	logger := quietLogger(s.err, cfg)
	deps := app.Deps{Logger: logger}
	ha, err := shopDialHomeAssistant(ctx, &cfg, logger, &deps)
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply usual: %v\n", err)
		return 1
	}
	if ha != nil {
		defer ha.Close()
	}
	list := deps.Provider
	if list == nil && cfg.ShoppingList != "" {
		if list, err = app.OpenList(cfg.ShoppingList, cfg.Language, logger); err != nil {
			fmt.Fprintf(s.err, "gemini-supply usual: %v\n", err)
			return 1
		}
	}
	runner, err := app.NewRunner(cfg, deps)
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply usual: %v\n", err)
		return 1
	}
	defer func() { _ = runner.Close(context.WithoutCancel(ctx)) }()
	p, err := runner.Usual(ctx, list, app.UsualOptions{From: *from, Orders: *orders, Favourites: *favs, Store: !*noStore})
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply usual: %v\n", err)
		return 1
	}
	lang := messages.For(cfg.Language)
	if *jsonOut {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			fmt.Fprintf(s.err, "gemini-supply usual: %v\n", err)
			return 1
		}
	} else {
		printUsual(s, p, lang)
	}
	if !*add {
		return 0
	}
	names, err := chooseUsual(p, chosen)
	if err != nil {
		return exitCode(usageFailure("usual", s.err, err))
	}
	if list == nil {
		return exitCode(usageFailure("usual", s.err, errors.New("--add needs a list: --shopping-list or a Home Assistant to-do list")))
	}
	if len(names) == 0 {
		fmt.Fprintln(s.err, "Nothing to add.")
		return 0
	}
	if !*yes && !confirm(s, fmt.Sprintf("Add %d items to the list (%s)? [y/N] ", len(names), strings.Join(names, ", "))) {
		fmt.Fprintln(s.err, "Nothing was added.")
		return 0
	}
	if err := app.AddToList(ctx, list, names); err != nil {
		fmt.Fprintf(s.err, "gemini-supply usual: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.err, "Added %d items to the list.\n", len(names))
	return 0
}

// chooseUsual is what --add adds: the items named with --item (each must
// be proposed), else every item not probably at home.
func chooseUsual(p usual.Proposal, chosen []string) ([]string, error) {
	var out []string
	if len(chosen) == 0 {
		for _, it := range p.Items {
			if !it.ProbablyAtHome {
				out = append(out, it.Name)
			}
		}
		return out, nil
	}
	for _, c := range chosen {
		i := slices.IndexFunc(p.Items, func(it usual.Item) bool { return strings.EqualFold(it.Name, strings.TrimSpace(c)) })
		if i < 0 {
			return nil, fmt.Errorf("--item %q is not among the proposed items", c)
		}
		out = append(out, p.Items[i].Name)
	}
	return out, nil
}

func confirm(s stdio, question string) bool {
	fmt.Fprint(s.err, question)
	line, _ := bufio.NewReader(s.in).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes" || a == "o" || a == "oui"
}

func printUsual(s stdio, p usual.Proposal, lang messages.Catalog) {
	for _, n := range p.NotRead {
		fmt.Fprintf(s.err, "note: %s\n", n)
	}
	fmt.Fprintln(s.out, lang.T("usual.summary", "n", len(p.Items), "home", p.AtHome()))
	for _, it := range p.Items {
		mark := "[x]"
		if it.ProbablyAtHome {
			mark = "[ ]"
		}
		fmt.Fprintf(s.out, "  %s %s (%s) — %s\n", mark, it.Name, it.Source, it.Reason)
	}
	for _, o := range p.OnList {
		fmt.Fprintf(s.out, "  left out: %s — %s\n", o.Item, lang.Say(o.Text, o.Message))
	}
}

var _ flag.Value = (*stringsFlag)(nil)
