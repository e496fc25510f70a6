// Package browser runs the browser the agent shops in: one Chromium (through
// playwright-go) with a persistent profile, many independent tabs, and the
// store's network policy, status banner and scripted login applied to the
// whole browser context.
//
// A Host owns the browser. Host.NewTab returns a Tab bound to its own page;
// Tab implements the agent's Computer interface (package agent) — clicks,
// typing, keys, scrolling, navigation and screenshots in the model's
// normalised 0–999 coordinates. Tabs are independent and safe to use from
// separate goroutines.
//
// The store policy (store.Profile.CheckRequest) is enforced by a local
// proxy every request of the browser goes through: it refuses hosts outside
// the allowlist and terminates TLS to allowed hosts, so that the method and
// path of every request — any tab, frame, worker or redirect hop — are
// checked before anything reaches the store. A guard on each agent tab (a
// CDP session) applies the same policy to the tab's own navigations so that
// a refused one leaves the tab where it was, with a notice for the model.
// Pages cannot open new tabs: an init script turns links, forms and
// window.open aimed at a new tab into navigations of the same tab (which
// then meet the policy), and a new tab that appears anyway is closed and
// its address loaded in the opener if the policy allows it.
//
// Each tab is a window of its own (headless Chromium only paints the front
// tab of a window), with a status banner naming the item it shops for.
//
// If the browser crashes or disconnects, calls in flight return
// ErrBrowserGone and the Host relaunches it once; the caller retries on a
// new tab.
package browser

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/playwright-community/playwright-go"
	"golang.org/x/sync/singleflight"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// Defaults for Options fields left zero.
const (
	DefaultWidth          = 1440
	DefaultHeight         = 900
	DefaultActionTimeout  = 15 * time.Second
	DefaultSettleTimeout  = 3 * time.Second
	DefaultLaunchTimeout  = 60 * time.Second
	DefaultLoginTimeout   = 3 * time.Minute
	DefaultLoginStep      = 15 * time.Second
	DefaultAuthWait       = 3 * time.Second
	DefaultCloseTimeout   = 15 * time.Second
	DefaultTabTimeout     = 30 * time.Second
	DefaultJPEGQuality    = 80
	DefaultLocale         = "en-CA"
	quietWindow           = 100 * time.Millisecond
	popupURLWait          = 10 * time.Second
	closeStepTimeout      = 5 * time.Second
	staleRequestAfter     = 5 * time.Second
	answeredGrace         = time.Second // a request's body, after its response's headers (requestsBusyLocked)
	maxWait               = time.Minute
	actionGrace           = 2 * time.Second // after the action timeout, before act gives up on a call
	settlePollInterval    = 20 * time.Millisecond
	authGraceOnScreenshot = 1500 * time.Millisecond
)

// LaunchArgs are the Chromium flags every launched browser gets (DESIGN.md
// §5), plus: smooth scrolling off (scrolls land at once), WebRTC kept from
// bypassing the policy proxy (with the profile preference of the same
// name, see profilePrefs), and Chromium's own calls home (autofill,
// safe browsing, sign-in, translate) off so they neither leak nor clutter
// the blocked-host log.
var LaunchArgs = []string{
	"--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
	"--disable-smooth-scrolling",
	// WebRTC may only use proxied connections: no UDP at all (an HTTP proxy
	// carries none), so STUN/TURN reach no host; TURN over TCP meets the
	// policy proxy's CONNECT check. The switch is webrtc-ip-handling-policy:
	// the "force-" spelling this list had before is not one Chromium knows
	// (a page's STUN requests reached any UDP listener).
	"--webrtc-ip-handling-policy=disable_non_proxied_udp",
	// The headless shell (browserExecutable) reads neither that switch nor
	// the profile preference: it knows only this spelling (a headless
	// switch); the full browser ignores it.
	"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
	"--disable-client-side-phishing-detection", "--disable-domain-reliability", "--no-pings",
	"--safebrowsing-disable-auto-update", "--disable-breakpad",
	// Every request goes through the policy proxy: no QUIC (it would not
	// be proxied anyway, but keeps attempts out of the picture).
	"--disable-quic",
	// Chromium keeps only the last --disable-features: this list repeats
	// Playwright 1.52's own and adds ours.
	"--disable-features=" + strings.Join([]string{
		"AcceptCHFrame", "AutoExpandDetailsElement", "AvoidUnnecessaryBeforeUnloadCheckSync",
		"CertificateTransparencyComponentUpdater", "DeferRendererTasksAfterInput", "DestroyProfileOnBrowserClose",
		"DialMediaRouteProvider", "ExtensionManifestV2Disabled", "GlobalMediaControls", "HttpsUpgrades",
		"ImprovedCookieControls", "LazyFrameLoading", "LensOverlay", "MediaRouter", "PaintHolding",
		"ThirdPartyStoragePartitioning", "Translate",
		"AutofillServerCommunication", "OptimizationHints", "SafeBrowsing", "ChromeSigninIntercept", "AccountConsistency",
		// No prerendering or speculative prefetching of pages (with the
		// profile preference "net.network_prediction_options": 2).
		"Prerender2", "PrerenderFallbackToPreconnect", "SpeculationRulesPrefetchFuture", "NoStatePrefetchHoldback",
		// Sandboxed frames stay in their tab's process, where the tab's
		// guard refuses sockets and workers before their first script.
		"IsolateSandboxedIframes",
	}, ","),
}

// Options configure a Host. Zero values take the defaults above.
type Options struct {
	// ExecutablePath is the Chromium binary (/usr/lib/chromium/chromium).
	ExecutablePath string
	// ProfileDir is the persistent profile directory: cookies and storage
	// survive restarts. Required unless RemoteURL is set.
	ProfileDir string
	// RemoteURL connects to a running browser instead of launching one:
	// http(s)://host:port or ws://…/devtools/browser/… speaks CDP
	// (ConnectOverCDP, the remote browser's own profile is used); any
	// other ws(s):// URL is a Playwright server (BrowserType.Connect).
	RemoteURL string
	// Headless hides the browser window. Callers normally pass true; the
	// login command passes false with --headful.
	Headless bool
	// Width and Height of the viewport in CSS pixels (default 1440x900).
	Width, Height int
	// ExtraArgs are added to Chromium's command line, e.g.
	// "--host-resolver-rules=MAP www.metro.ca 127.0.0.1:8443". MAP rules
	// are honoured by the policy proxy too.
	ExtraArgs []string
	// UpstreamRoots are the certificates the policy proxy trusts for the
	// store's servers (the demo store's own); nil means the system's. A
	// profile with IgnoreHTTPSErrors and no roots is not verified (tests).
	UpstreamRoots *x509.CertPool
	// Store is the store profile: allowlist, blocked paths, login, banner.
	Store store.Profile
	// Username and Password are the store account's credentials, typed by
	// code during Login and never logged.
	Username string
	Password config.Secret
	// Logger receives the browser's logs (component=browser). Nil discards.
	Logger *slog.Logger
	// ScreenshotFormat is "png" (default) or "jpeg".
	ScreenshotFormat string
	// JPEGQuality (1–100) when ScreenshotFormat is "jpeg"; default 80.
	JPEGQuality int
	// DriverDirectory holds the Playwright driver (package/cli.js); default
	// FindDriver's ($PLAYWRIGHT_DRIVER_PATH, else the one setup installed).
	DriverDirectory string
	// Locale of the browser context (default en-CA).
	Locale string
	// ActionTimeout bounds one browser call (default 15 s).
	ActionTimeout time.Duration
	// TabTimeout bounds opening one tab (default 30 s, never less than
	// ActionTimeout): a new window is a new renderer, which a busy machine
	// starts far more slowly than it answers a click.
	TabTimeout time.Duration
	// SettleTimeout bounds the wait for the page to settle after an action
	// (default 3 s).
	SettleTimeout time.Duration
	// LaunchTimeout bounds starting (or connecting to) the browser (60 s).
	LaunchTimeout time.Duration
	// LoginTimeout bounds one whole Login (3 min).
	LoginTimeout time.Duration
	// LoginStepTimeout is the default bound of one login step (15 s).
	LoginStepTimeout time.Duration
	// AuthWait is how long IsAuthenticated waits for the signed-in marker (3 s).
	AuthWait time.Duration
	// ManualLoginWait, when positive and the browser is headful, lets a
	// person finish a login the script could not (a challenge on the
	// identity site): Login then waits this long for the signed-in marker.
	ManualLoginWait time.Duration
	// SkipAuthCheck turns off the signed-out check Screenshot does on store
	// pages (for tests and browsing without an account).
	SkipAuthCheck bool
	// CloseTimeout bounds Close when its context has no deadline (15 s).
	CloseTimeout time.Duration

	// remoteProxy replaces the policy proxy's address given to a remote
	// browser (tests: a proxy it cannot reach).
	remoteProxy string
}

func (o *Options) applyDefaults() {
	if o.Width <= 0 {
		o.Width = DefaultWidth
	}
	if o.Height <= 0 {
		o.Height = DefaultHeight
	}
	if o.ScreenshotFormat == "" {
		o.ScreenshotFormat = "png"
	}
	if o.JPEGQuality <= 0 || o.JPEGQuality > 100 {
		o.JPEGQuality = DefaultJPEGQuality
	}
	if o.DriverDirectory == "" {
		o.DriverDirectory = driverDefault()
	}
	if o.Locale == "" {
		o.Locale = DefaultLocale
	}
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = DefaultActionTimeout
	}
	if o.TabTimeout <= 0 {
		o.TabTimeout = DefaultTabTimeout
	}
	o.TabTimeout = max(o.TabTimeout, o.ActionTimeout)
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = DefaultSettleTimeout
	}
	if o.LaunchTimeout <= 0 {
		o.LaunchTimeout = DefaultLaunchTimeout
	}
	if o.LoginTimeout <= 0 {
		o.LoginTimeout = DefaultLoginTimeout
	}
	if o.LoginStepTimeout <= 0 {
		o.LoginStepTimeout = DefaultLoginStep
	}
	if o.AuthWait <= 0 {
		o.AuthWait = DefaultAuthWait
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Store.BannerText == "" {
		o.Store.BannerText = store.DefaultBannerText
	}
}

func (o *Options) validate() error {
	switch o.ScreenshotFormat {
	case "png", "jpeg":
	default:
		return fmt.Errorf("screenshot format %q is not supported: use png or jpeg", o.ScreenshotFormat)
	}
	if o.RemoteURL == "" && o.ProfileDir == "" {
		return errors.New("no browser profile directory: set browser_profile_dir (or data_dir) so the session survives restarts")
	}
	if o.Store.Name == "" || len(o.Store.AllowedHosts) == 0 {
		return errors.New("no store profile: the browser needs a store's allowlist (store: metro or demo)")
	}
	if o.RemoteURL != "" {
		u, err := url.Parse(o.RemoteURL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("browser_remote_url %q is not a URL like ws://host:port/… or http://host:9222", o.RemoteURL)
		}
		switch u.Scheme {
		case "ws", "wss", "http", "https":
		default:
			return fmt.Errorf("browser_remote_url %q: the scheme must be ws, wss, http or https", o.RemoteURL)
		}
		return nil
	}
	if o.DriverDirectory == "" {
		return errors.New("the Playwright driver was not found (no .cache/playwright-driver beside the binary or in the working directory): run `make setup` (or scripts/setup.sh) in the clone, or set PLAYWRIGHT_DRIVER_PATH")
	}
	if _, err := os.Stat(filepath.Join(o.DriverDirectory, "package", "cli.js")); err != nil {
		return fmt.Errorf("the Playwright driver 1.52.0 is missing in %s (no package/cli.js): run scripts/setup.sh: %w", o.DriverDirectory, err)
	}
	return nil
}

// Host owns one browser (launched or remote) and its single context.
type Host struct {
	opts    Options
	log     *slog.Logger
	profile store.Profile
	rules   []resolverRule
	proxy   *policyProxy

	life     context.Context // cancelled by Close
	stopLife context.CancelFunc
	wg       sync.WaitGroup // goroutines the Host started
	sf       singleflight.Group
	cart     cartGate // cart changes wait while a login runs (cartgate.go)

	mu          sync.Mutex
	cur         *generation
	relaunching chan struct{} // closed when the running relaunch ends; nil when none
	dead        error         // set when a relaunch failed
	closed      bool
	relaunches  int
	pages       map[playwright.Page]*pageState
	loginPage   playwright.Page      // the page Login drives, while it runs
	loginToken  string               // its requests' loginHeader value, while it runs
	held        *heldTab             // the sign-in tab a person drives (takeover.go)
	blocked     map[string]int       // blocked host -> count
	refused     map[store.Rule]int   // refused requests by rule (not hosts)
	refusedSeen map[string]bool      // "METHOD host/path" already logged
	awaitPage   chan playwright.Page // receives opener-less pages while openPage waits for its own
	genSeq      int
	newPageMu   sync.Mutex // serialises openPage
	shotMu      sync.Mutex // serialises screenshots when tabs share a window

	spawnMu sync.Mutex
	noSpawn bool // set by Close before it waits for wg
}

// generation is one launch of the browser.
type generation struct {
	n  int
	pw *playwright.Playwright
	// sharedDriver: pw is the process's shared driver (ShareDriver), which
	// stopping this generation leaves running.
	sharedDriver bool
	ctx          playwright.BrowserContext
	browser      playwright.Browser // remote connections only
	remote       bool
	// keeper is a blank page that keeps the browser open and carries the
	// CDP session new tabs are created through (each in a window of its
	// own: headless Chromium only paints the front tab of a window).
	keeper     playwright.Page
	keeperSess playwright.CDPSession
	// ownsWindows: tabs are opened by Target.createTarget (keeperSess),
	// so every other page without an opener is a stray and is closed.
	ownsWindows atomic.Bool
	contextID   string // CDP browserContextId of ctx ("" = default)
	gone        chan struct{}
	goneOnce    sync.Once
}

func (g *generation) isGone() bool {
	select {
	case <-g.gone:
		return true
	default:
		return false
	}
}

// Launch starts the browser (or connects to RemoteURL) and installs the
// policy, banner and popup handling. Close it when done.
func Launch(ctx context.Context, opts Options) (*Host, error) {
	opts.applyDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	rules, err := resolverRulesFromArgs(opts.ExtraArgs)
	if err != nil {
		return nil, fmt.Errorf("browser: %w", err)
	}
	life, stop := context.WithCancel(context.Background())
	h := &Host{
		opts:        opts,
		log:         opts.Logger.With("component", "browser"),
		profile:     opts.Store,
		rules:       rules,
		life:        life,
		stopLife:    stop,
		pages:       map[playwright.Page]*pageState{},
		blocked:     map[string]int{},
		refused:     map[store.Rule]int{},
		refusedSeen: map[string]bool{},
	}
	if opts.RemoteURL == "" {
		if err := os.MkdirAll(opts.ProfileDir, 0o700); err != nil {
			stop()
			return nil, fmt.Errorf("browser: creating the profile directory %s: %w", opts.ProfileDir, err)
		}
		if err := scrubProfile(opts.ProfileDir); err != nil {
			stop()
			return nil, fmt.Errorf("browser: %w", err)
		}
	}
	if slices.ContainsFunc(opts.ExtraArgs, func(a string) bool {
		return strings.HasPrefix(a, "--proxy-server") || strings.HasPrefix(a, "--proxy-pac-url")
	}) {
		stop()
		return nil, errors.New("browser: a --proxy-server in the browser arguments would take the browser's traffic around the policy proxy that enforces the store policy; remove it")
	}
	h.proxy, err = startProxy(h.log.With("part", "proxy"), h, rules, upstreamTLS{roots: opts.UpstreamRoots, insecure: opts.Store.IgnoreHTTPSErrors})
	if err != nil {
		stop()
		return nil, fmt.Errorf("browser: %w", err)
	}
	lctx, cancel := context.WithTimeout(ctx, opts.LaunchTimeout)
	defer cancel()
	g, err := h.start(lctx)
	if err != nil {
		h.stopLife()
		if h.proxy != nil {
			_ = h.proxy.Close()
		}
		return nil, err
	}
	h.cur = g
	return h, nil
}

// start launches or connects, bounded by ctx.
func (h *Host) start(ctx context.Context) (*generation, error) {
	type result struct {
		g   *generation
		err error
	}
	ch := make(chan result, 1)
	h.mu.Lock()
	h.genSeq++
	n := h.genSeq
	h.mu.Unlock()
	go func() {
		g, err := h.startBlocking(n)
		ch <- result{g, err}
	}()
	select {
	case r := <-ch:
		return r.g, r.err
	case <-ctx.Done():
		// Clean up whatever the launch produces once it ends.
		h.spawn(func() {
			if r := <-ch; r.g != nil {
				h.stopGeneration(r.g, closeStepTimeout)
			}
		})
		return nil, fmt.Errorf("browser: starting Chromium took too long (%w); check browser_executable and that no other process holds the profile", ctx.Err())
	}
}

func (h *Host) startBlocking(n int) (*generation, error) {
	g, err := h.startOnce(n)
	if err != nil && g != nil && g.sharedDriver && errors.Is(err, playwright.ErrTargetClosed) {
		// The shared driver of a test binary died: once more on a new one.
		dropSharedDriver(g.pw)
		g, err = h.startOnce(n)
	}
	if err != nil {
		return nil, err
	}
	return g, nil
}

// startOnce launches or connects through a driver. On failure the returned
// generation (if any) only says which driver was used.
func (h *Host) startOnce(n int) (*generation, error) {
	o := h.opts
	pw, shared, err := runDriver(o.DriverDirectory)
	if err != nil {
		return nil, err
	}
	g := &generation{n: n, pw: pw, sharedDriver: shared, gone: make(chan struct{})}
	if o.RemoteURL != "" {
		err = h.connect(g)
	} else {
		err = h.launchPersistent(g)
	}
	if err != nil {
		if !shared {
			_ = pw.Stop()
		}
		return g, err
	}
	if err := h.install(g); err != nil {
		h.stopGeneration(g, closeStepTimeout)
		return g, err
	}
	return g, nil
}

func (h *Host) launchPersistent(g *generation) error {
	o := h.opts
	args := append(slices.Clone(LaunchArgs), o.ExtraArgs...)
	// The browser trusts the policy proxy's key (the proxy terminates TLS to
	// check every request, and verifies the store's certificate itself).
	args = append(args, "--ignore-certificate-errors-spki-list="+h.proxy.SPKIHash())
	popts := playwright.BrowserTypeLaunchPersistentContextOptions{
		Args:              args,
		Headless:          playwright.Bool(o.Headless),
		Viewport:          &playwright.Size{Width: o.Width, Height: o.Height},
		Screen:            &playwright.Size{Width: o.Width, Height: o.Height},
		DeviceScaleFactor: playwright.Float(1),
		AcceptDownloads:   playwright.Bool(false),
		ServiceWorkers:    playwright.ServiceWorkerPolicyBlock,
		Locale:            playwright.String(o.Locale),
		Timeout:           playwright.Float(float64(o.LaunchTimeout.Milliseconds())),
		HandleSIGINT:      playwright.Bool(false),
		HandleSIGTERM:     playwright.Bool(false),
		HandleSIGHUP:      playwright.Bool(false),
	}
	exe := browserExecutable(o.ExecutablePath, o.Headless)
	if exe == "" {
		return errors.New("browser: no Chromium found: set browser_executable (e.g. /usr/lib/chromium/chromium) or GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	}
	h.log.Debug("launching Chromium", "executable", exe, "headless", o.Headless)
	popts.ExecutablePath = playwright.String(exe)
	popts.Proxy = &playwright.Proxy{Server: h.proxy.URL()}
	bctx, err := g.pw.Chromium.LaunchPersistentContext(o.ProfileDir, popts)
	if err != nil {
		hint := "check browser_executable (" + exe + ")"
		if !o.Headless && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			hint += "; there is no display for a headful browser (set browser_headless)"
		}
		return fmt.Errorf("browser: launching Chromium with profile %s failed: %w (%s; is another Chromium using this profile?)", o.ProfileDir, firstLine(err), hint)
	}
	g.ctx = bctx
	bctx.OnClose(func(playwright.BrowserContext) { h.onGone(g, "the browser context closed") })
	return nil
}

// chromiumPaths are where Chromium usually lives (the real binary before
// distribution wrapper scripts).
var chromiumPaths = []string{
	"/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser",
	"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome-stable", "/usr/bin/google-chrome",
}

// findChromium returns the first Chromium binary found, or "".
func findChromium() string {
	for _, p := range chromiumPaths {
		if isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// HeadlessShell is the file name of Chromium's headless shell (Debian's
// package chromium-headless-shell: the same Chromium, built without the
// browser's windows, tab strip and extensions), installed beside the
// chromium binary.
const HeadlessShell = "chromium-headless-shell"

// browserExecutable is the binary a launch runs: exe (the configured
// browser_executable), or the first Chromium found; for a headless launch,
// the headless shell beside it when one is installed. Measured
// (docs/browser.md, "What an agent item costs"): on the demo's product
// page with the hostile widget it spends a quarter less CPU than the full
// browser's headless mode, and opening a tab costs a tenth (the full
// browser builds a window with its tab strip for each tab). A headful
// launch (the login command) needs the full browser.
func browserExecutable(exe string, headless bool) string {
	if exe == "" {
		exe = findChromium()
	}
	if !headless || exe == "" || filepath.Base(exe) == HeadlessShell {
		return exe
	}
	if shell := filepath.Join(filepath.Dir(exe), HeadlessShell); isExecutable(shell) {
		return shell
	}
	return exe
}

// firstLine keeps an error's first line (Playwright appends ASCII-art
// banners) while keeping it matchable with errors.Is.
func firstLine(err error) error {
	msg := err.Error()
	i := strings.IndexByte(msg, '\n')
	if i < 0 {
		return err
	}
	return &trimmedError{msg: strings.TrimSpace(msg[:i]), err: err}
}

type trimmedError struct {
	msg string
	err error
}

func (e *trimmedError) Error() string { return e.msg }
func (e *trimmedError) Unwrap() error { return e.err }

// remoteIsCDP tells a CDP endpoint from a Playwright server endpoint.
func remoteIsCDP(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https" || strings.HasPrefix(u.Path, "/devtools/")
}

func (h *Host) connect(g *generation) error {
	o := h.opts
	g.remote = true
	timeout := playwright.Float(float64(o.LaunchTimeout.Milliseconds()))
	var err error
	cdp := remoteIsCDP(o.RemoteURL)
	if cdp {
		g.browser, err = g.pw.Chromium.ConnectOverCDP(o.RemoteURL, playwright.BrowserTypeConnectOverCDPOptions{Timeout: timeout})
	} else {
		g.browser, err = g.pw.Chromium.Connect(o.RemoteURL, playwright.BrowserTypeConnectOptions{Timeout: timeout})
	}
	if err != nil {
		return fmt.Errorf("browser: connecting to the remote browser at %s: %w (is it running and reachable?)", redactURL(o.RemoteURL), err)
	}
	g.browser.OnDisconnected(func(playwright.Browser) { h.onGone(g, "the remote browser disconnected") })
	// A context of our own, whose traffic goes through the policy proxy
	// (install verifies that it does). The remote browser's own profile is
	// not used: cookies live as long as the connection.
	g.ctx, err = g.browser.NewContext(playwright.BrowserNewContextOptions{
		Viewport:          &playwright.Size{Width: o.Width, Height: o.Height},
		DeviceScaleFactor: playwright.Float(1),
		// The proxy terminates TLS with its own key and verifies the
		// store's certificate itself; the remote browser cannot be told to
		// trust only that key.
		IgnoreHttpsErrors: playwright.Bool(true),
		AcceptDownloads:   playwright.Bool(false),
		ServiceWorkers:    playwright.ServiceWorkerPolicyBlock,
		Locale:            playwright.String(o.Locale),
		Proxy:             &playwright.Proxy{Server: cmp.Or(o.remoteProxy, h.proxy.URL())},
	})
	if err != nil {
		_ = g.browser.Close()
		return fmt.Errorf("browser: creating a context in the remote browser: %w", err)
	}
	g.ctx.OnClose(func(playwright.BrowserContext) { h.onGone(g, "the browser context closed") })
	return nil
}

// redactURL drops user info and query from a URL for logs and errors.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// install adds the policy, the banner and the popup handling to a new
// browser context.
func (h *Host) install(g *generation) error {
	// The binding first: new documents run bindings before init scripts,
	// and the banner asks through it as it starts.
	if err := g.ctx.ExposeBinding(itemBindingName, h.itemFor); err != nil {
		return fmt.Errorf("browser: installing the banner's item binding: %w", err)
	}
	if err := g.ctx.AddInitScript(playwright.Script{Content: playwright.String(bannerScript(h.profile.BannerText))}); err != nil {
		return fmt.Errorf("browser: installing the status banner: %w", err)
	}
	if err := g.ctx.AddInitScript(playwright.Script{Content: playwright.String(popupScript)}); err != nil {
		return fmt.Errorf("browser: installing the popup guard: %w", err)
	}
	// Sockets and workers are refused in every frame and popup of the
	// context too (diet.go), before their first script.
	if err := g.ctx.AddInitScript(playwright.Script{Content: playwright.String(socketGuardScript(h.profile.LoginHosts))}); err != nil {
		return fmt.Errorf("browser: installing the socket guard: %w", err)
	}
	if pages := g.ctx.Pages(); len(pages) > 0 {
		g.keeper = pages[0]
	} else {
		p, err := g.ctx.NewPage()
		if err != nil {
			return fmt.Errorf("browser: opening the first page: %w", err)
		}
		g.keeper = p
	}
	if err := h.verifyProxy(g); err != nil {
		return err
	}
	g.ctx.OnPage(func(p playwright.Page) { h.onPage(g, p) })
	sess, err := g.ctx.NewCDPSession(g.keeper)
	if err != nil {
		h.log.Warn("no CDP session for opening tab windows; tabs share one window", "err", err)
		return nil
	}
	info, err := sess.Send("Target.getTargetInfo", nil)
	if err != nil {
		h.log.Warn("no CDP target info; tabs share one window", "err", err)
		return nil
	}
	g.keeperSess = sess
	g.ownsWindows.Store(true)
	if m, ok := info.(map[string]any); ok {
		if ti, ok := m["targetInfo"].(map[string]any); ok {
			id, _ := ti["browserContextId"].(string)
			if g.remote {
				// Only a context we created needs naming; the default
				// context is where targets go without one.
				g.contextID = id
			}
		}
	}
	return nil
}

// openPage opens a blank page in a new window of the context. Headless
// Chromium only renders the front tab of a window, so tabs sharing a window
// could not all take screenshots; a window each keeps them independent.
func (h *Host) openPage(ctx context.Context, g *generation) (playwright.Page, error) {
	h.newPageMu.Lock()
	defer h.newPageMu.Unlock()
	if g.keeperSess == nil {
		return h.bounded(ctx, g, func() (playwright.Page, error) { return g.ctx.NewPage() })
	}
	ch := make(chan playwright.Page, 8)
	h.mu.Lock()
	h.awaitPage = ch
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.awaitPage == ch {
			h.awaitPage = nil
		}
		h.mu.Unlock()
		// Pages that came after ours are strays.
		for {
			select {
			case p := <-ch:
				h.spawn(func() { closePage(p) })
			default:
				return
			}
		}
	}()
	params := map[string]any{"url": "about:blank", "newWindow": true}
	if g.contextID != "" {
		params["browserContextId"] = g.contextID
	}
	created := make(chan createdTarget, 1)
	h.spawn(func() {
		r, err := g.keeperSess.Send("Target.createTarget", params)
		id := ""
		if m, ok := r.(map[string]any); ok {
			id, _ = m["targetId"].(string)
		}
		created <- createdTarget{id, err}
	})
	timeout := time.NewTimer(h.opts.TabTimeout)
	defer timeout.Stop()
	// Every opener-less page that appears meanwhile is checked against the
	// target we created: another one (a page opened with noopener whose
	// opener is gone) must not become an agent's tab.
	checked := make(chan pageID)
	done := make(chan struct{})
	defer close(done)
	var targetID string
	var candidates []playwright.Page
	check := func(p playwright.Page) {
		h.spawn(func() {
			select {
			case checked <- pageID{p, h.pageTargetID(g, p)}:
			case <-done:
				// openPage ended first: ours was found (this is a stray)
				// or the wait was abandoned (abandonTarget closes ours).
				closePage(p)
			}
		})
	}
	for {
		select {
		case r := <-created:
			if r.err != nil {
				return nil, r.err
			}
			targetID = r.id
			created = nil
			for _, p := range candidates {
				check(p)
			}
			candidates = nil
		case p := <-ch:
			if targetID == "" {
				candidates = append(candidates, p)
			} else {
				check(p)
			}
		case c := <-checked:
			if c.id == targetID {
				return c.page, nil
			}
			h.log.Warn("closing a tab nobody opened (no opener, not the new tab)")
			h.spawn(func() { closePage(c.page) })
		case <-ctx.Done():
			h.abandonTarget(g, created, targetID)
			return nil, ctx.Err()
		case <-g.gone:
			return nil, ErrBrowserGone
		case <-timeout.C:
			h.abandonTarget(g, created, targetID)
			return nil, errors.New("the new tab's window did not appear in time")
		}
	}
}

// pageID is a page and its CDP target id ("" when it could not be read).
type pageID struct {
	page playwright.Page
	id   string
}

// pageTargetID reads p's CDP target id through a short-lived session.
func (h *Host) pageTargetID(g *generation, p playwright.Page) string {
	sess, err := g.ctx.NewCDPSession(p)
	if err != nil {
		return ""
	}
	defer func() { _ = sess.Detach() }()
	info, err := sess.Send("Target.getTargetInfo", nil)
	if err != nil {
		return ""
	}
	if m, ok := info.(map[string]any); ok {
		if ti, ok := m["targetInfo"].(map[string]any); ok {
			id, _ := ti["targetId"].(string)
			return id
		}
	}
	return ""
}

// createdTarget is the answer to Target.createTarget.
type createdTarget struct {
	id  string
	err error
}

// abandonTarget closes a window openPage gave up waiting for.
func (h *Host) abandonTarget(g *generation, created chan createdTarget, targetID string) {
	h.spawn(func() {
		id := targetID
		if id == "" && created != nil {
			select {
			case r := <-created:
				id = r.id
			case <-time.After(closeStepTimeout):
			}
		}
		if id != "" {
			_, _ = g.keeperSess.Send("Target.closeTarget", map[string]any{"targetId": id})
		}
	})
}

// bounded runs a page-returning browser call, giving up at ctx's end (the
// page, if it still comes, is closed).
func (h *Host) bounded(ctx context.Context, g *generation, fn func() (playwright.Page, error)) (playwright.Page, error) {
	type res struct {
		p   playwright.Page
		err error
	}
	ch := make(chan res, 1)
	abandoned := make(chan struct{})
	h.spawn(func() {
		p, err := fn()
		select {
		case ch <- res{p, err}:
		case <-abandoned:
			if p != nil {
				closePage(p)
			}
		}
	})
	select {
	case r := <-ch:
		return r.p, r.err
	case <-ctx.Done():
		close(abandoned)
		return nil, ctx.Err()
	case <-g.gone:
		close(abandoned)
		return nil, ErrBrowserGone
	}
}

// onPage runs on Playwright's event goroutine for every new page: it hands
// pages we opened to openPage and closes popups.
func (h *Host) onPage(g *generation, p playwright.Page) {
	opener, _ := p.Opener()
	if opener == nil {
		// A page of ours (NewTab, Login): openPage checks it is the one it
		// created. Any other is a stray.
		h.mu.Lock()
		ch := h.awaitPage
		h.mu.Unlock()
		if ch != nil {
			select {
			case ch <- p:
				return
			default:
			}
		}
		if g.ownsWindows.Load() {
			h.log.Warn("closing a tab nobody opened (no opener)")
			h.spawn(func() { closePage(p) })
		}
		return
	}
	h.log.Debug("closing a new tab opened by a page")
	h.spawn(func() {
		h.handlePopup(opener, p)
	})
}

// closePage closes p, bounded.
func closePage(p playwright.Page) {
	done := make(chan struct{})
	go func() {
		_ = p.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeStepTimeout):
	}
}

// onGone is called (on Playwright's event goroutine) when a generation's
// browser or context goes away. Unless the Host is closing, it relaunches
// once.
func (h *Host) onGone(g *generation, why string) {
	h.mu.Lock()
	if g.isGone() {
		h.mu.Unlock()
		return
	}
	relaunch := !h.closed && h.cur == g && h.relaunching == nil
	var done chan struct{}
	if relaunch {
		done = make(chan struct{})
		h.relaunching = done
		h.relaunches++
	}
	g.goneOnce.Do(func() { close(g.gone) })
	h.mu.Unlock()
	if !relaunch {
		return
	}
	h.log.Warn("the browser is gone; relaunching it once", "why", why, "generation", g.n)
	h.spawn(func() {
		h.stopGeneration(g, closeStepTimeout)
		ctx, cancel := context.WithTimeout(h.life, h.opts.LaunchTimeout)
		ng, err := h.start(ctx)
		cancel()
		h.mu.Lock()
		closed := h.closed
		switch {
		case err != nil:
			h.dead = err
		case !closed:
			h.cur = ng
		}
		h.relaunching = nil
		close(done)
		h.mu.Unlock()
		if closed && ng != nil {
			h.stopGeneration(ng, closeStepTimeout)
			return
		}
		if err != nil {
			h.log.Error("relaunching the browser failed", "err", err)
		} else {
			h.log.Info("browser relaunched", "generation", ng.n)
		}
	})
}

// stopGeneration closes a generation's context and driver, bounded.
func (h *Host) stopGeneration(g *generation, bound time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if g.ctx != nil && !g.isGone() {
			_ = g.ctx.Close()
		}
		if g.browser != nil {
			_ = g.browser.Close()
		}
	}()
	select {
	case <-done:
	case <-time.After(bound):
		h.log.Warn("closing the browser took too long; stopping the driver")
	}
	g.goneOnce.Do(func() { close(g.gone) })
	if g.sharedDriver {
		return
	}
	stopped := make(chan struct{})
	go func() {
		_ = g.pw.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(bound):
		h.log.Warn("stopping the Playwright driver took too long")
	}
}

// current returns the live generation, waiting for a relaunch in progress.
func (h *Host) current(ctx context.Context) (*generation, error) {
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return nil, ErrClosed
		}
		if h.dead != nil {
			err := h.dead
			h.mu.Unlock()
			return nil, fmt.Errorf("%w: relaunching failed: %w", ErrBrowserGone, err)
		}
		if ch := h.relaunching; ch != nil {
			h.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the browser to relaunch: %w", ctx.Err())
			}
		}
		g := h.cur
		h.mu.Unlock()
		if g.isGone() {
			// onGone has not run yet for this generation, or it is a
			// generation Close is shutting down.
			select {
			case <-time.After(settlePollInterval):
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("waiting for the browser: %w", ctx.Err())
			}
		}
		return g, nil
	}
}

// spawn runs fn on a goroutine the Host owns (Close waits for it). After
// Close started waiting it runs nothing and returns false.
func (h *Host) spawn(fn func()) bool {
	if !h.own() {
		return false
	}
	go func() {
		defer h.wg.Done()
		fn()
	}()
	return true
}

// own counts the calling goroutine among those Close waits for; the
// caller must call h.wg.Done when it ends. After Close started waiting it
// returns false and counts nothing.
func (h *Host) own() bool {
	h.spawnMu.Lock()
	defer h.spawnMu.Unlock()
	if h.noSpawn {
		return false
	}
	h.wg.Add(1)
	return true
}

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// Relaunches counts how many times the browser was relaunched after a
// crash or disconnect.
func (h *Host) Relaunches() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.relaunches
}

// BlockedHosts returns how many requests to each host outside the
// allowlist were blocked, as a hint for tuning the allowlist.
func (h *Host) BlockedHosts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.blocked)
}

// Profile returns the store profile the Host enforces.
func (h *Host) Profile() store.Profile { return h.profile }

// noteBlockedHost counts a blocked host and logs it the first time.
func (h *Host) noteBlockedHost(host, by string) {
	host = store.NormalizeHost(host)
	h.mu.Lock()
	h.blocked[host]++
	first := h.blocked[host] == 1
	h.mu.Unlock()
	if first {
		h.log.Info("blocked a host outside the store's allowlist (logged once per host; counts at close)", "host", host, "by", by)
	}
}

// Close closes every tab and the browser, within ctx's deadline (or
// Options.CloseTimeout when ctx has none), and stops the driver and the
// proxy. It is safe to call twice.
func (h *Host) Close(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.opts.CloseTimeout)
		defer cancel()
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	relaunch := h.relaunching
	h.mu.Unlock()
	h.stopLife()
	if relaunch != nil {
		select {
		case <-relaunch:
		case <-ctx.Done():
		}
	}
	bound := closeStepTimeout
	if d, ok := ctx.Deadline(); ok {
		bound = max(time.Until(d)/2, 100*time.Millisecond)
	}
	h.mu.Lock()
	g := h.cur
	h.mu.Unlock()
	if g != nil {
		h.stopGeneration(g, bound)
	}
	var err error
	if h.proxy != nil {
		err = h.proxy.Close()
	}
	h.spawnMu.Lock()
	h.noSpawn = true
	h.spawnMu.Unlock()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("browser: closing: some browser calls did not end in time: %w", ctx.Err()))
	}
	if b := h.BlockedHosts(); len(b) > 0 {
		h.log.Info("hosts blocked during this session (promote needed ones to the store allowlist)", "blocked", b)
	}
	return err
}

// pageState returns the state of one of our tab pages, or nil.
func (h *Host) pageState(p playwright.Page) *pageState {
	if p == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pages[p]
}
