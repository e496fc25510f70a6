package shop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// ModelCartReader reads the cart page with one model call: it opens the
// cart in a tab, takes up to Screens screenshots while scrolling down, and
// asks the model for the cart lines as structured output (a response
// schema), so no CSS selector of the store is needed.
type ModelCartReader struct {
	Client  *genai.Client
	Model   string
	CartURL string
	// Limiter is the run's model-call limiter (nil: none).
	Limiter agent.Limiter
	// Screens is the most screenshots taken (default 4).
	Screens int
	// Price overrides the model table's price for Cart.Usage.CostUSD
	// (nil: the table's; unknown for a model without one).
	Price  *agent.Price
	Logger *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// PriceDay is the day whose table price the reading is costed with:
	// the run's start, as its agents are (agent.Config.PriceDay; zero:
	// the day of the reading).
	PriceDay time.Time
}

var _ CartReader = (*ModelCartReader)(nil)

// cartSchema is the structured output the model fills in.
var cartSchema = &genai.Schema{
	Type: genai.TypeObject,
	Properties: map[string]*genai.Schema{
		"is_cart_page": {Type: genai.TypeBoolean, Description: "True when the screenshots show the store's shopping cart (even an empty one)."},
		"lines": {
			Type:        genai.TypeArray,
			Description: "Every product line of the cart, once each, top to bottom.",
			Items: &genai.Schema{
				Type: genai.TypeObject,
				Properties: map[string]*genai.Schema{
					"name":            {Type: genai.TypeString, Description: "Product name as shown, with brand and size."},
					"quantity":        {Type: genai.TypeInteger, Description: "Units of this product in the cart."},
					"unit_price_text": {Type: genai.TypeString, Description: "Price of one unit as shown (empty if not shown)."},
					"line_total_text": {Type: genai.TypeString, Description: "Total of the line as shown (empty if not shown)."},
				},
				Required: []string{"name", "quantity"},
			},
		},
	},
	Required: []string{"is_cart_page", "lines"},
}

const cartPrompt = `These screenshots show one web page of an online grocery store, scrolled down step by step (consecutive screenshots may overlap).
Read the shopping cart: list every product line exactly once with its name (brand, name, size as shown), the quantity, the unit price text and the line total text as shown.
Ignore recommendations, "you may also like" lists and anything outside the cart. If the page is not a cart (for example a sign-in page or an error), set is_cart_page to false and return no lines.`

type modelCart struct {
	IsCartPage bool `json:"is_cart_page"`
	Lines      []struct {
		Name          string `json:"name"`
		Quantity      int    `json:"quantity"`
		UnitPriceText string `json:"unit_price_text"`
		LineTotalText string `json:"line_total_text"`
	} `json:"lines"`
}

// ReadCart opens the cart page in a new tab of h and reads it.
func (m *ModelCartReader) ReadCart(ctx context.Context, h Host) (Cart, error) {
	if m.Client == nil || m.Model == "" || m.CartURL == "" {
		return Cart{}, errors.New("read the cart: no model or cart URL configured")
	}
	tab, err := h.NewTab(ctx)
	if err != nil {
		return Cart{}, fmt.Errorf("read the cart: open a tab: %w", err)
	}
	defer func() { _ = tab.Close() }()
	if err := tab.Navigate(ctx, m.CartURL); err != nil {
		return Cart{}, fmt.Errorf("read the cart: open %s: %w", m.CartURL, err)
	}
	screens := m.Screens
	if screens <= 0 {
		screens = 4
	}
	parts := []*genai.Part{genai.NewPartFromText(cartPrompt)}
	var prev []byte
	for i := range screens {
		png, err := tab.Screenshot(ctx)
		if err != nil {
			return Cart{}, fmt.Errorf("read the cart: screenshot: %w", err)
		}
		if prev != nil && bytes.Equal(png, prev) {
			break // scrolling no longer moves: the end of the page
		}
		parts = append(parts, genai.NewPartFromBytes(png, "image/png"))
		prev = png
		if i < screens-1 {
			if err := tab.ScrollDocument(ctx, agent.DirectionDown); err != nil {
				break
			}
		}
	}
	return m.ask(ctx, parts)
}

// ask makes the one model call and decodes the cart.
func (m *ModelCartReader) ask(ctx context.Context, parts []*genai.Part) (Cart, error) {
	if m.Limiter != nil {
		if err := m.Limiter.Acquire(ctx, 1); err != nil {
			return Cart{}, fmt.Errorf("read the cart: %w", err)
		}
		defer m.Limiter.Release(1)
	}
	// No sampling parameters: temperature is deprecated for Gemini 3
	// models (the default is what they are tuned for); the schema keeps the
	// answer well-formed.
	resp, err := m.Client.Models.GenerateContent(ctx, m.Model,
		[]*genai.Content{genai.NewContentFromParts(parts, genai.RoleUser)},
		&genai.GenerateContentConfig{
			ResponseMIMEType: "application/json",
			ResponseSchema:   cartSchema,
		})
	if err != nil {
		return Cart{}, fmt.Errorf("read the cart with the model %s: %w", m.Model, err)
	}
	var usage report.Usage
	if u := resp.UsageMetadata; u != nil {
		// Thinking is billed as output: count it there.
		au := agent.Usage{
			PromptTokens:  int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount),
			OutputTokens:  int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			ThoughtTokens: int64(u.ThoughtsTokenCount),
			TotalTokens:   int64(u.TotalTokenCount),
		}
		day := m.PriceDay
		if day.IsZero() {
			day = m.now()
		}
		au = agent.Cost(au, m.Model, m.Price, day)
		usage = report.Usage{PromptTokens: au.PromptTokens, OutputTokens: au.OutputTokens, TotalTokens: au.TotalTokens,
			CostUSD: au.CostUSD, CostUnknown: au.CostUnknown}
	}
	usage.Calls = 1
	text := responseText(resp)
	var mc modelCart
	if err := json.Unmarshal([]byte(text), &mc); err != nil {
		return Cart{Usage: usage}, fmt.Errorf("read the cart: the model's answer is not the cart JSON: %w", err)
	}
	if !mc.IsCartPage {
		return Cart{Usage: usage}, errors.New("read the cart: the cart page did not show a cart (signed out, or the page failed to load)")
	}
	c := Cart{Lines: []CartLine{}, ReadAt: m.now(), Usage: usage, Source: CartFromModel}
	for _, l := range mc.Lines {
		name := strings.TrimSpace(l.Name)
		if name == "" || l.Quantity <= 0 {
			continue
		}
		price := money.Parse(l.UnitPriceText)
		if !price.Known {
			if tot := money.Parse(l.LineTotalText); tot.Known {
				price = money.Price{Text: l.LineTotalText, UnitCents: tot.UnitCents / money.Cents(l.Quantity), Known: true}
			}
		}
		c.Lines = append(c.Lines, CartLine{Name: name, Quantity: l.Quantity, Price: price})
	}
	return c, nil
}

func (m *ModelCartReader) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// responseText joins the text parts of the first candidate (not thoughts).
func responseText(resp *genai.GenerateContentResponse) string {
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range resp.Candidates[0].Content.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return strings.TrimSpace(b.String())
}
