package panel

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// ErrNotFound is returned by a History or Products for a run, trace,
// screenshot or product that does not exist.
var ErrNotFound = errors.New("not found")

// History is the past runs, from their journals (and traces, when tracing
// is on). The app reads them from the data and trace directories.
type History interface {
	// Runs lists the runs, newest first.
	Runs(ctx context.Context) ([]RunInfo, error)
	// Run is one run with its items, attempts and cart review.
	Run(ctx context.Context, id string) (RunDetail, error)
	// Trace is one attempt's trace (RunAttempt.Trace).
	Trace(ctx context.Context, runID, trace string) (Trace, error)
	// Screenshot is one of a trace's screenshots (Trace's file names).
	Screenshot(ctx context.Context, runID, trace, name string) ([]byte, error)
}

// RunInfo is one past run in the list.
type RunInfo struct {
	ID     string `json:"id"`
	Source string `json:"source,omitempty"`
	// StartedBy and StoppedBy are the Home Assistant users who started and
	// stopped the run, when known.
	StartedBy  string       `json:"started_by,omitempty"`
	StoppedBy  string       `json:"stopped_by,omitempty"`
	State      string       `json:"state"`
	StartedAt  time.Time    `json:"started_at"`
	FinishedAt *time.Time   `json:"finished_at,omitempty"`
	Error      string       `json:"error,omitempty"`
	Items      int          `json:"items"`
	Added      int          `json:"added"`
	NotFound   int          `json:"not_found"`
	Failed     int          `json:"failed"`
	NotShopped int          `json:"not_shopped"` // the run was stopped before them
	Usage      report.Usage `json:"usage"`
	// TotalCents is the cart's estimated total as last read (after the
	// run, after each action on it), else the run's added items'.
	TotalCents int64 `json:"total_cents,omitempty"`
	// Kind is what the run was when not the list's: "retry" (Retry
	// failed), "reshop" (a Wrong product's run of one item); ReshopOf, for
	// a re-shop, the run whose review it belongs to.
	Kind     string `json:"kind,omitempty"`
	ReshopOf string `json:"reshop_of,omitempty"`
}

// RunDetail is one past run: its items with their attempts, and the review
// of the cart.
type RunDetail struct {
	RunInfo
	Store string    `json:"store,omitempty"`
	Model string    `json:"model,omitempty"`
	Items []RunItem `json:"items_detail"`
	// Changes are the cart's changed lines in words; Warnings the
	// review's warnings.
	Changes  []string `json:"changes"`
	Warnings []string `json:"warnings"`
	// ChangeLines are Changes as data, index for index (the page says
	// them in its language).
	ChangeLines []CartChange `json:"change_lines,omitempty"`
	// WarningTexts are Warnings as catalogue keys and values, index for
	// index (the page says them in its language; none: Warnings as written).
	WarningTexts []messages.Text `json:"warning_texts,omitempty"`
	CartURL      string          `json:"cart_url,omitempty"`
	// Pack is the run's review pack, with the household's actions on the
	// cart since (nil for a run without one).
	Pack *reviewpack.Pack `json:"pack,omitempty"`
	// TakeOver is what a person did on the run's tabs that needed one
	// (take over, Show me), in order: typed text only as its length.
	TakeOver []TakeoverStep `json:"take_over,omitempty"`
}

// TakeoverStep is one take-over input or guide step of a past run.
type TakeoverStep struct {
	At       time.Time `json:"at"`
	Tab      string    `json:"tab"`
	Item     string    `json:"item,omitempty"`
	Kind     string    `json:"kind"` // offered, click, type, key, guide, done
	By       string    `json:"by,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	X        *int      `json:"x,omitempty"`
	Y        *int      `json:"y,omitempty"`
	Chars    int       `json:"chars,omitempty"`
	Key      string    `json:"key,omitempty"`
	Step     int       `json:"step,omitempty"`
	Box      *[4]int   `json:"box,omitempty"`
	Done     bool      `json:"done,omitempty"`
	SignedIn *bool     `json:"signed_in,omitempty"`
	Decision string    `json:"decision,omitempty"`
	Outcome  string    `json:"outcome,omitempty"`
	Refused  string    `json:"refused,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// CartChange is one cart line's change in a run's cart review.
type CartChange struct {
	Name   string      `json:"name"`
	Before int         `json:"before"`
	After  int         `json:"after"`
	Price  money.Price `json:"price"`
}

// RunItem is one list item of a past run.
type RunItem struct {
	ID       string             `json:"id"`
	Name     string             `json:"name"`
	Quantity int                `json:"quantity"`
	Status   string             `json:"status"`
	Result   *report.ItemResult `json:"result,omitempty"`
	Attempts []RunAttempt       `json:"attempts"`
	// AnsweredBy is who answered the item's questions, when known.
	AnsweredBy []string `json:"answered_by,omitempty"`
	// Confirmations are the answers to the item's safety confirmations.
	Confirmations []Confirmation `json:"confirmations,omitempty"`
}

// Confirmation is one answer to a safety confirmation: the flagged action,
// whether it was allowed, and who answered when known.
type Confirmation struct {
	Action  string `json:"action"`
	Allowed bool   `json:"allowed"`
	By      string `json:"by,omitempty"`
}

// RunAttempt is one agent run for an item.
type RunAttempt struct {
	Query      string       `json:"query"`
	StartedAt  time.Time    `json:"started_at"`
	DurationMS int64        `json:"duration_ms"`
	Tool       string       `json:"tool,omitempty"`
	Reason     string       `json:"reason,omitempty"`
	Error      string       `json:"error,omitempty"`
	Turns      int          `json:"turns"`
	Usage      report.Usage `json:"usage"`
	// Trace names the attempt's trace ("" when tracing was off).
	Trace string `json:"trace,omitempty"`
}

// Trace is what an agent did for one attempt, turn by turn.
type Trace struct {
	Goal string `json:"goal"`
	URL  string `json:"url,omitempty"`
	// Screenshot is the first screen's file name.
	Screenshot string      `json:"screenshot,omitempty"`
	Turns      []TraceTurn `json:"turns"`
	// End is how the attempt ended; nil when it never did (killed).
	End *TraceEnd `json:"end,omitempty"`
}

// TraceTurn is one turn: the model's time and tokens, what it said, what
// it did in words, and the screen after it.
type TraceTurn struct {
	Turn         int       `json:"turn"`
	Started      time.Time `json:"started"`
	ModelMS      int64     `json:"model_ms"`
	PromptTokens int64     `json:"prompt_tokens"`
	OutputTokens int64     `json:"output_tokens"`
	Text         []string  `json:"text,omitempty"`
	Actions      []string  `json:"actions"`
	// Calls are the same actions as data, which the page says in its
	// language (Actions stay for other clients).
	Calls      []Call `json:"calls,omitempty"`
	URL        string `json:"url,omitempty"`
	Screenshot string `json:"screenshot,omitempty"`
}

// TraceEnd is how an attempt ended, with its model use and cost.
type TraceEnd struct {
	Tool       string       `json:"tool,omitempty"`
	Reason     string       `json:"reason,omitempty"`
	Error      string       `json:"error,omitempty"`
	Turns      int          `json:"turns"`
	DurationMS int64        `json:"duration_ms"`
	Usage      report.Usage `json:"usage"`
}

// Products is the store's product memory: what each item got last time
// and the household's pinned choices.
type Products interface {
	Products(ctx context.Context) ([]Product, error)
	// Forget removes the item's product (its key, or any spelling of the
	// item); ErrNotFound when none is remembered.
	Forget(ctx context.Context, item string) error
	// PinSubstitute makes the item's substitute its own product (⭐);
	// ErrNotFound when it has none.
	PinSubstitute(ctx context.Context, item string) error
	// SetPolicy sets the household's policy for the item.
	SetPolicy(ctx context.Context, item string, p shoppinglist.Policy) error
}

// ProductPinner is a Products that can also pin an item's own remembered
// product (⭐ on any product, not only a substitute).
type ProductPinner interface {
	// PinProduct pins the item's remembered product; ErrNotFound when it
	// has none.
	PinProduct(ctx context.Context, item string) error
}

// Product is one remembered product.
type Product struct {
	Key string `json:"key"`
	// Words are the names the household wrote for the item (its list
	// items' names in the recent runs), newest first; none when no run
	// journal names it.
	Words    []string  `json:"words,omitempty"`
	Name     string    `json:"name"`
	URL      string    `json:"url,omitempty"`
	Size     string    `json:"size,omitempty"`
	Price    string    `json:"price,omitempty"`
	Quantity int       `json:"quantity,omitempty"`
	LastSeen time.Time `json:"last_seen"`
	Times    int       `json:"times_chosen,omitempty"`
	Pinned   bool      `json:"pinned,omitempty"`
	// Substitute is what was bought in its place last (this run only,
	// never replayed); nil when none.
	Substitute *Substitute `json:"substitute,omitempty"`
	// Policy is the household's rule for the item set here (the list's
	// tags add theirs).
	Policy shoppinglist.Policy `json:"policy"`
}

// Substitute is a product bought in place of an item's own.
type Substitute struct {
	Name        string    `json:"name"`
	URL         string    `json:"url,omitempty"`
	Price       string    `json:"price,omitempty"`
	LastSeen    time.Time `json:"last_seen"`
	ByHousehold bool      `json:"by_household,omitempty"`
	InARow      int       `json:"in_a_row,omitempty"`
}

// Names in history addresses: run ids, trace names and screenshot files
// are plain names, never paths.
var (
	plainName      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$`)
	screenshotName = regexp.MustCompile(`^turn-[0-9]{3,6}\.(png|jpe?g)$`)
)

// previewItem is one line of the preview.
type previewItem struct {
	Name     string   `json:"name"`
	Product  string   `json:"product"`
	Quantity int      `json:"quantity"`
	Tags     []string `json:"tags,omitempty"`
	// Of is the item a duplicate repeats.
	Of string `json:"of,omitempty"`
}

// servePreview answers GET /api/preview[?retry=1]: what a run would shop
// now, and what it would skip.
func (p *Panel) servePreview(w http.ResponseWriter, r *http.Request) {
	if p.opts.Preview == nil {
		http.Error(w, "no preview here", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	plan, err := p.opts.Preview(ctx, r.URL.Query().Get("retry") == "1")
	if err != nil {
		p.log.Warn("reading the list for the preview", "err", err)
		http.Error(w, "The list cannot be read: "+err.Error(), http.StatusBadGateway)
		return
	}
	conv := func(items []shoppinglist.Item) []previewItem {
		out := make([]previewItem, 0, len(items))
		for _, it := range items {
			out = append(out, previewItem{Name: report.Clip(it.Name, report.MaxNameRunes), Product: report.Clip(it.Product, report.MaxNameRunes), Quantity: it.Quantity, Tags: it.Tags})
		}
		return out
	}
	dups := make([]previewItem, 0, len(plan.Duplicates))
	for _, d := range plan.Duplicates {
		dups = append(dups, previewItem{Name: report.Clip(d.Item.Name, report.MaxNameRunes), Product: report.Clip(d.Item.Product, report.MaxNameRunes), Quantity: d.Item.Quantity, Of: report.Clip(d.Of.Name, report.MaxNameRunes)})
	}
	writeJSON(w, map[string]any{
		"to_shop": conv(plan.ToShop), "tagged": conv(plan.Tagged), "duplicates": dups,
		"unnamed": conv(plan.Unnamed), "too_long": conv(plan.TooLong), "completed": plan.Completed,
		"untagged": plan.Untagged,
	})
}

func (p *Panel) serveRuns(w http.ResponseWriter, r *http.Request) {
	if p.opts.History == nil {
		writeJSON(w, []RunInfo{})
		return
	}
	runs, err := p.opts.History.Runs(r.Context())
	if p.failed(w, "the runs", err) {
		return
	}
	if runs == nil {
		runs = []RunInfo{}
	}
	writeJSON(w, runs)
}

func (p *Panel) serveRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if p.opts.History == nil || !plainName.MatchString(id) {
		http.NotFound(w, r)
		return
	}
	run, err := p.opts.History.Run(r.Context(), id)
	if p.failed(w, "run "+id, err) {
		return
	}
	writeJSON(w, run)
}

func (p *Panel) serveTrace(w http.ResponseWriter, r *http.Request) {
	id, trace := r.PathValue("id"), r.PathValue("trace")
	if p.opts.History == nil || !plainName.MatchString(id) || !plainName.MatchString(trace) {
		http.NotFound(w, r)
		return
	}
	tr, err := p.opts.History.Trace(r.Context(), id, trace)
	if p.failed(w, "trace "+trace, err) {
		return
	}
	writeJSON(w, tr)
}

func (p *Panel) serveTraceImage(w http.ResponseWriter, r *http.Request) {
	id, trace, file := r.PathValue("id"), r.PathValue("trace"), r.PathValue("file")
	if p.opts.History == nil || !plainName.MatchString(id) || !plainName.MatchString(trace) || !screenshotName.MatchString(file) {
		http.NotFound(w, r)
		return
	}
	b, err := p.opts.History.Screenshot(r.Context(), id, trace, file)
	if p.failed(w, "screenshot "+file, err) {
		return
	}
	ct := http.DetectContentType(b)
	if ct != "image/png" && ct != "image/jpeg" {
		http.Error(w, "not a screenshot", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "private, max-age=86400") // a trace never changes
	_, _ = w.Write(b)
}

func (p *Panel) serveProducts(w http.ResponseWriter, r *http.Request) {
	if p.opts.Products == nil {
		writeJSON(w, []Product{})
		return
	}
	list, err := p.opts.Products.Products(r.Context())
	if p.failed(w, "the remembered products", err) {
		return
	}
	if list == nil {
		list = []Product{}
	}
	writeJSON(w, list)
}

// serveForget answers POST /api/products/forget {"key": "..."}.
func (p *Panel) serveForget(w http.ResponseWriter, r *http.Request) {
	p.serveKeyAction(w, r, "forgetting", "a remembered product was forgotten in the panel", Products.Forget)
}

// servePin answers POST /api/products/pin {"key": "..."}: the item's
// substitute becomes its pinned product.
func (p *Panel) servePin(w http.ResponseWriter, r *http.Request) {
	p.serveKeyAction(w, r, "pinning the substitute of", "a substitute was pinned in the panel", Products.PinSubstitute)
}

// serveKeep answers POST /api/products/keep {"key"}: the item's own
// remembered product is pinned (404 when the memory cannot).
func (p *Panel) serveKeep(w http.ResponseWriter, r *http.Request) {
	p.serveKeyAction(w, r, "pinning the product of", "a product was pinned in the panel", func(ps Products, ctx context.Context, key string) error {
		pin, ok := ps.(ProductPinner)
		if !ok {
			return ErrNotFound
		}
		return pin.PinProduct(ctx, key)
	})
}

// serveKeyAction answers a POST {"key": "..."} that does act on one
// remembered item: 400 for another body, 404 without a product memory.
func (p *Panel) serveKeyAction(w http.ResponseWriter, r *http.Request, what, done string, act func(Products, context.Context, string) error) {
	var body struct {
		Key string `json:"key"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&body); err != nil || body.Key == "" {
		http.Error(w, `the request is not {"key": "..."}`, http.StatusBadRequest)
		return
	}
	if p.opts.Products == nil {
		http.NotFound(w, r)
		return
	}
	if p.failed(w, what+" "+body.Key, act(p.opts.Products, r.Context(), body.Key)) {
		return
	}
	p.log.Info(done, "key", body.Key)
	w.WriteHeader(http.StatusNoContent)
}

// servePolicy answers POST /api/products/policy {"key": "...", "policy":
// {"no_substitute": true, "always_ask": false, "any_brand": false}}.
func (p *Panel) servePolicy(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Key    string               `json:"key"`
		Policy *shoppinglist.Policy `json:"policy"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&body); err != nil || body.Key == "" || body.Policy == nil {
		http.Error(w, `the request is not {"key": "...", "policy": {...}}`, http.StatusBadRequest)
		return
	}
	if p.opts.Products == nil {
		http.NotFound(w, r)
		return
	}
	if p.failed(w, "setting the policy of "+body.Key, p.opts.Products.SetPolicy(r.Context(), body.Key, *body.Policy)) {
		return
	}
	p.log.Info("an item's policy was set in the panel", "key", body.Key, "policy", body.Policy.String())
	w.WriteHeader(http.StatusNoContent)
}

// serveCartAction answers POST /api/cart/action {"run_id", "item_id",
// "action": "remove"|"quantity"|"wrong_product", "quantity"} with the
// action as journaled: 400 for a request that is wrong in itself, 404 for
// an unknown run or item, 409 while a run is going or when the product is
// not in the cart, 502 when the store refused the change.
func (p *Panel) serveCartAction(w http.ResponseWriter, r *http.Request) {
	if p.opts.CartAction == nil {
		http.NotFound(w, r)
		return
	}
	var req reviewpack.Request
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, `the request is not {"run_id", "item_id", "action": "remove"|"quantity"|"wrong_product", "quantity"}`, http.StatusBadRequest)
		return
	}
	req.Source = "panel"
	req.By = runstatus.ByFrom(r.Context())
	if err := req.Check(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	act, err := p.opts.CartAction(r.Context(), req)
	if err != nil {
		status := http.StatusBadGateway
		switch {
		case errors.Is(err, reviewpack.ErrInvalid):
			status = http.StatusBadRequest
		case errors.Is(err, ErrNotFound):
			status = http.StatusNotFound
		case errors.Is(err, runstatus.ErrBusy), errors.Is(err, reviewpack.ErrNotInCart):
			status = http.StatusConflict
		}
		p.log.Warn("a cart action failed", "action", req.Kind, "run", req.RunID, "item", req.ItemID, "err", err)
		msg := err.Error()
		if errors.Is(err, reviewpack.ErrNotInCart) {
			// Removed twice, or on the store's page: said plainly.
			msg = p.opts.Messages.T("panel.cart_gone")
		}
		http.Error(w, msg, status)
		return
	}
	p.log.Info("a cart action was taken in the panel", "action", act.Kind, "item", act.ItemName, "before", act.Before, "after", act.After)
	writeJSON(w, act)
}

// failed answers an error: 404 for ErrNotFound, else 500 (logged).
func (p *Panel) failed(w http.ResponseWriter, what string, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrNotFound):
		http.Error(w, what+": not found", http.StatusNotFound)
	default:
		p.log.Warn("the panel cannot read "+what, "err", err)
		http.Error(w, "cannot read "+what+": "+err.Error(), http.StatusInternalServerError)
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}
