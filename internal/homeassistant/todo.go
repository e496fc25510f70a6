package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// FeatureSetDescription is the todo entity feature bit that allows item
// descriptions (TodoListEntityFeature.SET_DESCRIPTION_ON_ITEM).
// todo.shopping_list does not have it; Local To-do lists do.
const FeatureSetDescription = 64

// descriptionPrefix marks descriptions this program wrote, so a later run
// replaces its own notes and leaves a person's description alone.
const descriptionPrefix = "gemini-supply: "

var (
	// ErrUnknownEntity: the configured todo entity does not exist.
	ErrUnknownEntity = errors.New("todo entity not found")
	// ErrItemGone: the item is no longer on the list (deleted in Home Assistant).
	ErrItemGone = shoppinglist.ErrItemGone
)

// TodoOptions configures a TodoProvider.
type TodoOptions struct {
	// Entity is the todo entity (default todo.shopping_list).
	Entity string
	// Notifier delivers the summary; nil uses NewNotifier(client, NotifierOptions{}).
	Notifier *Notifier
	Logger   *slog.Logger
}

// TodoProvider is the shopping list kept in a Home Assistant todo entity.
// Items are addressed by uid, and every update carries absolute values
// (status, a name, a description), so it is safe to repeat after a dropped
// connection and does not touch fields a person may be editing.
//
// Every mark is verified: the item is read fresh, only what differs is
// written (nothing when it already is as wanted, so no update is applied
// twice), and it is read back and written again when Home Assistant
// answered success without changing it (a restarting Home Assistant whose
// todo entity is not loaded yet). A mark that cannot land before its
// caller's deadline is queued and applied once Home Assistant is back; its
// error wraps shoppinglist.ErrUpdatePending and Flush reports what became
// of it. The queue lives as long as the Client.
//
// Marks: completed → status completed with #404/#failed stripped from the
// name; not found → "<name> #404"; failed → "<name> #failed". The
// explanation goes into the item's description only when the entity
// supports descriptions (feature bit 64); it is always in the summary.
// Other #tags a person wrote stay in the name.
type TodoProvider struct {
	c        *Client
	entity   string
	notifier *Notifier
	log      *slog.Logger

	mu       sync.Mutex
	names    map[string]string // uid → name as last read, for reports
	features int
	haveFeat bool
	locks    map[string]chan struct{} // uid → write lock
	queue    map[string]*queued       // uid → mark waiting to land
	failed   map[string]error         // uid → queued mark dropped in the background, not reported yet
	flushing bool                     // flushLoop is running
}

var _ shoppinglist.Provider = (*TodoProvider)(nil)

type todoItem struct {
	UID         string `json:"uid"`
	Summary     string `json:"summary"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

// NewTodoProvider returns the provider for opts.Entity on c. It does no I/O;
// call Check to fail early on a wrong entity.
func NewTodoProvider(c *Client, opts TodoOptions) *TodoProvider {
	if opts.Entity == "" {
		opts.Entity = config.DefaultTodoEntity
	}
	if opts.Notifier == nil {
		opts.Notifier = NewNotifier(c, NotifierOptions{})
	}
	logger := opts.Logger
	if logger == nil {
		logger = c.log
	}
	return &TodoProvider{
		c: c, entity: opts.Entity, notifier: opts.Notifier,
		log:   logger.With("component", "homeassistant.todo", "entity", opts.Entity),
		names: map[string]string{}, locks: map[string]chan struct{}{},
		queue: map[string]*queued{}, failed: map[string]error{},
	}
}

// Entity is the todo entity id.
func (p *TodoProvider) Entity() string { return p.entity }

// Check verifies the entity exists and is a todo list, and reads its
// supported features. The error for a missing entity lists the todo
// entities that do exist.
func (p *TodoProvider) Check(ctx context.Context) error {
	states, err := p.c.GetStates(ctx)
	if err != nil {
		return fmt.Errorf("check todo entity %s: %w", p.entity, err)
	}
	var lists []string
	for _, s := range states {
		if s.EntityID == p.entity {
			p.mu.Lock()
			p.features, p.haveFeat = s.SupportedFeatures(), true
			p.mu.Unlock()
			if !strings.HasPrefix(p.entity, "todo.") {
				return fmt.Errorf("%s is not a todo list entity: set todo_entity to a todo.* entity: %w", p.entity, ErrUnknownEntity)
			}
			return nil
		}
		if strings.HasPrefix(s.EntityID, "todo.") {
			lists = append(lists, s.EntityID)
		}
	}
	return p.unknownEntity(lists)
}

func (p *TodoProvider) unknownEntity(lists []string) error {
	sort.Strings(lists)
	have := "there are no todo entities"
	if len(lists) > 0 {
		have = "todo entities there: " + strings.Join(lists, ", ")
	}
	return fmt.Errorf("todo entity %s does not exist in Home Assistant at %s (%s); set the todo_entity option to one of them, or add the Shopping List integration: %w",
		p.entity, p.c.URL(), have, ErrUnknownEntity)
}

// SupportsDescriptions reports whether the entity accepts item descriptions
// (reading its state if not known yet).
func (p *TodoProvider) SupportsDescriptions(ctx context.Context) (bool, error) {
	p.mu.Lock()
	f, ok := p.features, p.haveFeat
	p.mu.Unlock()
	if !ok {
		if err := p.Check(ctx); err != nil {
			return false, err
		}
		p.mu.Lock()
		f = p.features
		p.mu.Unlock()
	}
	return f&FeatureSetDescription != 0, nil
}

// Items returns every item of the list (open and completed) with uid as ID,
// the name parsed for quantity and #tags, and the description written by an
// earlier run as Explanation (a description the household wrote is the
// item's Description).
func (p *TodoProvider) Items(ctx context.Context) ([]shoppinglist.Item, error) {
	if err := p.Check(ctx); err != nil {
		return nil, err
	}
	raw, err := p.list(ctx)
	if err != nil {
		return nil, err
	}
	items := make([]shoppinglist.Item, 0, len(raw))
	for _, r := range raw {
		if r.UID == "" {
			p.log.Warn("todo item without uid skipped", "summary", r.Summary)
			continue
		}
		items = append(items, r.item())
	}
	return items, nil
}

func (r todoItem) item() shoppinglist.Item {
	it := shoppinglist.Item{ID: r.UID, Status: shoppinglist.StatusNeedsAction}
	if r.Status == string(shoppinglist.StatusCompleted) {
		it.Status = shoppinglist.StatusCompleted
	}
	it.SetName(r.Summary)
	if strings.HasPrefix(r.Description, descriptionPrefix) {
		it.Explanation = strings.TrimPrefix(r.Description, descriptionPrefix)
	} else {
		// The household's own description: its policy phrases ("no
		// substitute", "always ask", "any brand") set the item's rules.
		it.Description = r.Description
	}
	return it
}

// Item reads the list again and returns the item with uid id; an error
// wrapping ErrItemGone when a person deleted it.
func (p *TodoProvider) Item(ctx context.Context, id string) (shoppinglist.Item, error) {
	raw, err := p.list(ctx)
	if err != nil {
		return shoppinglist.Item{}, err
	}
	for _, r := range raw {
		if r.UID == id {
			return r.item(), nil
		}
	}
	return shoppinglist.Item{}, fmt.Errorf("item %q of %s: %w (deleted in Home Assistant?)", id, p.entity, ErrItemGone)
}

// list reads the items with todo/item/list; a missing entity is explained
// (Check names the todo entities that do exist).
func (p *TodoProvider) list(ctx context.Context) ([]todoItem, error) {
	items, err := p.read(ctx)
	if errors.Is(err, errNotLoaded) {
		if cerr := p.Check(ctx); cerr != nil {
			return nil, cerr
		}
		// It has a state but no list: its integration has not loaded it (yet).
		return nil, fmt.Errorf("todo entity %s exists but is not loaded in Home Assistant (its integration is still starting, or failed to load): %w", p.entity, err)
	}
	return items, err
}

// errNotLoaded: todo/item/list answered not_found — the entity does not
// exist, or is not loaded (yet) while Home Assistant starts.
var errNotLoaded = errors.New("todo entity not found or not loaded")

// read is one todo/item/list; it remembers the items' names for reports.
func (p *TodoProvider) read(ctx context.Context) ([]todoItem, error) {
	raw, err := p.c.Do(ctx, "todo/item/list", map[string]any{"entity_id": p.entity}, true)
	if err != nil {
		var haErr *Error
		if errors.As(err, &haErr) && haErr.Code == CodeNotFound {
			return nil, fmt.Errorf("read the items of %s: %w: %w", p.entity, errNotLoaded, err)
		}
		return nil, fmt.Errorf("read the items of %s: %w", p.entity, err)
	}
	var res struct {
		Items []todoItem `json:"items"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("read the items of %s: decoding: %w", p.entity, err)
	}
	p.mu.Lock()
	for _, it := range res.Items {
		if it.UID != "" {
			p.names[it.UID] = it.Summary
		}
	}
	p.mu.Unlock()
	return res.Items, nil
}

// readItem reads the item with uid fresh from Home Assistant.
func (p *TodoProvider) readItem(ctx context.Context, uid string) (todoItem, error) {
	items, err := p.read(ctx)
	if err != nil {
		return todoItem{}, err
	}
	for _, it := range items {
		if it.UID == uid {
			return it, nil
		}
	}
	return todoItem{}, fmt.Errorf("item %s of %s: %w (deleted in Home Assistant?)", uid, p.entity, ErrItemGone)
}

// wantFunc is a mark as data: the item as it should be, given how it is now
// and whether the entity takes descriptions. Applying it to its own result
// changes nothing, so a mark can be checked and repeated safely.
type wantFunc func(cur todoItem, descriptions bool) todoItem

// ownDescription: the description is empty or was written by this program
// (a person's own description is never replaced).
func ownDescription(d string) bool { return d == "" || strings.HasPrefix(d, descriptionPrefix) }

// MarkCompleted sets the item completed and strips #404/#failed from its name.
// With description support, a note of the product added replaces an
// earlier run's note (a person's own description is kept).
func (p *TodoProvider) MarkCompleted(ctx context.Context, id string, added shoppinglist.Added) error {
	note := addedNote(p.notifier.opts.Messages, added)
	return p.mark(ctx, id, "mark completed", func(cur todoItem, descriptions bool) todoItem {
		w := cur
		w.Status = string(shoppinglist.StatusCompleted)
		if name := StripRunTags(cur.Summary); name != "" {
			w.Summary = name
		}
		if descriptions && note != "" && ownDescription(cur.Description) {
			w.Description = descriptionPrefix + note
		}
		return w
	})
}

// Reopen puts a completed item back to "needs action" (the review pack's
// Wrong product shops it again); the description it was completed with is
// cleared where it is ours.
func (p *TodoProvider) Reopen(ctx context.Context, id string) error {
	return p.mark(ctx, id, "reopen", func(cur todoItem, descriptions bool) todoItem {
		w := cur
		w.Status = string(shoppinglist.StatusNeedsAction)
		if descriptions && cur.Description != "" && ownDescription(cur.Description) {
			w.Description = ""
		}
		return w
	})
}

// MarkNotFound renames the item "<name> #404" and, where supported, puts the
// agent's explanation in its description.
func (p *TodoProvider) MarkNotFound(ctx context.Context, id string, explanation string) error {
	return p.markTagged(ctx, id, shoppinglist.TagNotFound, explanation, "mark not found")
}

// MarkFailed renames the item "<name> #failed" and, where supported, puts
// the reason in its description.
func (p *TodoProvider) MarkFailed(ctx context.Context, id string, reason string) error {
	return p.markTagged(ctx, id, shoppinglist.TagFailed, reason, "mark failed")
}

func (p *TodoProvider) markTagged(ctx context.Context, id, tag, text, what string) error {
	return p.mark(ctx, id, what, func(cur todoItem, descriptions bool) todoItem {
		w := cur
		name := StripRunTags(cur.Summary)
		if name == "" {
			name = cur.Summary
		}
		w.Summary = strings.TrimSpace(name + " " + tag)
		if descriptions && text != "" && ownDescription(cur.Description) {
			w.Description = descriptionPrefix + text
		}
		return w
	})
}

// mark applies a mark and checks it landed (apply). When it could not land
// before ctx's deadline — Home Assistant unreachable, restarting, or the
// entity not loaded — the mark is queued and applied in the background as
// soon as Home Assistant is back: the error then wraps
// shoppinglist.ErrUpdatePending, and Flush says what became of it.
func (p *TodoProvider) mark(ctx context.Context, uid, what string, want wantFunc) error {
	unlock, err := p.lockItem(ctx, uid)
	if err != nil {
		return p.enqueue(uid, what, want, err)
	}
	defer unlock()
	p.mu.Lock()
	delete(p.queue, uid) // this mark supersedes a queued one
	p.mu.Unlock()
	err = p.apply(ctx, uid, what, want)
	switch {
	case err == nil:
		return nil
	case retryable(err):
		return p.enqueue(uid, what, want, err)
	}
	return fmt.Errorf("%s %s: %w", what, p.label(uid), err)
}

// maxWrites bounds the writes of one apply that Home Assistant answered
// with success without the item changing.
const maxWrites = 4

// notLoadedWait bounds the wait between reads while the entity is not loaded.
const notLoadedWait = 2 * time.Second

// errNotTaken: Home Assistant accepted the update but the item did not change.
var errNotTaken = errors.New("Home Assistant accepted the update but the item did not change")

// apply brings the item to want(current) and verifies it: it reads the
// item, writes only what differs (nothing when the item is already as
// wanted, so a repeated mark is never applied twice), and reads it back,
// writing again when Home Assistant answered success but the item did not
// change (an entity not loaded yet while Home Assistant starts). Writes wait
// for Home Assistant to be fully started (Client.Do) and for the entity to
// be loaded.
func (p *TodoProvider) apply(ctx context.Context, uid, what string, want wantFunc) error {
	wait := 50 * time.Millisecond
	writes := 0
	var last error
	for {
		cur, err := p.readItem(ctx, uid)
		if errors.Is(err, errNotLoaded) {
			// Home Assistant keeps a registered entity's state ("unavailable")
			// until its integration loads it: no state at all is a wrong entity.
			if cerr := p.Check(ctx); errors.Is(cerr, ErrUnknownEntity) {
				return cerr
			}
			if last == nil {
				p.log.Info("the todo entity is not loaded yet; the update waits for it", "item", uid, "what", what)
			}
			last = err
			if serr := sleep(ctx, wait); serr != nil {
				return fmt.Errorf("%w (%w)", serr, err)
			}
			wait = min(wait*2, notLoadedWait)
			continue
		}
		if err != nil && last != nil && ctx.Err() != nil {
			// The deadline cut a read again: why it was waiting is the news.
			return fmt.Errorf("%w (%w)", err, last)
		}
		if err != nil {
			return err
		}
		descriptions, err := p.SupportsDescriptions(ctx)
		if err != nil {
			return err
		}
		w := want(cur, descriptions)
		if w == cur {
			if writes > 0 {
				p.log.Debug("todo item updated and verified", "uid", uid, "summary", w.Summary, "status", w.Status, "writes", writes)
			}
			return nil
		}
		if writes >= maxWrites {
			return fmt.Errorf("%w after %d writes (item now %q, %s)", errNotTaken, writes, cur.Summary, cur.Status)
		}
		if writes > 0 {
			p.log.Warn("a list update did not take: Home Assistant answered success but the item is unchanged; applying it again",
				"item", cur.Summary, "uid", uid, "what", what, "writes", writes)
		}
		writes++
		err = p.write(ctx, cur, w)
		var haErr *Error
		if errors.As(err, &haErr) && haErr.Code == CodeNotFound {
			// The todo service itself is not registered yet (still starting).
			last = err
			if serr := sleep(ctx, wait); serr != nil {
				return fmt.Errorf("%w (%w)", serr, err)
			}
			continue
		}
		if err != nil {
			return err
		}
	}
}

// write sends todo.update_item with the fields of w that differ from cur
// (absolute values: repeating it changes nothing).
func (p *TodoProvider) write(ctx context.Context, cur, w todoItem) error {
	data := map[string]any{"item": cur.UID}
	if w.Summary != cur.Summary {
		data["rename"] = w.Summary
	}
	if w.Status != cur.Status {
		data["status"] = w.Status
	}
	if w.Description != cur.Description {
		data["description"] = w.Description
	}
	_, err := p.c.CallService(ctx, "todo", "update_item", &Target{EntityID: []string{p.entity}}, data, false)
	var haErr *Error
	if errors.As(err, &haErr) && haErr.Code == CodeServiceValidationError &&
		(haErr.TranslationKey == "item_not_found" || strings.Contains(strings.ToLower(haErr.Message), "unable to find")) {
		return fmt.Errorf("%w: %w", ErrItemGone, err)
	}
	return err
}

// retryable: the update may still land later (Home Assistant unreachable,
// starting, the entity not loaded, the deadline passed) — as opposed to an
// item a person deleted, or an update Home Assistant refused.
func retryable(err error) bool {
	var haErr *Error
	switch {
	case errors.Is(err, ErrItemGone), errors.Is(err, ErrUnknownEntity), errors.Is(err, ErrClosed), errors.Is(err, ErrAuthInvalid):
		return false
	case errors.As(err, &haErr):
		return haErr.Code == CodeNotFound || haErr.Code == CodeTimeout
	}
	return true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lockItem serialises the writes to one item (a mark and the background
// flush of a queued one), bounded by ctx.
func (p *TodoProvider) lockItem(ctx context.Context, uid string) (func(), error) {
	p.mu.Lock()
	l, ok := p.locks[uid]
	if !ok {
		l = make(chan struct{}, 1)
		p.locks[uid] = l
	}
	p.mu.Unlock()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for an earlier update of the same item: %w", ctx.Err())
	}
}

// label is the item's name as last read (its uid when never read).
func (p *TodoProvider) label(uid string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.names[uid]; n != "" {
		return strconv.Quote(n)
	}
	return uid
}

// ---- updates that could not land in time ----

// queued is a mark that could not land before its caller's deadline.
type queued struct {
	what     string
	want     wantFunc
	err      error // why it has not landed yet
	since    time.Time
	reported bool // Flush has returned it
}

// enqueue keeps the mark (replacing an earlier queued one for the item),
// starts the background flush and returns an error wrapping
// shoppinglist.ErrUpdatePending.
func (p *TodoProvider) enqueue(uid, what string, want wantFunc, cause error) error {
	p.mu.Lock()
	p.queue[uid] = &queued{what: what, want: want, err: cause, since: time.Now()}
	start := !p.flushing
	p.flushing = true
	pending := len(p.queue)
	p.mu.Unlock()
	p.log.Warn("the list update could not land in time; it is kept and applied as soon as Home Assistant is back",
		"item", p.label(uid), "uid", uid, "what", what, "queued", pending, "error", cause)
	if start {
		go p.flushLoop()
	}
	return fmt.Errorf("%s %s: %w: %w", what, p.label(uid), shoppinglist.ErrUpdatePending, cause)
}

// flushLoop applies the queued marks once Home Assistant is back (apply
// waits for it), until none is left or the client closes.
func (p *TodoProvider) flushLoop() {
	life := p.c.ctx
	backoff := 100 * time.Millisecond
	for {
		p.drain(life)
		p.mu.Lock()
		if len(p.queue) == 0 || life.Err() != nil {
			p.flushing = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		if sleep(life, backoff) != nil {
			p.mu.Lock()
			p.flushing = false
			p.mu.Unlock()
			return
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

// drain tries every queued mark once (bounded by ctx). A mark that lands, or
// whose item was deleted, or that Home Assistant refuses, leaves the queue;
// the failures are kept in p.failed for Flush.
func (p *TodoProvider) drain(ctx context.Context) {
	p.mu.Lock()
	uids := make([]string, 0, len(p.queue))
	for uid := range p.queue {
		uids = append(uids, uid)
	}
	p.mu.Unlock()
	sort.Strings(uids)
	for _, uid := range uids {
		if ctx.Err() != nil {
			return
		}
		unlock, err := p.lockItem(ctx, uid)
		if err != nil {
			return
		}
		p.mu.Lock()
		q := p.queue[uid]
		p.mu.Unlock()
		if q == nil {
			unlock()
			continue
		}
		err = p.apply(ctx, uid, q.what, q.want)
		p.mu.Lock()
		if p.queue[uid] == q {
			switch {
			case err == nil:
				delete(p.queue, uid)
			case retryable(err):
				q.err = err
			default:
				delete(p.queue, uid)
				p.failed[uid] = fmt.Errorf("%s %s: %w", q.what, p.labelLocked(uid), err)
			}
		}
		p.mu.Unlock()
		unlock()
		switch {
		case err == nil:
			p.log.Info("a queued list update was applied", "item", p.label(uid), "uid", uid, "what", q.what, "queued_for", time.Since(q.since).Round(time.Millisecond))
		case errors.Is(err, ErrItemGone):
			p.log.Info("a queued list update was dropped: the item was deleted meanwhile", "item", p.label(uid), "uid", uid, "what", q.what)
		case !retryable(err):
			p.log.Warn("a queued list update was refused by Home Assistant", "item", p.label(uid), "uid", uid, "what", q.what, "error", err)
		}
	}
}

func (p *TodoProvider) labelLocked(uid string) string {
	if n := p.names[uid]; n != "" {
		return strconv.Quote(n)
	}
	return uid
}

// Pending is how many list updates are queued, not landed yet.
func (p *TodoProvider) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Flush implements shoppinglist.Flusher: it applies the queued list updates
// now (each waits for Home Assistant to be back, bounded by ctx) and returns,
// by item uid, why each update that has not landed did not: still queued
// (Home Assistant unreachable until ctx ended), the item deleted
// (ErrItemGone), or refused. Updates still queued keep being tried in the
// background while the client is open. Each is returned once.
func (p *TodoProvider) Flush(ctx context.Context) map[string]error {
	p.drain(ctx)
	out := map[string]error{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, err := range p.failed {
		out[uid] = err
	}
	clear(p.failed)
	for uid, q := range p.queue {
		if q.reported {
			continue
		}
		q.reported = true
		out[uid] = fmt.Errorf("%s %s: %w: %w", q.what, p.labelLocked(uid), shoppinglist.ErrUpdatePending, q.err)
	}
	return out
}

var _ shoppinglist.Flusher = (*TodoProvider)(nil)

// SendSummary shows the summary as a persistent notification (the latest
// run replaces the previous one). It first flushes the queued list updates
// (Flush, with at most half of ctx's time), so the notification comes after
// them, and adds a warning for each one that has not landed and was not
// reported yet.
func (p *TodoProvider) SendSummary(ctx context.Context, s report.Summary) error {
	fctx, cancel := ctx, context.CancelFunc(func() {})
	if d, ok := ctx.Deadline(); ok {
		// Leave the notification half of the time.
		fctx, cancel = context.WithTimeout(ctx, time.Until(d)/2)
	}
	failed := p.Flush(fctx)
	cancel()
	if len(failed) > 0 {
		uids := make([]string, 0, len(failed))
		for uid := range failed {
			uids = append(uids, uid)
		}
		sort.Strings(uids)
		s.Warnings, s.WarningTexts = slices.Clip(s.Warnings), slices.Clip(s.WarningTexts)
		for _, uid := range uids {
			s.Warn(messages.Say("warning.list_not_updated", "error", failed[uid].Error()))
		}
	}
	return p.notifier.SendSummary(ctx, s)
}

// StripRunTags removes the tags a run writes (#404, #failed, any case) from a
// list entry, keeping every other word and #tag, whitespace collapsed.
func StripRunTags(summary string) string {
	words := strings.Fields(summary)
	out := words[:0]
	for _, w := range words {
		if strings.HasPrefix(w, "#") && shoppinglist.IsRunTag(w) {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

func addedNote(m messages.Catalog, a shoppinglist.Added) string {
	if a.ProductName == "" {
		return ""
	}
	note := m.T("summary.todo_added", "product", a.ProductName)
	if a.Quantity > 1 {
		note = m.T("summary.todo_added_quantity", "product", a.ProductName, "quantity", a.Quantity)
	}
	if a.Price.Text != "" {
		note += " (" + money.TextIn(a.Price.Text, m.Lang()) + ")"
	}
	return note
}
