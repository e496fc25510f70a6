// Package panel is the add-on's web panel: the live view of a shopping run
// (state, progress, a card per item) with Start and Stop, served by `serve`
// through Home Assistant's ingress (the add-on's page in HA's sidebar) or,
// outside the add-on, on an address of the user's choosing (`serve --ui`).
//
// Behind ingress only the Supervisor's proxy (172.30.32.2) may connect, and
// every link is relative to the X-Ingress-Path base the proxy sends. The
// page is plain HTML, CSS and JavaScript embedded in the binary; run events
// reach it as Server-Sent Events. Requests that change something (start,
// stop) must be POSTs carrying the X-Gemini-Supply header, which a page of
// another site cannot send without a CORS permission the panel never gives,
// and not be marked cross-site by the browser (Sec-Fetch-Site).
package panel

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// IngressProxy is the address of the Supervisor's ingress proxy: the only
// client an add-on's ingress port accepts.
const IngressProxy = "172.30.32.2"

// IngressPort is the add-on's ingress port (config.yaml ingress_port).
const IngressPort = 8099

// ActionHeader must be sent with every state-changing request.
const ActionHeader = "X-Gemini-Supply"

//go:embed static
var static embed.FS

// Options configures a Panel.
type Options struct {
	// Ingress: accept only the Supervisor's ingress proxy and honour
	// X-Ingress-Path (the add-on).
	Ingress bool
	// Start asks for a run; Stop stops the one going (serve's Server).
	Start func(ctx context.Context, req runstatus.Request) error
	Stop  func(ctx context.Context, source string) error
	// Preview reads the list as a run would shop it (the preview before
	// Start and Retry); nil: no preview, Start starts at once.
	Preview func(ctx context.Context, retryTagged bool) (shoppinglist.Plan, error)
	// History reads past runs; nil: no history.
	History History
	// Products lists and forgets remembered products; nil: none.
	Products Products
	// CartAction carries out one of the review pack's actions on the
	// cart (app.CartActions); nil: the pack has no actions.
	CartAction func(ctx context.Context, req reviewpack.Request) (reviewpack.Action, error)
	// Usual proposes "the usual" and AddUsual puts the items the household
	// ticked on the list before the run starts (usual.go); nil: no "Start
	// from the usual".
	Usual    func(ctx context.Context) (UsualProposal, error)
	AddUsual func(ctx context.Context, names []string) error
	// Messages is the language the page speaks (its texts are the
	// catalogue's "panel." area, served at /api/messages); the zero
	// Catalog speaks English.
	Messages messages.Catalog
	// Logger; nil discards.
	Logger *slog.Logger
	// Takeover is the tabs that need a person and the guide on them
	// (takeover.go); nil: none.
	Takeover Takeover
}

// Panel holds the live state of the current (or last) run and serves it.
// It is a serve Subscriber (Consume) and an http.Handler.
type Panel struct {
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	page *template.Template

	mu        sync.Mutex
	state     Snapshot
	version   uint64      // counts the snapshot's changes
	questions []*Question // waiting for an answer here (ask.go)
	clients   map[chan struct{}]struct{}
	frames    map[string]*liveFrame // the latest screen of each item's tab (live.go)
	frameSeq  uint64
	bound     []string // the host names and addresses it was started on (hostAllowed)
	pending   *pendingReshop
	// slots are the delivery slots as last read (slots.go); slotsSeq
	// counts their changes, for the page to fetch them again.
	slots    *reviewpack.Slots
	slotsSeq uint64
}

// Snapshot is the run as the page shows it: the latest state, progress,
// every item's latest result, and the summary once there is one.
type Snapshot struct {
	RunID    string              `json:"run_id,omitempty"`
	State    runstatus.State     `json:"state,omitempty"`
	Progress runstatus.Progress  `json:"progress"`
	Items    []report.ItemResult `json:"items"`
	// Message is the run's own text (why it failed; the question asked),
	// for the page's details; Note is the panel's word to the household
	// in its language ("butter was answered on Telegram.").
	Message string          `json:"message,omitempty"`
	Note    string          `json:"note,omitempty"`
	Summary *report.Summary `json:"summary,omitempty"`
	// Pack is the run's review pack once it finished, with the actions
	// taken on the cart since.
	Pack *reviewpack.Pack `json:"pack,omitempty"`
	// Actions: the review pack's actions can be taken here.
	Actions bool `json:"actions"`
	// Activity is what each item's agent did last, by item id.
	Activity map[string]Activity `json:"activity"`
	// Total is the estimated cart total of the items added so far
	// ("$12.47", and in cents for the page to say in its language);
	// TotalUnknown counts added items without a known price.
	Total        string `json:"total,omitempty"`
	TotalCents   int64  `json:"total_cents,omitempty"`
	TotalUnknown int    `json:"total_unknown,omitempty"`
	// Cart is the store's cart as last read (after the run, after each
	// action on it: the pack's), with its estimated total and units; the
	// page's total is this one once there is one.
	CartCents   int64 `json:"cart_cents,omitempty"`
	CartUnknown int   `json:"cart_unknown,omitempty"`
	CartUnits   int   `json:"cart_units"`
	HasCart     bool  `json:"has_cart"`
	// Queued are the items of the run not started yet (by item id): the
	// live view lists every item from the start.
	Queued map[string]bool `json:"queued,omitempty"`
	// Reshop is a Wrong product's re-shop of one item of the review shown;
	// ItemRuns names, by item id, the run whose journal holds an item's
	// line when it is not the pack's run (a re-shopped item's).
	Reshop   *Reshop           `json:"reshop,omitempty"`
	ItemRuns map[string]string `json:"item_runs,omitempty"`
	// Questions wait for an answer (in the panel or on another channel).
	Questions []Question `json:"questions"`
	// NeedsPerson are the tabs waiting for a person (take over), read
	// when the state is asked for.
	NeedsPerson []runstatus.NeedsPerson `json:"needs_person"`
	// SlotsSeq counts the readings of the delivery slots the panel was
	// told of: the page fetches GET /api/slots when it changes.
	SlotsSeq uint64 `json:"slots_seq"`
}

// findItem returns the snapshot's item with id.
func (s Snapshot) findItem(id string) (report.ItemResult, bool) {
	for _, it := range s.Items {
		if it.ItemID == id {
			return it, true
		}
	}
	return report.ItemResult{}, false
}

// emptySnapshot is the state of run id before any event.
func emptySnapshot(id string) Snapshot {
	return Snapshot{RunID: id, Items: []report.ItemResult{}, Activity: map[string]Activity{}}
}

// New returns a Panel.
func New(opts Options) (*Panel, error) {
	if opts.Start == nil || opts.Stop == nil {
		return nil, errors.New("panel: Start and Stop are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// The page's static texts are the catalogue's, in the panel's
	// language; the script fetches the rest (/api/messages).
	page, err := template.New("index.html").Funcs(template.FuncMap{
		"t": func(key string) string { return opts.Messages.T("panel." + key) },
	}).ParseFS(static, "static/index.html")
	if err != nil {
		return nil, fmt.Errorf("panel: the page template: %w", err)
	}
	p := &Panel{opts: opts, log: opts.Logger.With("component", "panel"), page: page,
		state: emptySnapshot(""), clients: map[chan struct{}]struct{}{}, frames: map[string]*liveFrame{}}
	p.mux = http.NewServeMux()
	p.mux.HandleFunc("GET /{$}", p.serveIndex)
	// The assets by name: the page's template (static/index.html) is not
	// served raw.
	for _, name := range []string{"app.css", "app.js", "icon.svg"} {
		p.mux.HandleFunc("GET /static/"+name, func(w http.ResponseWriter, r *http.Request) {
			http.ServeFileFS(w, r, static, "static/"+name)
		})
	}
	p.mux.HandleFunc("GET /events", p.serveEvents)
	p.mux.HandleFunc("GET /api/state", p.serveState)
	p.mux.HandleFunc("GET /api/messages", p.serveMessages)
	p.mux.HandleFunc("POST /api/start", p.guard(p.serveStart))
	p.mux.HandleFunc("POST /api/stop", p.action(p.stop))
	p.mux.HandleFunc("POST /api/answer", p.guard(p.serveAnswer))
	p.mux.HandleFunc("GET /api/preview", p.servePreview)
	p.mux.HandleFunc("GET /api/runs", p.serveRuns)
	p.mux.HandleFunc("GET /api/runs/{id}", p.serveRun)
	p.mux.HandleFunc("GET /api/runs/{id}/traces/{trace}", p.serveTrace)
	p.mux.HandleFunc("GET /api/runs/{id}/traces/{trace}/{file}", p.serveTraceImage)
	p.mux.HandleFunc("GET /api/products", p.serveProducts)
	p.mux.HandleFunc("POST /api/products/forget", p.guard(p.serveForget))
	p.mux.HandleFunc("POST /api/products/pin", p.guard(p.servePin))
	p.mux.HandleFunc("POST /api/products/keep", p.guard(p.serveKeep))
	p.mux.HandleFunc("POST /api/products/policy", p.guard(p.servePolicy))
	p.mux.HandleFunc("POST /api/cart/action", p.guard(p.serveCartAction))
	p.mux.HandleFunc("GET /api/usual", p.serveUsual)
	p.mux.HandleFunc("GET /api/slots", p.serveSlots)
	p.mux.HandleFunc("POST /api/usual/start", p.guard(p.serveUsualStart))
	p.routeTakeover()
	return p, nil
}

// ServeHTTP serves the panel, behind the ingress check in add-on mode.
func (p *Panel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.opts.Ingress {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil || host != IngressProxy {
			p.log.Warn("refused a panel request that did not come through Home Assistant's ingress", "from", r.RemoteAddr)
			http.Error(w, "The panel is reached through Home Assistant (the add-on's page in the sidebar).", http.StatusForbidden)
			return
		}
	}
	if !p.opts.Ingress && !p.hostAllowed(r.Host) {
		// DNS rebinding: a site the household visits may point its own
		// name at this machine; its pages then reach the panel under that
		// name.
		p.log.Warn("refused a panel request for another host name (DNS rebinding?)", "host", trimForLog(r.Host), "from", r.RemoteAddr)
		http.Error(w, "The panel answers only at the address it was started on (localhost, 127.0.0.1, [::1] or the --ui address).", http.StatusMisdirectedRequest)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'self'; form-action 'self'; base-uri 'none'")
	p.mux.ServeHTTP(w, r)
}

// bindTo notes the address the panel was started on (serve --ui ADDR, or
// the listener's): its host name is accepted in the Host header besides
// the loopback ones.
func (p *Panel) bindTo(addr string) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.bound, host) {
		p.bound = append(p.bound, host)
	}
}

// hostAllowed says whether a request's Host is one the panel answers to
// outside ingress: localhost, a loopback address, the address it was bound
// to, or — when bound to all interfaces — any IP address (a DNS rebinding
// attack needs a name of the attacker's; an address literal is never one).
func (p *Panel) hostAllowed(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.bound {
		if b == host {
			return true
		}
		if bip := net.ParseIP(b); ip != nil && bip != nil && bip.IsUnspecified() {
			return true
		}
	}
	return false
}

// trimForLog bounds a client-chosen text before it is logged.
func trimForLog(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// ingressPath is the base path Home Assistant's ingress proxy sends.
var ingressPath = regexp.MustCompile(`^/api/hassio_ingress/[A-Za-z0-9_-]+$`)

// base is the page's base path: X-Ingress-Path behind ingress (checked),
// else the root.
func (p *Panel) base(r *http.Request) string {
	if v := r.Header.Get("X-Ingress-Path"); p.opts.Ingress && ingressPath.MatchString(v) {
		return v + "/"
	}
	return "/"
}

func (p *Panel) serveIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := p.page.Execute(w, map[string]any{"Base": p.base(r), "Lang": p.opts.Messages.Lang(), "Usual": p.opts.Usual != nil}); err != nil {
		p.log.Debug("writing the panel page", "err", err)
	}
}

func (p *Panel) serveState(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	snap := p.snapshotLocked()
	p.mu.Unlock()
	snap.NeedsPerson = p.needsPersons()
	writeJSON(w, snap)
}

// serveMessages is the page's texts in its language: {"lang": "fr",
// "texts": {"title": "Épicerie", …}} (the catalogue's "panel." keys without
// their area, and its "warning." keys whole: the run's warnings come as key
// and values, messages.Text, and the page says them).
func (p *Panel) serveMessages(w http.ResponseWriter, _ *http.Request) {
	texts := p.opts.Messages.Area("panel")
	for k, v := range p.opts.Messages.Area("warning") {
		texts["warning."+k] = v
	}
	writeJSON(w, map[string]any{"lang": p.opts.Messages.Lang(), "texts": texts})
}

// keepAlive is how often an idle event stream gets a comment, so proxies
// keep it open and a closed page is noticed.
const keepAlive = 20 * time.Second

// serveEvents streams the snapshot, then every run event, until the page
// goes away.
func (p *Panel) serveEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	ch := make(chan struct{}, 1) // a nudge: the snapshot or a frame changed
	p.mu.Lock()
	snap, version := p.snapshotLocked(), p.version
	p.clients[ch] = struct{}{}
	p.mu.Unlock()
	sent := map[string]uint64{} // the frame sent last, by item
	defer func() {
		p.mu.Lock()
		delete(p.clients, ch)
		p.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	if err := writeEvent(w, "snapshot", snap); err != nil {
		return
	}
	if p.writeFrames(w, sent) != nil {
		return
	}
	flusher.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ch:
			p.mu.Lock()
			changed := p.version != version
			snap := p.snapshotLocked()
			version = p.version
			p.mu.Unlock()
			if changed && writeEvent(w, "snapshot", snap) != nil {
				return
			}
			if p.writeFrames(w, sent) != nil {
				return
			}
			flusher.Flush()
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// writeFrames sends the frames newer than those in sent (JPEG, converted
// once for every page) and notes them there.
func (p *Panel) writeFrames(w http.ResponseWriter, sent map[string]uint64) error {
	p.mu.Lock()
	var todo []*liveFrame
	for id, lf := range p.frames {
		if lf.seq > sent[id] {
			todo = append(todo, lf)
		}
	}
	p.mu.Unlock()
	slices.SortFunc(todo, func(a, b *liveFrame) int { return cmp.Compare(a.seq, b.seq) })
	for _, lf := range todo {
		if _, err := fmt.Fprintf(w, "event: frame\ndata: %s\n\n", lf.event()); err != nil {
			return err
		}
		sent[lf.ItemID] = lf.seq
	}
	return nil
}

func writeEvent(w http.ResponseWriter, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	return err
}

// Consume follows the run's events (serve's Subscriber) until the bus
// closes or ctx ends.
func (p *Panel) Consume(ctx context.Context, sub *runstatus.Subscription) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-sub.C:
			if !ok {
				return nil
			}
			p.apply(ev, p.runItems(ctx, ev)...)
		}
	}
}

// apply folds an event into the snapshot and nudges the open pages. A
// page with a nudge pending gets one snapshot for several events: it
// always sends the whole, latest state.
func (p *Panel) apply(ev runstatus.Event, queued ...RunItem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Kind == runstatus.KindSlotsRead {
		// A reading of the slot scout: the run shown stays as it is.
		if p.slotsLocked(ev) {
			p.nudgeLocked()
		}
		return
	}
	p.slotsLocked(ev) // a run's pack with its slots section
	if ev.Kind == runstatus.KindCartChanged {
		// An action on a past run's cart: the live run (or the last one)
		// stays on the page; its pack takes the action when it is its.
		p.cartChangedLocked(ev)
		p.nudgeLocked()
		return
	}
	if p.reshopLocked(ev) {
		p.nudgeLocked()
		return
	}
	if ev.RunID != "" && ev.RunID != p.state.RunID {
		p.state = emptySnapshot(ev.RunID)
		p.pending = nil
		clear(p.frames)
	}
	if ev.State != "" {
		p.state.State = ev.State
	}
	p.state.Progress = ev.Progress
	if ev.Message != "" {
		p.state.Message = ev.Message
	}
	if len(queued) > 0 {
		// Every item of the run from its start, each waiting its turn.
		q := map[string]bool{}
		for _, it := range queued {
			if _, seen := p.state.findItem(it.ID); !seen {
				p.state.Items = append(p.state.Items, report.ItemResult{ItemID: it.ID, ItemName: it.Name, Quantity: it.Quantity})
				q[it.ID] = true
			}
		}
		p.state.Queued = q
	}
	if ev.Item != nil {
		if p.state.Queued[ev.Item.ItemID] {
			q := maps.Clone(p.state.Queued)
			delete(q, ev.Item.ItemID)
			p.state.Queued = q
		}
		p.state.setItem(*ev.Item, false)
		if ev.Item.Outcome != "" {
			delete(p.frames, ev.Item.ItemID) // its tab is closed
		}
		if ev.Kind == runstatus.KindUserAnswered {
			p.answeredLocked(ev.Item.ItemID, ev.Message)
		}
		p.state.setTotal()
	}
	if ev.Pack != nil {
		p.state.Pack = ev.Pack
	}
	if ev.Summary != nil {
		p.state.Summary = ev.Summary
		// The summary has every item's final state, those a stopped run
		// never started included: the cards end as the summary says (an
		// item listed at the start that it does not name leaves).
		in := map[string]bool{}
		for _, it := range ev.Summary.Items {
			p.state.setItem(it, false)
			in[it.ItemID] = true
			delete(p.frames, it.ItemID)
		}
		if len(p.state.Queued) > 0 {
			p.state.Items = slices.DeleteFunc(slices.Clone(p.state.Items), func(it report.ItemResult) bool {
				return p.state.Queued[it.ItemID] && !in[it.ItemID]
			})
		}
		p.state.Queued = nil
	}
	p.nudgeLocked()
}

// nudgeLocked notes that the snapshot changed and tells every open page.
func (p *Panel) nudgeLocked() {
	p.version++
	for ch := range p.clients {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (p *Panel) snapshotLocked() Snapshot {
	s := p.state
	s.Actions = p.opts.CartAction != nil
	s.Items = append([]report.ItemResult(nil), p.state.Items...)
	if s.Items == nil {
		s.Items = []report.ItemResult{}
	}
	s.Activity = maps.Clone(p.state.Activity)
	if pk := p.state.Pack; pk != nil && pk.Cart != nil {
		total, unknown := pk.Cart.Total()
		s.CartCents, s.CartUnknown, s.CartUnits, s.HasCart = int64(total), unknown, pk.Cart.Units(), true
	}
	s.SlotsSeq = p.slotsSeq
	s.Questions = make([]Question, 0, len(p.questions))
	for _, q := range p.questions {
		c := *q
		c.answers = nil
		s.Questions = append(s.Questions, c)
	}
	return s
}

// guard refuses a state-changing request without the panel's own header,
// or one the browser marks cross-site (Sec-Fetch-Site, sent by every
// current browser).
func (p *Panel) guard(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(ActionHeader) != "1" {
			http.Error(w, "missing the panel's request header", http.StatusForbidden)
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			http.Error(w, "cross-site requests are refused", http.StatusForbidden)
			return
		}
		// Outside ingress the page's own origin is known: a request a
		// browser marks with another Origin (or "null") is refused, with
		// or without fetch metadata.
		if o := r.Header.Get("Origin"); !p.opts.Ingress && o != "" && !sameOrigin(o, r) {
			http.Error(w, "requests from another origin are refused", http.StatusForbidden)
			return
		}
		next(w, r.WithContext(runstatus.WithBy(r.Context(), p.who(r))))
	}
}

// Home Assistant's ingress proxy says who uses the page, on every request
// (Supervisor 2023.3 and later).
const (
	HeaderUserID          = "X-Remote-User-Id"
	HeaderUserName        = "X-Remote-User-Name"
	HeaderUserDisplayName = "X-Remote-User-Display-Name"
)

// who is the Home Assistant user behind r: the display name the ingress
// proxy sends, else the user name, else the user id; "" outside ingress
// (where nobody vouches for the headers) or without them.
func (p *Panel) who(r *http.Request) string {
	if !p.opts.Ingress {
		return ""
	}
	for _, h := range []string{HeaderUserDisplayName, HeaderUserName, HeaderUserID} {
		if v := report.Clip(strings.Join(strings.Fields(r.Header.Get(h)), " "), report.MaxNameRunes); v != "" {
			return v
		}
	}
	return ""
}

// sameOrigin reports whether origin is the panel's own as r reached it
// (scheme, Host and port).
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Path != "" || u.User != nil {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, r.Host)
}

// action is a guarded POST that calls do.
func (p *Panel) action(do func(ctx context.Context) error) http.HandlerFunc {
	return p.guard(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		if err := do(ctx); err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, runstatus.ErrBusy) || errors.Is(err, runstatus.ErrNoRun) {
				status = http.StatusConflict // the run's state, not a fault: Stop with no run
			}
			http.Error(w, err.Error(), status)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// serveStart starts a run: {"retry_tagged": true} (Retry failed) shops
// only the items an earlier run tagged #404 or #failed. No body: a plain start.
func (p *Panel) serveStart(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RetryTagged bool `json:"retry_tagged"`
	}
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&body); err != nil {
			http.Error(w, "the request is not {\"retry_tagged\": true|false}", http.StatusBadRequest)
			return
		}
	}
	p.action(func(ctx context.Context) error {
		return p.opts.Start(ctx, runstatus.Request{Source: "panel", By: runstatus.ByFrom(ctx), RetryFailed: body.RetryTagged})
	})(w, r)
}

func (p *Panel) stop(ctx context.Context) error {
	return p.opts.Stop(ctx, "panel")
}

// Serve listens on addr and serves the panel until ctx ends.
func (p *Panel) Serve(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("panel: listen on %s: %w", addr, err)
	}
	p.bindTo(addr) // the name it was given, if one
	return p.ServeListener(ctx, ln)
}

// ServeListener serves the panel on ln until ctx ends.
func (p *Panel) ServeListener(ctx context.Context, ln net.Listener) error {
	p.bindTo(ln.Addr().String())
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	if p.opts.Ingress {
		p.log.Info("panel listening", "addr", ln.Addr().String(), "ingress", true)
	} else {
		// The address to open, as shop --ui prints it.
		p.log.Info("panel listening", "addr", ln.Addr().String(), "url", panelURL(ln.Addr().String()))
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("panel: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	<-errc
	return nil
}

// Address is where serve serves the panel: the ingress port on all
// interfaces as the add-on (ingress: only the Supervisor's proxy is let
// in), else flag's address — a port alone binds the loopback interface —
// or nowhere when flag is empty.
func Address(flag string, addon bool) (addr string, ingress bool) {
	if addon {
		return fmt.Sprintf(":%d", IngressPort), true
	}
	if flag == "" {
		return "", false
	}
	if !strings.Contains(flag, ":") {
		flag = ":" + flag
	}
	if strings.HasPrefix(flag, ":") {
		flag = "127.0.0.1" + flag
	}
	return flag, false
}

// panelURL is the address to open in a browser: http://127.0.0.1:8099/
// (an unspecified host, ":8099" or "0.0.0.0", as localhost).
func panelURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
