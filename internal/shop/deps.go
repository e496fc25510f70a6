package shop

import (
	"context"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Host is the browser as a run uses it: one Chromium with the store's
// policy, opening a tab per item. Adapt a *browser.Host with BrowserHost.
type Host interface {
	// NewTab opens a tab. After a browser crash it relaunches the browser
	// (errors wrapping browser.ErrBrowserGone are retryable).
	NewTab(ctx context.Context) (Tab, error)
	// IsAuthenticated reports whether the store session in t is signed in.
	IsAuthenticated(ctx context.Context, t Tab) (bool, error)
	// Login signs in with the stored credentials (single flight).
	Login(ctx context.Context) error
	// Relaunches counts browser relaunches after crashes.
	Relaunches() int
	// Close closes the browser.
	Close(ctx context.Context) error
}

// Tab is one browser tab: the Computer an agent drives, plus the banner
// naming the item it shops.
type Tab interface {
	agent.Computer
	SetItem(ctx context.Context, name string) error
	Close() error
}

// ChoiceResolver asks the household to pick a product (Telegram). When a
// run has one, agents get present_options.
type ChoiceResolver interface {
	Choose(ctx context.Context, q choice.Question) (choice.Answer, error)
}

// Preferences remembers which product the household chose for an item.
// A remembered product goes into the item's prompt.
type Preferences interface {
	Lookup(itemName string) (PreferredProduct, bool)
	Remember(itemName string, p PreferredProduct) error
}

// Notifier receives the run summary (Telegram, a Home Assistant
// notification…). The list provider gets it too, through SendSummary.
type Notifier interface {
	SendSummary(ctx context.Context, s report.Summary) error
}

// Watcher sees every agent at work as it happens (the panel's live view):
// the first screen and every turn of every item. Watch is called on the
// agent's goroutine and must return at once.
type Watcher interface {
	Watch(itemID, itemName string, o agent.Observation)
}

// CartReader reads the store's cart, before and after a run.
type CartReader interface {
	ReadCart(ctx context.Context, h Host) (Cart, error)
}

// AgentFunc runs one agent; agent.Run in production, fakes in tests.
type AgentFunc func(ctx context.Context, cfg agent.Config, goal string, c agent.Computer, tools []agent.Tool) agent.Result

// Store describes the store to the orchestrator and the prompt.
type Store struct {
	// Name selects the prompt template ("metro", "demo").
	Name string
	// DisplayName is how the prompt names the store ("metro.ca").
	DisplayName string
	HomeURL     string
	CartURL     string
	// NoCartLink: the summary and the review give the household no link to
	// the cart (the demo store: its pages answer only inside the run's
	// browser, under metro.ca's names, so the link would open the real
	// metro.ca — and the demo store is gone once the demo ends).
	NoCartLink bool
	// SearchURL returns the search results URL for a query.
	SearchURL func(query string) string
	// Hint is a note for the prompt about the store's dialogs (the store
	// profile's PostalCodeHint).
	Hint string
	// Product reads the store's product pages (replay); CartJSONURL is its
	// cart endpoint, if it has one.
	Product     store.ProductPage
	CartJSONURL string
	// CartSet is the store's set-quantity cart operation (zero when the
	// profile describes none): the review pack's actions use it.
	CartSet store.CartOp
	// CartSetup says whether a cart path only chooses the delivery (postal
	// code, delivery mode, store, time slot) and changes no line
	// (store.Profile.CartSetupPath); nil: no path is known to.
	CartSetup func(path string) bool
}

// CartLink is the cart address the household is given: the summary's,
// the review pack's and its cart's ("" when the store gives none: the demo).
func (s Store) CartLink() string {
	if s.NoCartLink {
		return ""
	}
	return s.CartURL
}

// Config is one run's configuration and collaborators.
type Config struct {
	// Provider is the shopping list. Required.
	Provider shoppinglist.Provider
	// LaunchHost starts the browser. Required.
	LaunchHost func(ctx context.Context) (Host, error)
	// Desk offers a sign-in that needs a person to the panel (take over);
	// nil: such a sign-in fails the run. With a Desk, an item whose agent
	// gives up offers its tab there too, for TakeoverWait (0: it does not;
	// itemtakeover.go).
	Desk         *Desk
	TakeoverWait time.Duration
	// Store is the store being shopped. Required (Name, HomeURL, SearchURL).
	Store Store
	// Agent is the template of every agent's configuration (client, model,
	// limits, confirmer, trace dir, logger, prices). SystemInstruction,
	// HomeURL and Limiter are filled in when empty.
	Agent agent.Config
	// RunAgent runs an agent; nil means agent.Run.
	RunAgent AgentFunc
	// Concurrency is the number of tabs shopping at once (min 1).
	Concurrency int
	// Stagger is the least time between two agent starts; 0 means
	// DefaultStagger, negative means none.
	Stagger time.Duration
	// ModelCalls caps model calls in flight across all agents; 0 means
	// Concurrency.
	ModelCalls int
	// SkipWarmUp starts Concurrency items at once. By default the first
	// item is shopped alone (for at most WarmUpLimit) before the others
	// fan out: a fresh session meets its one-time dialogs (cookie consent,
	// the postal code / delivery dialog on the first add) in one tab
	// instead of in every tab at once, so only one agent pays model turns
	// for them.
	SkipWarmUp bool
	// RetryTagged shops items tagged #404/#failed by an earlier run too;
	// OnlyTagged shops only them (Retry failed).
	RetryTagged bool
	OnlyTagged  bool
	// Items limits the run to these item names (empty: every open item).
	Items []string
	// WrongProducts are products the household rejected, by item name
	// (Wrong product): the item's agent is told never to add them, and the
	// item is not replayed.
	WrongProducts map[string]WrongProduct
	// Rejections, when set, gives the products the household marked wrong
	// for an item (the product memory): never added for it (rejected.go).
	Rejections ProductRejections
	PostalCode string
	// Resolver, when set, answers present_options.
	Resolver    ChoiceResolver
	Preferences Preferences
	// Memory, when set, records every added item (product memory).
	Memory ProductMemory
	// Policies, when set, gives each item's policy set in the panel (the
	// item's #nosub/#ask/#anybrand tags add theirs).
	Policies ItemPolicies
	// Recall finds an item's remembered product; Replay says how it is
	// used (empty or ReplayOff: not at all); ReplayMaxPriceChange is the
	// largest price change, in percent, a direct replay accepts.
	Recall               ProductRecall
	Replay               ReplayMode
	ReplayMaxPriceChange float64
	// PriceChangePercent: the review pack warns about a product whose price
	// changed by at least this much since it was last bought (0:
	// reviewpack.DefaultPriceChangePercent).
	PriceChangePercent float64
	// Pruning, when set, says which of the run's items were probably still
	// at home (bought less than 70 % of their restock cycle ago, by runs
	// other than runID: package usual): the review pack warns about them
	// and lists them in its pruning section; none is dropped.
	Pruning func(runID string, items []shoppinglist.Item) []reviewpack.Pruned
	// Cart reads the cart for the review; nil skips the review with a warning.
	Cart CartReader
	// Slots reads the store's delivery slots once the cart was reviewed,
	// in a reader tab of the run's browser: the review pack's slots
	// section and the summary's "Next delivery" (runslots.go); nil: they
	// are not read.
	Slots     SlotsSource
	Notifiers []Notifier
	// Bus receives the run's events; nil means none.
	Bus *runstatus.Bus
	// Watcher, when set, sees every agent's turns and screens.
	Watcher Watcher
	// JournalDir is where the journal is written; "" keeps it in memory.
	JournalDir string
	// TraceKeepRuns: when the run starts, the traces (Agent.TraceDir) of
	// all but the newest this many runs, this one included, are removed;
	// 0 keeps every trace.
	TraceKeepRuns int
	// Source names the trigger ("terminal", "mqtt"…).
	Source string
	// StartedBy is the Home Assistant user who started the run ("" when not
	// known); the journal keeps it.
	StartedBy string
	// Kind is what the run was asked to do ("": weekly); ReshopOf, for a
	// Wrong product's re-shop, the run whose review it belongs to. The
	// journal and the run_started event carry both.
	Kind     runstatus.RunKind
	ReshopOf string
	// RunID names the run; empty means a time-based id.
	RunID  string
	Logger *slog.Logger
	// FinalizeTimeout bounds the journal, list and summary writes done after
	// the run's context was cancelled; 0 means DefaultFinalizeTimeout.
	FinalizeTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Defaults.
const (
	DefaultStagger         = 400 * time.Millisecond
	DefaultFinalizeTimeout = 30 * time.Second
	// MaxAttempts is how many times an item is tried for one cause of
	// retryable failure: model/browser/network errors, an expired session
	// (after one shared re-login) and a browser crash (after the relaunch)
	// each allow one retry, so a crash followed by the lost session it
	// causes still recovers.
	MaxAttempts = 2
	// MaxRestarts is how many times a user's custom answer may restart an
	// item with a new query.
	MaxRestarts = 2
	// MaxQuestions is how many present_options questions one item may ask.
	MaxQuestions = 3
	// WarmUpLimit is the longest the other items wait for the first one.
	WarmUpLimit = 90 * time.Second
)
