package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// This file gives the panel what it shows beyond the live events: the
// preview of the list, the agents' screens as they work, past runs from
// the journals and traces, and the product memory.

// Preview reads the list as the next run would shop it (the panel's
// preview before Start), without changing it; retryFailed previews Retry
// failed: only the items tagged #404/#failed.
func (r *Runner) Preview(ctx context.Context, retryFailed bool) (shoppinglist.Plan, error) {
	provider := r.deps.Provider
	if provider == nil {
		if strings.TrimSpace(r.cfg.ShoppingList) == "" {
			return shoppinglist.Plan{}, errors.New("no shopping list is configured")
		}
		yl, err := shoppinglist.OpenYAML(r.cfg.ShoppingList, shoppinglist.ReadOnly())
		if err != nil {
			return shoppinglist.Plan{}, err
		}
		provider = yl
	}
	items, err := provider.Items(ctx)
	if err != nil {
		return shoppinglist.Plan{}, fmt.Errorf("read the shopping list: %w", err)
	}
	if retryFailed {
		return shoppinglist.PlanRetry(items), nil
	}
	return shoppinglist.PlanRun(items, r.cfg.RetryTagged), nil
}

// PanelWatcher shows every agent's screens in the panel (shop's Watcher).
func PanelWatcher(p *panel.Panel) shop.Watcher { return panelWatcher{p} }

type panelWatcher struct{ p *panel.Panel }

func (w panelWatcher) Watch(itemID, itemName string, o agent.Observation) {
	if o.QuotaWait > 0 {
		w.p.WaitForQuota(itemID, o.QuotaWait)
		return
	}
	if len(o.Screenshot) == 0 {
		return // a turn that did not act: the screen is the one shown
	}
	action := strings.Join(o.Actions, ", then ")
	if o.Turn == 0 {
		action = "started"
	}
	w.p.Show(panel.Frame{ItemID: itemID, Item: itemName, Turn: o.Turn, Action: action, Calls: panelCalls(o.Calls), URL: o.URL, Image: o.Screenshot})
}

// panelCalls is an agent's calls as the panel's page says them.
func panelCalls(calls []agent.TraceCall) []panel.Call {
	out := make([]panel.Call, 0, len(calls))
	for _, c := range calls {
		pc := panel.NewCall(c.Name, c.Args)
		pc.Target = report.Clip(c.Target, report.MaxNameRunes)
		if c.Name == shop.ToolPresentOptions {
			pc.Answer, pc.AnswerText = questionAnswer(c.Response)
		}
		out = append(out, pc)
	}
	return out
}

// questionAnswer is the household's answer to a question, as the question
// tool answered the model (shop's present_options response): its kind and
// the product's name or the text to look for instead.
func questionAnswer(resp map[string]any) (kind, text string) {
	kind, _ = resp["answer"].(string)
	switch kind {
	case "product":
		text, _ = resp["name"].(string)
	case "custom":
		text, _ = resp["text"].(string)
	case "skip", "nothing":
	default:
		return "", "" // no answer: nobody could be asked, an invalid answer
	}
	return kind, report.Clip(text, report.MaxNameRunes)
}

// History reads the past runs for the panel: the journals in the data
// directory and, when tracing is on, the traces in the trace directory.
type History struct {
	// JournalDir holds the journals (shop.JournalDir); TraceDir the traces
	// ("" when tracing is off).
	JournalDir, TraceDir string
}

// PanelHistory is the configuration's history.
func PanelHistory(cfg config.Config) History {
	h := History{TraceDir: cfg.TraceDir}
	if cfg.DataDir != "" {
		h.JournalDir = shop.JournalDir(cfg.DataDir)
	}
	return h
}

var _ panel.History = History{}

// maxRuns is how many runs the history lists.
const maxRuns = 100

// Runs lists the runs, newest first (run ids sort by time).
func (h History) Runs(context.Context) ([]panel.RunInfo, error) {
	if h.JournalDir == "" {
		return nil, nil
	}
	paths, err := filepath.Glob(filepath.Join(h.JournalDir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	slices.Reverse(paths)
	out := []panel.RunInfo{}
	var recs []shop.JournalRecord
	for _, path := range paths {
		if len(out) == maxRuns {
			break
		}
		rec, err := shop.ReadJournal(path)
		if err != nil || rec.RunID == "" {
			continue // not a journal
		}
		out = append(out, runInfo(rec))
		recs = append(recs, rec)
	}
	for i := range out {
		// A journal from before runs recorded their kind.
		if recs[i].Kind == "" && reshopRun(recs[i], recs[i+1:]) {
			out[i].Kind = string(runstatus.RunReshop)
		}
	}
	return out, nil
}

// reshopWindow is how soon after a Wrong product's action its run starts
// (for journals that do not say what their run was).
const reshopWindow = 2 * time.Minute

// reshopRun says whether rec is a Wrong product's run of one item: an
// older run's review pack has the action that put that item back to be
// shopped again just before rec started.
func reshopRun(rec shop.JournalRecord, older []shop.JournalRecord) bool {
	if len(rec.Items) != 1 {
		return false
	}
	for _, o := range older[:min(len(older), 10)] {
		if o.Pack == nil {
			continue
		}
		for _, a := range o.Pack.Actions {
			if a.Kind == reviewpack.ActWrongProduct && a.Reshop == rec.Items[0].Name &&
				!a.At.After(rec.StartedAt) && rec.StartedAt.Sub(a.At) <= reshopWindow {
				return true
			}
		}
	}
	return false
}

func runInfo(rec shop.JournalRecord) panel.RunInfo {
	info := panel.RunInfo{ID: rec.RunID, ReshopOf: rec.ReshopOf, Source: rec.Source, StartedBy: rec.StartedBy, StoppedBy: rec.StoppedBy, State: string(rec.State), StartedAt: rec.StartedAt,
		FinishedAt: rec.FinishedAt, Error: rec.Error, Items: len(rec.Items), Usage: rec.Usage}
	if rec.Kind != "" && rec.Kind != runstatus.RunWeekly {
		info.Kind = string(rec.Kind)
	}
	var results []report.ItemResult
	for _, it := range rec.Items {
		if it.Result == nil {
			if it.Status == shop.ItemInterrupted || (rec.FinishedAt != nil && it.Status != shop.ItemDone && it.DuplicateOf == "") {
				info.NotShopped++ // an older journal: no result for an item a stopped run never finished
			}
			continue
		}
		results = append(results, *it.Result)
		switch it.Result.Outcome {
		case report.OutcomeAdded:
			info.Added++
		case report.OutcomeNotFound:
			info.NotFound++
		case report.OutcomeFailed:
			info.Failed++
		case report.OutcomeNotShopped:
			info.NotShopped++
		}
	}
	// The total: the cart as last read, else what the run added.
	if rec.Pack != nil && rec.Pack.Cart != nil {
		total, _ := rec.Pack.Cart.Total()
		info.TotalCents = int64(total)
	} else {
		total, _ := report.Summary{Items: results}.EstimatedTotal()
		info.TotalCents = int64(total)
	}
	return info
}

// Run is one run's journal as the panel shows it.
func (h History) Run(_ context.Context, id string) (panel.RunDetail, error) {
	rec, err := h.journal(id)
	if err != nil {
		return panel.RunDetail{}, err
	}
	d := panel.RunDetail{RunInfo: runInfo(rec), Store: rec.Store, Model: rec.Model,
		Items: []panel.RunItem{}, Changes: []string{}, Warnings: []string{}}
	for _, it := range rec.Items {
		ri := panel.RunItem{ID: it.ItemID, Name: it.Name, Quantity: it.Quantity, Status: string(it.Status), Result: it.Result, Attempts: []panel.RunAttempt{},
			AnsweredBy: it.AnsweredBy}
		for _, c := range it.Confirmations {
			ri.Confirmations = append(ri.Confirmations, panel.Confirmation{Action: c.Action, Allowed: c.Allowed, By: c.By})
		}
		for _, a := range it.Attempts {
			ri.Attempts = append(ri.Attempts, panel.RunAttempt{Query: a.Query, StartedAt: a.StartedAt, DurationMS: a.Duration.Milliseconds(),
				Tool: a.Tool, Reason: a.Reason, Error: a.Error, Turns: a.Turns, Usage: a.Usage, Trace: traceName(h.TraceDir, a.Trace)})
		}
		d.Items = append(d.Items, ri)
	}
	d.Pack = rec.Pack
	for _, e := range rec.TakeOver {
		d.TakeOver = append(d.TakeOver, panel.TakeoverStep(e))
	}
	if rv := rec.Review; rv != nil {
		d.CartURL = rv.CartURL
		for _, c := range rv.Changes {
			d.Changes = append(d.Changes, changeText(c))
			d.ChangeLines = append(d.ChangeLines, panel.CartChange{Name: c.Name, Before: c.Before, After: c.After, Price: c.Price})
		}
		for _, w := range rv.Warnings {
			d.Warnings = append(d.Warnings, w.Message)
			d.WarningTexts = append(d.WarningTexts, w.Text)
		}
	}
	return d, nil
}

// changeText says a cart line's change: "Milk 2 L: 0 → 2 ($4.99 each)".
func changeText(c shop.LineChange) string {
	s := fmt.Sprintf("%s: %d → %d", c.Name, c.Before, c.After)
	if c.Price.Text != "" {
		s += " (" + c.Price.Text + " each)"
	}
	return s
}

// traceName is the trace's name for the panel: its directory, when it is
// there.
func traceName(traceDir, trace string) string {
	if traceDir == "" || trace == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(traceDir, trace, "turn-000.json")); err != nil {
		return ""
	}
	return filepath.Base(trace)
}

func (h History) journal(id string) (shop.JournalRecord, error) {
	if h.JournalDir == "" {
		return shop.JournalRecord{}, panel.ErrNotFound
	}
	rec, err := shop.ReadJournal(filepath.Join(h.JournalDir, filepath.Base(id)+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, fmt.Errorf("run %s: %w", id, panel.ErrNotFound)
	}
	return rec, err
}

// Trace reads one attempt's trace.
func (h History) Trace(_ context.Context, runID, trace string) (panel.Trace, error) {
	if h.TraceDir == "" {
		return panel.Trace{}, panel.ErrNotFound
	}
	tr, err := agent.ReadTrace(filepath.Join(h.TraceDir, filepath.Base(runID), filepath.Base(trace)))
	if errors.Is(err, fs.ErrNotExist) {
		return panel.Trace{}, fmt.Errorf("trace %s: %w", trace, panel.ErrNotFound)
	}
	if err != nil {
		return panel.Trace{}, err
	}
	out := panel.Trace{Goal: tr.Goal, URL: tr.URL, Screenshot: tr.Screenshot, Turns: []panel.TraceTurn{}}
	for _, t := range tr.Turns {
		pt := panel.TraceTurn{Turn: t.Turn, Started: t.Started, ModelMS: t.ModelMillis, PromptTokens: t.PromptTokens,
			OutputTokens: t.OutputTokens, Text: t.Text, Actions: []string{}, Calls: panelCalls(t.Calls), URL: t.URL, Screenshot: t.Screenshot}
		for _, c := range t.Calls {
			pt.Actions = append(pt.Actions, agent.Describe(c.Name, c.Args))
		}
		out.Turns = append(out.Turns, pt)
	}
	if res := tr.Result; res != nil {
		u := res.Usage
		out.End = &panel.TraceEnd{Tool: res.Tool, Reason: res.Reason, Error: res.Error, Turns: res.Turns, DurationMS: res.DurationMS,
			Usage: report.Usage{PromptTokens: u.PromptTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, CostUSD: u.CostUSD, CostUnknown: u.CostUnknown}}
	}
	return out, nil
}

// Screenshot reads one of a trace's screenshots.
func (h History) Screenshot(_ context.Context, runID, trace, name string) ([]byte, error) {
	if h.TraceDir == "" {
		return nil, panel.ErrNotFound
	}
	b, err := os.ReadFile(filepath.Join(h.TraceDir, filepath.Base(runID), filepath.Base(trace), filepath.Base(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("screenshot %s: %w", name, panel.ErrNotFound)
	}
	return b, err
}

// PanelProducts is the product memory of the configured store for the
// panel; nil when there is no data directory to keep one in. It opens the
// memory on first use (another handle on the runs' file: the memory locks
// it across handles and processes).
func PanelProducts(cfg config.Config, log *slog.Logger) panel.Products {
	if cfg.DataDir == "" {
		return nil
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &panelProducts{cfg: cfg, log: log}
}

type panelProducts struct {
	cfg config.Config
	log *slog.Logger

	once sync.Once
	mem  *products.Memory
	err  error
}

func (p *panelProducts) open() (*products.Memory, error) {
	p.once.Do(func() {
		store := p.cfg.Store
		if store == "" {
			store = config.DefaultStore
		}
		p.mem, p.err = OpenProducts(p.cfg.DataDir, store, p.cfg.ProductExpiry(), p.log)
	})
	return p.mem, p.err
}

func (p *panelProducts) Products(context.Context) ([]panel.Product, error) {
	m, err := p.open()
	if err != nil {
		return nil, err
	}
	list, err := m.List()
	if err != nil {
		return nil, err
	}
	words := p.words()
	out := make([]panel.Product, 0, len(list))
	for _, e := range list {
		pp := panel.Product{Key: e.Key, Words: words[e.Key], Name: e.Name, URL: e.URL, Size: e.Size, Price: e.Price,
			Quantity: e.Quantity, LastSeen: e.LastSeen, Times: e.TimesChosen, Pinned: e.Pinned, Policy: e.Policy}
		if s := e.Substitute; s != nil {
			pp.Substitute = &panel.Substitute{Name: s.Name, URL: s.URL, Price: s.Price, LastSeen: s.LastSeen, ByHousehold: s.ByHousehold, InARow: s.InARow}
		}
		out = append(out, pp)
	}
	return out, nil
}

// wordRuns is how many recent runs name the items' words.
const wordRuns = 30

// words are the names the household wrote for each item key, newest
// first, from the recent runs' journals ("bananas" for the key "banane").
func (p *panelProducts) words() map[string][]string {
	out := map[string][]string{}
	if p.cfg.DataDir == "" {
		return out
	}
	paths, err := filepath.Glob(filepath.Join(shop.JournalDir(p.cfg.DataDir), "*.json"))
	if err != nil {
		return out
	}
	slices.Sort(paths)
	slices.Reverse(paths)
	for _, path := range paths[:min(len(paths), wordRuns)] {
		rec, err := shop.ReadJournal(path)
		if err != nil {
			continue
		}
		for _, it := range rec.Items {
			name := strings.TrimSpace(it.Name)
			if k := products.Key(name); k != "" && name != "" && !slices.Contains(out[k], name) {
				out[k] = append(out[k], name)
			}
		}
	}
	return out
}

// PinProduct pins the item's own remembered product (⭐ on any product).
func (p *panelProducts) PinProduct(_ context.Context, item string) error {
	m, err := p.open()
	if err != nil {
		return err
	}
	e, ok := m.Lookup(item)
	if !ok {
		return fmt.Errorf("no product is remembered for %q: %w", item, panel.ErrNotFound)
	}
	return notFound(m.Pin(item, e.Product))
}

func (p *panelProducts) PinSubstitute(_ context.Context, item string) error {
	m, err := p.open()
	if err != nil {
		return err
	}
	return notFound(m.PinSubstitute(item))
}

func (p *panelProducts) SetPolicy(_ context.Context, item string, pol shoppinglist.Policy) error {
	m, err := p.open()
	if err != nil {
		return err
	}
	return m.SetPolicy(item, pol)
}

// notFound marks a "nothing remembered" error as the panel's ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, products.ErrNotRemembered) {
		return fmt.Errorf("%w: %w", panel.ErrNotFound, err)
	}
	return err
}

func (p *panelProducts) Forget(_ context.Context, item string) error {
	m, err := p.open()
	if err != nil {
		return err
	}
	return notFound(m.Forget(item))
}
