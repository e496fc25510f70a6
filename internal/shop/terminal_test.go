package shop

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

func terminalEvents() []runstatus.Event {
	milk := report.ItemResult{ItemID: "1", ItemName: "milk", Quantity: 1}
	milkDone := milk
	milkDone.Outcome, milkDone.ProductName, milkDone.Price, milkDone.Turns, milkDone.Duration = report.OutcomeAdded, "Natrel 2% 2 L", money.Parse("$5.49"), 4, 3200*time.Millisecond
	cav := report.ItemResult{ItemID: "2", ItemName: "caviar", Outcome: report.OutcomeNotFound, Explanation: "Not sold here.", Turns: 2}
	bread := report.ItemResult{ItemID: "3", ItemName: "bread", Outcome: report.OutcomeFailed, Explanation: "model_error: 500", Attempts: 2}
	p := func(done int) runstatus.Progress { return runstatus.Progress{Total: 3, Done: done} }
	return []runstatus.Event{
		{Kind: runstatus.KindStateChanged, State: runstatus.StateInitializing},
		{Kind: runstatus.KindRunStarted, State: runstatus.StateInitializing, Progress: p(0)},
		{Kind: runstatus.KindStateChanged, State: runstatus.StateAuthenticating, Progress: p(0)},
		{Kind: runstatus.KindStateChanged, State: runstatus.StateShopping, Progress: p(0)},
		{Kind: runstatus.KindItemStarted, State: runstatus.StateShopping, Progress: p(0), Item: &milk},
		{Kind: runstatus.KindWaitingForUser, State: runstatus.StateShopping, Progress: p(0), Item: &milk, Message: "Which milk?"},
		{Kind: runstatus.KindItemFinished, State: runstatus.StateShopping, Progress: p(1), Item: &milkDone},
		{Kind: runstatus.KindItemFinished, State: runstatus.StateShopping, Progress: p(2), Item: &cav},
		{Kind: runstatus.KindItemFinished, State: runstatus.StateShopping, Progress: p(3), Item: &bread},
		{Kind: runstatus.KindRunFinished, State: runstatus.StateReviewReady, Progress: runstatus.Progress{Total: 3, Done: 3, Added: 1, NotFound: 1, Failed: 1}},
	}
}

func TestTerminal(t *testing.T) {
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		term := NewTerminal(&b, tty)
		bus := &runstatus.Bus{}
		sub := bus.Subscribe(64)
		for _, e := range terminalEvents() {
			bus.Publish(e)
		}
		done := make(chan struct{})
		go func() { defer close(done); term.Follow(context.Background(), sub) }()
		select {
		case <-done:
		case <-time.After(90 * time.Second): // bounds a hang only
			t.Fatal("Follow did not return after run_finished")
		}
		out := b.String()
		for _, w := range []string{"milk", "started", "Natrel 2% 2 L · $5.49 · 4 model calls · 3.2s", "✗ caviar", "not found: Not sold here.", "! bread", "failed: model_error: 500", "2 attempts", "waiting for your answer: Which milk?", "Done: 1 added, 1 not found, 1 failed of 3."} {
			if !strings.Contains(out, w) {
				t.Errorf("tty=%v: output lacks %q:\n%s", tty, w, out)
			}
		}
		hasBar := strings.Contains(out, "█") || strings.Contains(out, "░")
		if hasBar != tty || strings.Contains(out, "\x1b[") != tty {
			t.Errorf("tty=%v: progress bar shown = %v, escapes = %v", tty, hasBar, strings.Contains(out, "\x1b["))
		}
		if tty && !strings.Contains(out, "3/3") && !strings.Contains(out, "2/3") {
			t.Errorf("bar lacks the counts:\n%q", out)
		}
	}
}

func TestPrintResult(t *testing.T) {
	rev := Compare(Cart{}, Cart{Lines: []CartLine{{ProductID: "milk-2", Name: "Natrel 2% 2 L", Quantity: 1, Price: money.Parse("$5.49")}}},
		[]report.ItemResult{
			{ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2% 2 L", URL: "https://x/p/milk-2", Price: money.Parse("$5.49"), Quantity: 1},
			{ItemName: "bread", Outcome: report.OutcomeAdded, ProductName: "Bread", Price: money.Parse("$3.99"), Quantity: 1},
		})
	rev.CartURL = "https://x/cart"
	res := Result{Summary: report.Summary{RunID: "r1", Items: []report.ItemResult{{ItemName: "milk", Outcome: report.OutcomeAdded}}}, Review: &rev, JournalPath: "/data/runs/r1.json", State: runstatus.StateReviewReady}
	var b bytes.Buffer
	PrintResult(&b, res)
	for _, w := range []string{"Cart review", "Natrel 2% 2 L at $5.49: 0 → 1 (for milk)", "⚠", `"bread"`, "https://x/cart", "The run's record (for troubleshooting): /data/runs/r1.json"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	if err := PrintJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Summary.RunID != "r1" || back.Review == nil || len(back.Review.Warnings) != 1 {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
}

// TestPrintJSONCannotRun: the result of a run that could not start still
// has the documented shape: state, error and an empty item list (not null).
func TestPrintJSONCannotRun(t *testing.T) {
	var b bytes.Buffer
	if err := PrintJSON(&b, Result{State: runstatus.StateFailed, Error: "read the shopping list: no such file"}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		State   string `json:"state"`
		Error   string `json:"error"`
		Summary struct {
			Items []json.RawMessage `json:"items"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.State != "failed" || got.Error == "" || got.Summary.Items == nil || !strings.Contains(b.String(), `"items": []`) {
		t.Errorf("JSON of a run that could not run:\n%s", b.String())
	}
}

// An item the run never shopped (it stopped, or the browser never started)
// gets no tick: "✓ bananas" under "The run failed" told the household it
// was in the cart.
func TestFinishedLineOfAnItemNotShopped(t *testing.T) {
	for _, c := range []struct {
		it   report.ItemResult
		want string
	}{
		{report.ItemResult{ItemName: "bananas", Outcome: report.OutcomeNotShopped}, "  · bananas                  not shopped"},
		{report.ItemResult{ItemName: "eggs", Outcome: report.OutcomeNotShopped, Explanation: "the run was stopped"}, "not shopped · the run was stopped"},
		{report.ItemResult{ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2% 2 L"}, "  ✓ milk"},
	} {
		got := finishedLine(messages.Catalog{}, c.it)
		if !strings.Contains(got, c.want) || (c.it.Outcome != report.OutcomeAdded && strings.Contains(got, "✓")) {
			t.Errorf("finishedLine(%s %s) = %q, want it to contain %q", c.it.ItemName, c.it.Outcome, got, c.want)
		}
	}
}

// With language fr the terminal speaks French: its lines, prices, the
// summary and the cart review (nothing English a person reads is left).
func TestTerminalInFrench(t *testing.T) {
	fr := messages.For("fr")
	var b bytes.Buffer
	term := NewTerminal(&b, false).In(fr)
	for _, e := range terminalEvents() {
		term.Handle(e)
	}
	rev := Compare(Cart{}, Cart{Lines: []CartLine{{ProductID: "milk-2", Name: "Natrel 2% 2 L", Quantity: 1, Price: money.Parse("$5.49")}}},
		[]report.ItemResult{
			{ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2% 2 L", URL: "https://x/p/milk-2", Price: money.Parse("$5.49"), Quantity: 1},
			{ItemName: "bread", Outcome: report.OutcomeAdded, ProductName: "Bread", Price: money.Parse("$3.99"), Quantity: 1},
		})
	rev.CartURL = "https://x/cart"
	res := Result{Summary: report.Summary{RunID: "r1", Items: []report.ItemResult{{ItemName: "milk", Outcome: report.OutcomeAdded, ProductName: "Natrel 2% 2 L", Price: money.Parse("$5.49"), Quantity: 1}},
		Usage: report.Usage{TotalTokens: 1000, PromptTokens: 900, OutputTokens: 100}},
		Review: &rev, JournalPath: "/data/runs/r1.json", State: runstatus.StateReviewReady}
	PrintResultIn(&b, res, fr)
	out := b.String()
	for _, w := range []string{
		"Courses : 3 articles…", "commencé", "attend votre réponse : Which milk?",
		"Natrel 2% 2 L · 5,49\u00a0$ · 4 appels au modèle", "introuvable : Not sold here.", "échec : model_error: 500", "2 essais",
		"Terminé : 1 ajouté(s), 1 introuvable(s), 1 en échec sur 3.",
		"Vérification du panier", "Natrel 2% 2 L à 5,49\u00a0$ : 0 → 1 (pour milk)", "Avertissements :",
		"Vérifiez le panier et passez la commande vous-même : https://x/cart", "Le relevé de la course (pour le dépannage) : /data/runs/r1.json",
		"environ 0,00\u00a0$",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, en := range []string{"Shopping", "started", "turns", "not found", "Done:", "Cart review", " at ", "Warnings", "Check the cart", "$5.49", "$0.00"} {
		if strings.Contains(out, en) {
			t.Errorf("French output holds English %q:\n%s", en, out)
		}
	}
}
