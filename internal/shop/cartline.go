package shop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// ErrNoCartOperation is returned by SetCartLine for a store whose profile
// does not describe its cart's set-quantity operation (metro.ca: the
// agent changes the line, AgentCartLine), and by AgentCartLine for a store
// without a cart page.
var ErrNoCartOperation = errors.New("this store's cart cannot be changed by gemini-supply: open the cart and change it there")

// ErrNotInCart is returned by SetCartLine when the store says the product
// is not in the cart.
var ErrNotInCart = errors.New("the product is not in the cart")

// cartPoster is a tab that can send the store's cart operation from one of
// the store's pages (*browser.Tab).
type cartPoster interface {
	Tab
	Load(ctx context.Context, url string) error
	PostJSON(ctx context.Context, url string, body map[string]any) (int, []byte, error)
}

// SetCartLine sets the quantity of a product's cart line (0 removes it)
// with the store's own cart operation (the profile's CartSet op), sent from
// a store page in a new tab of h — through the same policy proxy, cart gate
// and cart ledger as every agent's request, never around them. It signs in
// first when the tab is signed out.
func SetCartLine(ctx context.Context, h Host, st Store, productID string, qty int) error {
	op := st.CartSet
	if op.Kind != store.CartSet || op.Path == "" || op.ProductField == "" || op.QuantityField == "" {
		return ErrNoCartOperation
	}
	if productID == "" {
		return errors.New("the cart line has no product id")
	}
	target, err := opURL(st.HomeURL, op.Path)
	if err != nil {
		return err
	}
	tab, err := h.NewTab(ctx)
	if err != nil {
		return fmt.Errorf("open a tab: %w", err)
	}
	defer func() { _ = tab.Close() }()
	pt, ok := tab.(cartPoster)
	if !ok {
		return fmt.Errorf("shop: a %T cannot send cart operations", tab)
	}
	page := st.CartURL
	if page == "" {
		page = st.HomeURL
	}
	if err := pt.Load(ctx, page); err != nil {
		return fmt.Errorf("open %s: %w", page, err)
	}
	if in, err := h.IsAuthenticated(ctx, tab); err != nil || !in {
		if err := h.Login(ctx); err != nil {
			return fmt.Errorf("sign in: %w", err)
		}
		if err := pt.Load(ctx, page); err != nil {
			return fmt.Errorf("open %s: %w", page, err)
		}
	}
	status, body, err := pt.PostJSON(ctx, target, map[string]any{op.ProductField: productID, op.QuantityField: qty})
	switch {
	case err != nil:
		return fmt.Errorf("change the cart: %w", err)
	case status == http.StatusNotFound:
		return ErrNotInCart
	case status < 200 || status > 299:
		return fmt.Errorf("change the cart: the store answered %d: %s", status, strings.TrimSpace(string(body[:min(len(body), 300)])))
	}
	return nil
}

// opURL is a cart operation's address on the store's host.
func opURL(home, path string) (string, error) {
	u, err := url.Parse(home)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("the store's home page %q is not an address", home)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: path}).String(), nil
}

// ToolReportCartChanged ends an agent's cart change (AgentCartLine).
const ToolReportCartChanged = "report_cart_changed"

// cartAgentTurns bounds an agent's cart change: open the cart, find the
// line, a few clicks, the report.
const cartAgentTurns = 15

// AgentCartLine sets the quantity of a cart line (0 removes it) with the
// agent, for a store whose profile describes no cart operation (metro): the
// agent opens the cart page in a new tab of h, finds the line by the
// product's name and changes it with the page's own controls (the same
// browser, policy proxy and cart gate as a run; checking out is refused as
// always), then reports the line's quantity. run is agent.Run (or a test's);
// cfg is the run's agent configuration.
func AgentCartLine(ctx context.Context, h Host, st Store, run AgentFunc, cfg agent.Config, product string, qty int) error {
	if run == nil {
		run = agent.Run
	}
	if st.CartURL == "" {
		return ErrNoCartOperation
	}
	tab, err := h.NewTab(ctx)
	if err != nil {
		return fmt.Errorf("open a tab: %w", err)
	}
	defer func() { _ = tab.Close() }()
	if err := tab.Navigate(ctx, st.CartURL); err != nil {
		return fmt.Errorf("open %s: %w", st.CartURL, err)
	}
	if in, err := h.IsAuthenticated(ctx, tab); err != nil || !in {
		if err := h.Login(ctx); err != nil {
			return fmt.Errorf("sign in: %w", err)
		}
		if err := tab.Navigate(ctx, st.CartURL); err != nil {
			return fmt.Errorf("open %s: %w", st.CartURL, err)
		}
	}
	change := fmt.Sprintf("Set its quantity to %d with the page's own controls (the quantity box, or the − and + buttons).", qty)
	if qty == 0 {
		change = "Remove it from the cart with the line's own Remove (or trash) button."
	}
	goal := fmt.Sprintf(`This tab shows the shopping cart of %s (%s).
Find the cart line of this product: %q.
%s
Change nothing else: no other line, no checkout, no account page.
Then call %s with the quantity the line shows now (0 when it is gone). If no line of the cart is this product, call it with found false.`,
		st.DisplayName, st.CartURL, product, change, ToolReportCartChanged)
	type reported struct {
		found    bool
		quantity int
	}
	tools := []agent.Tool{{
		Name:        ToolReportCartChanged,
		Description: "Report the cart line's quantity after the change.",
		Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
			"found":    {Type: genai.TypeBoolean, Description: "Whether the cart has a line of the product."},
			"quantity": {Type: genai.TypeInteger, Description: "The line's quantity now (0 when it is gone)."},
		}, Required: []string{"found", "quantity"}},
		Terminal: true,
		Handler: func(_ context.Context, args map[string]any) (agent.ToolOutput, error) {
			found, _ := args["found"].(bool)
			return agent.ToolOutput{Response: map[string]any{"status": "recorded"}, End: true,
				Payload: reported{found: found, quantity: argInt(args, "quantity")}}, nil
		},
	}}
	cfg.HomeURL = st.HomeURL
	cfg.TraceDir = "" // not an item's attempt
	cfg.Observe = nil
	if cfg.MaxTurns <= 0 || cfg.MaxTurns > cartAgentTurns {
		cfg.MaxTurns = cartAgentTurns
	}
	if cfg.SystemInstruction == "" {
		cfg.SystemInstruction = "You operate a web browser to change one line of a grocery store's shopping cart. Never place an order."
	}
	res := run(ctx, cfg, goal, tab, tools)
	got, ok := res.Payload.(reported)
	switch {
	case !res.OK() || !ok:
		return fmt.Errorf("the agent could not change the cart: %s", res.FailureText())
	case !got.found:
		return ErrNotInCart
	case got.quantity != qty:
		return fmt.Errorf("the agent left the line at %d, not %d", got.quantity, qty)
	}
	return nil
}
