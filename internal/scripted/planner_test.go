package scripted_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
)

type fakeStore struct {
	mu    sync.Mutex
	state demostore.State
	cart  map[string]int
}

func (f *fakeStore) State() demostore.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

func (f *fakeStore) Cart() []demostore.CartLine {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []demostore.CartLine
	for id, q := range f.cart {
		out = append(out, demostore.CartLine{ProductID: id, Quantity: q})
	}
	return out
}

// convo plays the agent's side of a conversation with the planner, without
// HTTP: it appends the planner's turns and answers every call with a URL.
type convo struct {
	t        *testing.T
	p        *scripted.Planner
	contents []*genai.Content
	tools    []*genai.Tool
	url      string
	// screen, when set, is the screenshot the answer to the next step's
	// calls carries (on its last response), as the agent sends it.
	screen []byte
}

func newConvo(t *testing.T, p *scripted.Planner, goal string, declare ...string) *convo {
	c := &convo{t: t, p: p, url: "about:blank"}
	c.contents = []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromText(goal)}}}
	var decls []*genai.FunctionDeclaration
	for _, d := range declare {
		decls = append(decls, &genai.FunctionDeclaration{Name: d})
	}
	c.tools = []*genai.Tool{{ComputerUse: &genai.ComputerUse{Environment: genai.EnvironmentBrowser}}, {FunctionDeclarations: decls}}
	return c
}

// step asks the planner for its next turn and records it; responses
// override the default {"url": …} response per function name.
func (c *convo) step(responses map[string]map[string]any) gemini.Reply {
	c.t.Helper()
	r := c.p.Reply(&gemini.Request{Contents: c.contents, Tools: c.tools})
	if len(r.Calls) == 0 {
		return r
	}
	model := &genai.Content{Role: genai.RoleModel}
	if r.Text != "" {
		model.Parts = append(model.Parts, genai.NewPartFromText(r.Text))
	}
	answer := &genai.Content{Role: genai.RoleUser}
	for _, fc := range r.Calls {
		// Arguments come back from JSON as float64.
		args := map[string]any{}
		for k, v := range fc.Args {
			if n, ok := v.(int); ok {
				v = float64(n)
			}
			args[k] = v
		}
		model.Parts = append(model.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: fc.Name, Args: args}})
		if fc.Name == "navigate" {
			c.url = fc.Args["url"].(string)
		}
		resp := responses[fc.Name]
		if resp == nil {
			resp = map[string]any{"url": c.url}
		}
		answer.Parts = append(answer.Parts, genai.NewPartFromFunctionResponse(fc.Name, resp))
	}
	if c.screen != nil {
		fr := answer.Parts[len(answer.Parts)-1].FunctionResponse
		fr.Parts = []*genai.FunctionResponsePart{genai.NewFunctionResponsePartFromBytes(c.screen, "image/png")}
	}
	c.contents = append(c.contents, model, answer)
	return r
}

func only(t *testing.T, r gemini.Reply) *genai.FunctionCall {
	t.Helper()
	if len(r.Calls) != 1 {
		t.Fatalf("reply %+v, want exactly one call", r)
	}
	return r.Calls[0]
}

func pt(x, y int) [2]int { return [2]int{x, y} }

func wantClick(t *testing.T, fc *genai.FunctionCall, at [2]int) {
	t.Helper()
	px, py := at[0], at[1]
	x, y := px*1000/1440, py*1000/900
	if fc.Name != "click_at" || fc.Args["x"] != x || fc.Args["y"] != y {
		t.Fatalf("call = %s %v, want click_at %d,%d (px %d,%d)", fc.Name, fc.Args, x, y, px, py)
	}
}

const milkURL = "https://www.metro.ca/en/online-grocery/search?filter=milk"

func TestPlannerShopsWithDialogs(t *testing.T) {
	store := &fakeStore{cart: map[string]int{}}
	p := scripted.New(scripted.Options{Store: store})
	c := newConvo(t, p, "Put milk in the cart.\nItem: milk\nQuantity: 2\nPostal code: H3B 2Y5\n")

	if fc := only(t, c.step(nil)); fc.Name != "navigate" || fc.Args["url"] != milkURL {
		t.Fatalf("first call = %s %v", fc.Name, fc.Args)
	}
	wantClick(t, only(t, c.step(nil)), pt(demostore.ConsentAcceptButton()))
	store.state.ConsentAccepted = true

	// First add while the postal code is unknown: the dialog is expected.
	wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
	r := c.step(nil)
	if len(r.Calls) != 2 || r.Calls[0].Name != "type_text_at" || r.Calls[0].Args["text"] != "H3B 2Y5" {
		t.Fatalf("postal turn = %+v", r.Calls)
	}
	ix, iy := demostore.PostalCodeInput()
	if r.Calls[0].Args["x"] != ix*1000/1440 || r.Calls[0].Args["y"] != iy*1000/900 {
		t.Errorf("typed at %v, want the postal-code input", r.Calls[0].Args)
	}
	wantClick(t, r.Calls[1], pt(demostore.PostalCodeSubmit()))
	store.state.PostalCode = "H3B 2Y5"
	store.cart["milk-2pct-2l"] = 1

	// Second unit: one more click, no dialog.
	wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
	store.cart["milk-2pct-2l"] = 2

	fc := only(t, c.step(nil))
	if fc.Name != scripted.ToolReportAdded || fc.Args["item_name"] != "Natrel 2% Partly Skimmed Milk, 2 L" ||
		fc.Args["price_text"] != "$5.49" || fc.Args["quantity"] != 2 || fc.Args["url"] != demostore.ProductURL("milk-2pct-2l") {
		t.Fatalf("report = %s %v", fc.Name, fc.Args)
	}
}

// TestPlannerReadsThisTabsScreen: the store's state is shared by all tabs,
// so the overlays are decided from what this tab's screenshot shows.
func TestPlannerReadsThisTabsScreen(t *testing.T) {
	banner := demostore.SketchScreen(demostore.Overlays{CookieBanner: true})
	dialog := demostore.SketchScreen(demostore.Overlays{PostalCodeDialog: true})
	clear := demostore.SketchScreen(demostore.Overlays{})

	t.Run("banner another tab already accepted", func(t *testing.T) {
		store := &fakeStore{state: demostore.State{ConsentAccepted: true, PostalCode: "H2X 1Y4"}, cart: map[string]int{}}
		c := newConvo(t, scripted.New(scripted.Options{Store: store}), "Item: milk")
		c.screen = banner
		only(t, c.step(nil)) // navigate; the page shows this tab's banner
		c.screen = clear
		wantClick(t, only(t, c.step(nil)), pt(demostore.ConsentAcceptButton()))
		wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
	})
	t.Run("dialog another tab already answered", func(t *testing.T) {
		store := &fakeStore{state: demostore.State{ConsentAccepted: true}, cart: map[string]int{}}
		c := newConvo(t, scripted.New(scripted.Options{Store: store}), "Item: milk\nPostal code: H3B 2Y5")
		c.screen = clear
		only(t, c.step(nil)) // navigate
		c.screen = dialog
		wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
		// Meanwhile another tab answered its own dialog: the store knows a
		// postal code, but this tab's dialog is still open.
		store.state.PostalCode = "H2X 1Y4"
		c.screen = clear
		r := c.step(nil)
		if len(r.Calls) != 2 || r.Calls[0].Name != "type_text_at" || r.Calls[0].Args["text"] != "H3B 2Y5" {
			t.Fatalf("turn after the add = %+v, want the postal code typed into this tab's dialog", r)
		}
		wantClick(t, r.Calls[1], pt(demostore.PostalCodeSubmit()))
		store.cart["milk-2pct-2l"] = 1
		if fc := only(t, c.step(nil)); fc.Name != scripted.ToolReportAdded {
			t.Fatalf("call = %s %v, want the report", fc.Name, fc.Args)
		}
	})
	t.Run("dialog shows up late", func(t *testing.T) {
		store := &fakeStore{state: demostore.State{ConsentAccepted: true}, cart: map[string]int{}}
		c := newConvo(t, scripted.New(scripted.Options{Store: store}), "Item: milk\nQuantity: 2")
		c.screen = clear
		only(t, c.step(nil)) // navigate
		// The add's screenshot was taken before the dialog appeared.
		wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
		c.screen = dialog
		if fc := only(t, c.step(nil)); fc.Name != "wait" {
			t.Fatalf("call = %s, want a wait before the second unit (the cart does not show the first)", fc.Name)
		}
		c.screen = clear
		if r := c.step(nil); len(r.Calls) != 2 || r.Calls[0].Name != "type_text_at" {
			t.Fatalf("turn = %+v, want the dialog answered", r)
		}
		store.cart["milk-2pct-2l"] = 1
		wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
	})
	t.Run("banner rejected earlier is not clicked for", func(t *testing.T) {
		// "Reject all" leaves ConsentAccepted false for good; the screen
		// shows no banner, so the planner goes on.
		store := &fakeStore{state: demostore.State{PostalCode: "H2X 1Y4"}, cart: map[string]int{}}
		c := newConvo(t, scripted.New(scripted.Options{Store: store}), "Item: milk")
		c.screen = clear
		only(t, c.step(nil))
		wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
	})
}

func TestPlannerVerifiesTheCart(t *testing.T) {
	store := &fakeStore{state: demostore.State{ConsentAccepted: true, PostalCode: "H2X 1Y4"}, cart: map[string]int{"eggs-large-12": 3}}
	p := scripted.New(scripted.Options{Store: store})
	c := newConvo(t, p, "Item: eggs\nQuantity: 1")
	only(t, c.step(nil)) // navigate
	wantClick(t, only(t, c.step(nil)), pt(demostore.TileAddButton(0)))
	// The cart still shows the 3 it had before: wait once, then give up.
	if fc := only(t, c.step(nil)); fc.Name != "wait" {
		t.Fatalf("call = %s, want wait", fc.Name)
	}
	r := c.step(nil)
	if len(r.Calls) != 0 || !strings.Contains(r.Text, "cart shows 3") {
		t.Fatalf("reply = %+v, want a text-only turn explaining the cart", r)
	}
}

func TestPlannerOutOfStockAndMissing(t *testing.T) {
	state := demostore.State{ConsentAccepted: true, PostalCode: "H2X 1Y4"}
	cases := []struct {
		name    string
		item    string
		declare []string
		answer  map[string]any // present_options' response, if asked
		want    string         // tool of the final call
		expl    string
	}{
		{"nothing matches", "caviar", nil, nil, scripted.ToolReportNotFound, "found no matching product"},
		{"out of stock, nobody to ask", "butter", nil, nil, scripted.ToolReportNotFound, "out of stock"},
		{"out of stock, household says nothing", "butter", []string{scripted.ToolPresentOptions}, map[string]any{"answer": "nothing"}, scripted.ToolReportNotFound, "did not choose"},
		{"out of stock, household picks one anyway", "butter", []string{scripted.ToolPresentOptions},
			map[string]any{"answer": "product", "name": "Lactantia Salted Butter, 454 g", "product_id": "butter-salted-454g"}, scripted.ToolReportNotFound, "out of stock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := scripted.New(scripted.Options{Store: &fakeStore{state: state, cart: map[string]int{}}})
			c := newConvo(t, p, "Item: "+tc.item+"\nQuantity: 1", tc.declare...)
			only(t, c.step(nil)) // navigate
			fc := only(t, c.step(map[string]map[string]any{scripted.ToolPresentOptions: tc.answer}))
			if tc.answer != nil {
				if fc.Name != scripted.ToolPresentOptions {
					t.Fatalf("call = %s, want present_options", fc.Name)
				}
				opts, _ := fc.Args["options"].([]any)
				if len(opts) != 2 || fc.Args["item_name"] != tc.item || !strings.Contains(fmt.Sprint(fc.Args["context"]), "out of stock") {
					t.Fatalf("present_options args = %v", fc.Args)
				}
				fc = only(t, c.step(nil))
			}
			if fc.Name != tc.want || !strings.Contains(fmt.Sprint(fc.Args["explanation"]), tc.expl) || fc.Args["item_name"] != tc.item {
				t.Fatalf("final call = %s %v, want %s mentioning %q", fc.Name, fc.Args, tc.want, tc.expl)
			}
		})
	}
}

func TestPlannerMisbehaviours(t *testing.T) {
	store := &fakeStore{state: demostore.State{ConsentAccepted: true, PostalCode: "H2X 1Y4"}, cart: map[string]int{}}
	p := scripted.New(scripted.Options{Store: store, Misbehave: map[string]scripted.Misbehaviour{
		"Milk": scripted.Checkout, "eggs": scripted.ServerError, "bread": scripted.NoReport,
		"bananas": scripted.Stuck, "apples": scripted.MalformedOnce,
	}})

	c := newConvo(t, p, "Item: milk\nQuantity: 1")
	if fc := only(t, c.step(nil)); fc.Name != "navigate" || fc.Args["url"] != "https://www.metro.ca/checkout" {
		t.Fatalf("checkout misbehaviour: %s %v", fc.Name, fc.Args)
	}
	if fc := only(t, c.step(map[string]map[string]any{"navigate": {"url": "about:blank", "error": "blocked"}})); fc.Args["url"] != milkURL {
		t.Fatalf("after the blocked checkout: %s %v, want the search", fc.Name, fc.Args)
	}

	if r := newConvo(t, p, "Item: eggs").step(nil); r.Status != 500 {
		t.Errorf("server_error reply = %+v", r)
	}
	if r := newConvo(t, p, "Item: bread").step(nil); len(r.Calls) != 0 || r.Text == "" {
		t.Errorf("no_report reply = %+v", r)
	}
	stuck := newConvo(t, p, "Item: bananas")
	a, b := only(t, stuck.step(nil)), only(t, stuck.step(nil))
	if a.Name != "click_at" || fmt.Sprint(a.Args) != fmt.Sprint(b.Args) {
		t.Errorf("stuck replies differ: %v / %v", a.Args, b.Args)
	}
	ap := newConvo(t, p, "Item: apples")
	if r := ap.step(nil); !r.Malformed {
		t.Errorf("first apples reply = %+v, want malformed", r)
	}
	if fc := only(t, ap.step(nil)); fc.Name != "navigate" {
		t.Errorf("retry after malformed = %s", fc.Name)
	}
}

func TestParseGoal(t *testing.T) {
	cases := []struct {
		text    string
		want    scripted.Goal
		wantErr bool
	}{
		{"Buy it.\nItem: 2% milk\nQuantity: 3\nPostal code: H3B 2Y5", scripted.Goal{Item: "2% milk", Quantity: 3, PostalCode: "H3B 2Y5"}, false},
		{"Item: eggs", scripted.Goal{Item: "eggs", Quantity: 1}, false},
		{"Quantity: 2", scripted.Goal{}, true},
		{"Item: eggs\nQuantity: lots", scripted.Goal{}, true},
	}
	for _, tc := range cases {
		got, err := scripted.ParseGoal(tc.text)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseGoal(%q) = %+v, %v", tc.text, got, err)
		}
	}
}
