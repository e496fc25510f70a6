package homeassistant

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

const list = "todo.shopping_list"

func TestTodoProviderItems(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Shopping List", fakeha.LocalTodoFeatures,
		fakeha.TodoItem{UID: "u1", Summary: "2x milk"},
		fakeha.TodoItem{UID: "u2", Summary: "eggs #404", Description: "gemini-supply: only brown eggs"},
		fakeha.TodoItem{UID: "u3", Summary: "bread #costco", Description: "the good one"},
		fakeha.TodoItem{UID: "u4", Summary: "butter", Status: "completed"},
	)
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
	items, err := p.Items(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		id, name, product, explanation string
		qty                            int
		status                         shoppinglist.Status
		tags                           string
	}
	wants := []want{
		{"u1", "2x milk", "milk", "", 2, shoppinglist.StatusNeedsAction, ""},
		{"u2", "eggs", "eggs", "only brown eggs", 1, shoppinglist.StatusNeedsAction, "#404"},
		{"u3", "bread", "bread", "", 1, shoppinglist.StatusNeedsAction, "#costco"},
		{"u4", "butter", "butter", "", 1, shoppinglist.StatusCompleted, ""},
	}
	if len(items) != len(wants) {
		t.Fatalf("got %d items, want %d: %+v", len(items), len(wants), items)
	}
	for i, w := range wants {
		it := items[i]
		got := want{it.ID, it.Name, it.Product, it.Explanation, it.Quantity, it.Status, strings.Join(it.Tags, ",")}
		if got != w {
			t.Errorf("item %d = %+v, want %+v", i, got, w)
		}
	}
	if !items[1].RunTagged() || items[2].RunTagged() {
		t.Error("RunTagged wrong: only #404/#failed count")
	}
}

func TestTodoProviderMarks(t *testing.T) {
	tests := []struct {
		name         string
		features     int
		descriptions bool
	}{
		{"shopping list without descriptions", fakeha.ShoppingListFeatures, false},
		{"local todo with descriptions", fakeha.LocalTodoFeatures, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t, fakeha.Options{})
			f.AddTodoList(list, "Shopping List", tt.features,
				fakeha.TodoItem{UID: "milk", Summary: "2x milk"},
				fakeha.TodoItem{UID: "eggs", Summary: "eggs #404"},
				fakeha.TodoItem{UID: "bread", Summary: "bread #costco #404"},
				fakeha.TodoItem{UID: "tofu", Summary: "tofu", Description: "firm, not silken"},
				fakeha.TodoItem{UID: "rice", Summary: "rice #FAILED"},
			)
			p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
			ctx := testCtx(t)
			if _, err := p.Items(ctx); err != nil {
				t.Fatal(err)
			}
			added := shoppinglist.Added{ProductName: "Lactantia 2% milk 2 L", Price: money.Parse("$5.49"), Quantity: 2}
			steps := []struct {
				name string
				do   func() error
			}{
				{"complete milk", func() error { return p.MarkCompleted(ctx, "milk", added) }},
				{"retry of eggs completes", func() error { return p.MarkCompleted(ctx, "eggs", shoppinglist.Added{ProductName: "Eggs 12"}) }},
				{"bread failed", func() error { return p.MarkFailed(ctx, "bread", "time budget of 5m0s used up") }},
				{"tofu not found", func() error { return p.MarkNotFound(ctx, "tofu", "no firm tofu in stock") }},
				{"rice not found", func() error { return p.MarkNotFound(ctx, "rice", "searched rice, basmati") }},
			}
			for _, s := range steps {
				if err := s.do(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
			}
			desc := func(s string) string {
				if tt.descriptions {
					return s
				}
				return ""
			}
			want := map[string]fakeha.TodoItem{
				"milk":  {UID: "milk", Summary: "2x milk", Status: "completed", Description: desc("gemini-supply: added Lactantia 2% milk 2 L × 2 ($5.49)")},
				"eggs":  {UID: "eggs", Summary: "eggs", Status: "completed", Description: desc("gemini-supply: added Eggs 12")},
				"bread": {UID: "bread", Summary: "bread #costco #failed", Status: "needs_action", Description: desc("gemini-supply: time budget of 5m0s used up")},
				// A person's own description is never overwritten.
				"tofu": {UID: "tofu", Summary: "tofu #404", Status: "needs_action", Description: "firm, not silken"},
				"rice": {UID: "rice", Summary: "rice #404", Status: "needs_action", Description: desc("gemini-supply: searched rice, basmati")},
			}
			for _, it := range f.TodoItems(list) {
				if it != want[it.UID] {
					t.Errorf("item %s = %+v,\n want %+v", it.UID, it, want[it.UID])
				}
			}
			for _, c := range f.Calls() {
				if c.Error != "" {
					t.Errorf("service call %s.%s %v failed: %s", c.Domain, c.Service, c.Data, c.Error)
				}
				if _, ok := c.Data["description"]; ok && !tt.descriptions {
					t.Errorf("description sent to an entity without feature bit 64: %v", c.Data)
				}
				if c.Domain != "todo" || c.Service != "update_item" || len(c.EntityIDs) != 1 || c.EntityIDs[0] != list {
					t.Errorf("unexpected call %+v", c)
				}
				// Completion of an untagged item must not rename it (a person may be editing the name).
				if c.Data["item"] == "milk" {
					if _, ok := c.Data["rename"]; ok {
						t.Errorf("completing an untagged item renamed it: %v", c.Data)
					}
				}
			}
		})
	}
}

func TestTodoProviderUnknownEntity(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Shopping List", fakeha.ShoppingListFeatures)
	f.AddTodoList("todo.chores", "Chores", fakeha.LocalTodoFeatures)
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{Entity: "todo.groceries"})
	for name, call := range map[string]func() error{
		"Check": func() error { return p.Check(testCtx(t)) },
		"Items": func() error { _, err := p.Items(testCtx(t)); return err },
		"MarkNotFound": func() error {
			return p.MarkNotFound(testCtx(t), "x", "y")
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, ErrUnknownEntity) {
				t.Fatalf("err = %v, want ErrUnknownEntity", err)
			}
			for _, w := range []string{"todo.groceries", "todo.chores, todo.shopping_list", "todo_entity"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestTodoProviderItemDeletedMeanwhile(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Shopping List", fakeha.ShoppingListFeatures, fakeha.TodoItem{UID: "a", Summary: "milk"})
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
	ctx := testCtx(t)
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}
	f.AddTodoList(list, "Shopping List", fakeha.ShoppingListFeatures) // a person cleared the list
	if err := p.MarkNotFound(ctx, "a", "gone"); !errors.Is(err, ErrItemGone) {
		t.Fatalf("err = %v, want ErrItemGone", err)
	}
	if err := p.MarkFailed(ctx, "never-seen", "x"); !errors.Is(err, ErrItemGone) {
		t.Fatalf("err = %v, want ErrItemGone", err)
	}
}

func TestTodoProviderSendSummary(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
	ctx := testCtx(t)
	first := report.Summary{RunID: "r1", Items: []report.ItemResult{{ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Milk 2 L", Price: money.Parse("$5.49"), Quantity: 1}}}
	second := report.Summary{RunID: "r2", CartURL: "https://www.metro.ca/en/online-grocery/cart", Items: []report.ItemResult{
		{ItemName: "eggs", Outcome: report.OutcomeNotFound, Explanation: "sold out"},
	}}
	for _, s := range []report.Summary{first, second} {
		if err := p.SendSummary(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	ns := f.Notifications()
	if len(ns) != 1 {
		t.Fatalf("notifications = %+v, want the latest summary only", ns)
	}
	n := ns[DefaultSummaryNotificationID]
	if n.Title != second.Title() || n.Message != second.Markdown() {
		t.Fatalf("notification = %+v", n)
	}
	if !strings.Contains(n.Message, "sold out") || !strings.Contains(n.Message, "metro.ca/en/online-grocery/cart") {
		t.Fatalf("summary lacks the explanation or the cart link:\n%s", n.Message)
	}
}

// The connection drops ten times during a burst of concurrent marks — before
// and after Home Assistant applied an update — and still every item ends
// exactly as decided, each changed exactly once.
func TestMarksSurviveTenDrops(t *testing.T) {
	f := startFake(t, fakeha.Options{Coalesce: true})
	const n = 48
	var items []fakeha.TodoItem
	for i := range n {
		items = append(items, fakeha.TodoItem{UID: fmt.Sprintf("uid-%02d", i), Summary: fmt.Sprintf("item %02d", i)})
	}
	f.AddTodoList(list, "Groceries", fakeha.LocalTodoFeatures, items...)
	c := dialTest(t, testOptions(f, nil))
	p := NewTodoProvider(c, TodoOptions{})
	ctx := testCtx(t)
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}

	var calls, faults atomic.Int32
	f.SetServiceHook(func(sc fakeha.ServiceCall) fakeha.Fault {
		k := calls.Add(1)
		if k%4 != 0 || faults.Load() >= 10 {
			return fakeha.FaultNone
		}
		if faults.Add(1)%2 == 0 {
			return fakeha.FaultDropBeforeApply
		}
		return fakeha.FaultDropAfterApply
	})

	decide := func(i int) string { return []string{"added", "not_found", "failed"}[i%3] }
	var wg sync.WaitGroup
	errs := make(chan error, n)
	work := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				id := fmt.Sprintf("uid-%02d", i)
				var err error
				switch decide(i) {
				case "added":
					err = p.MarkCompleted(ctx, id, shoppinglist.Added{ProductName: fmt.Sprintf("product %02d", i), Quantity: 1})
				case "not_found":
					err = p.MarkNotFound(ctx, id, "nothing like it")
				case "failed":
					err = p.MarkFailed(ctx, id, "browser crashed")
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", id, err)
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := faults.Load(); got != 10 {
		t.Fatalf("only %d faults were injected, want 10", got)
	}
	if got := f.Upgrades(); got != 11 {
		t.Errorf("connections = %d, want 11 (the first and one per drop)", got)
	}

	changes := map[string]int{}
	for _, sc := range f.Calls() {
		if sc.Changed {
			changes[sc.Data["item"].(string)]++
		}
	}
	for i, it := range f.TodoItems(list) {
		want := fakeha.TodoItem{UID: it.UID, Summary: fmt.Sprintf("item %02d", i), Status: "needs_action"}
		switch decide(i) {
		case "added":
			want.Status = "completed"
			want.Description = fmt.Sprintf("gemini-supply: added product %02d", i)
		case "not_found":
			want.Summary += " #404"
			want.Description = "gemini-supply: nothing like it"
		case "failed":
			want.Summary += " #failed"
			want.Description = "gemini-supply: browser crashed"
		}
		if it != want {
			t.Errorf("item %d = %+v, want %+v (an update was lost)", i, it, want)
		}
		if changes[it.UID] != 1 {
			t.Errorf("item %s changed %d times, want exactly once (an update was duplicated)", it.UID, changes[it.UID])
		}
	}
	if f.IDReuseErrors() != 0 {
		t.Errorf("id_reuse errors: %d", f.IDReuseErrors())
	}
}

func TestStripRunTags(t *testing.T) {
	for in, want := range map[string]string{
		"milk":                  "milk",
		"milk #404":             "milk",
		"milk  #FAILED  #404":   "milk",
		"bread #costco #failed": "bread #costco",
		"#404":                  "",
		"2x milk #organic":      "2x milk #organic",
	} {
		if got := StripRunTags(in); got != want {
			t.Errorf("StripRunTags(%q) = %q, want %q", in, got, want)
		}
	}
}

// A person edits the list during a run: Item reads the item fresh each time
// — renamed, checked off, deleted — and Items sees an item added meanwhile.
func TestTodoProviderSeesEditsDuringARun(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Shopping List", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{UID: "milk", Summary: "milk"},
		fakeha.TodoItem{UID: "eggs", Summary: "eggs"},
		fakeha.TodoItem{UID: "tea", Summary: "tea"},
	)
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
	ctx := testCtx(t)
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.EditTodoItem(list, "milk", func(it *fakeha.TodoItem) { it.Summary = "2x oat milk" }))
	must(f.EditTodoItem(list, "eggs", func(it *fakeha.TodoItem) { it.Status = "completed" }))
	must(f.RemoveTodoItem(list, "tea"))
	added, err := f.AddTodoItem(list, "coffee")
	must(err)

	milk, err := p.Item(ctx, "milk")
	if err != nil || milk.Name != "2x oat milk" || milk.Product != "oat milk" || milk.Quantity != 2 {
		t.Errorf("renamed item = %+v, %v; want 2 × oat milk", milk, err)
	}
	if eggs, err := p.Item(ctx, "eggs"); err != nil || eggs.Status != shoppinglist.StatusCompleted {
		t.Errorf("checked-off item = %+v, %v; want completed", eggs, err)
	}
	if _, err := p.Item(ctx, "tea"); !errors.Is(err, shoppinglist.ErrItemGone) {
		t.Errorf("deleted item: err = %v, want ErrItemGone", err)
	}
	items, err := p.Items(ctx)
	must(err)
	if _, err := shoppinglist.Find(items, added); err != nil {
		t.Errorf("the item added during the run is not listed: %v", err)
	}
	// The mark of a renamed item keeps the person's new name.
	must(p.MarkNotFound(ctx, "milk", ""))
	if got := f.TodoItems(list)[0].Summary; got != "2x oat milk #404" {
		t.Errorf("renamed item marked = %q", got)
	}
}

// The household's policy tags (#nosub, #ask, #anybrand) survive a run's
// updates of the item: tagged #404, then retried and tagged #failed, the
// item still says what the household wrote.
func TestPolicyTagsSurviveTheRun(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Shopping List", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{UID: "butter", Summary: "butter #nosub #ask"},
		fakeha.TodoItem{UID: "cola", Summary: "cola #AnyBrand"},
	)
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
	ctx := testCtx(t)
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkNotFound(ctx, "butter", "sold out"); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkFailed(ctx, "butter", "timeout"); err != nil {
		t.Fatal(err)
	}
	items, err := p.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]shoppinglist.Policy{"butter": {NoSub: true, Ask: true}, "cola": {AnyBrand: true}}
	for _, it := range items {
		if it.Policy() != want[it.ID] || it.Name != map[string]string{"butter": "butter", "cola": "cola"}[it.ID] {
			t.Errorf("%s: name %q, policy %+v; want %+v", it.ID, it.Name, it.Policy(), want[it.ID])
		}
	}
	for _, it := range f.TodoItems(list) {
		if it.UID == "butter" && it.Summary != "butter #nosub #ask #failed" {
			t.Errorf("butter on the list: %q", it.Summary)
		}
	}
}

// The household's own description of an item sets its policy ("pas de
// substitut", "always ask", "any brand") and is kept through a run's marks;
// a description the service wrote (gemini-supply: …) is a note, never a rule.
func TestPolicyFromTheHouseholdsDescription(t *testing.T) {
	f := startFake(t, fakeha.Options{})
	f.AddTodoList(list, "Shopping List", fakeha.LocalTodoFeatures,
		fakeha.TodoItem{UID: "butter", Summary: "butter", Description: "Pas de substitut svp"},
		fakeha.TodoItem{UID: "cola", Summary: "cola #ask", Description: "any brand"},
		fakeha.TodoItem{UID: "rice", Summary: "rice #404", Description: "gemini-supply: no substitute in stock"},
	)
	p := NewTodoProvider(dialTest(t, testOptions(f, nil)), TodoOptions{})
	ctx := testCtx(t)
	if _, err := p.Items(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkNotFound(ctx, "butter", "sold out"); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkNotFound(ctx, "rice", "still nothing"); err != nil {
		t.Fatal(err)
	}
	items, err := p.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]shoppinglist.Policy{"butter": {NoSub: true}, "cola": {Ask: true, AnyBrand: true}, "rice": {}}
	for _, it := range items {
		if it.Policy() != want[it.ID] {
			t.Errorf("%s: policy %+v, want %+v (description %q)", it.ID, it.Policy(), want[it.ID], it.Description)
		}
	}
	for _, it := range f.TodoItems(list) {
		switch it.UID {
		case "butter":
			if it.Summary != "butter #404" || it.Description != "Pas de substitut svp" {
				t.Errorf("butter on the list: %q, description %q (the household's description must stay)", it.Summary, it.Description)
			}
		case "rice":
			if it.Description != "gemini-supply: still nothing" {
				t.Errorf("rice's note not replaced: %q", it.Description)
			}
		}
	}
}
