package shop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestRunOutcomes: every kind of outcome, with the list, the journal, the
// summary and the events agreeing.
func TestRunOutcomes(t *testing.T) {
	p := newFakeProvider("milk", "caviar", "2x bread", "eggs", "Milk", "saffron #404", "butter")
	p.items = append(p.items, shoppinglist.Item{ID: "done1", Name: "tea", Product: "tea", Quantity: 1, Status: shoppinglist.StatusCompleted})
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{
		"milk":   added("Natrel 2% Milk 2 L", "$5.49"),
		"caviar": notFound("No caviar in this store."),
		"bread":  fails(agent.ReasonModelError, errors.New("500 INTERNAL")),
		"eggs":   sequence(fails(agent.ReasonBrowserError, errors.New("net::ERR_CONNECTION_RESET")), added("Large Eggs 12", "$4.29")),
		"butter": fails(agent.ReasonMaxTurns, nil),
	})
	bus := &runstatus.Bus{}
	events := collect(bus)
	n := &fakeNotifier{}
	cfg := baseConfig(t, p, h, a)
	cfg.Bus = bus
	cfg.Notifiers = []Notifier{n}

	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	evs := events()

	wantList := map[string]string{"id1": "added", "id2": "not_found", "id3": "failed", "id4": "added", "id5": "added", "id7": "failed"}
	if got := p.outcomes(); fmt.Sprint(got) != fmt.Sprint(wantList) {
		t.Errorf("list outcomes = %v, want %v", got, wantList)
	}
	if !strings.Contains(p.failed["id3"], "model_error") || !strings.Contains(p.failed["id7"], "max_turns_exceeded") {
		t.Errorf("failure reasons = %q, %q", p.failed["id3"], p.failed["id7"])
	}
	if got := a.attemptsFor("bread"); got != MaxAttempts {
		t.Errorf("bread attempts = %d, want %d (one retry on model errors)", got, MaxAttempts)
	}
	if got := a.attemptsFor("butter"); got != 1 {
		t.Errorf("butter attempts = %d, want 1 (turn cap is not retried)", got)
	}
	if got := a.attemptsFor("saffron"); got != 0 {
		t.Errorf("an item tagged #404 was shopped %d times", got)
	}

	want := map[string]report.Outcome{"milk": "added", "caviar": "not_found", "2x bread": "failed", "eggs": "added", "Milk": "duplicate", "butter": "failed"}
	if got := outcomeByName(res.Summary); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("summary outcomes = %v, want %v", got, want)
	}
	var names []string
	for _, it := range res.Summary.Items {
		names = append(names, it.ItemName)
	}
	if got := strings.Join(names, ","); got != "milk,caviar,2x bread,eggs,Milk,butter" {
		t.Errorf("summary order = %s, want list order", got)
	}
	if res.State != runstatus.StateReviewReady || res.SkippedTagged != 1 {
		t.Errorf("state %s skipped %d", res.State, res.SkippedTagged)
	}
	if res.Summary.Usage.TotalTokens == 0 || res.Summary.Usage.CostUSD == 0 {
		t.Errorf("usage not summed: %+v", res.Summary.Usage)
	}
	if len(p.summaries) != 1 || len(n.sums) != 1 {
		t.Errorf("summary sent %d times to the provider, %d to the notifier; want 1 each", len(p.summaries), len(n.sums))
	}
	if h.maxOpen != 1 || h.open != 0 || !h.closed {
		t.Errorf("tabs: max open %d, left open %d, host closed %v", h.maxOpen, h.open, h.closed)
	}

	// Journal agrees.
	rec, err := ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != runstatus.StateReviewReady || rec.FinishedAt == nil {
		t.Errorf("journal state %s finished %v", rec.State, rec.FinishedAt)
	}
	for _, ji := range rec.Items {
		if ji.Status != ItemDone || ji.Result == nil {
			t.Errorf("journal item %s: status %s result %v", ji.Name, ji.Status, ji.Result)
			continue
		}
		if ji.Result.Outcome != want[ji.Name] {
			t.Errorf("journal item %s: outcome %s, want %s", ji.Name, ji.Result.Outcome, want[ji.Name])
		}
	}
	if rec.Items[3].Name != "eggs" || len(rec.Items[3].Attempts) != 2 || rec.Items[3].Attempts[0].Reason != "browser_error" {
		t.Errorf("eggs attempts not journaled: %+v", rec.Items[3].Attempts)
	}

	// Events: run_started first, states in order, one item_finished per item, run_finished last.
	if len(evs) == 0 || evs[0].Kind != runstatus.KindStateChanged || evs[len(evs)-1].Kind != runstatus.KindRunFinished {
		t.Fatalf("events: %v", kinds(evs))
	}
	var states []string
	finished := 0
	for _, e := range evs {
		switch e.Kind {
		case runstatus.KindStateChanged:
			states = append(states, string(e.State))
		case runstatus.KindItemFinished:
			finished++
		case runstatus.KindRunStarted:
			if e.Progress.Total != 6 {
				t.Errorf("run_started total = %d, want 6", e.Progress.Total)
			}
		}
	}
	if got := strings.Join(states, ">"); got != "initializing>authenticating>shopping>reviewing>review_ready" {
		t.Errorf("states = %s", got)
	}
	if finished != 6 {
		t.Errorf("item_finished events = %d, want 6", finished)
	}
	last := evs[len(evs)-1]
	if last.Summary == nil || last.Progress.Done != 6 || last.Progress.Added != 2 || last.Progress.NotFound != 1 || last.Progress.Failed != 2 {
		t.Errorf("final progress = %+v", last.Progress)
	}
}

func kinds(evs []runstatus.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Kind)+"/"+string(e.State))
	}
	return out
}

// TestConcurrencyIdenticalOutcomes: outcomes do not depend on concurrency,
// and never more than N tabs are open at once.
func TestConcurrencyIdenticalOutcomes(t *testing.T) {
	names := []string{"a1", "a2", "n1", "a3", "f1", "a4", "n2"}
	var results []string
	for _, n := range []int{1, 3} {
		p := newFakeProvider(names...)
		h := &fakeHost{authed: true}
		by := map[string]behaviour{
			"a1": added("A1", "$1.00"), "a2": added("A2", "$2.00"), "a3": added("A3", "$3.00"), "a4": added("A4", "$4.00"),
			"n1": notFound("none"), "n2": notFound("none"), "f1": fails(agent.ReasonStuck, nil),
		}
		if n > 1 {
			// a2 and a3 meet: each waits (bounded only against a hang) until
			// the other has started, so agents overlap by an event, not by
			// hoping a delay is long enough on a busy machine.
			by["a2"], by["a3"] = meet(by["a2"], by["a3"])
		}
		a := newFakeAgent(by)
		a.delay = 20 * time.Millisecond
		cfg := baseConfig(t, p, h, a)
		cfg.Concurrency = n
		res, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if h.maxOpen > n {
			t.Errorf("concurrency %d: %d tabs open at once", n, h.maxOpen)
		}
		if n == 3 && a.maxRun < 2 {
			t.Errorf("concurrency 3 never ran two agents at once (max %d)", a.maxRun)
		}
		results = append(results, fmt.Sprint(outcomeByName(res.Summary))+fmt.Sprint(p.outcomes()))
	}
	if results[0] != results[1] {
		t.Errorf("outcomes differ:\n c=1 %s\n c=3 %s", results[0], results[1])
	}
}

// meet wraps two behaviours so that each waits for the other to have
// started before it returns.
func meet(x, y behaviour) (behaviour, behaviour) {
	m := meetAll(x, y)
	return m[0], m[1]
}

// meetAll wraps behaviours so that each waits for all the others to have
// started before it returns.
func meetAll(bs ...behaviour) []behaviour {
	var wg sync.WaitGroup
	wg.Add(len(bs))
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	out := make([]behaviour, len(bs))
	for i, b := range bs {
		var once sync.Once
		out[i] = func(ctx context.Context, c *fakeCall) agent.Result {
			once.Do(wg.Done)
			select {
			case <-all:
			case <-ctx.Done():
			case <-time.After(90 * time.Second): // bounds a hang only
			}
			return b(ctx, c)
		}
	}
	return out
}

// TestSessionExpiryOneLogin: three agents see the session expire at once;
// one login serves them all and each item is retried once.
func TestSessionExpiryOneLogin(t *testing.T) {
	p := newFakeProvider("a", "b", "c")
	h := &fakeHost{authed: true, loginDelay: 20 * time.Millisecond}
	expired := fmt.Errorf("navigate: %w", browser.ErrAuthExpired)
	// The three first attempts all start before any of them fails, however
	// slowly the machine schedules them.
	first := meetAll(fails(agent.ReasonBrowserError, expired), fails(agent.ReasonBrowserError, expired), fails(agent.ReasonBrowserError, expired))
	a := newFakeAgent(map[string]behaviour{
		"a": sequence(signsOut(h, first[0]), added("A", "$1")),
		"b": sequence(signsOut(h, first[1]), added("B", "$1")),
		"c": sequence(signsOut(h, first[2]), added("C", "$1")),
	})
	a.delay = 10 * time.Millisecond
	cfg := baseConfig(t, p, h, a)
	cfg.Concurrency = 3
	cfg.SkipWarmUp = true // all three at once
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h.loginCount() != 1 || res.Logins != 1 {
		t.Errorf("logins = %d (result %d), want exactly 1", h.loginCount(), res.Logins)
	}
	if c := res.Summary.Counts(); c.Added != 3 {
		t.Errorf("counts = %+v, want 3 added", c)
	}
}

// TestAuthRecoveryFailed: when signing in again fails the item fails with
// auth_recovery_failed, and later expiries do not try again.
func TestAuthRecoveryFailed(t *testing.T) {
	p := newFakeProvider("a", "b")
	h := &fakeHost{authed: true, loginErr: errors.New("wrong password")}
	expired := fmt.Errorf("click: %w", browser.ErrAuthExpired)
	a := newFakeAgent(map[string]behaviour{
		"a": signsOut(h, fails(agent.ReasonBrowserError, expired)),
		"b": signsOut(h, fails(agent.ReasonBrowserError, expired)),
	})
	cfg := baseConfig(t, p, h, a)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h.loginCount() != 1 {
		t.Errorf("logins = %d, want 1", h.loginCount())
	}
	for _, id := range []string{"id1", "id2"} {
		if !strings.HasPrefix(p.failed[id], ReasonAuthRecoveryFailed) {
			t.Errorf("%s failed with %q, want %s", id, p.failed[id], ReasonAuthRecoveryFailed)
		}
	}
	if res.State != runstatus.StateReviewReady {
		t.Errorf("state = %s: one item's failure must not stop the run", res.State)
	}
}

// TestInitialLoginFailure: a run that cannot sign in fails (exit 1) and
// still tells the user why.
func TestInitialLoginFailure(t *testing.T) {
	p := newFakeProvider("a")
	h := &fakeHost{authed: false, loginErr: errors.New("captcha")}
	a := newFakeAgent(nil)
	cfg := baseConfig(t, p, h, a)
	res, err := Run(context.Background(), cfg)
	if err == nil || res.State != runstatus.StateFailed {
		t.Fatalf("err %v state %s, want a failed run", err, res.State)
	}
	if !strings.Contains(err.Error(), "captcha") || len(p.summaries) != 1 || len(p.summaries[0].Warnings) == 0 {
		t.Errorf("err %v, summaries %+v", err, p.summaries)
	}
	if len(p.outcomes()) != 0 {
		t.Errorf("the list was changed: %v", p.outcomes())
	}
	rec, _ := ReadJournal(res.JournalPath)
	if rec.State != runstatus.StateFailed || rec.Items[0].Status != ItemInterrupted {
		t.Errorf("journal: state %s item %s", rec.State, rec.Items[0].Status)
	}
}

// TestLoginWhenSignedOut: a signed-out session is signed in once before shopping.
func TestLoginWhenSignedOut(t *testing.T) {
	p := newFakeProvider("a")
	h := &fakeHost{authed: false}
	a := newFakeAgent(map[string]behaviour{"a": added("A", "$1")})
	res, err := Run(context.Background(), baseConfig(t, p, h, a))
	if err != nil || h.loginCount() != 1 || res.Logins != 1 {
		t.Fatalf("err %v logins %d", err, h.loginCount())
	}
}

// TestBrowserCrashRetried: an attempt that loses the browser is retried once
// (opening the next tab relaunches it).
func TestBrowserCrashRetried(t *testing.T) {
	p := newFakeProvider("a", "b")
	h := &fakeHost{authed: true}
	gone := fmt.Errorf("screenshot: %w", browser.ErrBrowserGone)
	a := newFakeAgent(map[string]behaviour{
		"a": sequence(fails(agent.ReasonBrowserError, gone), added("A", "$1")),
		"b": sequence(fails(agent.ReasonBrowserError, gone), fails(agent.ReasonBrowserError, gone)),
	})
	cfg := baseConfig(t, p, h, a)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomeByName(res.Summary); got["a"] != report.OutcomeAdded || got["b"] != report.OutcomeFailed {
		t.Errorf("outcomes = %v", got)
	}
	if a.attemptsFor("b") != 2 {
		t.Errorf("b attempts = %d, want 2", a.attemptsFor("b"))
	}
}

// TestNewTabFailureRetried: a tab that cannot be opened is a retryable
// browser error.
func TestNewTabFailureRetried(t *testing.T) {
	p := newFakeProvider("a")
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{"a": added("A", "$1")})
	cfg := baseConfig(t, p, h, a)
	cfg.LaunchHost = func(context.Context) (Host, error) { return &tabFailOnce{fakeHost: h}, nil }
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomeByName(res.Summary)["a"]; got != report.OutcomeAdded {
		t.Errorf("a = %s, want added after a retry", got)
	}
	rec, _ := ReadJournal(res.JournalPath)
	if n := len(rec.Items[0].Attempts); n != 2 || !strings.Contains(rec.Items[0].Attempts[0].Error, "open a browser tab") {
		t.Errorf("attempts = %+v", rec.Items[0].Attempts)
	}
}

// tabFailOnce fails the second NewTab (the first item attempt).
type tabFailOnce struct {
	*fakeHost
	n int
}

func (h *tabFailOnce) NewTab(ctx context.Context) (Tab, error) {
	h.n++
	if h.n == 2 {
		return nil, errors.New("target closed")
	}
	return h.fakeHost.NewTab(ctx)
}

// TestCancelLeavesNoFalseCompleted: stopping the run mid-way cancels the
// agents, marks nothing they did not report, and still writes the journal
// and the summary.
func TestCancelLeavesNoFalseCompleted(t *testing.T) {
	p := newFakeProvider("a", "b", "c", "d", "e")
	h := &fakeHost{authed: true}
	started := make(chan string, 10)
	a := newFakeAgent(map[string]behaviour{
		"a": added("A", "$1"),
		"b": blocks(started),
		"c": blocks(started),
		"d": added("D", "$1"),
		"e": added("E", "$1"),
	})
	cfg := baseConfig(t, p, h, a)
	cfg.Concurrency = 2
	cfg.Bus = &runstatus.Bus{}
	events := collect(cfg.Bus)
	ctx, cancel := context.WithCancel(context.Background())
	done := runInBackground(ctx, cfg)
	for range 2 {
		select {
		case <-started:
		case <-time.After(90 * time.Second): // bounds a hang only
			t.Fatal("agents b and c did not start")
		}
	}
	cancel()
	var o runOutcome
	select {
	case o = <-done:
	case <-time.After(90 * time.Second): // bounds a hang only
		t.Fatal("the run did not stop after the cancel")
	}
	if !errors.Is(o.err, ErrCancelled) || o.res.State != runstatus.StateCancelled || !o.res.Summary.Cancelled {
		t.Fatalf("err %v state %s", o.err, o.res.State)
	}
	if got := o.res.Summary.Title(); got != "gemini-supply: stopped — 1 added, 4 not shopped" {
		t.Errorf("title = %q", got)
	}
	if got := p.outcomes(); fmt.Sprint(got) != "map[id1:added]" {
		t.Errorf("list = %v, want only a completed", got)
	}
	if a.attemptsFor("d")+a.attemptsFor("e") != 0 {
		t.Error("items were started after the cancel")
	}
	if len(p.summaries) != 1 {
		t.Errorf("summary sent %d times, want 1", len(p.summaries))
	}
	rec, err := ReadJournal(o.res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]ItemStatus{}
	for _, ji := range rec.Items {
		status[ji.Name] = ji.Status
	}
	want := map[string]ItemStatus{"a": ItemDone, "b": ItemInterrupted, "c": ItemInterrupted, "d": ItemInterrupted, "e": ItemInterrupted}
	if fmt.Sprint(status) != fmt.Sprint(want) || rec.State != runstatus.StateCancelled {
		t.Errorf("journal = %v (%s), want %v", status, rec.State, want)
	}
	// Every item has its final state: in the journal (History counts it)
	// and as an item_finished event (the panel's card), the two never
	// started included.
	final := map[string]report.Outcome{}
	for _, ji := range rec.Items {
		if ji.Result != nil {
			final[ji.Name] = ji.Result.Outcome
		}
	}
	wantFinal := "map[a:added b:not_shopped c:not_shopped d:not_shopped e:not_shopped]"
	if fmt.Sprint(final) != wantFinal {
		t.Errorf("journal results = %v, want %s", final, wantFinal)
	}
	finished := map[string]report.Outcome{}
	for _, ev := range events() {
		if ev.Kind == runstatus.KindItemFinished && ev.Item != nil {
			finished[ev.Item.ItemName] = ev.Item.Outcome
		}
	}
	if fmt.Sprint(finished) != wantFinal {
		t.Errorf("item_finished events = %v, want %s", finished, wantFinal)
	}
}

// TestJournalShowsInFlight: while an agent works, the journal on disk says
// which items are done and which are in flight.
func TestJournalShowsInFlight(t *testing.T) {
	p := newFakeProvider("a", "b")
	h := &fakeHost{authed: true}
	started := make(chan string, 1)
	release := make(chan struct{})
	a := newFakeAgent(map[string]behaviour{
		"a": added("A", "$1"),
		"b": func(ctx context.Context, c *fakeCall) agent.Result {
			started <- c.query
			<-release
			return added("B", "$2")(ctx, c)
		},
	})
	cfg := baseConfig(t, p, h, a)
	cfg.RunID = "inflight"
	done := make(chan struct{})
	go func() { defer close(done); _, _ = Run(context.Background(), cfg) }()
	<-started
	rec, err := ReadJournal(filepath.Join(cfg.JournalDir, "inflight.json"))
	close(release)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if rec.Items[0].Status != ItemDone || rec.Items[1].Status != ItemInFlight {
		t.Errorf("journal mid-run: a=%s b=%s, want done and in_flight", rec.Items[0].Status, rec.Items[1].Status)
	}
}

// TestPresentOptions covers the three answers and remembering.
func TestPresentOptions(t *testing.T) {
	opts := []any{
		map[string]any{"name": "Natrel 2% 2 L", "price": "$5.49", "url": "https://shop.test/p/milk-2", "product_id": "milk-2"},
		map[string]any{"name": "Natrel 2% 4 L", "price": "$7.99"},
	}
	ask := func(ctx context.Context, c *fakeCall) agent.Result {
		out, res, end := c.use(ctx, ToolPresentOptions, map[string]any{"item_name": c.query, "options": opts, "context": "Two sizes"})
		if end {
			return res
		}
		if out.Response["answer"] != "product" {
			return agent.Result{Reason: agent.ReasonNoReport, Err: fmt.Errorf("response %v", out.Response)}
		}
		return added(out.Response["name"].(string), out.Response["price"].(string))(ctx, c)
	}
	tests := []struct {
		name      string
		answer    choice.Answer
		want      report.Outcome
		product   string
		remember  bool
		restarted bool
	}{
		{"product", choice.Answer{Kind: choice.KindProduct, Index: 1}, report.OutcomeAdded, "Natrel 2% 4 L", false, false},
		{"product remembered", choice.Answer{Kind: choice.KindProduct, Index: 0, Remember: true}, report.OutcomeAdded, "Natrel 2% 2 L", true, false},
		{"nothing", choice.Answer{Kind: choice.KindNothing}, report.OutcomeNotFound, "", false, false},
		{"skip this week", choice.Answer{Kind: choice.KindSkip}, report.OutcomeSkipped, "", false, false},
		{"timeout", choice.Answer{Kind: choice.KindNothing, Reason: choice.ReasonTimeout}, report.OutcomeFailed, "", false, false},
		{"custom", choice.Answer{Kind: choice.KindCustom, Text: "oat milk"}, report.OutcomeAdded, "Oatly", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakeProvider("milk")
			h := &fakeHost{authed: true}
			a := newFakeAgent(map[string]behaviour{"milk": ask, "oat milk": added("Oatly", "$5.99")})
			r := &fakeResolver{answer: func(choice.Question) (choice.Answer, error) { return tc.answer, nil }}
			prefs := &fakePrefs{}
			bus := &runstatus.Bus{}
			events := collect(bus)
			cfg := baseConfig(t, p, h, a)
			cfg.Resolver, cfg.Preferences, cfg.Bus = r, prefs, bus
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			it := res.Summary.Items[0]
			if it.Outcome != tc.want || it.ProductName != tc.product {
				t.Errorf("outcome %s %q, want %s %q", it.Outcome, it.ProductName, tc.want, tc.product)
			}
			if len(r.questions) != 1 || len(r.questions[0].Options) != 2 || r.questions[0].ItemName != "milk" {
				t.Errorf("questions = %+v", r.questions)
			}
			if _, ok := prefs.Lookup("milk"); ok != tc.remember {
				t.Errorf("remembered = %v, want %v", ok, tc.remember)
			}
			if got := a.attemptsFor("oat milk") == 1; got != tc.restarted {
				t.Errorf("restarted with the custom query = %v", got)
			}
			if tc.want == report.OutcomeNotFound && !strings.Contains(p.notFound["id1"], "chose none") {
				t.Errorf("not found explanation = %q", p.notFound["id1"])
			}
			// An unanswered question fails the item with the note "timeout"
			// (it is not "not found": nobody decided that nothing fits).
			if tc.want == report.OutcomeFailed && !strings.HasPrefix(p.failed["id1"], "timeout") {
				t.Errorf("failed reason = %q, want the note timeout", p.failed["id1"])
			}
			// Skip this week leaves the item on the list as it was.
			if tc.want == report.OutcomeSkipped && (p.notFound["id1"] != "" || p.failed["id1"] != "" || it.Explanation != choice.SkipExplanation) {
				t.Errorf("skipped item: list not found %q failed %q, explanation %q", p.notFound["id1"], p.failed["id1"], it.Explanation)
			}
			if tc.want == report.OutcomeFailed && p.notFound["id1"] != "" {
				t.Errorf("a timed-out item was also marked not found: %q", p.notFound["id1"])
			}
			var waits, answers int
			for _, e := range events() {
				switch e.Kind {
				case runstatus.KindWaitingForUser:
					waits++
				case runstatus.KindUserAnswered:
					answers++
				}
			}
			if waits != 1 || answers != 1 {
				t.Errorf("waiting/answered events = %d/%d, want 1/1", waits, answers)
			}
		})
	}
}

// TestNoResolverNoPresentOptions: without a resolver the model is not offered
// present_options and the prompt says to report not found.
func TestNoResolverNoPresentOptions(t *testing.T) {
	p := newFakeProvider("milk")
	h := &fakeHost{authed: true}
	var declared []string
	a := newFakeAgent(map[string]behaviour{"milk": func(ctx context.Context, c *fakeCall) agent.Result {
		for n := range c.tools {
			declared = append(declared, n)
		}
		return notFound("out of stock")(ctx, c)
	}})
	if _, err := Run(context.Background(), baseConfig(t, p, h, a)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(declared, ","), ToolPresentOptions) {
		t.Errorf("present_options declared without a resolver: %v", declared)
	}
	if g := a.goals[0]; strings.Contains(g, "present_options") || !strings.Contains(g, "report_item_not_found") {
		t.Errorf("goal without resolver:\n%s", g)
	}
}

// TestFirstReportWins: a second report in the same attempt changes nothing.
func TestFirstReportWins(t *testing.T) {
	p := newFakeProvider("milk")
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{"milk": func(ctx context.Context, c *fakeCall) agent.Result {
		_, res, _ := c.use(ctx, ToolReportAdded, map[string]any{"item_name": "Milk", "price_text": "$1", "url": "u", "quantity": float64(2)})
		_, _, _ = c.use(ctx, ToolReportNotFound, map[string]any{"item_name": "milk", "explanation": "x"})
		return res
	}})
	res, err := Run(context.Background(), baseConfig(t, p, h, a))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.outcomes()) != "map[id1:added]" || res.Summary.Items[0].Quantity != 2 {
		t.Errorf("list %v, result %+v", p.outcomes(), res.Summary.Items[0])
	}
}

// TestNothingToShop: an empty list ends at once without a browser or a notification.
func TestNothingToShop(t *testing.T) {
	p := newFakeProvider("saffron #404")
	launched := false
	cfg := baseConfig(t, p, &fakeHost{}, newFakeAgent(nil))
	cfg.LaunchHost = func(context.Context) (Host, error) { launched = true; return nil, errors.New("no") }
	res, err := Run(context.Background(), cfg)
	if err != nil || launched || res.State != runstatus.StateReviewReady || len(p.summaries) != 0 || res.SkippedTagged != 1 {
		t.Fatalf("err %v launched %v state %s summaries %d", err, launched, res.State, len(p.summaries))
	}
}

// TestRetryTagged shops tagged items when asked.
func TestRetryTagged(t *testing.T) {
	p := newFakeProvider("saffron #404")
	a := newFakeAgent(map[string]behaviour{"saffron": added("Saffron", "$9")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.RetryTagged = true
	if _, err := Run(context.Background(), cfg); err != nil || a.attemptsFor("saffron") != 1 {
		t.Fatalf("err %v attempts %d", err, a.attemptsFor("saffron"))
	}
}

// TestRetryFailedShopsOnlyTagged: Retry failed (OnlyTagged) shops the
// items an earlier run tagged #404/#failed, and nothing else of the open
// list.
func TestRetryFailedShopsOnlyTagged(t *testing.T) {
	p := newFakeProvider("saffron #404", "milk", "2x bread", "capers #failed")
	a := newFakeAgent(map[string]behaviour{"saffron": added("Saffron", "$9"), "capers": added("Capers", "$3"),
		"milk": added("Milk", "$5"), "bread": added("Bread", "$3")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.OnlyTagged = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := outcomeByName(res.Summary)
	if len(got) != 2 || got["saffron"] != report.OutcomeAdded || got["capers"] != report.OutcomeAdded ||
		a.attemptsFor("milk") != 0 || a.attemptsFor("bread") != 0 {
		t.Errorf("shopped %v (milk %d, bread %d attempts), want only the two tagged items", got, a.attemptsFor("milk"), a.attemptsFor("bread"))
	}
}

// TestOnlyItems limits a run to the requested items.
func TestOnlyItems(t *testing.T) {
	p := newFakeProvider("milk", "2x bread", "eggs")
	a := newFakeAgent(map[string]behaviour{"bread": added("Bread", "$3"), "eggs": added("Eggs", "$4")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.Items = []string{"Bread", "eggs"}
	res, err := Run(context.Background(), cfg)
	if err != nil || len(res.Summary.Items) != 2 || a.attemptsFor("milk") != 0 {
		t.Fatalf("err %v items %v", err, outcomeByName(res.Summary))
	}
}

// TestPreferredProductInPrompt: a remembered product goes into the goal.
func TestPreferredProductInPrompt(t *testing.T) {
	p := newFakeProvider("milk")
	a := newFakeAgent(map[string]behaviour{"milk": added("Natrel", "$5")})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	prefs := &fakePrefs{}
	_ = prefs.Remember("milk", PreferredProduct{Name: "Natrel 2% 2 L", URL: "https://shop.test/p/milk-2"})
	cfg.Preferences = prefs
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.goals[0], "Natrel 2% 2 L") || !strings.Contains(a.goals[0], "https://shop.test/p/milk-2") {
		t.Errorf("goal lacks the remembered product:\n%s", a.goals[0])
	}
}

// TestListUnreadable: a list that cannot be read means the run could not run.
func TestListUnreadable(t *testing.T) {
	p := newFakeProvider()
	p.itemsErr = errors.New("HA unreachable")
	res, err := Run(context.Background(), baseConfig(t, p, &fakeHost{}, newFakeAgent(nil)))
	if err == nil || res.State != runstatus.StateFailed || !strings.Contains(err.Error(), "HA unreachable") {
		t.Fatalf("err %v state %s", err, res.State)
	}
}

// TestStagger: agent starts are spaced by the stagger.
func TestStagger(t *testing.T) {
	p := newFakeProvider("a", "b", "c")
	a := newFakeAgent(map[string]behaviour{"a": added("A", "$1"), "b": added("B", "$1"), "c": added("C", "$1")})
	var starts []time.Time
	var clockMu = make(chan struct{}, 1)
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.Concurrency = 3
	cfg.Stagger = 30 * time.Millisecond
	inner := a.run
	cfg.RunAgent = func(ctx context.Context, c agent.Config, goal string, comp agent.Computer, tools []agent.Tool) agent.Result {
		clockMu <- struct{}{}
		starts = append(starts, time.Now())
		<-clockMu
		return inner(ctx, c, goal, comp, tools)
	}
	// Each start is planned a stagger after the one before, the first no
	// earlier than the run; a start is seen only after its planned time.
	// So, in time order, start i comes at least i staggers after the run
	// began, however late a loaded machine wakes any of them (the spread
	// between recorded starts is not a sound measure: a late first start
	// shrinks it).
	began := time.Now()
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if len(starts) != 3 {
		t.Fatalf("starts = %d", len(starts))
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	for i, s := range starts {
		if want := time.Duration(i) * cfg.Stagger; s.Sub(began) < want {
			t.Errorf("start %d came %v after the run began, want at least %v", i+1, s.Sub(began), want)
		}
	}
}

// TestCrashThenExpiredSession: a relaunched browser may have lost the
// session; each cause gets its own retry, so the item still recovers.
func TestCrashThenExpiredSession(t *testing.T) {
	p := newFakeProvider("a")
	h := &fakeHost{authed: true}
	gone := fmt.Errorf("click: %w", browser.ErrBrowserGone)
	expired := fmt.Errorf("screenshot: %w", browser.ErrAuthExpired)
	a := newFakeAgent(map[string]behaviour{
		"a": sequence(fails(agent.ReasonBrowserError, gone), signsOut(h, fails(agent.ReasonBrowserError, expired)), added("A", "$1")),
	})
	res, err := Run(context.Background(), baseConfig(t, p, h, a))
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomeByName(res.Summary)["a"]; got != report.OutcomeAdded || a.attemptsFor("a") != 3 || h.loginCount() != 1 {
		t.Errorf("a = %s after %d attempts and %d logins, want added after 3 and 1", got, a.attemptsFor("a"), h.loginCount())
	}
}

// TestWarmUp: with several tabs, the first item is shopped alone; then the
// others run side by side. SkipWarmUp starts them together.
func TestWarmUp(t *testing.T) {
	for _, skip := range []bool{false, true} {
		p := newFakeProvider("a", "b", "c")
		bStarted := make(chan struct{})
		overlap := false
		// a waits for b to start: until it does (bounded only against a
		// hang) when b may start alongside it, 100 ms when it must not (b
		// cannot start before a ends).
		wait := 100 * time.Millisecond
		if skip {
			wait = 90 * time.Second
		}
		a := newFakeAgent(map[string]behaviour{
			"a": func(ctx context.Context, c *fakeCall) agent.Result {
				select {
				case <-bStarted:
					overlap = true
				case <-time.After(wait):
				}
				return added("A", "$1")(ctx, c)
			},
			"b": func(ctx context.Context, c *fakeCall) agent.Result {
				close(bStarted)
				return added("B", "$1")(ctx, c)
			},
			"c": added("C", "$1"),
		})
		cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
		cfg.Concurrency = 3
		cfg.SkipWarmUp = skip
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		if overlap != skip {
			t.Errorf("SkipWarmUp=%v: b started while a was running = %v", skip, overlap)
		}
	}
}

// TestBrowserGoneForGood: when tabs cannot be opened even after the
// relaunch, the run stops starting items, leaves them on the list and fails.
func TestBrowserGoneForGood(t *testing.T) {
	p := newFakeProvider("a", "b", "c")
	gone := fmt.Errorf("opening a tab: %w: relaunching failed", browser.ErrBrowserGone)
	h := &fakeHost{authed: true}
	a := newFakeAgent(map[string]behaviour{"a": added("A", "$1"), "b": added("B", "$1"), "c": added("C", "$1")})
	cfg := baseConfig(t, p, h, a)
	ready := false
	cfg.LaunchHost = func(context.Context) (Host, error) { return h, nil }
	cfg.RunAgent = func(ctx context.Context, c agent.Config, goal string, comp agent.Computer, tools []agent.Tool) agent.Result {
		res := a.run(ctx, c, goal, comp, tools)
		if !ready { // the browser dies for good after the first item
			ready = true
			h.mu.Lock()
			h.newTabErrs = []error{gone, gone, gone, gone, gone, gone}
			h.mu.Unlock()
		}
		return res
	}
	res, err := Run(context.Background(), cfg)
	if err == nil || res.State != runstatus.StateFailed || !strings.Contains(err.Error(), "browser died") {
		t.Fatalf("err %v state %s", err, res.State)
	}
	if got := p.outcomes(); fmt.Sprint(got) != "map[id1:added]" {
		t.Errorf("list = %v: items the dead browser could not shop must stay open", got)
	}
	if a.attemptsFor("c") != 0 {
		t.Error("an item was started after the browser was gone for good")
	}
}

// TestReportUpdatesListAndJournalAtOnce: a report updates the list — the
// item and its duplicates — and the journal on disk before the agent has
// even returned; until then the duplicates are in flight with their item.
// A run killed right after the report leaves list and journal agreeing.
func TestReportUpdatesListAndJournalAtOnce(t *testing.T) {
	p := newFakeProvider("milk", "bread", "2x Milk")
	h := &fakeHost{authed: true}
	var cfg Config
	journal := func() map[string]ItemStatus {
		rec, err := ReadJournal(filepath.Join(cfg.JournalDir, cfg.RunID+".json"))
		if err != nil {
			t.Error(err)
		}
		st := map[string]ItemStatus{}
		for _, ji := range rec.Items {
			st[ji.Name] = ji.Status
		}
		return st
	}
	var before, after map[string]ItemStatus
	var listAfter map[string]string
	a := newFakeAgent(map[string]behaviour{
		"milk": func(ctx context.Context, c *fakeCall) agent.Result {
			before = journal()
			_, res, _ := c.use(ctx, ToolReportAdded, map[string]any{"item_name": "Natrel 2% 2 L", "price_text": "$5.49", "url": "u", "quantity": float64(2)})
			after, listAfter = journal(), p.outcomes()
			return res
		},
		"bread": added("Bread", "$3"),
	})
	cfg = baseConfig(t, p, h, a)
	cfg.RunID = "at-once"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(before) != fmt.Sprint(map[string]ItemStatus{"milk": ItemInFlight, "bread": ItemPending, "2x Milk": ItemInFlight}) {
		t.Errorf("journal before the report = %v, want milk and its duplicate in flight", before)
	}
	if fmt.Sprint(listAfter) != "map[id1:added id3:added]" {
		t.Errorf("list right after the report = %v, want milk and its duplicate completed", listAfter)
	}
	if after["milk"] != ItemDone || after["2x Milk"] != ItemDone {
		t.Errorf("journal right after the report = %v, want milk and its duplicate done", after)
	}
	rec, err := ReadJournal(filepath.Join(cfg.JournalDir, cfg.RunID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ji := range rec.Items {
		if ji.Name == "2x Milk" && (ji.Result == nil || ji.Result.Outcome != report.OutcomeDuplicate || ji.DuplicateOf != "id1") {
			t.Errorf("duplicate in the journal = %+v", ji)
		}
	}
}

// countingReader is a cart reader (the model's, in production) that counts
// its readings.
type countingReader struct {
	mu sync.Mutex
	n  int
}

func (c *countingReader) ReadCart(context.Context, Host) (Cart, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return Cart{Lines: []CartLine{}}, nil
}

func (c *countingReader) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestStoppedRunReadsTheCartByCode: after Stop the cart is read once more
// by the cart page reader (no model), so the review pack — and Home
// Assistant's Cart sensor and event, which follow run_finished's pack —
// carry the cart as the stop left it. A store read only by the model gets
// no reading after Stop (and no cart in the pack).
func TestStoppedRunReadsTheCartByCode(t *testing.T) {
	for _, byCode := range []bool{true, false} {
		t.Run(fmt.Sprintf("by code %v", byCode), func(t *testing.T) {
			p := newFakeProvider("a", "b")
			h := &fakeHost{authed: true}
			var mu sync.Mutex
			rows := []browser.Row{row("m1", "Milk 2 L", "1", "$5.49", "")}
			h.tabFor = func(ft *fakeTab) Tab {
				mu.Lock()
				defer mu.Unlock()
				return &cartPage{fakeTab: ft, root: true, empty: true, rows: slices.Clone(rows)}
			}
			started := make(chan string, 4)
			a := newFakeAgent(map[string]behaviour{"a": added("Apples 1 kg", "$3.99"), "b": blocks(started)})
			cfg := baseConfig(t, p, h, a)
			cfg.Concurrency = 1
			model := &countingReader{}
			page := &PageCartReader{CartURL: "https://shop.test/cart", Page: store.CartPage{Root: "#cart", Line: ".line", Empty: "#empty", Exact: true}}
			if byCode {
				cfg.Cart = &FallbackCartReader{First: page, Then: model}
			} else {
				cfg.Cart = model
			}
			cfg.Bus = &runstatus.Bus{}
			events := collect(cfg.Bus)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan Result, 1)
			go func() {
				res, _ := Run(ctx, cfg)
				done <- res
			}()
			select {
			case <-started:
			case <-time.After(90 * time.Second): // bounds a hang only
				t.Fatal("agent b did not start")
			}
			mu.Lock()
			rows = append(rows, row("a1", "Apples 1 kg", "1", "$3.99", ""))
			mu.Unlock()
			before := model.count()
			cancel()
			var res Result
			select {
			case res = <-done:
			case <-time.After(90 * time.Second): // bounds a hang only
				t.Fatal("the run did not stop")
			}
			if res.State != runstatus.StateCancelled {
				t.Fatalf("state %s", res.State)
			}
			if model.count() != before {
				t.Errorf("the model read the cart after Stop (%d readings, %d before)", model.count(), before)
			}
			var finished *runstatus.Event
			for _, e := range events() {
				if e.Kind == runstatus.KindRunFinished {
					finished = &e
				}
			}
			if finished == nil {
				t.Fatal("no run_finished")
			}
			if !byCode {
				if res.Pack == nil || res.Pack.Cart != nil || (finished.Pack != nil && finished.Pack.Cart != nil) {
					t.Errorf("a cart in the pack without a code reader: %+v", res.Pack)
				}
				return
			}
			if res.Pack == nil || res.Pack.Cart == nil || res.Pack.Cart.Units() != 2 || len(res.Pack.Cart.Lines) != 2 {
				t.Fatalf("the pack's cart after Stop: %+v", res.Pack)
			}
			if finished.Pack == nil || finished.Pack.Cart == nil || finished.Pack.Cart.Units() != 2 {
				t.Errorf("run_finished carries no cart: %+v", finished.Pack)
			}
			if res.Review == nil || len(res.Review.Warnings) != 0 {
				t.Errorf("review after Stop: %+v (apples reported and in the cart: no warning)", res.Review)
			}
		})
	}
}
