package shop

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// The journal says who started a run and who answered an item's question
// (Home Assistant users' names, from the panel behind ingress or a phone).
func TestJournalRecordsWhoStartedAndAnswered(t *testing.T) {
	ask := func(ctx context.Context, c *fakeCall) agent.Result {
		out, res, end := c.use(ctx, ToolPresentOptions, map[string]any{"item_name": c.query, "context": "Two sizes",
			"options": []any{map[string]any{"name": "Natrel 2% 2 L", "price": "$5.49"}, map[string]any{"name": "Natrel 2% 4 L", "price": "$7.99"}}})
		if end {
			return res
		}
		return added(out.Response["name"].(string), out.Response["price"].(string))(ctx, c)
	}
	p := newFakeProvider("milk")
	a := newFakeAgent(map[string]behaviour{"milk": ask})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	cfg.Resolver = &fakeResolver{answer: func(choice.Question) (choice.Answer, error) {
		return choice.Answer{Kind: choice.KindProduct, Index: 1, By: "Bob"}, nil
	}}
	cfg.StartedBy = "Alice"
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadJournal(res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	if rec.StartedBy != "Alice" || rec.StoppedBy != "" {
		t.Errorf("journal started by %q, stopped by %q; want Alice and nobody", rec.StartedBy, rec.StoppedBy)
	}
	if len(rec.Items) != 1 || !slices.Equal(rec.Items[0].AnsweredBy, []string{"Bob"}) {
		t.Errorf("journal items %+v, want milk answered by Bob", rec.Items)
	}
}

// A run stopped by someone (the cause serve's Stop gives its context) says
// who in its journal.
func TestJournalRecordsWhoStopped(t *testing.T) {
	started := make(chan string, 1)
	p := newFakeProvider("a")
	a := newFakeAgent(map[string]behaviour{"a": blocks(started)})
	cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := runInBackground(ctx, cfg)
	select {
	case <-started:
	case <-time.After(90 * time.Second): // bounds a hang only
		t.Fatal("the agent did not start")
	}
	stopped := errors.New("stopped on request")
	cancel(&runstatus.StopCause{Err: stopped, Source: "panel", By: "Carol"})
	var o runOutcome
	select {
	case o = <-done:
	case <-time.After(90 * time.Second): // bounds a hang only
		t.Fatal("the run did not stop")
	}
	if !errors.Is(o.err, stopped) {
		t.Errorf("err = %v, want the stop", o.err)
	}
	rec, err := ReadJournal(o.res.JournalPath)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != runstatus.StateCancelled || rec.StoppedBy != "Carol" {
		t.Errorf("journal %s stopped by %q, want cancelled by Carol", rec.State, rec.StoppedBy)
	}
}

// runOutcome is what Run returned.
type runOutcome struct {
	res Result
	err error
}

// runInBackground runs cfg in the background; the outcome comes on the
// channel.
func runInBackground(ctx context.Context, cfg Config) <-chan runOutcome {
	done := make(chan runOutcome, 1)
	go func() {
		res, err := Run(ctx, cfg)
		done <- runOutcome{res, err}
	}()
	return done
}

// whoConfirms answers every safety confirmation with allowed, naming by
// (ask.Asker's ConfirmBy: the panel's or the phone's user).
type whoConfirms struct{ by string }

func (w whoConfirms) Confirm(ctx context.Context, e, a string) (bool, error) {
	yes, _, err := w.ConfirmBy(ctx, e, a)
	return yes, err
}

func (w whoConfirms) ConfirmBy(context.Context, string, string) (bool, string, error) {
	return true, w.by, nil
}

// The journal says what a run was asked to do (weekly, Retry failed, a
// Wrong product's re-shop and whose review it belongs to), its started
// event says the same, and an item's safety confirmation is journaled
// with who allowed it.
func TestJournalRecordsTheRunsKindAndWhoConfirmed(t *testing.T) {
	confirmThenAdd := func(ctx context.Context, c *fakeCall) agent.Result {
		if ok, err := c.confirm.Confirm(ctx, "a cookie banner", "click “Accept”"); !ok || err != nil {
			return agent.Result{Reason: agent.ReasonSafetyDenied, Err: err}
		}
		return added("Natrel 2% 2 L", "$5.49")(ctx, c)
	}
	for _, tc := range []struct {
		name     string
		kind     runstatus.RunKind
		reshopOf string
		want     runstatus.RunKind
	}{
		{"weekly by default", "", "", runstatus.RunWeekly},
		{"retry", runstatus.RunRetry, "", runstatus.RunRetry},
		{"reshop", runstatus.RunReshop, "week-1", runstatus.RunReshop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakeProvider("milk")
			a := newFakeAgent(map[string]behaviour{"milk": confirmThenAdd})
			cfg := baseConfig(t, p, &fakeHost{authed: true}, a)
			cfg.Kind, cfg.ReshopOf = tc.kind, tc.reshopOf
			cfg.Agent.Confirmer = whoConfirms{by: "Alice"}
			bus := &runstatus.Bus{}
			sub := bus.Subscribe(1024)
			cfg.Bus = bus
			res, err := Run(context.Background(), cfg)
			sub.Close() // what the run published stays to be read
			if err != nil {
				t.Fatal(err)
			}
			rec, err := ReadJournal(res.JournalPath)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Kind != tc.want || rec.ReshopOf != tc.reshopOf {
				t.Errorf("journal kind %q of %q, want %q of %q", rec.Kind, rec.ReshopOf, tc.want, tc.reshopOf)
			}
			if len(rec.Items) != 1 || len(rec.Items[0].Confirmations) != 1 {
				t.Fatalf("journal items %+v, want milk with one confirmation", rec.Items)
			}
			if c := rec.Items[0].Confirmations[0]; !c.Allowed || c.By != "Alice" || c.Action != "click “Accept”" {
				t.Errorf("the confirmation: %+v", c)
			}
			for ev := range sub.C {
				if ev.Kind == runstatus.KindRunStarted {
					if ev.RunKind != tc.want || ev.ReshopOf != tc.reshopOf {
						t.Errorf("run_started says %q of %q", ev.RunKind, ev.ReshopOf)
					}
					return
				}
			}
			t.Error("no run_started event")
		})
	}
}
