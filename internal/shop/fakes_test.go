package shop

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// fakeProvider is an in-memory shopping list that records every call.
type fakeProvider struct {
	mu        sync.Mutex
	items     []shoppinglist.Item
	completed map[string]shoppinglist.Added
	notFound  map[string]string
	failed    map[string]string
	summaries []report.Summary
	itemsErr  error
	// markErr, when set for an id, is returned by its marks.
	markErr map[string]error
	nextID  int
}

var _ shoppinglist.Provider = (*fakeProvider)(nil)

func newFakeProvider(names ...string) *fakeProvider {
	p := &fakeProvider{completed: map[string]shoppinglist.Added{}, notFound: map[string]string{}, failed: map[string]string{}}
	for i, n := range names {
		it := shoppinglist.Item{ID: fmt.Sprintf("id%d", i+1), Status: shoppinglist.StatusNeedsAction}
		it.SetName(n)
		p.items = append(p.items, it)
	}
	return p
}

func (p *fakeProvider) Item(ctx context.Context, id string) (shoppinglist.Item, error) {
	items, err := p.Items(ctx)
	if err != nil {
		return shoppinglist.Item{}, err
	}
	return shoppinglist.Find(items, id)
}

func (p *fakeProvider) Items(context.Context) ([]shoppinglist.Item, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.itemsErr != nil {
		return nil, p.itemsErr
	}
	return append([]shoppinglist.Item(nil), p.items...), nil
}

// markable says whether id can be marked, as a real provider would: an
// error wrapping ErrItemGone when it was deleted. Callers hold mu.
func (p *fakeProvider) markable(id string) error {
	if err := p.markErr[id]; err != nil {
		return err
	}
	_, err := shoppinglist.Find(p.items, id)
	return err
}

func (p *fakeProvider) MarkCompleted(_ context.Context, id string, a shoppinglist.Added) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.markable(id); err != nil {
		return err
	}
	p.completed[id] = a
	p.set(id, func(it *shoppinglist.Item) { it.Status = shoppinglist.StatusCompleted })
	return nil
}

func (p *fakeProvider) MarkNotFound(_ context.Context, id, expl string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.markable(id); err != nil {
		return err
	}
	p.notFound[id] = expl
	return nil
}

func (p *fakeProvider) MarkFailed(_ context.Context, id, reason string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.markable(id); err != nil {
		return err
	}
	p.failed[id] = reason
	return nil
}

// set changes the item with id. Callers hold mu.
func (p *fakeProvider) set(id string, f func(*shoppinglist.Item)) {
	for i := range p.items {
		if p.items[i].ID == id {
			f(&p.items[i])
		}
	}
}

// A person's edits.
func (p *fakeProvider) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var kept []shoppinglist.Item
	for _, it := range p.items {
		if it.ID != id {
			kept = append(kept, it)
		}
	}
	p.items = kept
}

func (p *fakeProvider) checkOff(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set(id, func(it *shoppinglist.Item) { it.Status = shoppinglist.StatusCompleted })
}

func (p *fakeProvider) rename(id, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.set(id, func(it *shoppinglist.Item) { it.Tags = nil; it.SetName(name) })
}

func (p *fakeProvider) add(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	it := shoppinglist.Item{ID: fmt.Sprintf("new%d", p.nextID), Status: shoppinglist.StatusNeedsAction}
	it.SetName(name)
	p.items = append(p.items, it)
	return it.ID
}

func (p *fakeProvider) SendSummary(_ context.Context, s report.Summary) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.summaries = append(p.summaries, s)
	return nil
}

// outcomes maps item id → "added"/"not_found"/"failed" as the list says.
func (p *fakeProvider) outcomes() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for id := range p.completed {
		out[id] += "added"
	}
	for id := range p.notFound {
		out[id] += "not_found"
	}
	for id := range p.failed {
		out[id] += "failed"
	}
	return out
}

// fakeTab is a tab that does nothing but record the cart changes a fake
// agent says it made (CartRecorder).
type fakeTab struct {
	host   *fakeHost
	mu     sync.Mutex
	item   string
	closed bool
	cart   []browser.CartRequest
	// limit is the item's cart limit; the tab enforces it (as the browser
	// does for a profile with CartOps) when its host says limitsAdds.
	limit     browser.CartLimit
	limitBase int // len(cart) when the limit was set
	// navs are the addresses Navigate opened, in order.
	navs []string
}

func (t *fakeTab) LimitCart(f browser.CartLimit) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.limit, t.limitBase = f, len(t.cart)
	return nil
}

func (t *fakeTab) CartRequests() []browser.CartRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]browser.CartRequest(nil), t.cart...)
}

// addToCart records an add the store accepted (status 200).
// With a limit the host enforces, an add it refuses is recorded as refused
// and never accepted.
func (t *fakeTab) addToCart(productID string, units int) {
	c := store.CartChange{Path: "/api/cart/add", Kind: store.CartAdd, ProductID: productID, Quantity: units}
	t.mu.Lock()
	limit, used := t.limit, 0
	for _, r := range t.cart[t.limitBase:] {
		if r.Done() && r.Kind == store.CartAdd {
			used += max(r.Quantity, 1)
		}
	}
	t.mu.Unlock()
	req := browser.CartRequest{CartChange: c, Method: "POST", Status: 200}
	if limit != nil && t.host != nil && t.host.limitsAdds && limit(c, used) != nil { // as the browser: without the tab's lock
		req = browser.CartRequest{CartChange: c, Method: "POST", Failed: true, Refused: true}
	}
	t.mu.Lock()
	t.cart = append(t.cart, req)
	t.mu.Unlock()
}

func (t *fakeTab) Screenshot(context.Context) ([]byte, error)                    { return []byte("png"), nil }
func (t *fakeTab) URL() string                                                   { return "https://shop.test/" }
func (t *fakeTab) Click(context.Context, agent.Point, agent.Button, int) error   { return nil }
func (t *fakeTab) Move(context.Context, agent.Point) error                       { return nil }
func (t *fakeTab) MouseDown(context.Context, agent.Button) error                 { return nil }
func (t *fakeTab) MouseUp(context.Context, agent.Button) error                   { return nil }
func (t *fakeTab) TypeAt(context.Context, agent.Point, string, bool, bool) error { return nil }
func (t *fakeTab) Type(context.Context, string, bool) error                      { return nil }
func (t *fakeTab) PressKeys(context.Context, string) error                       { return nil }
func (t *fakeTab) KeyDown(context.Context, string) error                         { return nil }
func (t *fakeTab) KeyUp(context.Context, string) error                           { return nil }
func (t *fakeTab) ScrollDocument(context.Context, agent.Direction) error         { return nil }
func (t *fakeTab) ScrollAt(context.Context, agent.Point, agent.Direction, int) error {
	return nil
}
func (t *fakeTab) DragAndDrop(context.Context, agent.Point, agent.Point) error { return nil }
func (t *fakeTab) Navigate(_ context.Context, u string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.navs = append(t.navs, u)
	if t.host != nil && t.host.navErr != nil {
		return t.host.navErr
	}
	return nil
}
func (t *fakeTab) GoBack(context.Context) error              { return nil }
func (t *fakeTab) GoForward(context.Context) error           { return nil }
func (t *fakeTab) Wait(context.Context, time.Duration) error { return nil }
func (t *fakeTab) TakeNotices() []string                     { return nil }
func (t *fakeTab) SetItem(_ context.Context, name string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.item = name
	return nil
}
func (t *fakeTab) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		t.host.mu.Lock()
		t.host.open--
		t.host.mu.Unlock()
	}
	return nil
}

var _ Tab = (*fakeTab)(nil)

// fakeHost opens fakeTabs and counts logins.
type fakeHost struct {
	mu         sync.Mutex
	open       int
	maxOpen    int
	tabs       int
	authed     bool
	logins     int
	loginErr   error
	loginDelay time.Duration
	newTabErrs []error // returned by the next NewTab calls, in order
	relaunches int
	closed     bool
	limitsAdds bool               // the tabs enforce the item's cart limit (a profile with CartOps)
	tabFor     func(*fakeTab) Tab // when set, the tab NewTab returns
	navErr     error              // every tab's Navigate fails with it
}

var _ Host = (*fakeHost)(nil)

func (h *fakeHost) NewTab(ctx context.Context) (Tab, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.newTabErrs) > 0 {
		err := h.newTabErrs[0]
		h.newTabErrs = h.newTabErrs[1:]
		return nil, err
	}
	h.tabs++
	h.open++
	h.maxOpen = max(h.maxOpen, h.open)
	if h.tabFor != nil {
		return h.tabFor(&fakeTab{host: h}), nil
	}
	return &fakeTab{host: h}, nil
}

func (h *fakeHost) IsAuthenticated(context.Context, Tab) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.authed, nil
}

func (h *fakeHost) Login(ctx context.Context) error {
	h.mu.Lock()
	h.logins++
	err, d := h.loginErr, h.loginDelay
	h.mu.Unlock()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err == nil {
		h.mu.Lock()
		h.authed = true
		h.mu.Unlock()
	}
	return err
}

func (h *fakeHost) Relaunches() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.relaunches
}

func (h *fakeHost) Close(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	return nil
}

func (h *fakeHost) loginCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logins
}

// behaviour is what the fake agent does for one attempt at an item.
type behaviour func(ctx context.Context, call *fakeCall) agent.Result

// fakeCall is one agent run seen by the fake agent.
type fakeCall struct {
	goal  string
	query string
	tools map[string]agent.Tool
	n     int      // attempt number for this query, from 1
	tab   *fakeTab // the attempt's tab (nil for another Computer)
	// confirm is the attempt's Confirmer (agent.Config.Confirmer), asked
	// as agent.Run asks it for a flagged action.
	confirm agent.Confirmer
}

// use calls a tool the way agent.Run does and returns the run result when
// the tool ends the run.
func (c *fakeCall) use(ctx context.Context, name string, args map[string]any) (agent.ToolOutput, agent.Result, bool) {
	t, ok := c.tools[name]
	if !ok {
		return agent.ToolOutput{}, agent.Result{Reason: agent.ReasonModelError, Err: fmt.Errorf("tool %s not declared", name)}, true
	}
	out, err := t.Handler(ctx, args)
	if err != nil {
		return out, agent.Result{Reason: agent.ReasonCancelled, Err: err}, true
	}
	if t.Terminal || out.End {
		return out, agent.Result{Tool: name, Args: args, Payload: out.Payload, Turns: 3, Usage: agent.Usage{PromptTokens: 100, OutputTokens: 10, TotalTokens: 110, CostUSD: 0.01}}, true
	}
	return out, agent.Result{}, false
}

func added(name, price string) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		_, res, _ := c.use(ctx, ToolReportAdded, map[string]any{"item_name": name, "price_text": price, "url": "https://shop.test/p/" + strings.NewReplacer(" ", "-", "%", "").Replace(strings.ToLower(name)), "quantity": float64(1)})
		return res
	}
}

func notFound(expl string) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		_, res, _ := c.use(ctx, ToolReportNotFound, map[string]any{"item_name": c.query, "explanation": expl})
		return res
	}
}

func fails(reason agent.Reason, err error) behaviour {
	return func(context.Context, *fakeCall) agent.Result {
		return agent.Result{Reason: reason, Err: err, Turns: 1, Usage: agent.Usage{PromptTokens: 50, TotalTokens: 50}}
	}
}

// signsOut ends the store session (the host's check then says signed
// out), then does b: a real expiry, unlike a tab's false alarm.
func signsOut(h *fakeHost, b behaviour) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		h.mu.Lock()
		h.authed = false
		h.mu.Unlock()
		return b(ctx, c)
	}
}

// addsThen records an add of units × productID on the attempt's tab, then
// does b.
// setsThen has the tab set the product's cart line to q (a quantity
// change the store accepts), then does b.
func setsThen(productID string, q int, b behaviour) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		ft := c.tab
		ft.mu.Lock()
		ft.cart = append(ft.cart, browser.CartRequest{
			CartChange: store.CartChange{Path: "/api/cart/update", Kind: store.CartSet, ProductID: productID, Quantity: q},
			Method:     "POST", Status: 200,
		})
		ft.mu.Unlock()
		return b(ctx, c)
	}
}

func addsThen(productID string, units int, b behaviour) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		c.tab.addToCart(productID, units)
		return b(ctx, c)
	}
}

// sequence does b[0] on the first attempt, b[1] on the second…
func sequence(b ...behaviour) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		i := min(c.n-1, len(b)-1)
		return b[i](ctx, c)
	}
}

// blocks until ctx ends (an agent busy when the run is stopped).
func blocks(started chan<- string) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		started <- c.query
		<-ctx.Done()
		return agent.Result{Reason: agent.ReasonCancelled, Err: ctx.Err()}
	}
}

// fakeAgent dispatches on the "Item: …" line of the goal.
type fakeAgent struct {
	mu       sync.Mutex
	by       map[string]behaviour
	attempts map[string]int
	goals    []string
	running  int
	maxRun   int
	delay    time.Duration
}

func newFakeAgent(by map[string]behaviour) *fakeAgent {
	return &fakeAgent{by: by, attempts: map[string]int{}}
}

func goalLine(goal, key string) string {
	for _, l := range strings.Split(goal, "\n") {
		if v, ok := strings.CutPrefix(l, key+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (f *fakeAgent) run(ctx context.Context, cfg agent.Config, goal string, c agent.Computer, tools []agent.Tool) agent.Result {
	q := goalLine(goal, "Item")
	f.mu.Lock()
	f.attempts[q]++
	n := f.attempts[q]
	f.goals = append(f.goals, goal)
	f.running++
	f.maxRun = max(f.maxRun, f.running)
	b := f.by[q]
	d := f.delay
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return agent.Result{Reason: agent.ReasonCancelled, Err: ctx.Err()}
		}
	}
	if cfg.Limiter == nil || cfg.SystemInstruction == "" || cfg.HomeURL == "" {
		return agent.Result{Reason: agent.ReasonModelError, Err: errors.New("the agent config was not completed by the run")}
	}
	if b == nil {
		return agent.Result{Reason: agent.ReasonNoReport, Err: fmt.Errorf("no behaviour for %q", q)}
	}
	m := map[string]agent.Tool{}
	for _, t := range tools {
		m[t.Name] = t
	}
	tab, _ := c.(*fakeTab)
	return b(ctx, &fakeCall{goal: goal, query: q, tools: m, n: n, tab: tab, confirm: cfg.Confirmer})
}

func (f *fakeAgent) attemptsFor(q string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[q]
}

// fakeResolver answers questions from a function.
type fakeResolver struct {
	mu        sync.Mutex
	questions []choice.Question
	answer    func(q choice.Question) (choice.Answer, error)
}

func (r *fakeResolver) Choose(_ context.Context, q choice.Question) (choice.Answer, error) {
	r.mu.Lock()
	r.questions = append(r.questions, q)
	r.mu.Unlock()
	return r.answer(q)
}

// fakePrefs is an in-memory preferences store.
type fakePrefs struct {
	mu sync.Mutex
	m  map[string]PreferredProduct
}

func (p *fakePrefs) Lookup(item string) (PreferredProduct, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[shoppinglist.Key(item)]
	return v, ok
}

func (p *fakePrefs) Remember(item string, pp PreferredProduct) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]PreferredProduct{}
	}
	p.m[shoppinglist.Key(item)] = pp
	return nil
}

// fakeNotifier records summaries.
type fakeNotifier struct {
	mu   sync.Mutex
	sums []report.Summary
}

func (n *fakeNotifier) SendSummary(_ context.Context, s report.Summary) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sums = append(n.sums, s)
	return nil
}

// testStore is a store profile for unit tests.
var testStore = Store{
	Name: "metro", DisplayName: "shop.test", HomeURL: "https://shop.test/en", CartURL: "https://shop.test/cart",
	SearchURL: func(q string) string { return "https://shop.test/search?filter=" + url.QueryEscape(q) },
}

// baseConfig is a run configuration over fakes.
func baseConfig(t *testing.T, p *fakeProvider, h *fakeHost, a *fakeAgent) Config {
	t.Helper()
	return Config{
		Provider:   p,
		LaunchHost: func(context.Context) (Host, error) { return h, nil },
		Store:      testStore,
		RunAgent:   a.run,
		Stagger:    -1,
		JournalDir: t.TempDir(),
		PostalCode: "H2X 1Y4",
		Source:     "test",
	}
}

// collect subscribes to bus and returns a function that stops and returns
// the events received.
func collect(bus *runstatus.Bus) func() []runstatus.Event {
	sub := bus.Subscribe(1024)
	var mu sync.Mutex
	var evs []runstatus.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range sub.C {
			mu.Lock()
			evs = append(evs, e)
			mu.Unlock()
		}
	}()
	return func() []runstatus.Event {
		sub.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return evs
	}
}

func outcomeByName(s report.Summary) map[string]report.Outcome {
	m := map[string]report.Outcome{}
	for _, it := range s.Items {
		m[it.ItemName] = it.Outcome
	}
	return m
}
