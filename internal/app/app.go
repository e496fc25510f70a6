// Package app wires a config.Config into shopping runs: the store profile
// (and the embedded demo store for --store demo), the model client (or the
// in-process fake Gemini with the scripted planner for --model scripted),
// the browser Host, the cart reader, preferences, the list provider and the
// notifiers. `shop`, `demo` and `serve` all run through Runner, so they share
// one code path.
package app

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
)

// Deps are a run's collaborators that do not come from the configuration
// alone: the integrations `serve` (or the CLI) sets up.
type Deps struct {
	// Desk offers a sign-in that needs a person to the panel (take over);
	// nil: such a sign-in fails the run.
	Desk *shop.Desk
	// Provider is the shopping list; nil opens the YAML file named by
	// Config.ShoppingList for each run.
	Provider shoppinglist.Provider
	// Resolver answers present_options (Telegram); nil: agents cannot ask.
	Resolver shop.ChoiceResolver
	// Confirmer answers safety confirmations; nil denies them.
	Confirmer agent.Confirmer
	// Preferences remembers chosen products; nil opens the store in
	// Config.DataDir (or runs without when there is none).
	Preferences shop.Preferences
	// Notifiers receive the summary besides the provider.
	Notifiers []shop.Notifier
	// Bus receives every run's events; nil: a private bus.
	Bus *runstatus.Bus
	// Watcher sees every agent's turns and screens (the panel); nil: nobody.
	Watcher shop.Watcher
	// Logger; nil discards.
	Logger *slog.Logger
	// RunAgent replaces agent.Run (tests); nil: agent.Run.
	RunAgent shop.AgentFunc
	// Scripted customises the planner behind --model scripted.
	Scripted ScriptedOptions
	// ModelBackoff replaces the agent's waits between retries of a failed
	// model call (tests); nil: the agent's default (1, 2, 4, 8 s).
	ModelBackoff []time.Duration
	// QuotaClock is the clock of the model quota guard (tests speed it
	// up together with the fake server's); nil: the wall clock.
	QuotaClock agent.Clock
	// Now is the clock for model-table dates (prices, retirements); nil: time.Now.
	Now func() time.Time
	// DemoOptions adjusts the demo store's options before it starts
	// (benchmarks); nil: the demo store as the demo runs it.
	DemoOptions func(*demostore.Options)
}

// ScriptedOptions customise the offline scripted model (tests, and demos of
// the failure paths).
type ScriptedOptions struct {
	// Misbehave makes the planner misbehave for some items (by the goal's
	// "Item:" text).
	Misbehave map[string]scripted.Misbehaviour
	// Wrap, when set, wraps the planner's script (to answer some requests
	// differently).
	Wrap func(gemini.Script) gemini.Script
	// KeepRequests keeps the request bodies for inspection (FakeGemini).
	KeepRequests bool
	// RPM is the fake server's per-minute quota (0: none), answered with 429
	// and RetryInfo like the real service.
	RPM int
	// Now is the fake server's clock (nil: time.Now).
	Now func() time.Time
}

// scriptedAPIKeyPrefix starts the random key of the in-process fake Gemini
// server of --model scripted (not a secret: it guards a loopback port).
const scriptedAPIKeyPrefix = "scripted-"

// The integrations satisfy the interfaces a run consumes.
var (
	_ shop.ChoiceResolver = (*telegram.Bot)(nil)
	_ agent.Confirmer     = (*telegram.Bot)(nil)
	_ shop.Notifier       = (*homeassistant.Notifier)(nil)
)

// Runner runs shopping runs, one at a time, from one configuration. It
// implements serve's Runner (Run) and gives the CLI the full result (Shop).
// What it starts lazily — the demo store, the fake Gemini server, the model
// client — lives until Close.
type Runner struct {
	cfg  config.Config
	deps Deps
	base *slog.Logger // given to components, which add their own name
	log  *slog.Logger

	busy sync.Mutex // held by the running run, or a cart action (TryLock: ErrBusy)
	// slotsRead is the delivery slots' reading that holds busy, which a
	// run stops rather than being refused (slots.go).
	slotsRead slotsReading
	// actions lets one review action at a time try busy: a second one
	// (a double tap, another phone) waits for the first instead of being
	// told a run is going (CartAction).
	actions chan struct{}

	envMu sync.Mutex
	env   *environment
	mem   *products.Memory

	quotaMu   sync.Mutex
	quota     *agent.Quota // shared by the runs, so the per-minute window spans them
	quotaConc int
}

// environment is what runs share.
type environment struct {
	profile   store.Profile
	demo      *demostore.Server
	fake      *gemini.Server
	client    *genai.Client
	model     string
	extraArgs []string
	// upstreamRoots: the demo store's certificate, the only one the
	// browser's policy proxy trusts in the demo.
	upstreamRoots *x509.CertPool
	username      string
	password      config.Secret
	profileDir    string
	tempDirs      []string
}

// NewRunner checks the configuration's run settings (store, model, key)
// and returns a Runner. It starts nothing.
func NewRunner(cfg config.Config, deps Deps) (*Runner, error) {
	if cfg.Store == "" {
		cfg.Store = config.DefaultStore
	}
	if cfg.GeminiModel == "" {
		cfg.GeminiModel = config.DefaultModel
	}
	if _, err := store.Lookup(cfg.Store); err != nil {
		return nil, fmt.Errorf("store setting: %w", err)
	}
	scriptedModel := cfg.GeminiModel == config.ScriptedModel
	if scriptedModel && !strings.EqualFold(cfg.Store, "demo") {
		return nil, fmt.Errorf("the scripted model only knows the demo store: use --store demo with --model scripted, or a real Gemini model with --store %s", cfg.Store)
	}
	if !scriptedModel && !cfg.GeminiAPIKey.IsSet() && deps.RunAgent == nil {
		return nil, errors.New("no Gemini API key: set GEMINI_API_KEY (or gemini_api_key), or try the product offline with --store demo --model scripted")
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg, deps: deps, base: log, log: log.With("component", "app"), actions: make(chan struct{}, 1)}, nil
}

// Run shops once (serve.Runner). It returns runstatus.ErrBusy while
// another run is in progress.
func (r *Runner) Run(ctx context.Context, req runstatus.Request) (report.Summary, error) {
	res, err := r.Shop(ctx, req)
	return res.Summary, err
}

// Shop shops once and returns the full result (summary, review, journal).
// The error is nil when the run finished, whatever the items' outcomes.
func (r *Runner) Shop(ctx context.Context, req runstatus.Request) (shop.Result, error) {
	if !r.lockForRun(ctx) {
		return shop.Result{}, runstatus.ErrBusy
	}
	defer r.busy.Unlock()

	env, err := r.environment(ctx)
	if err != nil {
		return r.cannotRun(err)
	}
	provider := r.deps.Provider
	if provider == nil {
		p, err := OpenList(r.cfg.ShoppingList, r.cfg.Language, r.base)
		if err != nil {
			return r.cannotRun(err)
		}
		provider = p
	}
	concurrency := r.cfg.Concurrency
	if req.Concurrency > 0 {
		concurrency = req.Concurrency
	}
	if concurrency < 1 {
		concurrency = config.DefaultConcurrency
	}
	modelCalls := r.cfg.ModelConcurrency
	if modelCalls < 1 {
		modelCalls = concurrency
	}
	limiter := r.modelQuota(modelCalls)
	price := r.price()
	if env.fake != nil {
		price = &agent.Price{} // the scripted model costs nothing
	} else if w := agent.ModelWarning(env.model, r.now()); w != "" {
		r.log.Warn(w)
	}

	cart := r.cartReader(env, limiter, price)
	journalDir := ""
	if r.cfg.DataDir != "" {
		journalDir = shop.JournalDir(r.cfg.DataDir)
	}
	source := req.Source
	if source == "" {
		source = "terminal"
	}
	scfg := shop.Config{
		Provider:             provider,
		LaunchHost:           r.launcher(env),
		Desk:                 r.deps.Desk,
		TakeoverWait:         r.cfg.TakeoverWait,
		Store:                storeInfo(env.profile),
		Agent:                r.agentConfig(env, limiter, price),
		RunAgent:             r.deps.RunAgent,
		Concurrency:          concurrency,
		ModelCalls:           modelCalls,
		RetryTagged:          r.cfg.RetryTagged || req.RetryTagged,
		OnlyTagged:           req.RetryFailed,
		Items:                req.Items,
		WrongProducts:        wrongProducts(req.WrongProducts),
		PostalCode:           postalCode(r.cfg.PostalCode, env.profile),
		Resolver:             r.deps.Resolver,
		Preferences:          r.preferences(),
		Memory:               r.productMemory(),
		Recall:               r.productRecall(),
		Rejections:           r.productRejections(),
		Policies:             r.itemPolicies(),
		Replay:               ReplayMode(r.cfg.Replay, env.profile),
		ReplayMaxPriceChange: r.cfg.ReplayMaxPriceChange,
		PriceChangePercent:   r.cfg.ReviewPriceChange,
		Pruning:              r.pruning,
		Cart:                 cart,
		Slots:                r.runSlots(env),
		Notifiers:            r.deps.Notifiers,
		Bus:                  r.deps.Bus,
		Watcher:              r.deps.Watcher,
		JournalDir:           journalDir,
		TraceKeepRuns:        r.cfg.TraceKeepRuns,
		Source:               source,
		StartedBy:            req.By,
		Kind:                 req.Kind(),
		ReshopOf:             req.ReshopOf,
		Logger:               r.base,
	}
	return shop.Run(ctx, scfg)
}

// agentConfig is every agent's configuration (the runs' and the cart
// actions').
func (r *Runner) agentConfig(env *environment, limiter *agent.Quota, price *agent.Price) agent.Config {
	return agent.Config{
		Client:                   env.client,
		Model:                    env.model,
		MaxTurns:                 r.cfg.MaxTurns,
		TimeBudget:               r.cfg.TimeBudget,
		Confirmer:                r.deps.Confirmer,
		Limiter:                  limiter,
		TraceDir:                 r.cfg.TraceDir,
		Logger:                   r.base,
		Price:                    price,
		Backoff:                  r.deps.ModelBackoff,
		ThinkingLevel:            r.cfg.ThinkingLevel,
		MediaResolution:          r.cfg.MediaResolution,
		PromptInjectionDetection: r.promptInjectionDetection(env),
		// The offline planner reads the page's text, not its pixels.
		DescribePage: r.cfg.GeminiModel == config.ScriptedModel,
	}
}

// cannotRun reports a run that failed before it began: subscribers (MQTT
// status, HA events) see it fail like any other run.
func (r *Runner) cannotRun(err error) (shop.Result, error) {
	// Said by the caller (shop's last line, serve's "run failed"): once.
	r.log.Debug("the shopping run cannot start", "err", err)
	if r.deps.Bus != nil {
		now := time.Now()
		sum := report.Summary{StartedAt: now, FinishedAt: now, Items: []report.ItemResult{}}
		sum.Warn(messages.Say("warning.run_not_started", "error", err.Error()))
		r.deps.Bus.Publish(runstatus.Event{Time: now, Kind: runstatus.KindStateChanged, State: runstatus.StateFailed, Message: err.Error()})
		r.deps.Bus.Publish(runstatus.Event{Time: now, Kind: runstatus.KindRunFinished, State: runstatus.StateFailed, Message: err.Error(), Summary: &sum})
	}
	return shop.Result{State: runstatus.StateFailed, Error: err.Error()}, err
}

// FakeGemini is the in-process model server of --model scripted, once a
// run started it.
func (r *Runner) FakeGemini() *gemini.Server {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if r.env == nil {
		return nil
	}
	return r.env.fake
}

// DemoStore is the embedded demo store, once a --store demo run started it.
func (r *Runner) DemoStore() *demostore.Server {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if r.env == nil {
		return nil
	}
	return r.env.demo
}

// Close stops what the Runner started (demo store, fake Gemini server) and
// removes its temporary directories.
func (r *Runner) Close(ctx context.Context) error {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	env := r.env
	r.env = nil
	if env == nil {
		return nil
	}
	var errs []error
	if env.fake != nil {
		env.fake.Close()
	}
	if env.demo != nil {
		if err := env.demo.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range env.tempDirs {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// environment starts (once) what runs share.
func (r *Runner) environment(ctx context.Context) (*environment, error) {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if r.env != nil {
		return r.env, nil
	}
	profile, err := store.Lookup(r.cfg.Store)
	if err != nil {
		return nil, err
	}
	env := &environment{profile: profile, model: r.cfg.GeminiModel, username: r.cfg.MetroUsername, password: r.cfg.MetroPassword}
	ok := false
	defer func() {
		if !ok {
			if env.fake != nil {
				env.fake.Close()
			}
			if env.demo != nil {
				_ = env.demo.Close()
			}
			for _, d := range env.tempDirs {
				_ = os.RemoveAll(d)
			}
		}
	}()

	if profile.Name == "demo" {
		// The demo store lives as long as the Runner, not the request.
		// With a data directory the demo cart outlives the process, as a
		// real store's cart does (a run killed mid-way finds it again).
		cartFile := ""
		if r.cfg.DataDir != "" && os.MkdirAll(r.cfg.DataDir, 0o755) == nil {
			cartFile = filepath.Join(r.cfg.DataDir, "demo-cart.json")
		}
		opts := demostore.Options{Logger: r.base, CartFile: cartFile,
			// A demo-only switch, read here rather than in the configuration:
			// the sign-in challenge a person passes from the panel (docs/panel.md).
			SignInChallenge: os.Getenv("GEMINI_SUPPLY_DEMO_SIGNIN_CHALLENGE") == "1"}
		if r.deps.DemoOptions != nil {
			r.deps.DemoOptions(&opts)
		}
		srv, err := demostore.Start(context.WithoutCancel(ctx), opts)
		if err != nil {
			return nil, fmt.Errorf("start the demo store: %w", err)
		}
		env.demo = srv
		env.extraArgs = append(env.extraArgs, "--host-resolver-rules="+srv.HostResolverRules())
		env.upstreamRoots = srv.CertPool()
		env.username, env.password = demoCredentials(srv)
		// The demo store answers for metro's host names: never mix its
		// cookies into the real profile.
		dir, err := os.MkdirTemp("", "gemini-supply-demo-profile-")
		if err != nil {
			return nil, fmt.Errorf("create the demo browser profile: %w", err)
		}
		env.tempDirs = append(env.tempDirs, dir)
		env.profileDir = dir
	} else {
		env.profileDir = r.cfg.BrowserProfileDir
		if env.profileDir == "" && r.cfg.DataDir != "" {
			env.profileDir = filepath.Join(r.cfg.DataDir, "browser-profile")
		}
	}

	switch {
	case r.deps.RunAgent != nil && r.cfg.GeminiModel != config.ScriptedModel && !r.cfg.GeminiAPIKey.IsSet():
		// Tests with a fake agent need no client.
	case r.cfg.GeminiModel == config.ScriptedModel:
		so := r.deps.Scripted
		script := scripted.New(scripted.Options{
			PostalCode:        postalCode(r.cfg.PostalCode, profile),
			BaseURL:           strings.TrimSuffix(env.demo.BaseURL(), "/"),
			SearchURLTemplate: profile.SearchURLTemplate,
			Misbehave:         so.Misbehave,
			// Like a real agent (and a replay): the product's page, not
			// its search tile, so a replay's speed-up is like for like.
			ProductPages: true,
		}).Script()
		if so.Wrap != nil {
			script = so.Wrap(script)
		}
		key := make([]byte, 12)
		_, _ = rand.Read(key)
		fake := gemini.New(gemini.Config{APIKey: scriptedAPIKeyPrefix + hex.EncodeToString(key), Script: script, Logger: r.base,
			DiscardRequests: !so.KeepRequests, RPM: so.RPM, Now: so.Now})
		if err := fake.Start(); err != nil {
			return nil, fmt.Errorf("start the scripted model: %w", err)
		}
		env.fake = fake
		c, err := fake.NewClient(ctx)
		if err != nil {
			return nil, err
		}
		env.client = c
	default:
		c, err := geminiClient(ctx, r.cfg)
		if err != nil {
			return nil, err
		}
		env.client = c
	}
	ok = true
	r.env = env
	return env, nil
}

// geminiClient is the Gemini API client of the configuration's key (and
// base URL).
func geminiClient(ctx context.Context, cfg config.Config) (*genai.Client, error) {
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      cfg.GeminiAPIKey.Reveal(),
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: cfg.GeminiBaseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("create the Gemini client: %w", err)
	}
	return c, nil
}

// ReviewModel is the model that reads the cart page for the review: the
// configured one, else the agent's model. A model the table knows cannot
// read pages (the Computer-Use-only preview) or is retired on day now is
// replaced by agent.DefaultModel, with a warning to log.
func ReviewModel(agentModel, configured string, now time.Time) (model, warning string) {
	model = configured
	if model == "" {
		model = agentModel
	}
	m, known := agent.LookupModel(model)
	switch {
	case known && m.Retired(now):
		return agent.DefaultModel, fmt.Sprintf("the cart review model %s was shut down on %s; reading the cart with %s",
			model, m.Retires.Format(time.DateOnly), agent.DefaultModel)
	case known && !m.ReadsPages:
		if configured != "" {
			return agent.DefaultModel, fmt.Sprintf("review_model %s cannot read pages into structured output; reading the cart with %s", model, agent.DefaultModel)
		}
		return agent.DefaultModel, ""
	case configured != "" && (!known || !m.Retires.IsZero()):
		// Unknown, or retiring soon: say so (the agent's own model is
		// warned about by the run).
		if w := agent.ModelWarning(model, now); w != "" {
			return model, "review_model: " + w
		}
	}
	return model, ""
}

// now is the clock for model-table dates.
func (r *Runner) now() time.Time {
	if r.deps.Now != nil {
		return r.deps.Now()
	}
	return time.Now()
}

// price is the configured price override, nil when both prices are 0 (the
// model table's price applies).
func (r *Runner) price() *agent.Price { return configuredPrice(r.cfg) }

func configuredPrice(cfg config.Config) *agent.Price {
	if cfg.GeminiInputPricePerMTok == 0 && cfg.GeminiOutputPricePerMTok == 0 {
		return nil
	}
	return &agent.Price{Input: cfg.GeminiInputPricePerMTok, Output: cfg.GeminiOutputPricePerMTok, Source: "configuration"}
}

// promptInjectionDetection: off when configured off; on for the scripted
// model (the fake server honours the flag); else the model table decides.
func (r *Runner) promptInjectionDetection(env *environment) *bool {
	on := r.cfg.PromptInjectionDetection
	if !on || env.fake != nil {
		return &on
	}
	return nil
}

// ModelLimiter is the runs' model-call quota guard (model_rpm, the
// requests in flight), for the guide's calls to share; nil before the
// first run (or on a nil Runner).
func (r *Runner) ModelLimiter() agent.Limiter {
	if r == nil {
		return nil
	}
	r.quotaMu.Lock()
	defer r.quotaMu.Unlock()
	if r.quota == nil {
		return nil
	}
	return r.quota
}

// modelQuota is the quota guard of the runs: one per Runner, so that the
// per-minute window spans consecutive runs; renewed when the number of
// requests in flight changes.
func (r *Runner) modelQuota(inFlight int) *agent.Quota {
	r.quotaMu.Lock()
	defer r.quotaMu.Unlock()
	if r.quota == nil || r.quotaConc != inFlight {
		r.quota = agent.NewQuota(r.cfg.ModelRPM, inFlight, r.deps.QuotaClock)
		r.quotaConc = inFlight
	}
	return r.quota
}

// launcher starts the browser for one run.
func (r *Runner) launcher(env *environment) func(context.Context) (shop.Host, error) {
	return func(ctx context.Context) (shop.Host, error) {
		h, err := browser.Launch(ctx, r.browserOptions(env))
		if err != nil {
			return nil, err
		}
		return shop.BrowserHost(h), nil
	}
}

// browserOptions are the options of a run's browser (and of the readers':
// the usual's past orders and favourites, the delivery slots).
func (r *Runner) browserOptions(env *environment) browser.Options {
	return browser.Options{
		ExecutablePath: r.cfg.BrowserExecutable,
		ProfileDir:     env.profileDir,
		RemoteURL:      r.cfg.BrowserRemoteURL,
		Headless:       r.cfg.BrowserHeadless || env.demo != nil,
		Width:          r.cfg.ViewportWidth,
		Height:         r.cfg.ViewportHeight,
		ExtraArgs:      env.extraArgs,
		UpstreamRoots:  env.upstreamRoots,
		Store:          env.profile,
		Username:       env.username,
		Password:       env.password,
		Logger:         r.base,
	}
}

func (r *Runner) preferences() shop.Preferences {
	if r.deps.Preferences != nil {
		return r.deps.Preferences
	}
	if m := r.memory(); m.m != nil {
		return m
	}
	return nil
}

// productMemory is where the run records what it added (nil: nowhere).
func (r *Runner) productMemory() shop.ProductMemory {
	if m := r.memory(); m.m != nil {
		return m
	}
	return nil
}

// postalCode is the postal code the agent and a replay give the store's
// delivery dialog: the configured one, else the profile's default (the
// demo store's; none for metro, whose dialog the agent answers).
func postalCode(configured string, p store.Profile) string {
	if c := strings.TrimSpace(configured); c != "" {
		return c
	}
	return p.DefaultPostalCode
}

// storeInfo describes a profile to the run.
func storeInfo(p store.Profile) shop.Store {
	display := "metro.ca"
	if p.Name == "demo" {
		display = "the demo store"
	}
	return shop.Store{Name: p.Name, DisplayName: display, HomeURL: p.HomeURL, CartURL: p.CartURL, NoCartLink: p.Name == "demo", SearchURL: p.SearchURL, Hint: p.PostalCodeHint,
		Product: p.Product, CartJSONURL: p.CartJSONURL, CartSet: cartSetOp(p), CartSetup: p.CartSetupPath}
}

// cartSetOp is the profile's set-quantity cart operation, if it has one.
func cartSetOp(p store.Profile) store.CartOp {
	for _, op := range p.CartOps {
		if op.Kind == store.CartSet {
			return op
		}
	}
	return store.CartOp{}
}

// ReplayMode is the replay a run uses: the configured one, or by default
// direct for a store whose product page reader is exact (the demo) and
// agent for one whose reader is best effort (metro: a wrong add costs
// money, and its reader cannot be checked against the real site here).
func ReplayMode(configured string, p store.Profile) shop.ReplayMode {
	switch {
	case configured != "":
		return shop.ReplayMode(configured)
	case p.Product.Exact:
		return shop.ReplayDirect
	case p.Product.Root != "":
		return shop.ReplayAgent
	}
	return shop.ReplayOff
}

func (r *Runner) itemPolicies() shop.ItemPolicies {
	if m := r.memory(); m.m != nil {
		return m
	}
	return nil
}

func (r *Runner) productRecall() shop.ProductRecall {
	if m := r.memory(); m.m != nil {
		return m
	}
	return nil
}

func (r *Runner) productRejections() shop.ProductRejections {
	if m := r.memory(); m.m != nil {
		return m
	}
	return nil
}

func demoCredentials(srv *demostore.Server) (string, config.Secret) {
	u, p := srv.Credentials()
	return u, config.Secret(p)
}

// OpenList opens the YAML shopping list at path; its summary file is
// written in lang.
func OpenList(path, lang string, log *slog.Logger) (shoppinglist.Provider, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("no shopping list: pass --shopping-list path/to/list.yaml (a Home Assistant list is used by 'serve')")
	}
	f, err := shoppinglist.OpenYAML(path, shoppinglist.WithLogger(log), shoppinglist.WithMessages(messages.For(lang)))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// cartReader is how the run (its review) and the cart actions read the cart: the cart page
// by code when the profile has a reader (no model call), and the model
// when that reading is not confirmed or there is no reader. The demo
// store's reader is exact and there is no model to fall back on.
func (r *Runner) cartReader(env *environment, limiter agent.Limiter, price *agent.Price) shop.CartReader {
	p := env.profile
	var page shop.CartReader
	if p.Cart.Line != "" {
		page = &shop.PageCartReader{CartURL: p.CartURL, Page: p.Cart, CartCount: p.Product.CartCount}
	}
	if env.demo != nil {
		return page
	}
	// Chosen per run: a long-running add-on may outlive a model.
	review, warn := ReviewModel(env.model, r.cfg.ReviewModel, r.now())
	if warn != "" {
		r.log.Warn(warn)
	}
	model := &shop.ModelCartReader{
		Client: env.client, Model: review, CartURL: p.CartURL, Limiter: limiter,
		Price: price, Logger: r.base, PriceDay: r.now(), // the run's day, as its agents'
	}
	if page == nil {
		return model
	}
	return &shop.FallbackCartReader{First: page, Then: model, Logger: r.base}
}

func wrongProducts(in map[string]runstatus.WrongProduct) map[string]shop.WrongProduct {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]shop.WrongProduct, len(in))
	for item, p := range in {
		out[item] = shop.WrongProduct{Name: p.Name, URL: p.URL, ProductID: p.ProductID}
	}
	return out
}
