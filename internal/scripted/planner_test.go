package scripted_test

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
)

// convo plays the agent's side of a conversation with the planner, without
// HTTP: it appends the planner's turns and answers every call with a URL.
type convo struct {
	t        *testing.T
	p        *scripted.Planner
	contents []*genai.Content
	tools    []*genai.Tool
	url      string
	// page, when set, is the page tree the answer to the next step's
	// calls carries (on its last response), as the agent sends it with
	// the screenshot (agent.Config.DescribePage).
	page string
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
	if last := r.Calls[len(r.Calls)-1].Name; c.page != "" && !c.declared(last) {
		// With the screenshot of an action (a custom tool's answer has none).
		fr := answer.Parts[len(answer.Parts)-1].FunctionResponse
		fr.Response = maps.Clone(fr.Response)
		fr.Response[agent.PageTreeKey] = c.page
	}
	c.contents = append(c.contents, model, answer)
	return r
}

// declared: name is one of the conversation's custom tools.
func (c *convo) declared(name string) bool {
	for _, t := range c.tools {
		for _, d := range t.FunctionDeclarations {
			if d.Name == name {
				return true
			}
		}
	}
	return false
}

// said is everything the planner wrote in the conversation.
func (c *convo) said() string {
	var b strings.Builder
	for _, m := range c.contents {
		if m.Role != genai.RoleModel {
			continue
		}
		for _, p := range m.Parts {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func only(t *testing.T, r gemini.Reply) *genai.FunctionCall {
	t.Helper()
	if len(r.Calls) != 1 {
		t.Fatalf("reply %+v, want exactly one call", r)
	}
	return r.Calls[0]
}

// The pages below are what the agent sends the planner: the accessibility
// tree's text (browser.Tab.DescribePage), written by hand in its format.

const (
	milkSearch = "https://www.metro.ca/en/online-grocery/search?filter=milk"
	milkPage   = "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/2-partly-skimmed-milk/p/milk-2pct-2l"
	banner     = `- region "Cookie banner" @0,844,1000,1000
  - text "We use cookies."
  - button "Reject all" @625,900,791,953
  - button "Accept all cookies" @805,900,972,953
`
	postalDialog = `- dialog "Delivery or pickup?" [modal] @250,300,750,700
  - textbox "Postal code, e.g. H2X 1Y4" @300,420,700,460
  - button "Confirm" @300,520,700,560
  - button "Cancel" @300,580,700,610
`
)

// tile is one product tile of a results page.
type tile struct {
	name, brand, size, price, url string
	soldOut, sponsored            bool
	inCart                        int
}

var (
	milk      = tile{name: "2% Partly Skimmed Milk", brand: "Natrel", size: "2 L", price: "$5.49", url: milkPage}
	milk4     = tile{name: "2% Partly Skimmed Milk", brand: "Natrel", size: "4 L", price: "$7.99", url: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/2-partly-skimmed-milk/p/milk-2pct-4l"}
	salted    = tile{name: "Salted Butter", brand: "Lactantia", size: "454 g", price: "$6.99", url: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/salted-butter/p/butter-salted-454g", soldOut: true}
	unsalted  = tile{name: "Unsalted Butter", brand: "Selection", size: "454 g", price: "$6.49", url: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/unsalted-butter/p/butter-unsalted-454g", soldOut: true}
	margarine = tile{name: "Original Margarine", brand: "Becel", size: "907 g", price: "$7.49", url: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/original-margarine/p/margarine-original-907g"}
	olive     = tile{name: "Olive Oil Margarine", brand: "Becel", size: "850 g", price: "$6.99", url: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/olive-oil-margarine/p/margarine-olive-850g", soldOut: true}
	hotSauce  = tile{name: "Sriracha Hot Chili Sauce", brand: "Huy Fong", size: "740 ml", price: "$6.99", url: "https://www.metro.ca/en/online-grocery/aisles/pantry/sriracha/p/hot-sauce-sriracha-740ml", sponsored: true}
	ketchup   = tile{name: "Ketchup Original", brand: "Heinz", size: "1 L", price: "$4.49", url: "https://www.metro.ca/en/online-grocery/aisles/pantry/ketchup/p/ketchup-heinz-1l"}
)

// addBox is where tile i's add button is (four tiles a row).
func addBox(i int) [4]int {
	x, y := 50+(i%4)*230, 520+(i/4)*380
	return [4]int{x, y, x + 180, y + 45}
}

func center(b [4]int) (int, int) { return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2 }

func (t tile) lines(indent string, add [4]int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s- link %q url=%s @%d,%d,%d,%d\n", indent, t.name, t.url, add[0], add[1]-130, add[2], add[1]-100)
	if t.sponsored {
		fmt.Fprintf(&b, "%s- text \"Sponsored\"\n", indent)
	}
	fmt.Fprintf(&b, "%s- text %q\n%s- text %q\n%s- text %q\n", indent, t.brand, indent, t.size, indent, t.price)
	if t.soldOut {
		fmt.Fprintf(&b, "%s- button \"Out of stock\" [disabled] @%d,%d,%d,%d\n", indent, add[0], add[1], add[2], add[3])
	} else {
		fmt.Fprintf(&b, "%s- button \"Add to cart — %s, %s\" @%d,%d,%d,%d\n", indent, t.name, t.size, add[0], add[1], add[2], add[3])
	}
	if t.inCart > 0 {
		fmt.Fprintf(&b, "%s- text \"In cart: %d\"\n", indent, t.inCart)
	}
	return b.String()
}

// results is a search results page with its tiles, then extra lines
// (a next page link, related searches) inside main, then overlays.
func results(tiles []tile, extra string, overlays ...string) string {
	var b strings.Builder
	b.WriteString("- banner @0,44,1000,124\n  - link \"Cart\" url=https://www.metro.ca/en/online-grocery/cart @811,62,908,106\n    - text \"0\"\n")
	b.WriteString("- main\n  - heading \"Results\" [level=1] @58,186,941,222\n")
	for i, t := range tiles {
		b.WriteString("  - article @0,0,10,10\n")
		b.WriteString(t.lines("    ", addBox(i)))
	}
	b.WriteString(extra)
	for _, o := range overlays {
		b.WriteString(o)
	}
	return b.String()
}

// productPage is a product's own page.
func productPage(t tile, overlays ...string) string {
	var b strings.Builder
	b.WriteString("- main\n  - link \"‹ Dairy & Eggs\" url=https://www.metro.ca/en/online-grocery/aisles/dairy-eggs @58,186,300,222\n")
	fmt.Fprintf(&b, "  - heading %q [level=1] @400,250,900,290\n  - text %q\n  - text %q\n  - text %q\n", t.name, t.brand, t.size, t.price)
	if t.soldOut {
		b.WriteString("  - text \"Out of stock\"\n  - button \"Out of stock\" [disabled] @400,500,600,550\n")
	} else {
		b.WriteString("  - text \"In stock\"\n  - button \"Add to cart\" @400,500,600,550\n")
	}
	if t.inCart > 0 {
		fmt.Fprintf(&b, "  - text \"In cart: %d\"\n", t.inCart)
	}
	for _, o := range overlays {
		b.WriteString(o)
	}
	return b.String()
}

func wantClick(t *testing.T, fc *genai.FunctionCall, box [4]int) {
	t.Helper()
	x, y := center(box)
	if fc.Name != "click_at" || fc.Args["x"] != x || fc.Args["y"] != y {
		t.Fatalf("call = %s %v, want click_at %d,%d", fc.Name, fc.Args, x, y)
	}
}

func wantCall(t *testing.T, fc *genai.FunctionCall, name string, args map[string]any) {
	t.Helper()
	if fc.Name != name {
		t.Fatalf("call = %s %v, want %s %v", fc.Name, fc.Args, name, args)
	}
	for k, v := range args {
		if fmt.Sprint(fc.Args[k]) != fmt.Sprint(v) {
			t.Fatalf("call %s: %s = %v, want %v (args %v)", name, k, fc.Args[k], v, fc.Args)
		}
	}
}

var (
	acceptBox = [4]int{805, 900, 972, 953}
	submitBox = [4]int{300, 520, 700, 560}
	pageAdd   = [4]int{400, 500, 600, 550}
)

// TestPlannerShopsWithDialogs: the planner reads the banner, the tile, the
// postal-code dialog and the tile's cart count off the page, clicks their
// boxes, and reports what the page named.
func TestPlannerShopsWithDialogs(t *testing.T) {
	c := newConvo(t, scripted.New(scripted.Options{}), "Put milk in the cart.\nItem: milk\nQuantity: 2\nPostal code: H3B 2Y5\n")
	// c.page is the page after the step's actions, which the next step sees.
	c.page = results([]tile{milk, milk4}, "", banner)
	wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkSearch})
	c.page = results([]tile{milk, milk4}, "")
	wantClick(t, only(t, c.step(nil)), acceptBox)
	c.page = results([]tile{milk, milk4}, "", postalDialog)
	wantClick(t, only(t, c.step(nil)), addBox(0))
	// The page's script adds the unit the dialog held back once it is answered.
	one, two := milk, milk
	one.inCart, two.inCart = 1, 2
	c.page = results([]tile{one, milk4}, "")
	r := c.step(nil)
	if len(r.Calls) != 2 {
		t.Fatalf("postal turn = %+v", r)
	}
	wantCall(t, r.Calls[0], "type_text_at", map[string]any{"text": "H3B 2Y5", "x": 500, "y": 440})
	wantClick(t, r.Calls[1], submitBox)
	c.page = results([]tile{two, milk4}, "")
	wantClick(t, only(t, c.step(nil)), addBox(0))
	wantCall(t, only(t, c.step(nil)), scripted.ToolReportAdded, map[string]any{
		"item_name": "Natrel 2% Partly Skimmed Milk, 2 L", "price_text": "$5.49", "quantity": 2, "url": milkPage, "matches": 2,
	})
	// Its own words were its memory: the choice and the count before.
	if said := c.said(); !strings.Contains(said, `Choosing "Natrel 2% Partly Skimmed Milk, 2 L"`) || strings.Contains(said, "[scripted") {
		t.Errorf("the planner's words: %s", said)
	}
}

// TestPlannerReadsThisTabsScreen: what covers the page is decided from
// what this tab's page shows, turn by turn (other tabs share the store's
// session, not this tab's overlays).
func TestPlannerReadsThisTabsScreen(t *testing.T) {
	t.Run("no banner on this page: none clicked", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: milk")
		c.page = results([]tile{milk}, "")
		only(t, c.step(nil)) // navigate
		wantClick(t, only(t, c.step(nil)), addBox(0))
	})
	t.Run("the dialog shows up late", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: milk\nQuantity: 2")
		c.page = results([]tile{milk}, "")
		only(t, c.step(nil)) // navigate
		// The add's screen was taken before the dialog appeared.
		wantClick(t, only(t, c.step(nil)), addBox(0))
		c.page = results([]tile{milk}, "", postalDialog)
		if fc := only(t, c.step(nil)); fc.Name != "wait" {
			t.Fatalf("call = %s, want a wait: the tile does not show the first unit yet", fc.Name)
		}
		one := milk
		one.inCart = 1
		c.page = results([]tile{one}, "")
		if r := c.step(nil); len(r.Calls) != 2 || r.Calls[0].Name != "type_text_at" {
			t.Fatalf("turn = %+v, want the dialog answered", r)
		}
		wantClick(t, only(t, c.step(nil)), addBox(0))
	})
	t.Run("no page text: it looks again, then stops", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: milk")
		only(t, c.step(nil)) // navigate; the answer carries no page text
		for i := range 5 {
			if fc := only(t, c.step(nil)); fc.Name != "wait" {
				t.Fatalf("call %d = %s, want wait", i+1, fc.Name)
			}
		}
		if r := c.step(nil); len(r.Calls) != 0 || !strings.Contains(r.Text, "cannot make out") {
			t.Fatalf("reply = %+v, want it to stop", r)
		}
	})
}

// TestPlannerVerifiesTheCart: a unit counts once the page shows it in the
// cart; a slow add is waited for, not clicked again.
func TestPlannerVerifiesTheCart(t *testing.T) {
	eggs := tile{name: "Large Eggs", brand: "Burnbrae", size: "12", price: "$4.29", url: "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/large-eggs/p/eggs-large-12", inCart: 3}
	c := newConvo(t, scripted.New(scripted.Options{}), "Item: eggs\nQuantity: 1")
	c.page = results([]tile{eggs}, "")
	only(t, c.step(nil)) // navigate
	wantClick(t, only(t, c.step(nil)), addBox(0))
	for i := range 5 {
		if fc := only(t, c.step(nil)); fc.Name != "wait" {
			t.Fatalf("call %d = %s, want wait", i+1, fc.Name)
		}
	}
	if r := c.step(nil); len(r.Calls) != 0 || !strings.Contains(r.Text, "page shows 3") {
		t.Fatalf("reply = %+v, want a text-only turn explaining the cart", r)
	}

	c = newConvo(t, scripted.New(scripted.Options{}), "Item: eggs\nQuantity: 1")
	c.page = results([]tile{eggs}, "")
	only(t, c.step(nil)) // navigate
	wantClick(t, only(t, c.step(nil)), addBox(0))
	only(t, c.step(nil)) // wait
	four := eggs
	four.inCart = 4
	c.page = results([]tile{four}, "")
	only(t, c.step(nil)) // wait
	wantCall(t, only(t, c.step(nil)), scripted.ToolReportAdded, map[string]any{"quantity": 1, "item_name": "Burnbrae Large Eggs, 12"})
}

// TestPlannerOutOfStock: every match sold out — the next page, then the
// page's related search for what can be bought instead, offered to the
// household; only what can be added is ever offered.
func TestPlannerOutOfStock(t *testing.T) {
	related := "  - navigation \"Related searches\" @50,950,400,980\n    - link \"spread\" url=https://www.metro.ca/en/online-grocery/search?filter=spread @200,950,260,980\n"
	butters := results([]tile{salted, unsalted}, related)
	spreads := results([]tile{olive, margarine}, "")
	cases := []struct {
		name    string
		item    string
		page    string
		declare []string
		answer  map[string]any // present_options' response, if asked
		want    string         // the final call
		expl    string
	}{
		{"nothing matches", "caviar", results(nil, "  - text \"No results for caviar.\"\n"), nil, nil, scripted.ToolReportNotFound, "found no matching product"},
		{"sold out, nobody to ask", "butter", butters, nil, nil, scripted.ToolReportNotFound, "out of stock: Lactantia Salted Butter, 454 g; Selection Unsalted Butter, 454 g"},
		{"sold out, the household says nothing", "butter", butters, []string{scripted.ToolPresentOptions}, map[string]any{"answer": "nothing"}, scripted.ToolReportNotFound, "did not choose"},
		{"sold out, the household picks the margarine", "butter", butters, []string{scripted.ToolPresentOptions},
			map[string]any{"answer": "product", "name": "Becel Original Margarine, 907 g", "url": margarine.url}, "navigate", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newConvo(t, scripted.New(scripted.Options{}), "Item: "+tc.item+"\nQuantity: 1", tc.declare...)
			c.page = tc.page
			only(t, c.step(nil)) // navigate
			if tc.answer != nil {
				c.page = spreads
			}
			fc := only(t, c.step(nil))
			if tc.answer != nil {
				wantCall(t, fc, "navigate", map[string]any{"url": "https://www.metro.ca/en/online-grocery/search?filter=spread"})
				c.page = productPage(margarine)
				fc = only(t, c.step(map[string]map[string]any{scripted.ToolPresentOptions: tc.answer}))
				wantCall(t, fc, scripted.ToolPresentOptions, map[string]any{"reason": "out_of_stock", "item_name": tc.item})
				opts, _ := fc.Args["options"].([]any)
				if len(opts) != 1 || opts[0].(map[string]any)["product_id"] != "margarine-original-907g" ||
					!strings.Contains(fmt.Sprint(fc.Args["context"]), "out of stock") {
					t.Fatalf("present_options args = %v, want only the margarine in stock", fc.Args)
				}
				fc = only(t, c.step(nil))
			}
			if tc.want == "navigate" {
				wantCall(t, fc, "navigate", map[string]any{"url": margarine.url})
				wantClick(t, only(t, c.step(nil)), pageAdd)
				return
			}
			if fc.Name != tc.want || !strings.Contains(fmt.Sprint(fc.Args["explanation"]), tc.expl) || fc.Args["item_name"] != tc.item {
				t.Fatalf("final call = %s %v, want %s mentioning %q", fc.Name, fc.Args, tc.want, tc.expl)
			}
		})
	}
	t.Run("the household picks what sold out meanwhile", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: butter", scripted.ToolPresentOptions)
		c.page = butters
		only(t, c.step(nil)) // navigate
		c.page = spreads
		only(t, c.step(nil)) // the wider search
		c.page = productPage(olive)
		only(t, c.step(map[string]map[string]any{scripted.ToolPresentOptions: {"answer": "product", "name": "Becel Olive Oil Margarine, 850 g", "url": olive.url}}))
		only(t, c.step(nil)) // its page
		fc := only(t, c.step(nil))
		if fc.Name != scripted.ToolReportNotFound || !strings.Contains(fmt.Sprint(fc.Args["explanation"]), "out of stock") {
			t.Fatalf("call = %s %v, want not found: the page shows it sold out", fc.Name, fc.Args)
		}
	})
}

// TestPlannerReadsTheResults: a sponsored tile is not a result, a product
// the household called wrong is never chosen, and an item whose first
// page is sold out is looked for on the next page.
func TestPlannerReadsTheResults(t *testing.T) {
	t.Run("sponsored", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: ketchup")
		c.page = results([]tile{hotSauce, ketchup}, "")
		only(t, c.step(nil))
		wantClick(t, only(t, c.step(nil)), addBox(1))
	})
	t.Run("wrong product", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: milk\nWrong product: "+milkPage)
		c.page = results([]tile{milk, milk4}, "")
		only(t, c.step(nil))
		wantClick(t, only(t, c.step(nil)), addBox(1))
	})
	t.Run("the product the item names, not a decoy that shares its words", func(t *testing.T) {
		table := tile{name: "Maple Flavoured Table Syrup", brand: "Selection", size: "750 ml", price: "$3.49", url: "https://www.metro.ca/en/online-grocery/aisles/pantry/table-syrup/p/syrup-table-750ml"}
		pure := tile{name: "Pure Maple Syrup Amber", brand: "Citadelle", size: "540 ml", price: "$9.99", url: "https://www.metro.ca/en/online-grocery/aisles/pantry/maple-syrup/p/syrup-maple-pure-540ml"}
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: maple syrup")
		c.page = results([]tile{table, pure}, "")
		only(t, c.step(nil))
		wantClick(t, only(t, c.step(nil)), addBox(1))
	})
	t.Run("no results for the amount: the product's words", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: a dozen eggs")
		c.page = results(nil, "  - text \"No results.\"\n")
		only(t, c.step(nil))
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": "https://www.metro.ca/en/online-grocery/search?filter=eggs"})
		fc := only(t, c.step(nil)) // still nothing
		if fc.Name != scripted.ToolReportNotFound {
			t.Fatalf("call = %s, want not found after both searches", fc.Name)
		}
	})
	t.Run("next page", func(t *testing.T) {
		next := "https://www.metro.ca/en/online-grocery/search?filter=milk&page=2"
		c := newConvo(t, scripted.New(scripted.Options{}), "Item: milk")
		sold := milk
		sold.soldOut = true
		c.page = results([]tile{sold}, "  - link \"Next page →\" url="+next+" @50,900,200,940\n")
		only(t, c.step(nil))
		c.page = results([]tile{milk4}, "")
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": next})
		wantClick(t, only(t, c.step(nil)), addBox(0))
	})
}

// TestPlannerOpensTheProductPage: with ProductPages, the planner opens the
// chosen product's page and adds it there, as a real agent does.
func TestPlannerOpensTheProductPage(t *testing.T) {
	c := newConvo(t, scripted.New(scripted.Options{ProductPages: true}), "Item: milk\nQuantity: 1\n")
	c.page = results([]tile{milk}, "")
	wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkSearch})
	c.page = productPage(milk)
	wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkPage})
	one := milk
	one.inCart = 1
	c.page = productPage(one)
	wantClick(t, only(t, c.step(nil)), pageAdd)
	wantCall(t, only(t, c.step(nil)), scripted.ToolReportAdded, map[string]any{"url": milkPage, "item_name": "Natrel 2% Partly Skimmed Milk, 2 L", "price_text": "$5.49"})
}

// TestPlannerAfterAnEarlierAdd: a replay's hand-over note and a retry's
// note say units are already in the cart; the planner checks the page and
// reports them instead of adding them again.
func TestPlannerAfterAnEarlierAdd(t *testing.T) {
	t.Run("replay hand-over", func(t *testing.T) {
		goal := "Item: milk\nQuantity: 2\nThis item was bought before: Natrel 2% Partly Skimmed Milk, 2 L — " + milkPage + ".\n" +
			"The replay added it: the cart now holds 2 of this product (it held 0 before).\n"
		c := newConvo(t, scripted.New(scripted.Options{}), goal)
		two := milk
		two.inCart = 2
		c.page = productPage(two)
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkPage})
		wantCall(t, only(t, c.step(nil)), scripted.ToolReportAdded, map[string]any{"quantity": 2, "url": milkPage})
	})
	t.Run("replay hand-over the page does not confirm", func(t *testing.T) {
		goal := "Item: milk\nQuantity: 1\nThis item was bought before: Natrel 2% Partly Skimmed Milk, 2 L — " + milkPage + ".\n" +
			"The replay added it: the cart now holds 1 of this product (it held 0 before).\n"
		c := newConvo(t, scripted.New(scripted.Options{}), goal)
		c.page = productPage(milk) // shows none in the cart
		only(t, c.step(nil))
		c.page = results([]tile{milk}, "")
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkSearch})
	})
	t.Run("retry", func(t *testing.T) {
		goal := "Item: milk\nQuantity: 1\nAn earlier attempt at this item stopped after it had already added to the cart: 1 × product milk-2pct-2l.\n"
		c := newConvo(t, scripted.New(scripted.Options{}), goal)
		one := milk
		one.inCart = 1
		c.page = results([]tile{one}, "")
		only(t, c.step(nil))
		wantCall(t, only(t, c.step(nil)), scripted.ToolReportAdded, map[string]any{"quantity": 1, "url": milkPage})
	})
}

func TestPlannerMisbehaviours(t *testing.T) {
	p := scripted.New(scripted.Options{Misbehave: map[string]scripted.Misbehaviour{
		"Milk": scripted.Checkout, "eggs": scripted.ServerError, "bread": scripted.NoReport,
		"bananas": scripted.Stuck, "apples": scripted.MalformedOnce,
	}})

	c := newConvo(t, p, "Item: milk\nQuantity: 1")
	c.page = "- document\n" // the blocked checkout leaves the tab blank
	wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": "https://www.metro.ca/checkout"})
	wantCall(t, only(t, c.step(map[string]map[string]any{"navigate": {"url": "about:blank", "error": "blocked"}})), "navigate", map[string]any{"url": milkSearch})

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
		{"Item: eggs\nQuantity: 12 pieces (a count of pieces, not of packages: see \"How many\" below)", scripted.Goal{Item: "eggs", Quantity: 12, Pieces: true}, false},
		{"Quantity: 2", scripted.Goal{}, true},
		{"Item: eggs\nQuantity: lots", scripted.Goal{}, true},
		{"Item: oranges\nWrong product: https://a.test/p/x\nWrong product: Juice", scripted.Goal{Item: "oranges", Quantity: 1, Wrong: []string{"https://a.test/p/x", "Juice"}}, false},
	}
	for _, tc := range cases {
		got, err := scripted.ParseGoal(tc.text)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseGoal(%q) = %+v, %v", tc.text, got, err)
		}
	}
}

// TestPlannerWhenThePageDisagrees: a tile says in stock but the product's
// page says sold out — another product; the page does not open — the
// product from its tile.
func TestPlannerWhenThePageDisagrees(t *testing.T) {
	t.Run("sold out on its page", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{ProductPages: true}), "Item: milk")
		c.page = results([]tile{milk, milk4}, "")
		only(t, c.step(nil)) // search
		sold := milk
		sold.soldOut = true
		c.page = productPage(sold)
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkPage})
		c.page = results([]tile{milk, milk4}, "")
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkSearch})
		c.page = productPage(milk4)
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milk4.url})
		wantClick(t, only(t, c.step(nil)), pageAdd)
	})
	t.Run("its page does not open", func(t *testing.T) {
		c := newConvo(t, scripted.New(scripted.Options{ProductPages: true}), "Item: milk")
		c.page = results([]tile{milk, milk4}, "")
		only(t, c.step(nil)) // search
		c.page = "- document \"Page not found\"\n- main\n  - heading \"Page not found\" [level=1] @58,186,941,222\n"
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkPage})
		c.page = results([]tile{milk, milk4}, "")
		wantCall(t, only(t, c.step(nil)), "navigate", map[string]any{"url": milkSearch})
		wantClick(t, only(t, c.step(nil)), addBox(0))
	})
}

// TestPlannerCoversPiecesWithPackages (issues 33, 37): a goal that counts
// pieces ("Quantity: 12 pieces") is covered by the packages the product's
// size says — one box of "12 eggs" — and a count of packages is that many.
func TestPlannerCoversPiecesWithPackages(t *testing.T) {
	const eggsPage = "https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/large-white-eggs/p/eggs-large-12"
	eggs := tile{name: "Large White Eggs", brand: "Burnbrae Farms", size: "12 eggs", price: "$4.29", url: eggsPage}
	for _, tc := range []struct {
		quantity string
		units    int
	}{
		{"12 pieces (a count of pieces, not of packages)", 1},
		{"24 pieces (a count of pieces, not of packages)", 2},
		{"2", 2},
	} {
		t.Run(tc.quantity, func(t *testing.T) {
			c := newConvo(t, scripted.New(scripted.Options{ProductPages: true}), "Item: eggs\nQuantity: "+tc.quantity+"\n")
			c.page = results([]tile{eggs}, "")
			only(t, c.step(nil)) // the search
			c.page = productPage(eggs)
			only(t, c.step(nil)) // its page, none in the cart
			for i := 1; i <= tc.units; i++ {
				in := eggs
				in.inCart = i
				c.page = productPage(in) // what the click's screenshot shows
				wantClick(t, only(t, c.step(nil)), pageAdd)
			}
			wantCall(t, only(t, c.step(nil)), scripted.ToolReportAdded, map[string]any{"url": eggsPage, "quantity": tc.units})
		})
	}
}
