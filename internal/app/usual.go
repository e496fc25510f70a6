package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/usual"
)

// UsualOptions shape "the usual".
type UsualOptions struct {
	From       string // usual.Latest or usual.Combined
	Orders     int
	Favourites bool
	// Store reads the store's past orders (and favourites) in a reader
	// tab; off, only gemini-supply's own runs count.
	Store bool
	Now   time.Time
}

// usualReadBudget bounds the reading of the store's pages (launch, login,
// two pages).
const usualReadBudget = 3 * time.Minute

// Usual is the proposal of the usual items for list (nil: no list): from
// the run journals and the product memory of the data directory and, with
// o.Store, the store's past orders and favourites, read by code in a
// reader tab (nothing it sends changes anything at the store). It adds
// nothing to the list.
func (r *Runner) Usual(ctx context.Context, list shoppinglist.Provider, o UsualOptions) (usual.Proposal, error) {
	lang := messages.For(r.cfg.Language)
	var h usual.History
	if r.cfg.DataDir != "" {
		h.Purchases = usual.FromJournals(readJournals(shop.JournalDir(r.cfg.DataDir)))
		if m := r.memory(); m.m != nil {
			if entries, err := m.m.List(); err == nil {
				h.Purchases = append(h.Purchases, usual.FromMemory(entries, h.Purchases)...)
			}
		}
	}
	if o.Store {
		sh := r.readStore(ctx, o, lang)
		h.Purchases = append(h.Purchases, sh.Purchases...)
		h.Favourites = sh.Favourites
		h.NotRead = sh.NotRead
	}
	var items []shoppinglist.Item
	if list != nil {
		var err error
		if items, err = list.Items(ctx); err != nil {
			return usual.Proposal{}, fmt.Errorf("read the shopping list: %w", err)
		}
	}
	var mem []products.Entry
	if m := r.memory(); m.m != nil {
		mem, _ = m.m.List()
	}
	return usual.Propose(h, items, usual.Options{From: o.From, Orders: o.Orders, Favourites: o.Favourites,
		Now: o.Now, Memory: mem, Lang: lang}), nil
}

// readStore reads the store's past orders and favourites in a reader tab
// of a browser of its own; what it could not read is said in NotRead.
func (r *Runner) readStore(ctx context.Context, o UsualOptions, lang messages.Catalog) usual.History {
	notRead := func(err error) usual.History {
		return usual.History{NotRead: []string{lang.T("usual.not_read", "page", lang.T("usual.page_orders"), "why", err.Error())}}
	}
	env, err := r.environment(ctx)
	if err != nil {
		return notRead(err)
	}
	if env.profile.Usual.OrdersURL == "" && env.profile.Usual.FavouritesURL == "" {
		return notRead(fmt.Errorf("the %s store profile names no such page", env.profile.Name))
	}
	ctx, cancel := context.WithTimeout(ctx, usualReadBudget)
	defer cancel()
	bh, err := browser.Launch(ctx, r.browserOptions(env))
	if err != nil {
		return notRead(err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer ccancel()
		_ = bh.Close(cctx)
	}()
	if err := bh.Login(ctx); err != nil {
		return notRead(err)
	}
	tab, err := bh.NewReader(ctx)
	if err != nil {
		return notRead(err)
	}
	defer func() { _ = tab.Close() }()
	// Every order shown: the cycles need the whole history, the proposal
	// takes the newest ones.
	return usual.StoreReader{Pages: env.profile.Usual, Lang: lang}.Read(ctx, tab, o.Favourites)
}

// readJournals reads every run journal of dir, oldest first; unreadable
// ones are skipped.
func readJournals(dir string) []shop.JournalRecord {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []shop.JournalRecord
	for _, p := range paths {
		if rec, err := shop.ReadJournal(p); err == nil {
			out = append(out, rec)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	return out
}

// ListAdder is a list that takes new items: the YAML file and the Home
// Assistant to-do list.
type ListAdder interface {
	Add(ctx context.Context, names ...string) error
}

// ErrCannotAdd: the list cannot take new items.
var ErrCannotAdd = errors.New("this shopping list cannot take new items")

// AddToList puts the household's confirmed items on the list.
func AddToList(ctx context.Context, list shoppinglist.Provider, names []string) error {
	a, ok := list.(ListAdder)
	if !ok {
		return fmt.Errorf("%w (%T)", ErrCannotAdd, list)
	}
	return a.Add(ctx, names...)
}

// pruning is the review pack's pruning of a run: its items bought less
// than 70 % of their restock cycle ago by the other runs (journals, product
// memory). Warned about, never dropped.
func (r *Runner) pruning(runID string, items []shoppinglist.Item) []reviewpack.Pruned {
	if r.cfg.DataDir == "" {
		return nil
	}
	var recs []shop.JournalRecord
	for _, rec := range readJournals(shop.JournalDir(r.cfg.DataDir)) {
		if rec.RunID != runID {
			recs = append(recs, rec)
		}
	}
	h := usual.History{Purchases: usual.FromJournals(recs)}
	var mem []products.Entry
	if m := r.memory(); m.m != nil {
		mem, _ = m.m.List()
	}
	// The memory's last purchase may be this run's own: it only names the
	// products here, never dates a purchase.
	return usual.Warnings(h, items, mem, r.now())
}

// usualList is the list "the usual" adds to: the Home Assistant to-do
// list of serve, else the YAML file.
func (r *Runner) usualList() (shoppinglist.Provider, error) {
	if r.deps.Provider != nil {
		return r.deps.Provider, nil
	}
	return OpenList(r.cfg.ShoppingList, r.cfg.Language, r.base)
}

// PanelUsual is the panel's "Start from the usual": the proposal for the
// list, combined from the newest orders with the favourites, the store's
// pages read too (what could not be read is left out).
func (r *Runner) PanelUsual(ctx context.Context) (panel.UsualProposal, error) {
	list, err := r.usualList()
	if err != nil {
		return panel.UsualProposal{}, err
	}
	p, err := r.Usual(ctx, list, UsualOptions{From: usual.Combined, Favourites: true, Store: true})
	if err != nil {
		return panel.UsualProposal{}, err
	}
	if len(p.NotRead) > 0 {
		r.log.Info("the usual: some of the store's pages were not read", "not_read", p.NotRead)
	}
	out := panel.UsualProposal{Items: make([]panel.UsualItem, 0, len(p.Items))}
	for _, it := range p.Items {
		out.Items = append(out.Items, panel.UsualItem{Name: it.Name, Source: it.Source, Reason: it.Reason, ProbablyAtHome: it.ProbablyAtHome})
	}
	return out, nil
}

// AddUsual puts the items the household confirmed on the list.
func (r *Runner) AddUsual(ctx context.Context, names []string) error {
	list, err := r.usualList()
	if err != nil {
		return err
	}
	return AddToList(ctx, list, names)
}

// UsualCounts counts the panel's proposal: its items and those probably
// still at home (the phone push of gemini_supply_usual).
func (r *Runner) UsualCounts(ctx context.Context) (items, atHome int, err error) {
	p, err := r.PanelUsual(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, it := range p.Items {
		if it.ProbablyAtHome {
			atHome++
		}
	}
	return len(p.Items), atHome, nil
}
