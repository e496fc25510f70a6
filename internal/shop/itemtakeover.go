package shop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Take over an item's tab: when an item's agent gives up (reports the item
// not found or failed, or ends without a result: turns, time, stuck) and a
// panel is attached (Config.Desk), its tab is not closed: it is offered to
// the household as needs_person {"tab": ItemTab(id), "reason":
// ReasonItemGaveUp, "item": name} for Config.TakeoverWait. The agent's
// slot goes to the next item meanwhile; the run's end waits for the offer
// to end. A person may also ask for a running item's tab (Desk.Request):
// its agent is stopped and the tab offered with ReasonItemRequested.
//
// Done hands the tab back: what the household added in it — the tab's own
// cart requests since the offer (the cart ledger, browser.CartRequest),
// named and priced from the store's cart page read by code — is the item's
// product: the item ends added, the list item completed, the product
// remembered as the household's pick. With a decision (DecisionNotFound,
// DecisionSkip) the item ends as the household decided. Nobody in time, a
// stopped run, or Done with nothing added: the item keeps the outcome its
// agent gave it (a requested item's: skipped, left on the list).

// Reasons an item's tab is offered (runstatus.NeedsPerson.Reason).
const (
	ReasonItemGaveUp    = "item_gave_up"
	ReasonItemRequested = "item_requested"
	// ReasonItemAgentAsked: the agent asked for a person (ToolAskPerson).
	// Offered even when no panel is open: the phones' push calls someone.
	ReasonItemAgentAsked = "item_agent_asked"
)

// Decisions an item's tab may be handed back with (Desk.Done); "" is what
// the household added.
const (
	DecisionNotFound = "not_found"
	DecisionSkip     = "skip"
)

// The explanations of an item the household finished (the summary's).
const (
	explainTakeoverAdded    = "the household added it in the panel (take over)"
	explainTakeoverNotFound = "the household looked in the panel (take over) and marked it not found"
	explainTakeoverSkip     = "the household looked in the panel (take over) and skipped it this time; left on the list"
	explainTakeoverLeft     = "the household took the tab over in the panel and did not hand it back in time; left on the list"
)

// DefaultTakeoverWait is how long an item's tab waits for a person
// (takeover_wait's default).
const DefaultTakeoverWait = 5 * time.Minute

// handBackRead bounds the reading of the cart when an item's tab is
// handed back (the cart page, by code).
const handBackRead = 45 * time.Second

var errItemGuide = errors.New("show me on an item's tab needs a Gemini key (the offline guide knows sign-in pages only): tap and type on its screen")

// ItemTab is the take-over name of an item's tab ("item-" and the list
// item's id).
func ItemTab(itemID string) string { return "item-" + itemID }

// itemHold is an item's tab offered to a person.
type itemHold struct {
	np   runstatus.NeedsPerson
	tab  Tab
	note func(TakeoverEntry) // journals an input in the run (nil: none)
	mu   sync.Mutex          // one input at a time
	back chan handBack       // the first hand-back (buffered 1)
	gone chan struct{}       // closed when the item stops waiting (withdrawItem)
}

type handBack struct {
	decision string
	reply    chan HandedBack // buffered 1
}

// blockedTab is a tab that says which navigation the policy blocked during
// its last action (*browser.Tab).
type blockedTab interface {
	LastBlocked() error
}

func (ih *itemHold) screenshot(ctx context.Context) ([]byte, error) {
	ih.mu.Lock()
	defer ih.mu.Unlock()
	return ih.tab.Screenshot(ctx)
}

// refused is the policy's refusal of the last input's navigation, if any:
// a page the run may not open (checkout, payment, order) is not opened,
// and the person is told why.
func (ih *itemHold) refused() error {
	b, ok := ih.tab.(blockedTab)
	if !ok {
		return nil
	}
	err := b.LastBlocked()
	var be *browser.BlockedError
	if errors.As(err, &be) {
		// Told as the sign-in's take-over tells it: the policy's reason.
		return &browser.RefusedError{Rule: "blocked", Reason: be.Reason}
	}
	return err
}

// journal notes an input on the item's tab in its run's journal, as the
// sign-in's are (typed text only as its length).
func (ih *itemHold) journal(ctx context.Context, e TakeoverEntry, err error) {
	if ih.note != nil {
		e.Item = ih.np.Item
		ih.note(journalEntry(ctx, e, err))
	}
}

func (ih *itemHold) click(ctx context.Context, x, y int) error {
	if x < 0 || x > 999 || y < 0 || y > 999 {
		return &browser.InputError{Input: fmt.Sprintf("%d,%d", x, y), Reason: "coordinates are 0–999"}
	}
	ih.mu.Lock()
	defer ih.mu.Unlock()
	if err := ih.tab.Click(ctx, agent.Point{X: x, Y: y}, agent.ButtonLeft, 1); err != nil {
		return err
	}
	return ih.refused()
}

// typeText types into the focused field; the text is in no error.
func (ih *itemHold) typeText(ctx context.Context, text string) error {
	ih.mu.Lock()
	defer ih.mu.Unlock()
	if err := ih.tab.Type(ctx, text, false); err != nil {
		var ie *browser.InputError
		if errors.As(err, &ie) {
			return &browser.InputError{Input: fmt.Sprintf("%d characters", len([]rune(text))), Reason: "the text could not be typed (at most 1000 characters at once)"}
		}
		return err
	}
	return ih.refused()
}

func (ih *itemHold) key(ctx context.Context, key string) error {
	ih.mu.Lock()
	defer ih.mu.Unlock()
	if err := ih.tab.PressKeys(ctx, key); err != nil {
		return err
	}
	return ih.refused()
}

// handBack hands the tab back with decision and waits for the item's
// outcome.
func (ih *itemHold) handBack(ctx context.Context, decision string) (HandedBack, error) {
	switch decision {
	case "", DecisionNotFound, DecisionSkip:
	default:
		return HandedBack{}, &browser.InputError{Input: decision, Reason: `the decision is "not_found" or "skip" (none: what the household added)`}
	}
	hb := handBack{decision: decision, reply: make(chan HandedBack, 1)}
	select {
	case ih.back <- hb:
	default:
		return HandedBack{}, fmt.Errorf("take over %q: already handed back: %w", ih.np.Tab, browser.ErrNotHeld)
	}
	select {
	case out := <-hb.reply:
		return out, nil
	case <-ih.gone: // its wait ended (nobody in time, the run stopped) as the person pressed Done
		select {
		case out := <-hb.reply: // or it answered, then stopped waiting
			return out, nil
		default:
		}
		return HandedBack{}, fmt.Errorf("take over %q: the item stopped waiting: %w", ih.np.Tab, browser.ErrNotHeld)
	case <-ctx.Done():
		return HandedBack{}, fmt.Errorf("take over %q: waiting for the item's outcome: %w", ih.np.Tab, ctx.Err())
	}
}

// wakeLocked tells the waiters of Request that the items changed. Called
// with d.mu held.
func (d *Desk) wakeLocked() {
	if d.changed != nil {
		close(d.changed)
	}
	d.changed = make(chan struct{})
}

// item is the item tab offered under name (nil: none).
func (d *Desk) item(tab string) *itemHold {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.items[tab]
}

// itemNeeds lists the offered item tabs by name.
func (d *Desk) itemNeeds() []runstatus.NeedsPerson {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]runstatus.NeedsPerson, 0, len(d.items))
	for _, ih := range d.items {
		out = append(out, ih.np)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tab < out[j].Tab })
	return out
}

// offerItem puts an item's tab on the Desk; wait waits for its push.
func (d *Desk) offerItem(ctx context.Context, ih *itemHold) (wait func()) {
	d.mu.Lock()
	if d.items == nil {
		d.items = map[string]*itemHold{}
	}
	d.items[ih.np.Tab] = ih
	d.wakeLocked()
	f := d.onNeeds
	d.mu.Unlock()
	return d.announce(ctx, f, ih.note, ih.np)
}

func (d *Desk) withdrawItem(ih *itemHold) {
	d.mu.Lock()
	if d.items[ih.np.Tab] == ih {
		delete(d.items, ih.np.Tab)
	}
	d.wakeLocked()
	d.mu.Unlock()
	close(ih.gone)
	d.guide.Forget(ih.np.Tab)
}

// running registers a running item's tab a person may ask for; stop stops
// its agent. The returned function unregisters it.
func (d *Desk) running(tab string, stop func()) func() {
	if d == nil {
		return func() {}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.runningItems == nil {
		d.runningItems = map[string]func(){}
	}
	d.runningItems[tab] = stop
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		delete(d.runningItems, tab)
		d.wakeLocked()
	}
}

// Request asks for a running item's tab (ItemTab of its id): its agent is
// stopped and, once it has stopped, the tab is offered. It returns when
// the tab is offered (nil), or with an error wrapping browser.ErrNotHeld
// when no running item has that tab or the item ended otherwise (its
// agent had just reported).
func (d *Desk) Request(ctx context.Context, tab string) error {
	d.log.Info("take-over input", "tab", tab, "kind", "request")
	d.mu.Lock()
	stop, held := d.runningItems[tab], d.items[tab] != nil
	d.mu.Unlock()
	switch {
	case held:
		return nil
	case stop == nil:
		return fmt.Errorf("take over %q: no running item has that tab: %w", tab, browser.ErrNotHeld)
	}
	stop()
	for {
		d.mu.Lock()
		_, held = d.items[tab]
		_, run := d.runningItems[tab]
		changed := d.changed
		if changed == nil {
			d.wakeLocked()
			changed = d.changed
		}
		d.mu.Unlock()
		switch {
		case held:
			return nil
		case !run:
			return fmt.Errorf("take over %q: the item ended before its tab could be offered: %w", tab, browser.ErrNotHeld)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("take over %q: waiting for the item's agent to stop: %w", tab, ctx.Err())
		}
	}
}

// requestable is the agent's context: with a Desk, a person may ask for
// the running item's tab (Desk.Request), which stops the agent; the tab is
// then offered when the attempt ends. The registration lasts until the
// item ends (shopItem), so a request sees the offer.
func (it *itemRun) requestable(ctx context.Context) context.Context {
	r := it.r
	if r.cfg.Desk == nil || r.cfg.TakeoverWait <= 0 {
		return ctx
	}
	actx, stop := context.WithCancel(ctx)
	if it.unregister != nil {
		it.unregister()
	}
	unregister := r.cfg.Desk.running(ItemTab(it.p.item.ID), func() {
		it.requested.Store(true)
		stop()
	})
	it.unregister = func() {
		unregister()
		stop()
	}
	return actx
}

// agentResult is the result the item ends with when nobody takes its tab
// over: its agent's.
func (it *itemRun) agentResult(out attemptOut) report.ItemResult {
	if e := out.end; e != nil {
		if e.kind == endFailed {
			return it.failed(e.explanation)
		}
		return it.resultFrom(*e)
	}
	if it.heldReason == ReasonItemRequested {
		return it.resultFrom(ending{kind: endSkipped, explanation: explainTakeoverLeft})
	}
	return it.failed(out.reason())
}

// offerReason says whether the attempt's tab is offered to a person
// instead of closed, and why ("": closed as always).
func (it *itemRun) offerReason(ctx context.Context, out attemptOut) string {
	r := it.r
	if r.cfg.Desk == nil || r.cfg.TakeoverWait <= 0 || ctx.Err() != nil || r.browserDead() != nil || out.tabErr != nil {
		return ""
	}
	if e := out.end; e != nil {
		if e.tool == ToolAskPerson {
			return ReasonItemAgentAsked
		}
		if (e.kind == endNotFound || e.kind == endFailed) && r.cfg.Desk.Watched() {
			return ReasonItemGaveUp
		}
		return ""
	}
	if it.requested.Load() {
		return ReasonItemRequested
	}
	if out.kind() == failFinal && out.res.Reason != "" && out.res.Reason != agent.ReasonCancelled && r.cfg.Desk.Watched() {
		return ReasonItemGaveUp
	}
	return ""
}

// handOver offers the held tab to a person and returns the item's result:
// what the household did, or def (the agent's outcome) when nobody took
// it in time or the run stopped. The tab is closed when it returns.
func (it *itemRun) handOver(ctx context.Context, def report.ItemResult) report.ItemResult {
	r := it.r
	tab, reason := it.held, it.heldReason
	it.held = nil
	defer func() {
		if err := tab.Close(); err != nil {
			r.log.Debug("closing a tab failed", "item", it.p.item.Name, "err", err)
		}
	}()
	if it.p.release != nil {
		it.p.release() // the agent's slot goes to the next item meanwhile
	}
	base := 0
	if rec, ok := tab.(CartRecorder); ok {
		base = len(rec.CartRequests())
	}
	before := it.readCart(ctx)
	ih := &itemHold{
		np:  runstatus.NeedsPerson{Tab: ItemTab(it.p.item.ID), Reason: reason, Item: it.p.item.Name},
		tab: tab, back: make(chan handBack, 1), gone: make(chan struct{}),
	}
	if r.journal != nil {
		ih.note = func(e TakeoverEntry) {
			_ = r.journal.Update(func(rec *JournalRecord) { rec.TakeOver = append(rec.TakeOver, e) })
		}
	}
	tk := TakeOver{Reason: reason, OfferedAt: r.now()}
	it.journalTakeOver(tk)
	defer func() {
		now := r.now()
		tk.EndedAt = &now
		if rec, ok := tab.(CartRecorder); ok {
			all := rec.CartRequests()
			tk.Cart = all[min(base, len(all)):]
		}
		it.journalTakeOver(tk)
	}()
	d := r.cfg.Desk
	// The guide's model calls for this tab count in the run's usage.
	defer func() { r.addUsage(d.guide.TakeUsage()) }()
	pushed := d.offerItem(ctx, ih)
	defer pushed()
	defer d.withdrawItem(ih)
	r.log.Info("the item's tab is offered to the household in the panel (take over)", "item", it.p.item.Name,
		"tab", ih.np.Tab, "reason", reason, "wait", r.cfg.TakeoverWait)
	timer := time.NewTimer(r.cfg.TakeoverWait)
	defer timer.Stop()
	var hb handBack
	select {
	case hb = <-ih.back:
	case <-timer.C:
		r.log.Info("nobody took the item's tab over in time; the item keeps its outcome", "item", it.p.item.Name, "outcome", def.Outcome)
		return def
	case <-ctx.Done():
		return def
	}
	tk.HandedBack, tk.Decision = true, hb.decision
	ih.mu.Lock() // an input still on its way lands first
	defer ih.mu.Unlock()
	res := it.afterTakeover(ctx, tab, base, before, hb.decision, def)
	hb.reply <- HandedBack{Item: it.p.item.Name, Outcome: string(res.Outcome), Product: res.ProductName}
	return res
}

// journalTakeOver records the take-over in the item's journal entry.
func (it *itemRun) journalTakeOver(tk TakeOver) {
	if it.r.journal == nil {
		return
	}
	id := it.p.item.ID
	it.r.journal.Update(func(rec *JournalRecord) {
		if ji := rec.item(id); ji != nil {
			c := tk
			ji.TakeOver = &c
		}
	})
}

// afterTakeover ends the item as the household left it: the decision, or
// what the tab added to the cart since base.
func (it *itemRun) afterTakeover(ctx context.Context, tab Tab, base int, before *Cart, decision string, def report.ItemResult) report.ItemResult {
	r := it.r
	var reqs []browser.CartRequest
	if rec, ok := tab.(CartRecorder); ok {
		all := rec.CartRequests()
		reqs = append(reqs, all[min(base, len(all)):]...)
	}
	// The household's cart changes are the item's: the warnings compare
	// them with its result like an agent's.
	it.cartMu.Lock()
	it.cart = append(it.cart, reqs...)
	it.cartMu.Unlock()
	var e ending
	switch decision {
	case DecisionNotFound:
		e = ending{kind: endNotFound, explanation: explainTakeoverNotFound}
	case DecisionSkip:
		e = ending{kind: endSkipped, explanation: explainTakeoverSkip}
	default:
		added, others, ok := it.householdAdded(ctx, tab, reqs, before)
		if !ok {
			r.log.Info("the household handed the item's tab back without adding to the cart; the item keeps its outcome", "item", it.p.item.Name, "outcome", def.Outcome)
			return def
		}
		it.mu.Lock()
		it.takenOver = true
		it.mu.Unlock()
		it.setChosenBy(report.ChosenByHousehold)
		e = ending{kind: endAdded, tool: "takeover", added: added, explanation: explainTakeoverAdded}
		if len(others) > 0 {
			e.explanation += "; it also added " + strings.Join(others, ", ")
		}
	}
	r.log.Info("the household handed the item's tab back", "item", it.p.item.Name, "decision", decision, "product", e.added.ProductName)
	it.onReport(ctx, e) // journal, list, product memory: as an agent's report
	res := it.resultFrom(e)
	res.Explanation = e.explanation
	return res
}

// householdAdded is what the household added in the tab: the products of
// its accepted cart requests (the ledger), most units first, named and
// priced from the cart page read now; where the store's cart requests do
// not say the product (no CartOps), the cart page's lines that grew since
// before. The first product is the item's; others are named.
func (it *itemRun) householdAdded(ctx context.Context, tab Tab, reqs []browser.CartRequest, before *Cart) (shoppinglist.Added, []string, bool) {
	eff := effectOf(reqs)
	type units struct {
		id string
		n  int
	}
	var ids []units
	for id, n := range eff.added {
		if id != "" && n > 0 {
			ids = append(ids, units{id, n})
		}
	}
	unknown := unknownCartChange(reqs, it.r.cfg.Store.CartSetup)
	if len(ids) == 0 && !unknown {
		return shoppinglist.Added{}, nil, false
	}
	sort.Slice(ids, func(i, j int) bool {
		if ids[i].n != ids[j].n {
			return ids[i].n > ids[j].n
		}
		return ids[i].id < ids[j].id
	})
	after := it.readCart(ctx)
	var lines []CartLine
	if len(ids) > 0 {
		for _, u := range ids {
			l := CartLine{Name: u.id, ProductID: u.id, Quantity: u.n}
			if after != nil {
				for _, al := range after.Lines {
					if al.ProductID == u.id {
						l.Name, l.Price, l.URL = al.Name, al.Price, al.URL
						break
					}
				}
			}
			lines = append(lines, l)
		}
	} else if before != nil && after != nil {
		lines = grownLines(*before, *after)
	}
	if len(lines) == 0 {
		return shoppinglist.Added{}, nil, false
	}
	first := lines[0]
	a := shoppinglist.Added{ProductName: first.Name, Price: first.Price, URL: first.URL, Quantity: first.Quantity}
	if a.URL == "" && first.ProductID != "" {
		a.URL = productURLIn(ctx, tab, first.ProductID)
	}
	var others []string
	for _, l := range lines[1:] {
		others = append(others, fmt.Sprintf("%d × %s", l.Quantity, l.Name))
	}
	return a, others, true
}

// elementReader is a tab that reads elements of its page by CSS selector
// (*browser.Tab).
type elementReader interface {
	ReadElements(ctx context.Context, selectors map[string]string, attr string) (map[string]browser.Element, error)
}

// productURLIn is the address of product id's page as the tab knows it:
// its own address when it is on that page, else the first link to it on
// its page (a search result's name, a cart line's); "" when neither. The
// product memory replays a product from its address.
func productURLIn(ctx context.Context, tab Tab, id string) string {
	cur := tab.URL()
	if store.ProductID(cur) == id {
		return cur
	}
	rd, ok := tab.(elementReader)
	if !ok || store.ProductID("https://x/p/"+id) != id { // an id a selector can hold as it is
		return ""
	}
	els, err := rd.ReadElements(ctx, map[string]string{"link": `a[href*="/p/` + id + `"]`}, "href")
	if err != nil || !els["link"].Found {
		return ""
	}
	base, err := url.Parse(cur)
	if err != nil {
		return ""
	}
	ref, err := url.Parse(strings.TrimSpace(els["link"].Attr))
	if err != nil {
		return ""
	}
	u := base.ResolveReference(ref)
	u.RawQuery, u.Fragment = "", ""
	if store.ProductID(u.String()) != id {
		return ""
	}
	return u.String()
}

// grownLines are the lines of after with more units than in before (by
// product id, else by name), with the units they gained.
func grownLines(before, after Cart) []CartLine {
	had := map[string]int{}
	key := func(l CartLine) string {
		if l.ProductID != "" {
			return "id:" + l.ProductID
		}
		return "name:" + strings.ToLower(l.Name)
	}
	for _, l := range before.Lines {
		had[key(l)] += l.Quantity
	}
	var out []CartLine
	for _, l := range after.Lines {
		if n := l.Quantity - had[key(l)]; n > 0 {
			l.Quantity = n
			out = append(out, l)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Quantity > out[j].Quantity })
	return out
}

// readCart reads the cart page by code (no model call), bounded; nil when
// the store has no such reader or the page cannot be read.
func (it *itemRun) readCart(ctx context.Context) *Cart {
	r := it.r
	cr := codeCartReader(r.cfg.Cart)
	if cr == nil || r.host == nil {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, handBackRead)
	defer cancel()
	c, err := cr.ReadCart(rctx, r.host)
	if err != nil {
		r.log.Info("the cart page could not be read for the take-over", "item", it.p.item.Name, "err", err)
		return nil
	}
	return &c
}
