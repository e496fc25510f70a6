package shop

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/guide"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// An unattended run with a panel attached ends as it would without one:
// the tabs of the items whose agents gave up (not found, out of turns) are
// offered, nobody takes them in takeover_wait, and the items keep their
// outcomes; an added item's tab is never offered; every tab is closed.
func TestItemTakeoverNobodyComes(t *testing.T) {
	p := newFakeProvider("milk", "caviar", "butter")
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{
		"milk":   added("Natrel 2% Milk 2 L", "$5.49"),
		"caviar": notFound("No caviar in this store."),
		"butter": fails(agent.ReasonMaxTurns, nil),
	})
	cfg := baseConfig(t, p, h, a)
	cfg.Desk = NewDesk(nil, guide.Scripted{}, nil)
	panelOpen(t, cfg.Desk)
	offered := make(chan runstatus.NeedsPerson, 8)
	cfg.Desk.OnNeedsPerson(func(_ context.Context, np runstatus.NeedsPerson) error { offered <- np; return nil })
	cfg.TakeoverWait = 1 // nobody comes: the shortest wait
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	close(offered)
	var got []string
	for np := range offered {
		got = append(got, np.Item+" "+np.Reason)
	}
	sort.Strings(got)
	if want := []string{"butter item_gave_up", "caviar item_gave_up"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("offered %v, want %v", got, want)
	}
	if want := map[string]string{"id1": "added", "id2": "not_found", "id3": "failed"}; fmt.Sprint(p.outcomes()) != fmt.Sprint(want) {
		t.Errorf("list %v, want %v", p.outcomes(), want)
	}
	if want := map[string]report.Outcome{"milk": "added", "caviar": "not_found", "butter": "failed"}; fmt.Sprint(outcomeByName(res.Summary)) != fmt.Sprint(want) {
		t.Errorf("summary %v, want %v", outcomeByName(res.Summary), want)
	}
	if h.open != 0 || len(cfg.Desk.NeedsPersons()) != 0 {
		t.Errorf("after the run: %d tabs open, needs %v", h.open, cfg.Desk.NeedsPersons())
	}
	rec, err := ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, ji := range rec.Items {
		tk := ji.TakeOver
		switch ji.Name {
		case "milk":
			if tk != nil {
				t.Errorf("milk's journal has a take-over: %+v", tk)
			}
		default:
			if tk == nil || tk.HandedBack || tk.EndedAt == nil {
				t.Errorf("%s's journal take-over = %+v, want offered and not handed back", ji.Name, tk)
			}
		}
	}
}

// The household finishes a not-found item in its tab: what the tab added
// after the offer (its cart ledger) is the item's product, the list item
// is completed, the summary says the household added it, and the
// cart's check of the result finds nothing to warn about.
func TestItemTakeoverHouseholdAdds(t *testing.T) {
	p := newFakeProvider("caviar")
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{"caviar": notFound("No caviar in this store.")})
	cfg := baseConfig(t, p, h, a)
	d := NewDesk(nil, guide.Scripted{}, nil)
	panelOpen(t, d)
	cfg.Desk, cfg.TakeoverWait = d, DefaultTakeoverWait
	answered := make(chan HandedBack, 1)
	d.OnNeedsPerson(func(_ context.Context, np runstatus.NeedsPerson) error {
		go func() { // the household, in the panel
			ih := d.item(np.Tab)
			ih.tab.(*fakeTab).addToCart("caviar-beluga-50g", 2)
			hb, err := d.Done(context.Background(), np.Tab, "")
			if err != nil {
				t.Errorf("Done: %v", err)
			}
			answered <- hb
		}()
		return nil
	})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if hb := <-answered; hb.Outcome != string(report.OutcomeAdded) || hb.Item != "caviar" || hb.Product != "caviar-beluga-50g" {
		t.Errorf("Done said %+v", hb)
	}
	it := res.Summary.Items[0]
	if it.Outcome != report.OutcomeAdded || it.ProductName != "caviar-beluga-50g" || it.Quantity != 2 || it.ChosenBy != report.ChosenByHousehold ||
		!strings.Contains(it.Explanation, "household") || len(it.Warnings) != 0 {
		t.Errorf("caviar = %+v", it)
	}
	if p.outcomes()["id1"] != "addednot_found" || p.completed["id1"].Quantity != 2 {
		t.Errorf("list %v %+v, want completed (after the agent's #404)", p.outcomes(), p.completed)
	}
	if h.open != 0 {
		t.Errorf("%d tabs open", h.open)
	}
	// The journal says the tab was handed back and what it added.
	rec, err := ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	tk := rec.Items[0].TakeOver
	if tk == nil || !tk.HandedBack || tk.Reason != ReasonItemGaveUp || tk.EndedAt == nil || len(tk.Cart) != 1 || tk.Cart[0].ProductID != "caviar-beluga-50g" {
		t.Errorf("journal's take-over = %+v", tk)
	}
}

// A hand-back the item can no longer take: an unknown decision is refused;
// after the item stopped waiting (nobody in time, the run stopped) Done
// says so instead of waiting; a second Done while the first is pending is
// refused; an answered Done gets its answer even when the wait then ends.
func TestItemHandBack(t *testing.T) {
	ctx := context.Background()
	newHold := func() *itemHold {
		return &itemHold{np: runstatus.NeedsPerson{Tab: "item-1"}, back: make(chan handBack, 1), gone: make(chan struct{})}
	}
	ih := newHold()
	var ie *browser.InputError
	if _, err := ih.handBack(ctx, "maybe"); !errors.As(err, &ie) {
		t.Errorf("an unknown decision: %v", err)
	}
	close(ih.gone)
	if _, err := ih.handBack(ctx, ""); !errors.Is(err, browser.ErrNotHeld) {
		t.Errorf("Done after the wait: %v", err)
	}
	if _, err := ih.handBack(ctx, DecisionSkip); !errors.Is(err, browser.ErrNotHeld) {
		t.Errorf("a second Done: %v", err)
	}
	ih = newHold()
	go func() {
		hb := <-ih.back
		hb.reply <- HandedBack{Outcome: "added"}
		close(ih.gone)
	}()
	if hb, err := ih.handBack(ctx, ""); err != nil || hb.Outcome != "added" {
		t.Errorf("an answered Done: %+v %v", hb, err)
	}
}

// panelOpen keeps d watched while t runs, as an open panel page does by
// asking for the waiting tabs every few seconds.
func panelOpen(t *testing.T, d *Desk) {
	t.Helper()
	d.NeedsPersons()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				d.NeedsPersons()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

// TestItemTakeoverNeedsAnOpenPanel: with a Desk but no panel open (nobody
// asked for the waiting tabs), an item whose agent gives up is not
// offered and the run is not held for takeover_wait: an unattended run
// ends as it always did.
func TestItemTakeoverNeedsAnOpenPanel(t *testing.T) {
	p := newFakeProvider("milk", "caviar")
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{
		"milk":   added("Natrel 2% Milk 2 L", "$5.49"),
		"caviar": notFound("No caviar in this store."),
	})
	cfg := baseConfig(t, p, h, a)
	cfg.Desk = NewDesk(nil, guide.Scripted{}, nil)
	var offered atomic.Int32
	cfg.Desk.OnNeedsPerson(func(context.Context, runstatus.NeedsPerson) error { offered.Add(1); return nil })
	cfg.TakeoverWait = time.Hour // were it offered, the run would wait for it
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := offered.Load(); n != 0 {
		t.Errorf("%d tabs offered with no panel open", n)
	}
	if want := map[string]report.Outcome{"milk": "added", "caviar": "not_found"}; fmt.Sprint(outcomeByName(res.Summary)) != fmt.Sprint(want) {
		t.Errorf("summary %v, want %v", outcomeByName(res.Summary), want)
	}
	if h.open != 0 {
		t.Errorf("after the run: %d tabs open", h.open)
	}
}

// screenPlanner is a model planner (not guide.Scripted) that reads only
// the screenshot, as the Gemini planner does; it notes what it was given.
type screenPlanner struct{ seen chan guide.Page }

func (p screenPlanner) Plan(_ context.Context, st guide.State, pg guide.Page) (guide.Plan, error) {
	p.seen <- pg
	return guide.Plan{Task: "Tap “Add to cart” under the 2 L lactose-free milk.", Description: st.Goal, Box: &[4]int{100, 200, 300, 260}}, nil
}

// TestShowMeOnAnItemsTab: on an item's tab that waits for a person, Show
// me runs with a model planner on that tab's screenshot and the person's
// goal, and the step is journaled (without its sentence); with the
// offline scripted planner, which knows sign-in pages only, it says so.
func TestShowMeOnAnItemsTab(t *testing.T) {
	for _, tt := range []struct {
		name    string
		planner guide.Planner
	}{
		{"model planner", screenPlanner{seen: make(chan guide.Page, 1)}},
		{"scripted planner", guide.Scripted{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newFakeProvider("lactose-free milk")
			h := &fakeHost{authed: true}
			a := newFakeAgent(map[string]behaviour{"lactose-free milk": notFound("No 2 L lactose-free milk found.")})
			cfg := baseConfig(t, p, h, a)
			d := NewDesk(nil, tt.planner, nil)
			panelOpen(t, d)
			cfg.Desk, cfg.TakeoverWait = d, DefaultTakeoverWait
			type answer struct {
				step guide.Step
				err  error
			}
			answered := make(chan answer, 1)
			d.OnNeedsPerson(func(_ context.Context, np runstatus.NeedsPerson) error {
				go func() { // the household, in the panel
					step, err := d.Guide(context.Background(), np.Tab, "find the 2 L lactose-free milk")
					answered <- answer{step, err}
					if _, err := d.Done(context.Background(), np.Tab, DecisionSkip); err != nil {
						t.Errorf("Done: %v", err)
					}
				}()
				return nil
			})
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := <-answered
			if sp, ok := tt.planner.(screenPlanner); ok {
				if got.err != nil || got.step.Box != [4]int{100, 200, 300, 260} || !strings.Contains(got.step.Task, "Add to cart") {
					t.Fatalf("Show me = %+v, %v", got.step, got.err)
				}
				if pg := <-sp.seen; string(pg.Screenshot) != "png" {
					t.Errorf("the planner saw %q, want the tab's screenshot", pg.Screenshot)
				}
				rec, err := ReadJournal(res.JournalPath)
				if err != nil {
					t.Fatal(err)
				}
				var guided bool
				for _, e := range rec.TakeOver {
					if e.Kind == TakeoverGuide && e.Item == "lactose-free milk" && e.Step == 1 && e.Box != nil {
						guided = true
					}
				}
				if !guided {
					t.Errorf("the journal's take-over has no guide step: %+v", rec.TakeOver)
				}
				return
			}
			if !errors.Is(got.err, errItemGuide) {
				t.Errorf("Show me with the scripted planner = %+v, %v; want errItemGuide", got.step, got.err)
			}
		})
	}
}

// asksPerson is an agent that asks the household to take its tab over.
func asksPerson(reason string) behaviour {
	return func(ctx context.Context, c *fakeCall) agent.Result {
		_, res, _ := c.use(ctx, ToolAskPerson, map[string]any{"item_name": c.query, "reason": reason})
		return res
	}
}

// TestAgentAsksForAPerson: with a panel attached, the agent may ask the
// household to take its tab over (a check only a person can pass); the
// tab is offered with item_agent_asked even when no panel page is open
// (the phones' push calls someone), the list says why meanwhile, and the
// household's hand-back ends the item. Without a panel the tool is not
// declared at all.
func TestAgentAsksForAPerson(t *testing.T) {
	p := newFakeProvider("oat milk")
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{"oat milk": asksPerson("A \"not a robot\" check covers the product page.")})
	cfg := baseConfig(t, p, h, a)
	d := NewDesk(nil, guide.Scripted{}, nil) // no panel page open: not watched
	cfg.Desk, cfg.TakeoverWait = d, DefaultTakeoverWait
	offered := make(chan runstatus.NeedsPerson, 1)
	d.OnNeedsPerson(func(_ context.Context, np runstatus.NeedsPerson) error {
		offered <- np
		go func() {
			if _, err := d.Done(context.Background(), np.Tab, DecisionSkip); err != nil {
				t.Errorf("Done: %v", err)
			}
		}()
		return nil
	})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if np := <-offered; np.Reason != ReasonItemAgentAsked || np.Item != "oat milk" {
		t.Errorf("offered %+v", np)
	}
	if it := res.Summary.Items[0]; it.Outcome != report.OutcomeSkipped {
		t.Errorf("oat milk = %+v, want skipped as the household decided", it)
	}

	// Without a panel, the agent is not offered the tool.
	p2 := newFakeProvider("oat milk")
	a2 := newFakeAgent(map[string]behaviour{"oat milk": asksPerson("a check")})
	cfg2 := baseConfig(t, p2, &fakeHost{authed: true}, a2)
	res2, err := Run(context.Background(), cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if it := res2.Summary.Items[0]; it.Outcome != report.OutcomeFailed || !strings.Contains(it.Explanation, "not declared") {
		t.Errorf("without a panel: %+v, want the undeclared tool to fail the item", it)
	}
}
