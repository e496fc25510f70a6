package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/ask"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

var shopCommand = command{
	name:    "shop",
	summary: "shop every open item of the shopping list",
	run:     runShop,
}

func runShop(ctx context.Context, args []string, s stdio) int {
	o, err := parseShopFlags(args, s.err)
	if err != nil {
		return exitCode(err)
	}
	if o.dryRun {
		return dryRun(ctx, o, s)
	}
	code, _ := shopRun(ctx, "shop", o.cfg, o.json, o.ui, s)
	return code
}

// shopRun is `shop` and `demo`: one run through app.Runner, a live line per
// item (and a progress bar on a terminal), then the summary and the review
// (or, with jsonOut, the result as JSON on stdout). With ui it serves the
// panel on that address while the run lasts. Exit 0 when the run
// finished, whatever the items' outcomes; 1 when it could not run or was
// stopped.
func shopRun(ctx context.Context, cmd string, cfg config.Config, jsonOut bool, ui string, s stdio) (int, shop.Result) {
	errW := &syncWriter{w: s.err} // shared by the logger and, with --json, the live lines
	var live io.Writer = s.out
	if jsonOut {
		live = errW // stdout carries only the JSON
	}
	tty := false
	if f, ok := s.out.(*os.File); ok && !jsonOut {
		tty = shop.IsTTY(f)
	}
	level := cfg.SlogLevel()
	if (tty || cmd == "demo") && level == slog.LevelInfo {
		level = slog.LevelWarn // the live lines tell the same story
	}
	logger := slog.New(slog.NewTextHandler(errW, &slog.HandlerOptions{Level: level}))

	bus := &runstatus.Bus{}
	deps := app.Deps{Bus: bus, Logger: logger}
	// Home Assistant, when configured and needed: the to-do list (no
	// shopping_list file, or --todo-entity), the phones of ha_notify and
	// the language.
	ha, err := shopDialHomeAssistant(ctx, &cfg, logger, &deps)
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", cmd, err)
		return 1, shop.Result{}
	}
	if ha != nil {
		defer ha.Close()
	}
	// Telegram, when configured: questions, safety confirmations, notices
	// and the summary, as in serve.
	closeTelegram, err := wireTelegram(ctx, cfg, logger, &deps)
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", cmd, err)
		return 1, shop.Result{}
	}
	defer closeTelegram()
	// The panel (--ui): the run live, its questions, its Stop.
	ctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	var questions []ask.Channel
	if addr, _ := panel.Address(ui, false); addr != "" {
		p, stopPanel, err := shopPanel(ctx, cfg, logger, bus, addr, stopRun, live)
		if err != nil {
			fmt.Fprintf(s.err, "gemini-supply %s: %v\n", cmd, err)
			return 1, shop.Result{}
		}
		defer stopPanel()
		questions = append(questions, ask.Channel{Name: messages.For(cfg.Language).T("question.on_panel"), Chooser: p, Confirmer: p})
		deps.Watcher = app.PanelWatcher(p)
	}
	if err := app.WireQuestions(cfg, ha, &deps, logger, questions...); err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", cmd, err)
		return 1, shop.Result{}
	}
	runner, err := app.NewRunner(cfg, deps)
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", cmd, err)
		return 1, shop.Result{}
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := runner.Close(cctx); err != nil {
			logger.Warn("closing the run machinery", "err", err)
		}
	}()

	sub := bus.Subscribe(1024)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		shop.NewTerminal(live, tty).In(messages.For(cfg.Language)).Follow(context.WithoutCancel(ctx), sub)
	}()
	res, err := runner.Shop(ctx, runstatus.Request{Source: "terminal", RetryTagged: cfg.RetryTagged, Concurrency: cfg.Concurrency})
	sub.Close()
	<-followed

	if jsonOut {
		if werr := shop.PrintJSON(s.out, res); werr != nil {
			fmt.Fprintf(s.err, "gemini-supply %s: write the result: %v\n", cmd, werr)
			return 1, res
		}
	} else if res.Summary.RunID != "" && !res.NotStarted { // the run began: it has a summary
		shop.PrintResultIn(s.out, res, messages.For(cfg.Language))
	}
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply %s: %v\n", cmd, err)
		return 1, res
	}
	return 0, res
}

// errPanelStop is why a run stopped from shop's panel ended.
var errPanelStop = errors.New("stopped from the panel")

// shopPanel serves the panel of one shop run on addr until the returned
// func is called: it follows the run's events, its Stop cancels the run
// (as SIGTERM does) and its Start says the run is the terminal's. Its
// address is written to live.
func shopPanel(ctx context.Context, cfg config.Config, logger *slog.Logger, bus *runstatus.Bus, addr string,
	stopRun context.CancelCauseFunc, live io.Writer) (*panel.Panel, func(), error) {
	stopped := false
	var mu sync.Mutex
	p, err := newPanel(cfg, logger, false,
		func(context.Context, runstatus.Request) error {
			return fmt.Errorf("%w: shop runs once, from the terminal (serve runs the panel's Start)", runstatus.ErrBusy)
		},
		func(context.Context, string) error {
			mu.Lock()
			defer mu.Unlock()
			if !stopped {
				logger.Warn("the run was stopped from the panel")
				stopped = true
			}
			stopRun(errPanelStop)
			return nil
		}, nil, nil, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("the panel (--ui): %w", err)
	}
	fmt.Fprintf(live, "The panel: http://%s/\n", ln.Addr())
	// The panel outlives the run's context: it shows the run's last events.
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sub := bus.Subscribe(1024)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Consume(pctx, sub) })
	wg.Go(func() {
		if err := p.ServeListener(pctx, ln); err != nil {
			logger.Warn("the panel stopped", "err", err)
		}
	})
	return p, func() {
		sub.Close()
		cancel()
		wg.Wait()
	}, nil
}

// syncWriter serialises writes to one stream from several goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// dryRun prints what a run would shop and what it would skip, without
// touching the list file.
func dryRun(ctx context.Context, o shopOptions, s stdio) int {
	path := o.cfg.ShoppingList
	var list shoppinglist.Provider
	switch {
	case path == "" && app.HomeAssistantConfigured(o.cfg):
		// The Home Assistant list (--todo-entity): read only, like the file.
		var deps app.Deps
		cfg := o.cfg
		ha, err := shopDialHomeAssistant(ctx, &cfg, slog.New(slog.DiscardHandler), &deps)
		if err != nil {
			fmt.Fprintf(s.err, "gemini-supply shop: %v\n", err)
			return 1
		}
		defer ha.Close()
		list, path = deps.Provider, o.cfg.TodoEntity
	case path == "":
		return exitCode(usageFailure("shop", s.err, fmt.Errorf("no shopping list: pass --shopping-list PATH or set shopping_list")))
	default:
		yl, err := shoppinglist.OpenYAML(path, shoppinglist.ReadOnly())
		if err != nil {
			fmt.Fprintf(s.err, "gemini-supply shop: %v\n", err)
			return 1
		}
		list, path = yl, yl.Path()
	}
	items, err := list.Items(ctx)
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply shop: %v\n", err)
		return 1
	}
	plan := shoppinglist.PlanRun(items, o.cfg.RetryTagged)
	if o.json {
		err = writePlanJSON(s.out, path, plan)
	} else {
		err = writePlan(s.out, path, o, plan)
	}
	if err != nil {
		fmt.Fprintf(s.err, "gemini-supply shop: write the plan: %v\n", err)
		return 1
	}
	return 0
}

func writePlan(w io.Writer, path string, o shopOptions, p shoppinglist.Plan) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Shopping list: %s\n", path)
	c := o.cfg
	if len(p.ToShop) == 0 {
		fmt.Fprintf(&b, "Nothing to shop: %s.\n", shoppinglist.NothingToShop(p))
	} else {
		fmt.Fprintf(&b, "Would shop %d %s at %s (concurrency %d, time budget %s, at most %d turns per item):\n",
			len(p.ToShop), plural(len(p.ToShop), "item", "items"), c.Store, c.Concurrency, c.TimeBudget, c.MaxTurns)
		qw, pw := 1, 1 // column widths
		for _, it := range p.ToShop {
			qw = max(qw, len(fmt.Sprint(it.Quantity)))
			pw = max(pw, utf8.RuneCountInString(it.Product))
		}
		for _, it := range p.ToShop {
			var notes []string
			if it.Name != it.Product {
				notes = append(notes, fmt.Sprintf("(%q)", it.Name))
			}
			notes = append(notes, it.Tags...)
			line := fmt.Sprintf("  %*d × %-*s  %s", qw, it.Quantity, pw+len(it.Product)-utf8.RuneCountInString(it.Product), it.Product, strings.Join(notes, " "))
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	if len(p.Tagged) > 0 || len(p.Duplicates) > 0 || len(p.Unnamed) > 0 || len(p.TooLong) > 0 {
		b.WriteString("Skipped:\n")
		for _, it := range p.Unnamed {
			fmt.Fprintf(&b, "  %s — %s\n", unnamedLabel(it), report.SkippedNoName)
		}
		for _, it := range p.TooLong {
			fmt.Fprintf(&b, "  %s — %s\n", report.Clip(it.Name, 40), report.SkippedTooLong(utf8.RuneCountInString(strings.TrimSpace(it.Name))))
		}
		for _, it := range p.Tagged {
			fmt.Fprintf(&b, "  %s — tagged %s by an earlier run (--retry-tagged shops it again)\n", it.Name, strings.Join(runTags(it), " "))
		}
		for _, d := range p.Duplicates {
			fmt.Fprintf(&b, "  %s — duplicate of %q\n", d.Item.Name, d.Of.Name)
		}
	}
	if p.Completed > 0 {
		fmt.Fprintf(&b, "Already completed: %d\n", p.Completed)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// unnamedLabel shows an entry with no name to search for: its tags, or
// "(empty)".
func unnamedLabel(it shoppinglist.Item) string {
	if len(it.Tags) > 0 {
		return strings.Join(it.Tags, " ")
	}
	return "(empty)"
}

func runTags(it shoppinglist.Item) []string {
	var tags []string
	for _, t := range it.Tags {
		if shoppinglist.IsRunTag(t) {
			tags = append(tags, t)
		}
	}
	return tags
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// planItem is one item in the --json plan.
type planItem struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Product  string   `json:"product"`
	Quantity int      `json:"quantity"`
	Tags     []string `json:"tags,omitempty"`
	// DuplicateOf is the id of the item shopped instead (duplicates only).
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

func writePlanJSON(w io.Writer, path string, p shoppinglist.Plan) error {
	conv := func(it shoppinglist.Item) planItem {
		return planItem{ID: it.ID, Name: it.Name, Product: it.Product, Quantity: it.Quantity, Tags: it.Tags}
	}
	out := struct {
		List       string     `json:"shopping_list"`
		ToShop     []planItem `json:"to_shop"`
		Tagged     []planItem `json:"skipped_tagged"`
		Duplicates []planItem `json:"skipped_duplicates"`
		// Unnamed: empty or tag-only entries; TooLong: names over the
		// limit. Left as written, never shopped (as the panel's preview).
		Unnamed   []planItem `json:"skipped_unnamed"`
		TooLong   []planItem `json:"skipped_too_long"`
		Completed int        `json:"completed"`
	}{List: path, ToShop: []planItem{}, Tagged: []planItem{}, Duplicates: []planItem{}, Unnamed: []planItem{}, TooLong: []planItem{}, Completed: p.Completed}
	for _, it := range p.Unnamed {
		out.Unnamed = append(out.Unnamed, conv(it))
	}
	for _, it := range p.TooLong {
		pi := conv(it)
		pi.Name = report.Clip(it.Name, report.MaxNameRunes)
		out.TooLong = append(out.TooLong, pi)
	}
	for _, it := range p.ToShop {
		out.ToShop = append(out.ToShop, conv(it))
	}
	for _, it := range p.Tagged {
		out.Tagged = append(out.Tagged, conv(it))
	}
	for _, d := range p.Duplicates {
		pi := conv(d.Item)
		pi.DuplicateOf = d.Of.ID
		out.Duplicates = append(out.Duplicates, pi)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
