package shop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
)

// TestPersonEditsTheListDuringARun: while the first item's agent works, a
// person deletes that item, deletes another, checks one off, renames one and
// adds two (one repeating a product of the run). The deleted and
// checked-off items are skipped, the renamed one is shopped under its new
// name, the new one in the same run; the first item's cart result is
// reported although its list update is skipped, without an error.
func TestPersonEditsTheListDuringARun(t *testing.T) {
	p := newFakeProvider("apples", "bread", "cheese", "dates")
	h := &fakeHost{authed: true}
	var added1, added2 string
	a := newFakeAgent(map[string]behaviour{
		"apples": func(ctx context.Context, c *fakeCall) agent.Result {
			p.remove("id1") // deleted while its agent runs
			p.remove("id2")
			p.checkOff("id3")
			p.rename("id4", "2x dried dates")
			added1 = p.add("eggs")
			added2 = p.add("Apples")
			return added("Apples", "$1")(ctx, c)
		},
		"dried dates": added("Dates", "$3"),
		"eggs":        added("Eggs", "$4"),
	})
	cfg := baseConfig(t, p, h, a)
	cfg.Concurrency = 1
	logs := &syncbuf.Buffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range res.Summary.Items {
		got[it.ItemName] = string(it.Outcome) + " " + it.Explanation
	}
	want := map[string]string{
		"apples":         "added ",
		"bread":          "skipped " + report.SkippedRemoved,
		"cheese":         "skipped " + report.SkippedCheckedOff,
		"2x dried dates": "added ",
		"eggs":           "added ",
		"Apples":         `skipped added during the run while "apples" was already being shopped; left on the list`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results =\n%v\nwant\n%v", got, want)
	}
	if a.attemptsFor("bread")+a.attemptsFor("cheese")+a.attemptsFor("dates")+a.attemptsFor("Apples") != 0 || a.attemptsFor("dried dates") != 1 {
		t.Error("a skipped item or the old name was shopped")
	}
	for _, g := range a.goals {
		if goalLine(g, "Item") == "dried dates" && goalLine(g, "Quantity") != "2" {
			t.Errorf("renamed item shopped with quantity %q, want 2", goalLine(g, "Quantity"))
		}
	}
	outs := p.outcomes()
	if outs["id4"] != "added" || outs[added1] != "added" || outs["id1"] != "" || outs["id3"] != "" || outs[added2] != "" {
		t.Errorf("list updates = %v", outs)
	}
	if len(res.Summary.UnappliedUpdates) != 0 {
		t.Errorf("unapplied updates = %v, want none (a deleted item is the person's decision)", res.Summary.UnappliedUpdates)
	}
	if l := logs.String(); strings.Contains(l, "level=ERROR") || strings.Contains(l, "could not be applied") {
		t.Errorf("a person's edits were logged as problems:\n%s", l)
	}
	rec, err := ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Items) != 6 {
		t.Errorf("journal has %d items, want 6 (the added ones too)", len(rec.Items))
	}
	for _, ji := range rec.Items {
		if ji.Status != ItemDone || !ji.ListUpdated {
			t.Errorf("journal item %s: %s, list_updated %v", ji.Name, ji.Status, ji.ListUpdated)
		}
	}
}

// TestUnappliedUpdatesAreReported: a list update that fails (for any
// reason but a deleted item) is named with its reason in the summary, its
// markdown and the review; the journal says the list was not updated.
func TestUnappliedUpdatesAreReported(t *testing.T) {
	p := newFakeProvider("apples", "bread")
	p.markErr = map[string]error{"id1": errors.New("update not verified: Home Assistant is restarting")}
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{"apples": added("Apples", "$1"), "bread": added("Bread", "$2")})
	cfg := baseConfig(t, p, h, a)
	cfg.Cart = &fakeCartReader{}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := res.Summary.UnappliedUpdates
	if len(u) != 1 || u[0].ItemName != "apples" || u[0].Update != UpdateCompleted || !strings.Contains(u[0].Reason, "restarting") {
		t.Fatalf("unapplied = %+v", u)
	}
	if res.Review == nil || len(res.Review.UnappliedUpdates) != 1 || !strings.Contains(res.Review.Text(), "apples (mark completed): update not verified") {
		t.Errorf("review does not list it: %+v", res.Review)
	}
	if md := res.Summary.Markdown(); !strings.Contains(md, "List updates that could not be applied (1)") {
		t.Errorf("markdown:\n%s", md)
	}
	rec, _ := ReadJournal(res.JournalPath)
	if rec.Items[0].ListUpdated || !rec.Items[1].ListUpdated {
		t.Errorf("journal list_updated = %v, %v; want false, true", rec.Items[0].ListUpdated, rec.Items[1].ListUpdated)
	}
}

// fakeCartReader returns the same empty cart every time.
type fakeCartReader struct{ cart Cart }

func (f *fakeCartReader) ReadCart(context.Context, Host) (Cart, error) { return f.cart, nil }

// unwritable is a list that says it cannot be updated.
type unwritable struct{ *fakeProvider }

func (unwritable) CheckWritable(context.Context) error {
	return errors.New("shopping list /x/list.yaml cannot be updated: its directory /x is not writable")
}

// TestUnwritableListStopsBeforeShopping: no browser, no agent, a failed run
// whose error says why.
func TestUnwritableListStopsBeforeShopping(t *testing.T) {
	p := newFakeProvider("apples")
	a := newFakeAgent(map[string]behaviour{"apples": added("Apples", "$1")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.Provider = unwritable{p}
	var launched atomic.Bool
	cfg.LaunchHost = func(context.Context) (Host, error) { launched.Store(true); return &fakeHost{}, nil }
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrListNotWritable) || !strings.Contains(err.Error(), "not writable") {
		t.Fatalf("err = %v, want ErrListNotWritable with the cause", err)
	}
	if launched.Load() || a.attemptsFor("apples") != 0 || res.State != "failed" {
		t.Errorf("launched %v, attempts %d, state %s", launched.Load(), a.attemptsFor("apples"), res.State)
	}
	if !strings.Contains(res.Summary.Title(), "1 not shopped") {
		t.Errorf("title = %q", res.Summary.Title())
	}
}

// TestNamelessItemsNeverShopped: names that are only tags are refused also
// with RetryTagged; the list is not touched for them.
func TestNamelessItemsNeverShopped(t *testing.T) {
	p := newFakeProvider("#404", "milk")
	a := newFakeAgent(map[string]behaviour{"milk": added("Milk", "$1"), "": added("X", "$1")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.RetryTagged = true
	var buf bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.attemptsFor("") != 0 || p.outcomes()["id1"] != "" {
		t.Errorf("a nameless item was shopped or marked: %v", p.outcomes())
	}
	o := res.Summary.Items
	if len(o) != 2 || o[0].Outcome != report.OutcomeSkipped || o[0].Explanation != report.SkippedNoName || o[1].Outcome != report.OutcomeAdded {
		t.Errorf("results = %+v", o)
	}
}

// TestResumeUnfinishedJournal: a journal left by a killed run (no
// finished_at, its process gone) is resumed: a done item whose list update
// had not landed is updated without shopping it, an in-flight item whose
// product the cart gained since the killed run read it is completed from
// the cart line, an in-flight item not in the cart is shopped again, and a
// done item the list already reflects is left alone.
func TestResumeUnfinishedJournal(t *testing.T) {
	p := newFakeProvider("apples", "bread", "cheese", "dates")
	p.checkOff("id4") // dates: done and updated by the killed run
	a := newFakeAgent(map[string]behaviour{"cheese": added("Cheese", "$5")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	price := money.Parse("$2.00")
	cfg.Cart = &fakeCartReader{cart: Cart{Lines: []CartLine{
		{Name: "Old Line", Quantity: 1, Price: price},
		{Name: "POM Sliced Bread 675 g", ProductID: "b1", Quantity: 1, Price: price},
	}}}
	killed := JournalRecord{RunID: "20260101T000000Z-dead", PID: 0, StartedAt: time.Now(), State: runstatus.StateShopping,
		CartBefore: &Cart{Lines: []CartLine{{Name: "Old Line", Quantity: 1, Price: price}}},
		Items: []JournalItem{
			{ItemID: "id1", Name: "apples", Quantity: 1, Status: ItemDone, Result: &report.ItemResult{ItemID: "id1", ItemName: "apples", Outcome: report.OutcomeAdded, ProductName: "Gala", Quantity: 1}},
			{ItemID: "id2", Name: "bread", Quantity: 1, Status: ItemInFlight},
			{ItemID: "id3", Name: "cheese", Quantity: 1, Status: ItemInFlight},
			{ItemID: "id4", Name: "dates", Quantity: 1, Status: ItemDone, ListUpdated: true, Result: &report.ItemResult{ItemID: "id4", ItemName: "dates", Outcome: report.OutcomeAdded}},
		}}
	j, err := NewJournal(cfg.JournalDir, killed)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.outcomes()); got != "map[id1:added id2:added id3:added]" {
		t.Errorf("list updates = %s", got)
	}
	if a.attemptsFor("apples")+a.attemptsFor("bread") != 0 || a.attemptsFor("cheese") != 1 {
		t.Errorf("attempts: apples %d bread %d cheese %d", a.attemptsFor("apples"), a.attemptsFor("bread"), a.attemptsFor("cheese"))
	}
	if got := p.completed["id2"]; got.ProductName != "POM Sliced Bread 675 g" || got.Quantity != 1 {
		t.Errorf("bread completed from %+v, want the cart line", got)
	}
	if got := fmt.Sprint(outcomeByName(res.Summary)); got != "map[bread:added cheese:added]" {
		t.Errorf("outcomes = %s", got)
	}
	old, err := ReadJournal(j.Path())
	if err != nil || old.ResumedBy != res.Summary.RunID {
		t.Errorf("old journal resumed_by = %q (%v)", old.ResumedBy, err)
	}
	// A second run resumes nothing again.
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if a.attemptsFor("cheese") != 1 {
		t.Error("the resumed journal was resumed again")
	}
}

// TestPersonEditsTheYAMLListDuringARun: the same edits as
// TestPersonEditsTheListDuringARun, made to a real YAML list file by a
// person's editor (a plain rewrite, no lock) while the first item's agent
// works.
func TestPersonEditsTheYAMLListDuringARun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "list.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("items:\n  - {id: a, name: apples}\n  - {id: b, name: bread}\n  - {id: c, name: cheese}\n  - {id: d, name: dates}\n")
	list, err := shoppinglist.OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newFakeAgent(map[string]behaviour{
		"apples": func(ctx context.Context, c *fakeCall) agent.Result {
			write("items:\n  - {id: c, name: cheese, status: completed}\n  - {id: d, name: 2x dried dates}\n  - eggs # added\n")
			return added("Apples", "$1")(ctx, c)
		},
		"dried dates": added("Dates", "$3"),
		"eggs":        added("Eggs", "$4"),
	})
	cfg := baseConfig(t, nil, &fakeHost{authed: true}, a)
	cfg.Provider = list
	cfg.Concurrency = 1
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, it := range res.Summary.Items {
		got[it.ItemName] = string(it.Outcome) + " " + it.Explanation
	}
	want := map[string]string{
		"apples":         "added ",
		"bread":          "skipped " + report.SkippedRemoved,
		"cheese":         "skipped " + report.SkippedCheckedOff,
		"2x dried dates": "added ",
		"eggs":           "added ",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results =\n%v\nwant\n%v", got, want)
	}
	if len(res.Summary.UnappliedUpdates) != 0 {
		t.Errorf("unapplied = %v", res.Summary.UnappliedUpdates)
	}
	items, err := list.Items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		names = append(names, fmt.Sprintf("%s=%s/%d", it.Name, it.Status, it.Quantity))
	}
	if s := strings.Join(names, " "); s != "cheese=completed/1 2x dried dates=completed/2 eggs=completed/1" {
		t.Errorf("list = %s", s)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "# added") {
		t.Errorf("the person's comment was lost:\n%s", b)
	}
}

// queueing is a list that queues updates it cannot apply now (as the Home
// Assistant provider does while Home Assistant restarts) and says at Flush
// which of them still did not land.
type queueing struct {
	*fakeProvider
	flushed  atomic.Int32
	stillOut map[string]error
}

func (q *queueing) Flush(context.Context) map[string]error {
	q.flushed.Add(1)
	return q.stillOut
}

// TestQueuedUpdatesAreFlushedBeforeTheSummary: an update the provider queued
// (ErrUpdatePending) is not a failure by itself; the run flushes the queue
// before the summary and reports only what still did not land, with the
// provider's reason; a queued update whose item a person deleted is their
// decision, not a failure.
func TestQueuedUpdatesAreFlushedBeforeTheSummary(t *testing.T) {
	p := newFakeProvider("apples", "bread", "cheese")
	pending := fmt.Errorf("mark completed: %w", shoppinglist.ErrUpdatePending)
	p.markErr = map[string]error{"id1": pending, "id2": pending, "id3": pending}
	q := &queueing{fakeProvider: p, stillOut: map[string]error{
		"id2": errors.New("Home Assistant is still starting"),
		"id3": fmt.Errorf("deleted: %w", shoppinglist.ErrItemGone),
	}}
	a := newFakeAgent(map[string]behaviour{"apples": added("Apples", "$1"), "bread": added("Bread", "$2"), "cheese": added("Cheese", "$3")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.Provider = q
	cfg.Cart = &fakeCartReader{}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.flushed.Load() == 0 {
		t.Fatal("the queue was never flushed")
	}
	u := res.Summary.UnappliedUpdates
	if len(u) != 1 || u[0].ItemName != "bread" || u[0].Update != UpdateCompleted || !strings.Contains(u[0].Reason, "still starting") {
		t.Fatalf("unapplied = %+v, want only bread with the provider's reason", u)
	}
	rec, _ := ReadJournal(res.JournalPath)
	got := map[string]bool{}
	for _, ji := range rec.Items {
		got[ji.Name] = ji.ListUpdated
	}
	if !got["apples"] || got["bread"] || !got["cheese"] {
		t.Errorf("journal list_updated = %v; want apples and cheese true (landed / deleted by a person), bread false", got)
	}
}
