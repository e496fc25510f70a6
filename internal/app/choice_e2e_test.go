package app

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// recorder answers every question with the next of its answers (the last
// one repeated) and keeps the questions.
type recorder struct {
	mu      sync.Mutex
	answers []choice.Answer
	asked   []choice.Question
}

func (r *recorder) Choose(_ context.Context, q choice.Question) (choice.Answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, q)
	a := r.answers[min(len(r.asked), len(r.answers))-1]
	return a, nil
}

func (r *recorder) questions() []choice.Question {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]choice.Question(nil), r.asked...)
}

// inStockNow says whether the demo store sells product id now: in its
// catalogue, in stock, and not put out of stock by the test.
func inStockNow(id string) bool {
	p, ok := demostore.ProductByID(id)
	return ok && p.InStock
}

// offerSoldOutToo makes the model a careless one: each question it asks
// also offers the sold-out Lactantia butter — which the run must drop,
// having read on the product's page (real Chromium) that it cannot be
// added.
func offerSoldOutToo(next gemini.Script) gemini.Script {
	return func(req *gemini.Request) gemini.Reply {
		r := next(req)
		for _, c := range r.Calls {
			if c.Name != shop.ToolPresentOptions {
				continue
			}
			opts, _ := c.Args["options"].([]any)
			c.Args["options"] = append([]any{map[string]any{
				"name": "Lactantia Salted Butter, 454 g", "price": "$6.99",
				"url": demostore.ProductURL("butter-salted-454g"), "product_id": "butter-salted-454g",
			}}, opts...)
		}
		return r
	}
}

// TestSoldOutQuestion: every butter is sold out; the question offers only
// products that can be added (the wider search's margarine and spread —
// never the sold-out butters or margarine, not even when the model lists
// one), and each answer ends the item as the household meant: the chosen
// alternative is added, "Skip this week" leaves the item open and
// untagged on the list, Nothing tags it #404.
func TestSoldOutQuestion(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	tests := []struct {
		name     string
		answer   choice.Answer
		outcome  report.Outcome
		list     string
		product  string // the demo cart's line for butter, if any
		careless bool   // the model also offers a sold-out butter
	}{
		{"an alternative", choice.Answer{Kind: choice.KindProduct, Index: 0}, report.OutcomeAdded, "completed", "margarine-original-907g", false},
		{"skip this week", choice.Answer{Kind: choice.KindSkip}, report.OutcomeSkipped, "open", "", true},
		{"nothing", choice.Answer{Kind: choice.KindNothing}, report.OutcomeNotFound, "#404", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each answer has its own runner, store and browser
			e := newE2E(t, "butter")
			rec := &recorder{answers: []choice.Answer{tt.answer}}
			e.deps.Resolver = rec
			if tt.careless {
				e.deps.Scripted.Wrap = offerSoldOutToo
			}
			res, err := e.shop(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			qs := rec.questions()
			if len(qs) != 1 || len(qs[0].Options) == 0 {
				t.Fatalf("questions = %+v, want one with options", qs)
			}
			var ids []string
			for _, o := range qs[0].Options {
				ids = append(ids, o.ProductID)
				if !inStockNow(o.ProductID) {
					t.Errorf("option %q (%s) cannot be added: the demo store has it out of stock", o.Name, o.ProductID)
				}
			}
			if strings.Join(ids, " ") != "margarine-original-907g spreadables-original-400g" {
				t.Errorf("options = %v, want the margarine and the spread in stock", ids)
			}
			it := res.Summary.Items[0]
			if it.Outcome != tt.outcome || e.list()["butter"] != tt.list {
				t.Fatalf("butter: %s (%s), list %q; want %s, %q", it.Outcome, it.Explanation, e.list()["butter"], tt.outcome, tt.list)
			}
			if tt.answer.Kind == choice.KindSkip && it.Explanation != choice.SkipExplanation {
				t.Errorf("skipped butter's explanation = %q", it.Explanation)
			}
			cart := map[string]int{}
			for _, l := range e.runner.DemoStore().Cart() {
				cart[l.ProductID] = l.Quantity
			}
			if tt.product == "" && len(cart) != 0 || tt.product != "" && (len(cart) != 1 || cart[tt.product] != 1) {
				t.Errorf("demo cart = %v, want %q", cart, tt.product)
			}
		})
	}
}

// TestSubstituteIsNotTheItemsProduct: "butter" is remembered as the
// Lactantia butter, now sold out. The household answers the question
// with "Something else: greek yogurt" — the yogurt is added and
// remembered as a substitute, and the next run still tries the butter
// (and asks again). There the household chooses the margarine with ⭐:
// the run after buys the margarine by replay, with no question.
func TestSubstituteIsNotTheItemsProduct(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "butter")
	mem, err := OpenProducts(e.dataDir, "demo", 0, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	salted, _ := demostore.ProductByID("butter-salted-454g")
	if err := mem.Added("butter", products.Product{Name: "Lactantia Salted Butter, 454 g", URL: demostore.ProductURL(salted.ID), ProductID: salted.ID, Price: "$6.99", Size: "454 g", Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{answers: []choice.Answer{{Kind: choice.KindCustom, Text: "greek yogurt"}}}
	e.deps.Resolver = rec
	again := func() shop.Result {
		t.Helper()
		if err := os.WriteFile(e.listPath, []byte("items:\n  - name: butter\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := e.shop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := again()
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeAdded || !strings.Contains(it.ProductName, "Yogurt") || !strings.HasPrefix(it.Replay, "replay fell back") {
		t.Fatalf("run 1: %+v, want the yogurt after the butter's replay fell back", it)
	}
	en, _ := mem.Entry("butter")
	if !en.Standing() || en.ProductID != salted.ID || en.Substitute == nil || en.Substitute.ProductID != "yogurt-greek-750g" || !en.Substitute.ByHousehold {
		t.Fatalf("memory after the substitute answer: %+v (substitute %+v)", en, en.Substitute)
	}

	// Next run: still the butter first (sold out: fell back), then the
	// question again; ⭐ on the margarine pins it.
	rec.mu.Lock()
	rec.answers = []choice.Answer{{Kind: choice.KindProduct, Index: 0, Remember: true}}
	rec.mu.Unlock()
	res = again()
	it := res.Summary.Items[0]
	if it.Outcome != report.OutcomeAdded || !strings.Contains(it.ProductName, "Margarine") || !strings.Contains(it.Replay, "out of stock") {
		t.Fatalf("run 2: %+v, want the butter tried first, then the margarine chosen", it)
	}
	if n := len(rec.questions()); n != 2 {
		t.Fatalf("%d questions after two runs, want 2", n)
	}
	if p, ok := mem.Pinned("butter"); !ok || p.ProductID != "margarine-original-907g" {
		t.Fatalf("after ⭐: %+v %v, want the margarine pinned", p, ok)
	}

	// The pin is what "butter" buys now: replayed, nobody asked.
	res = again()
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeAdded || it.Replay != shop.ReplayedDirect || !strings.Contains(it.ProductName, "Margarine") {
		t.Fatalf("run 3: %+v, want the pinned margarine replayed", it)
	}
	if n := len(rec.questions()); n != 2 {
		t.Errorf("run 3 asked a question (%d in all)", n)
	}
}

// TestItemPolicyTags: "#nosub" ends a sold-out item as not found with no
// question (the careless model asks anyway: the run does not let it), and
// the tag survives the list update; "#ask" asks even for a product the
// memory would replay, and adds the answer.
func TestItemPolicyTags(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t)
	// Quoted: in YAML a plain " #" starts a comment.
	if err := os.WriteFile(e.listPath, []byte("items:\n  - name: \"butter #nosub\"\n  - name: \"bananas #ask\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mem, err := OpenProducts(e.dataDir, "demo", 0, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Added("bananas", products.Product{Name: "Fresh Bananas, bunch of 6, approx. 1.2 kg", URL: demostore.ProductURL("bananas-bunch"), ProductID: "bananas-bunch", Price: "$1.99", Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{answers: []choice.Answer{{Kind: choice.KindProduct, Index: 1}}}
	e.deps.Resolver = rec
	res, err := e.shop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]report.ItemResult{}
	for _, it := range res.Summary.Items {
		got[it.ItemName] = it
	}
	if b := got["butter"]; b.Outcome != report.OutcomeNotFound || !strings.Contains(b.Explanation, "#nosub") {
		t.Errorf("butter #nosub: %s %q, want not found for never substitute", b.Outcome, b.Explanation)
	}
	qs := rec.questions()
	if len(qs) != 1 || qs[0].ItemName != "bananas" {
		t.Fatalf("questions = %+v, want only the one about bananas", qs)
	}
	if b := got["bananas"]; b.Outcome != report.OutcomeAdded || b.Replay != "" || len(b.Warnings) != 0 || b.ProductName != "Fresh Organic Bananas, bunch of 6, approx. 1.2 kg" {
		t.Errorf("bananas #ask: %+v, want the answer (option 2) added, not replayed", b)
	}
	f, err := shoppinglist.OpenYAML(e.listPath, shoppinglist.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	items, err := f.Items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Name == "butter" && (!it.HasTag(shoppinglist.TagNoSub) || !it.HasTag(shoppinglist.TagNotFound)) {
			t.Errorf("butter's tags after the run: %v, want #nosub kept and #404 added", it.Tags)
		}
	}
}
