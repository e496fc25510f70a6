package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// The review pack's actions (Remove from cart, Change quantity, Wrong
// product) change the store's cart after a run. Each one launches the
// run's browser (the same profile, policy proxy and cart gate as a run),
// reads the cart, sends the store's own set-quantity operation from one of
// its pages (shop.SetCartLine), reads the cart again, journals the action
// with the run and publishes the cart (the panel, MQTT's cart sensor, the
// gemini_supply_cart event). An action waits for no run: while one is
// going it is refused (runstatus.ErrBusy), as the browser profile is the
// run's.

// Reopener is a list that can put a completed item back on the open list
// (the YAML file and Home Assistant's to-do list): Wrong product shops the
// item again.
type Reopener interface {
	Reopen(ctx context.Context, id string) error
}

// actionTimeout bounds one action: a browser launch, a sign-in when the
// session is gone, two cart readings and the change.
const actionTimeout = 3 * time.Minute

// plainID is a run or item id as journals name them.
var plainID = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// CartAction carries out one action of run req.RunID's review pack on the
// store's cart. Unknown runs and items wrap panel.ErrNotFound, a wrong
// request reviewpack.ErrInvalid, an item whose product is not in the cart
// reviewpack.ErrNotInCart, and an action while a run is going
// runstatus.ErrBusy. A Wrong product's re-shop is the caller's (it starts
// a run: CartActions).
func (r *Runner) CartAction(ctx context.Context, req reviewpack.Request) (reviewpack.Action, error) {
	if err := req.Check(); err != nil {
		return reviewpack.Action{}, fmt.Errorf("%w: %w", reviewpack.ErrInvalid, err)
	}
	if !plainID.MatchString(req.RunID) {
		return reviewpack.Action{}, fmt.Errorf("%w: the run id %q is not a run's", reviewpack.ErrInvalid, req.RunID)
	}
	if r.cfg.DataDir == "" {
		return reviewpack.Action{}, fmt.Errorf("run %s: no data directory keeps its review pack: %w", req.RunID, panel.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	// Actions queue behind each other (the one before may still be
	// closing its browser); only a run refuses them.
	select {
	case r.actions <- struct{}{}:
		defer func() { <-r.actions }()
	case <-ctx.Done():
		return reviewpack.Action{}, fmt.Errorf("waiting for the review's action before: %w", ctx.Err())
	}
	if !r.busy.TryLock() {
		return reviewpack.Action{}, fmt.Errorf("the cart cannot be changed while a shopping run is going: %w", runstatus.ErrBusy)
	}
	defer r.busy.Unlock()

	path := filepath.Join(shop.JournalDir(r.cfg.DataDir), req.RunID+".json")
	rec, err := shop.ReadJournal(path)
	if errors.Is(err, fs.ErrNotExist) {
		return reviewpack.Action{}, fmt.Errorf("run %s: %w", req.RunID, panel.ErrNotFound)
	}
	if err != nil {
		return reviewpack.Action{}, err
	}
	item, ok := rec.Pack.Item(req.ItemID)
	if !ok {
		return reviewpack.Action{}, fmt.Errorf("run %s has no item %q in its review pack: %w", req.RunID, req.ItemID, panel.ErrNotFound)
	}
	if item.Outcome != report.OutcomeAdded {
		return reviewpack.Action{}, fmt.Errorf("%q put nothing in the cart that can be changed here: %w", item.ItemName, reviewpack.ErrNotInCart)
	}

	env, err := r.environment(ctx)
	if err != nil {
		return reviewpack.Action{}, err
	}
	host, err := r.launcher(env)(ctx)
	if err != nil {
		return reviewpack.Action{}, fmt.Errorf("start the browser: %w", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer ccancel()
		_ = host.Close(cctx)
	}()
	quota := r.modelQuota(max(r.cfg.ModelConcurrency, 1))
	reader := r.cartReader(env, quota, r.price())
	st := storeInfo(env.profile)
	before, err := reader.ReadCart(ctx, host)
	if err != nil {
		return reviewpack.Action{}, fmt.Errorf("read the cart: %w", err)
	}
	line, ok := shop.PackCart(before, st.CartLink()).Find(item.ProductID, item.ProductName)
	if !ok {
		// Already gone (removed twice, or on the store's own page): the
		// cart as just read is the one the page shows.
		c := shop.PackCart(before, st.CartLink())
		if r.deps.Bus != nil {
			r.deps.Bus.Publish(runstatus.Event{Time: r.now(), Kind: runstatus.KindCartChanged, RunID: req.RunID, Cart: &c})
		}
		return reviewpack.Action{}, fmt.Errorf("%s (%q) is no longer in the cart: %w", item.ProductName, item.ItemName, reviewpack.ErrNotInCart)
	}
	want := 0
	if req.Kind == reviewpack.ActQuantity {
		want = req.Quantity
	}
	act := reviewpack.Action{At: r.now().UTC(), Kind: req.Kind, Source: req.Source, By: req.By, ItemID: item.ItemID, ItemName: item.ItemName,
		Product: item.ProductName, Before: line.Quantity, After: line.Quantity}
	var changeErr error
	if st.CartSet.Kind != "" && line.ProductID != "" {
		changeErr = shop.SetCartLine(ctx, host, st, line.ProductID, want)
	} else {
		// No cart operation code knows (metro): the agent changes the
		// line on the cart page.
		changeErr = shop.AgentCartLine(ctx, host, st, r.deps.RunAgent, r.agentConfig(env, quota, r.price()), line.Name, want)
	}
	var cart *reviewpack.Cart
	if after, err := reader.ReadCart(ctx, host); err == nil {
		c := shop.PackCart(after, st.CartLink())
		cart = &c
		l, _ := c.Find(line.ProductID, line.Name)
		act.After = l.Quantity
	} else {
		r.log.Warn("reading the cart after an action failed", "err", err)
	}
	if changeErr == nil && req.Kind == reviewpack.ActQuantity {
		r.rememberQuantity(*item, listQuantity(rec, item.ItemID), req.Quantity)
	}
	if changeErr == nil && req.Kind == reviewpack.ActWrongProduct {
		act.Forgot = r.rejectProduct(*item)
		changeErr = r.reopen(ctx, item.ItemID)
		if changeErr == nil {
			act.Reshop = item.ItemName
		}
	}
	if changeErr != nil {
		act.Error = changeErr.Error()
	}
	if err := shop.RecordAction(path, act, cart); err != nil {
		r.log.Warn("the action could not be journaled", "err", err)
	}
	r.log.Info("cart action", "run", req.RunID, "action", act.Kind, "item", act.ItemName, "before", act.Before, "after", act.After, "err", act.Error)
	if r.deps.Bus != nil {
		r.deps.Bus.Publish(runstatus.Event{Time: r.now(), Kind: runstatus.KindCartChanged, RunID: req.RunID, Cart: cart, Action: &act})
	}
	if changeErr != nil {
		if errors.Is(changeErr, shop.ErrNotInCart) {
			changeErr = fmt.Errorf("%w: %w", reviewpack.ErrNotInCart, changeErr)
		}
		return act, changeErr
	}
	return act, nil
}

// rejectProduct marks the product the review pack says was added for the
// item wrong for it in the product memory (products.Memory.Reject): it is
// forgotten — the item's remembered product or its substitute, whichever
// it is, keeping the other one and the household's policy — and never
// added for the item again until the household pins it or clears the mark.
// It reports whether it was remembered.
func (r *Runner) rejectProduct(item reviewpack.Item) bool {
	m := r.memory()
	if m.m == nil {
		return false
	}
	forgot, err := m.m.Reject(item.ItemName, packProduct(item))
	if err != nil {
		r.log.Warn("marking the wrong product in the product memory failed", "item", item.ItemName, "err", err)
	}
	return forgot
}

// packProduct is the pack item's product as the memory knows it: its id
// as the memory derives it (from the product's address, as the run's
// record does), else the cart line's.
func packProduct(item reviewpack.Item) products.Product {
	id := store.ProductID(item.URL)
	if id == "" {
		id = item.ProductID
	}
	return products.Product{Name: item.ProductName, URL: item.URL, ProductID: id}
}

// rememberQuantity records the quantity the household set for the item's
// product (Change quantity) with the list's quantity of the item in the
// run: the next run buys it while the list asks for the same.
func (r *Runner) rememberQuantity(item reviewpack.Item, list, qty int) {
	m := r.memory()
	if m.m == nil || qty < 1 || list < 1 {
		return
	}
	if err := m.m.SetQuantity(item.ItemName, packProduct(item), qty, list); err != nil {
		r.log.Warn("the household's quantity was not remembered", "item", item.ItemName, "quantity", qty, "err", err)
	}
}

// listQuantity is the list's quantity of item id in the run's journal (0:
// unknown).
func listQuantity(rec shop.JournalRecord, id string) int {
	for _, ji := range rec.Items {
		if ji.ItemID == id {
			return ji.Quantity
		}
	}
	return 0
}

// reopen puts the item back on the open list so that a run shops it.
func (r *Runner) reopen(ctx context.Context, id string) error {
	provider := r.deps.Provider
	if provider == nil {
		p, err := OpenList(r.cfg.ShoppingList, r.cfg.Language, r.base)
		if err != nil {
			return err
		}
		provider = p
	}
	ro, ok := provider.(Reopener)
	if !ok {
		return errors.New("this shopping list cannot put the item back on the list; add it again to shop it")
	}
	if err := ro.Reopen(ctx, id); err != nil {
		return fmt.Errorf("put the item back on the list: %w", err)
	}
	return nil
}

// CartActions is the panel's CartAction: the Runner's action and, for
// Wrong product, a run of the item (start: serve's Start, source
// req.Source) told which product was wrong.
func CartActions(r *Runner, start func(ctx context.Context, req runstatus.Request) error) func(context.Context, reviewpack.Request) (reviewpack.Action, error) {
	return func(ctx context.Context, req reviewpack.Request) (reviewpack.Action, error) {
		act, err := r.CartAction(ctx, req)
		if err != nil || req.Kind != reviewpack.ActWrongProduct {
			return act, err
		}
		wrong := runstatus.WrongProduct{Name: act.Product}
		if rec, rerr := shop.ReadJournal(filepath.Join(shop.JournalDir(r.cfg.DataDir), req.RunID+".json")); rerr == nil {
			if it, ok := rec.Pack.Item(req.ItemID); ok {
				p := packProduct(*it)
				wrong.URL, wrong.ProductID = p.URL, p.ProductID
			}
		}
		sreq := runstatus.Request{Source: req.Source, By: req.By, Items: []string{act.ItemName}, ReshopOf: req.RunID,
			WrongProducts: map[string]runstatus.WrongProduct{act.ItemName: wrong}}
		if err := start(ctx, sreq); err != nil {
			return act, fmt.Errorf("the product was removed and forgotten, but the item could not be shopped again: %w", err)
		}
		return act, nil
	}
}
