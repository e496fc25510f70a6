package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/gemini-supply/gemini-supply/internal/config"
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
	known    map[string]todoItem // uid → item as last seen or written
	features int
	haveFeat bool
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
		known: map[string]todoItem{},
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
// earlier run as Explanation.
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
		it := shoppinglist.Item{ID: r.UID, Status: shoppinglist.StatusNeedsAction}
		if r.Status == string(shoppinglist.StatusCompleted) {
			it.Status = shoppinglist.StatusCompleted
		}
		it.SetName(r.Summary)
		if strings.HasPrefix(r.Description, descriptionPrefix) {
			it.Explanation = strings.TrimPrefix(r.Description, descriptionPrefix)
		}
		items = append(items, it)
	}
	return items, nil
}

// Item reads the list again and returns the item with uid id; an error
// wrapping ErrItemGone when a person deleted it.
func (p *TodoProvider) Item(ctx context.Context, id string) (shoppinglist.Item, error) {
	items, err := p.Items(ctx)
	if err != nil {
		return shoppinglist.Item{}, err
	}
	it, err := shoppinglist.Find(items, id)
	if err != nil {
		return shoppinglist.Item{}, fmt.Errorf("%s: %w (deleted in Home Assistant?)", p.entity, err)
	}
	return it, nil
}

// list reads the items with todo/item/list and remembers them by uid.
func (p *TodoProvider) list(ctx context.Context) ([]todoItem, error) {
	raw, err := p.c.Do(ctx, "todo/item/list", map[string]any{"entity_id": p.entity}, true)
	if err != nil {
		var haErr *Error
		if errors.As(err, &haErr) && haErr.Code == CodeNotFound {
			if cerr := p.Check(ctx); cerr != nil {
				return nil, cerr // names the todo entities that do exist
			}
			return nil, fmt.Errorf("%s is not a todo list (%w): %w", p.entity, err, ErrUnknownEntity)
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
	p.known = make(map[string]todoItem, len(res.Items))
	for _, it := range res.Items {
		if it.UID != "" {
			p.known[it.UID] = it
		}
	}
	p.mu.Unlock()
	return res.Items, nil
}

// item returns the item with uid, reading the list again when it is not known.
func (p *TodoProvider) item(ctx context.Context, uid string) (todoItem, error) {
	p.mu.Lock()
	it, ok := p.known[uid]
	p.mu.Unlock()
	if ok {
		return it, nil
	}
	if _, err := p.list(ctx); err != nil {
		return todoItem{}, err
	}
	p.mu.Lock()
	it, ok = p.known[uid]
	p.mu.Unlock()
	if !ok {
		return todoItem{}, fmt.Errorf("item %s of %s: %w (deleted in Home Assistant?)", uid, p.entity, ErrItemGone)
	}
	return it, nil
}

// MarkCompleted sets the item completed and strips #404/#failed from its name.
// With description support, a note of the product added replaces an
// earlier run's note (a person's own description is kept).
func (p *TodoProvider) MarkCompleted(ctx context.Context, id string, added shoppinglist.Added) error {
	it, err := p.item(ctx, id)
	if err != nil {
		return fmt.Errorf("mark %s completed: %w", id, err)
	}
	data := map[string]any{"item": id, "status": string(shoppinglist.StatusCompleted)}
	name := StripRunTags(it.Summary)
	if name != it.Summary && name != "" {
		data["rename"] = name
	}
	if note := addedNote(added); note != "" && (it.Description == "" || strings.HasPrefix(it.Description, descriptionPrefix)) {
		if err := p.addDescription(ctx, data, note); err != nil {
			return fmt.Errorf("mark %q completed: %w", it.Summary, err)
		}
	}
	if err := p.update(ctx, it, data); err != nil {
		return fmt.Errorf("mark %q completed: %w", it.Summary, err)
	}
	return nil
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
	it, err := p.item(ctx, id)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, id, err)
	}
	name := StripRunTags(it.Summary)
	if name == "" {
		name = it.Summary
	}
	data := map[string]any{"item": id, "rename": strings.TrimSpace(name + " " + tag)}
	if text != "" && (it.Description == "" || strings.HasPrefix(it.Description, descriptionPrefix)) {
		if err := p.addDescription(ctx, data, text); err != nil {
			return fmt.Errorf("%s %q: %w", what, it.Summary, err)
		}
	}
	if err := p.update(ctx, it, data); err != nil {
		return fmt.Errorf("%s %q: %w", what, it.Summary, err)
	}
	return nil
}

func (p *TodoProvider) addDescription(ctx context.Context, data map[string]any, text string) error {
	ok, err := p.SupportsDescriptions(ctx)
	if err != nil {
		return err
	}
	if ok {
		data["description"] = descriptionPrefix + text
	}
	return nil
}

// update calls todo.update_item and remembers the result.
func (p *TodoProvider) update(ctx context.Context, it todoItem, data map[string]any) error {
	_, err := p.c.CallService(ctx, "todo", "update_item", &Target{EntityID: []string{p.entity}}, data, false)
	if err != nil {
		var haErr *Error
		if errors.As(err, &haErr) && haErr.Code == CodeServiceValidationError && strings.Contains(strings.ToLower(haErr.Message), "unable to find") {
			p.mu.Lock()
			delete(p.known, it.UID)
			p.mu.Unlock()
			return fmt.Errorf("%w: %w", ErrItemGone, err)
		}
		return err
	}
	if r, ok := data["rename"].(string); ok {
		it.Summary = r
	}
	if s, ok := data["status"].(string); ok {
		it.Status = s
	}
	if d, ok := data["description"].(string); ok {
		it.Description = d
	}
	p.mu.Lock()
	p.known[it.UID] = it
	p.mu.Unlock()
	p.log.Debug("todo item updated", "uid", it.UID, "summary", it.Summary, "status", it.Status)
	return nil
}

// SendSummary shows the summary as a persistent notification (the latest
// run replaces the previous one).
func (p *TodoProvider) SendSummary(ctx context.Context, s report.Summary) error {
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

func addedNote(a shoppinglist.Added) string {
	if a.ProductName == "" {
		return ""
	}
	note := "added " + a.ProductName
	if a.Quantity > 1 {
		note += fmt.Sprintf(" × %d", a.Quantity)
	}
	if a.Price.Text != "" {
		note += " (" + a.Price.Text + ")"
	}
	return note
}
