package shop

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sync/semaphore"
	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
)

// pagedTab shows a cart page of n screens: each scroll shows the next one,
// the last one stays.
type pagedTab struct {
	fakeTab
	mu        sync.Mutex
	navigated string
	screen    int
	screens   int
}

func (t *pagedTab) Navigate(_ context.Context, u string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.navigated, t.screen = u, 0
	return nil
}

func (t *pagedTab) ScrollDocument(context.Context, agent.Direction) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.screen < t.screens-1 {
		t.screen++
	}
	return nil
}

func (t *pagedTab) Screenshot(context.Context) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return []byte{0x89, 'P', 'N', 'G', byte(t.screen)}, nil
}

type pagedHost struct {
	fakeHost
	tab *pagedTab
}

func (h *pagedHost) NewTab(context.Context) (Tab, error) { return h.tab, nil }

// TestModelCartReader reads a cart page with one structured-output call to
// the fake Gemini server through the real genai client.
func TestModelCartReader(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		wantErr string
		want    []CartLine
	}{
		{
			name:  "cart with lines",
			reply: `{"is_cart_page": true, "lines": [{"name": "Natrel 2% Milk 2 L", "quantity": 2, "unit_price_text": "$5.49", "line_total_text": "$10.98"}, {"name": "POM White Bread 675 g", "quantity": 1, "unit_price_text": "", "line_total_text": "$3.99"}, {"name": "", "quantity": 1}]}`,
			want:  []CartLine{{Name: "Natrel 2% Milk 2 L", Quantity: 2}, {Name: "POM White Bread 675 g", Quantity: 1}},
		},
		{name: "empty cart", reply: `{"is_cart_page": true, "lines": []}`, want: []CartLine{}},
		{name: "not a cart page", reply: `{"is_cart_page": false, "lines": []}`, wantErr: "did not show a cart"},
		{name: "not JSON", reply: `The cart has milk.`, wantErr: "not the cart JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := gemini.New(gemini.Config{APIKey: "test-key", Script: func(*gemini.Request) gemini.Reply { return gemini.Reply{Text: tc.reply} }})
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			client, err := srv.NewClient(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tab := &pagedTab{screens: 3}
			h := &pagedHost{tab: tab}
			tab.host = &h.fakeHost
			rd := &ModelCartReader{Client: client, Model: "gemini-3.8-flash", CartURL: "https://shop.test/cart", Screens: 5,
				Limiter: semaphore.NewWeighted(1), Price: &agent.Price{Input: 1, Output: 10}}
			cart, err := rd.ReadCart(context.Background(), h)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cart.Lines) != len(tc.want) {
				t.Fatalf("lines = %+v, want %+v", cart.Lines, tc.want)
			}
			for i, w := range tc.want {
				if cart.Lines[i].Name != w.Name || cart.Lines[i].Quantity != w.Quantity || !cart.Lines[i].Price.Known {
					t.Errorf("line %d = %+v, want %+v with a known price", i, cart.Lines[i], w)
				}
			}
			if len(cart.Lines) == 2 && (cart.Lines[0].Price.UnitCents != 549 || cart.Lines[1].Price.UnitCents != 399) {
				t.Errorf("prices = %v, %v", cart.Lines[0].Price, cart.Lines[1].Price)
			}
			// Thinking is billed as output: the fake's thoughts (medium by
			// default) are in OutputTokens and priced there.
			thoughts := int64(gemini.ThoughtTokens[genai.ThinkingLevelMedium])
			u := cart.Usage
			want := float64(u.PromptTokens)*1/1e6 + float64(u.OutputTokens)*10/1e6
			if u.TotalTokens == 0 || u.OutputTokens <= thoughts || u.CostUnknown || u.CostUSD != want {
				t.Errorf("usage = %+v, want output above %d thinking tokens and cost %v", u, thoughts, want)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model calls, want exactly one", len(reqs))
			}
			req := reqs[0]
			if tab.navigated != "https://shop.test/cart" || req.ImageCount() != 3 || req.Model != "gemini-3.8-flash" {
				t.Errorf("navigated %q, %d images (want 3: scrolling stops at the page end), model %s", tab.navigated, req.ImageCount(), req.Model)
			}
			gc, _ := json.Marshal(req.GenerationConfig)
			if !strings.Contains(string(gc), `"responseMimeType":"application/json"`) || !strings.Contains(string(gc), `"is_cart_page"`) {
				t.Errorf("generation config lacks the response schema: %s", gc)
			}
			if strings.Contains(string(gc), "temperature") {
				t.Errorf("generation config sends a sampling parameter deprecated for Gemini 3: %s", gc)
			}
		})
	}
}

// TestModelCartReaderInReview: the review of a metro-like store built from
// two model readings catches a reported item that is not in the cart.
func TestModelCartReaderInReview(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := gemini.New(gemini.Config{APIKey: "k", Script: func(*gemini.Request) gemini.Reply {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return gemini.Reply{Text: `{"is_cart_page": true, "lines": [{"name": "Van Houtte Ground Coffee 340 g", "quantity": 1, "unit_price_text": "$9.99"}]}`}
		}
		return gemini.Reply{Text: `{"is_cart_page": true, "lines": [{"name": "Van Houtte Ground Coffee 340 g", "quantity": 1, "unit_price_text": "$9.99"}, {"name": "Natrel 2% Partly Skimmed Milk 2 L", "quantity": 1, "unit_price_text": "$5.49"}]}`}
	}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client, err := srv.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := newFakeProvider("milk", "bread")
	a := newFakeAgent(map[string]behaviour{"milk": added("Natrel 2% Partly Skimmed Milk 2 L", "$5.49"), "bread": added("POM White Bread 675 g", "$3.99")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.Cart = &ModelCartReader{Client: client, Model: "m", CartURL: "https://shop.test/cart"}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Review == nil || len(res.Review.Warnings) != 1 || res.Review.Warnings[0].Kind != reviewpack.WarnMissing || res.Review.Warnings[0].Item != "bread" {
		t.Fatalf("review = %+v", res.Review)
	}
	if len(res.Summary.Warnings) != 1 || !strings.Contains(res.Summary.Warnings[0], "bread") {
		t.Errorf("summary warnings = %v", res.Summary.Warnings)
	}
	if res.Summary.Usage.TotalTokens <= 2*110 {
		t.Errorf("the review's model use is not in the summary: %+v", res.Summary.Usage)
	}
}
