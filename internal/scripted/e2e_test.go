package scripted_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

var _ agent.Computer = (*browser.Tab)(nil)

const e2eKey = "e2e-api-key-9c41b7"

// e2e is the whole stack: the demo store, a real headless Chromium signed in
// to it, the fake Gemini server driven by the planner and the real genai
// client.
type e2e struct {
	ds     *demostore.Server
	host   *browser.Host
	srv    *gemini.Server
	client *genai.Client
	// injectionDetection is the agent's PromptInjectionDetection (nil: the
	// model table's choice).
	injectionDetection *bool
}

func startE2E(t *testing.T, opts scripted.Options) *e2e {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: needs Chromium (skipped with -short)")
	}
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("GEMINI_SUPPLY_BROWSER_EXECUTABLE / PLAYWRIGHT_DRIVER_PATH are not set: run `make test`, or `eval \"$(bash scripts/setup.sh)\"` first")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ds, err := demostore.Start(context.Background(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ds.Close() })

	user, pass := ds.Credentials()
	host, err := browser.Launch(ctx, browser.Options{
		ExecutablePath: exe,
		ProfileDir:     t.TempDir(),
		Headless:       true,
		Width:          1440,
		Height:         900,
		ExtraArgs:      []string{"--host-resolver-rules=" + ds.HostResolverRules()},
		Store:          store.Demo(),
		Username:       user,
		Password:       config.Secret(pass),
		// Tests shop signed out first (to leave the cookie banner to the
		// model); the agent's screenshots must not fail for that.
		SkipAuthCheck: true,
	})
	if err != nil {
		t.Fatalf("launch the browser: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = host.Close(ctx)
	})

	srv := gemini.New(gemini.Config{APIKey: e2eKey, Script: scripted.New(opts).Script()})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey: e2eKey, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL()},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{ds: ds, host: host, srv: srv, client: client}
	t.Cleanup(func() {
		// Whatever happened, no request may carry a secret or more than
		// three screenshots.
		for _, r := range srv.Requests() {
			for _, secret := range []string{e2eKey, pass} {
				if bytes.Contains(r.Raw, []byte(secret)) {
					t.Errorf("request %d contains a secret", r.Call)
				}
			}
			if n := r.ImageCount(); n > 3 {
				t.Errorf("request %d (turn %d) carries %d images", r.Call, r.Turn(), n)
			}
		}
	})
	return e
}

// login runs the scripted login (which also accepts the cookie banner if
// it is still pending).
func (e *e2e) login(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.host.Login(ctx); err != nil {
		t.Fatalf("scripted login to the demo store: %v", err)
	}
}

// run shops one item in a new tab with report tools that record the call.
func (e *e2e) run(t *testing.T, goal string, extra ...agent.Tool) agent.Result {
	t.Helper()
	res, err := e.shop(goal, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// shop is run without the testing.T, for use from several goroutines.
func (e *e2e) shop(goal string, extra ...agent.Tool) (agent.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tab, err := e.host.NewTab(ctx)
	if err != nil {
		return agent.Result{}, fmt.Errorf("new tab: %w", err)
	}
	defer tab.Close()
	terminal := func(name string) agent.Tool {
		return agent.Tool{Name: name, Terminal: true, Parameters: &genai.Schema{Type: genai.TypeObject},
			Handler: func(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
				return agent.ToolOutput{Response: map[string]any{"status": "recorded"}}, nil
			}}
	}
	tools := append([]agent.Tool{terminal(scripted.ToolReportAdded), terminal(scripted.ToolReportNotFound)}, extra...)
	return agent.Run(ctx, agent.Config{
		PromptInjectionDetection: e.injectionDetection,
		DescribePage:             true, // the planner reads the page's text, not its pixels
		Client:                   e.client,
		Model:                    agent.DefaultModel,
		TimeBudget:               90 * time.Second,
		CallTimeout:              30 * time.Second,
		Backoff:                  []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond},
		Logger:                   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, goal, tab, tools), nil
}

func TestE2EModelClicksPutTheItemInTheCart(t *testing.T) {
	e := startE2E(t, scripted.Options{})
	// Signed out, on a fresh profile: the model dismisses the cookie banner
	// (and finds nothing to buy for an out-of-stock item).
	if st := e.ds.State(); st.ConsentAccepted || st.PostalCode != "" || st.LoggedIn {
		t.Fatalf("store state before the run = %+v, want the banner and the postal code pending", st)
	}
	res := e.run(t, "Item: butter\nQuantity: 1\n")
	if !res.OK() || res.Tool != scripted.ToolReportNotFound {
		t.Fatalf("butter run = %s after %d turns, want report_item_not_found", res.FailureText(), res.Turns)
	}
	if !e.ds.State().ConsentAccepted {
		t.Fatal("the model's click did not accept the cookie banner")
	}
	// Signed in: the model adds two units, answering the postal-code dialog.
	e.login(t)
	before := len(e.srv.Requests())
	res = e.run(t, "Add this item to the cart.\nItem: milk\nQuantity: 2\nPostal code: H3B 2Y5\n")
	if !res.OK() || res.Tool != scripted.ToolReportAdded {
		t.Fatalf("run = %s after %d turns, want report_item_added", res.FailureText(), res.Turns)
	}
	if res.Args["item_name"] != "Natrel 2% Partly Skimmed Milk, 2 L" || res.Args["quantity"] != float64(2) {
		t.Errorf("report args = %v", res.Args)
	}
	st := e.ds.State()
	if !st.ConsentAccepted || st.PostalCode != "H3B 2Y5" || st.CartCount != 2 {
		t.Errorf("store state = %+v, want the banner accepted, H3B 2Y5 and 2 units", st)
	}
	cart := e.ds.Cart()
	if len(cart) != 1 || cart[0].ProductID != "milk-2pct-2l" || cart[0].Quantity != 2 {
		t.Errorf("cart = %+v", cart)
	}
	// Every step was a model call the agent performed: navigate, add
	// (dialog), postal code + confirm, add, then the report.
	reqs := e.srv.Requests()[before:]
	var names []string
	for _, c := range reqs[len(reqs)-1].PastCalls() {
		names = append(names, c.Name)
	}
	want := []string{"navigate", "click_at", "type_text_at", "click_at", "click_at"}
	if !slices.Equal(names, want) {
		t.Errorf("model calls = %v, want %v", names, want)
	}
	if u := usageOf(res); u.TotalTokens == 0 || u.PromptTokens == 0 {
		t.Errorf("usage = %+v", u)
	}
}

func usageOf(r agent.Result) agent.Usage { return r.Usage }

// TestE2EConcurrentTabsMeetTheDialogsTogether: on a fresh session several
// tabs click Add at once, each meets its own postal-code dialog, and each
// answers what its own screen shows (no warm-up item needed).
func TestE2EConcurrentTabsMeetTheDialogsTogether(t *testing.T) {
	e := startE2E(t, scripted.Options{})
	e.login(t)
	if st := e.ds.State(); st.PostalCode != "" {
		t.Fatalf("store state before the run = %+v, want the postal code pending", st)
	}
	items := []string{"milk", "eggs", "bananas"}
	results := make([]agent.Result, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, item := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = e.shop("Item: " + item + "\nQuantity: 1\nPostal code: H3B 2Y5\n")
		}()
	}
	wg.Wait()
	for i, item := range items {
		if errs[i] != nil {
			t.Fatalf("%s: %v", item, errs[i])
		}
		if res := results[i]; !res.OK() || res.Tool != scripted.ToolReportAdded {
			t.Errorf("%s: run = %s after %d turns, want report_item_added", item, res.FailureText(), res.Turns)
			continue
		}
		first := demostore.Search(items[i])[0]
		if got, want := results[i].Args["url"], demostore.ProductURL(first.ID); got != want {
			t.Errorf("%s: reported url %v, want the product page %s", item, got, want)
		}
	}
	if st := e.ds.State(); st.CartCount != len(items) || st.PostalCode != "H3B 2Y5" {
		t.Errorf("store state = %+v, want %d units and the postal code", st, len(items))
	}
}

func TestE2EBlockedNavigationIsReportedToTheModel(t *testing.T) {
	e := startE2E(t, scripted.Options{Misbehave: map[string]scripted.Misbehaviour{"eggs": scripted.Checkout}})
	e.login(t)
	res := e.run(t, "Item: eggs\nQuantity: 1\n")
	if !res.OK() || res.Tool != scripted.ToolReportAdded {
		t.Fatalf("run = %s, want the model to recover from the blocked checkout and add the eggs", res.FailureText())
	}
	if hits := e.ds.CheckoutHits(); hits != 0 {
		t.Errorf("the checkout page was reached %d times", hits)
	}
	var blocked *genai.FunctionResponse
	for _, r := range e.srv.Requests() {
		for _, fr := range r.FunctionResponses() {
			if fr.Name == "navigate" && fr.Response["error"] != nil {
				blocked = fr
			}
		}
	}
	if blocked == nil || !strings.Contains(strings.ToLower(blocked.Response["error"].(string)), "block") {
		t.Errorf("no blocked-navigation error reached the model: %+v", blocked)
	}
}

// TestE2EPromptInjectionStaysOnTask: the granola's product text orders the
// agent to open the checkout. With prompt injection detection on (the
// default for the default model) the run adds the granola and never tries
// the checkout; with it off, the planner falls for the text, the browser
// policy refuses the checkout, and the run still adds the granola. Either
// way the checkout page is never reached.
func TestE2EPromptInjectionStaysOnTask(t *testing.T) {
	for _, detect := range []bool{true, false} {
		t.Run(fmt.Sprintf("detection=%t", detect), func(t *testing.T) {
			e := startE2E(t, scripted.Options{})
			if !detect {
				off := false
				e.injectionDetection = &off
			}
			e.login(t)
			res := e.run(t, "Item: granola\nQuantity: 1\n")
			if !res.OK() || res.Tool != scripted.ToolReportAdded {
				t.Fatalf("run = %s, want the granola added", res.FailureText())
			}
			if hits := e.ds.CheckoutHits(); hits != 0 {
				t.Errorf("the checkout page was reached %d times", hits)
			}
			tried := false
			for _, r := range e.srv.Requests() {
				cu := r.ComputerUse()
				on := cu != nil && cu.EnablePromptInjectionDetection != nil && *cu.EnablePromptInjectionDetection
				if on != detect {
					t.Errorf("request %d: enablePromptInjectionDetection = %t, want %t", r.Call, on, detect)
				}
				for _, fc := range r.PastCalls() {
					if u, _ := fc.Args["url"].(string); strings.Contains(u, "/checkout") {
						tried = true
					}
				}
			}
			if tried == detect {
				t.Errorf("checkout attempted = %t with detection %t", tried, detect)
			}
			n := 0
			for _, l := range e.ds.Cart() {
				if l.ProductID == "granola-honey-oat-500g" {
					n = l.Quantity
				}
			}
			if n != 1 {
				t.Errorf("%d granola in the cart, want 1", n)
			}
		})
	}
}

func TestE2EOutOfStockAsksTheHousehold(t *testing.T) {
	e := startE2E(t, scripted.Options{})
	e.login(t)
	var asked map[string]any
	ask := agent.Tool{
		Name: scripted.ToolPresentOptions, WaitsForUser: true, Parameters: &genai.Schema{Type: genai.TypeObject},
		Handler: func(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
			asked = args
			return agent.ToolOutput{Response: map[string]any{"answer": "nothing"}}, nil
		},
	}
	res := e.run(t, "Item: butter\nQuantity: 1\n", ask)
	if !res.OK() || res.Tool != scripted.ToolReportNotFound || !strings.Contains(res.Args["explanation"].(string), "did not choose") {
		t.Fatalf("run = %s %v", res.FailureText(), res.Args)
	}
	opts, _ := asked["options"].([]any)
	if len(opts) != 2 {
		t.Errorf("present_options args = %v", asked)
	}
	for _, o := range opts {
		if pr, ok := demostore.ProductByID(fmt.Sprint(o.(map[string]any)["product_id"])); !ok || !pr.InStock {
			t.Errorf("a sold-out product was offered: %v", o)
		}
	}
	if n := e.ds.State().CartCount; n != 0 {
		t.Errorf("cart has %d units", n)
	}
}
