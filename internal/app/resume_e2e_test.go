package app

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// TestResumeAfterSIGKILL kills a shopping run hard — SIGKILL to its whole
// process group (the run, its Playwright driver and Chromium), as an OOM
// kill or a power loss would — at the worst moment: the sourdough bread is
// in the demo store's cart but its agent has not reported it yet (the
// journal says in flight, the list says open). A new run on the same list
// and data directory must not add the bread twice: it finds it in the cart
// and completes it from the cart line; the bananas the killed run finished
// stay completed; the other items are shopped once.
func TestResumeAfterSIGKILL(t *testing.T) {
	if os.Getenv("GEMINI_SUPPLY_TEST_CHILD") == "killed-run" {
		killedRunChild(t)
		return
	}
	t.Parallel() // its own runner, store, browser, files and child process: see docs/testing.md
	e := newE2E(t, "bananas", "sourdough bread", "2x eggs", "olive oil")
	ctx, cancel := context.WithTimeout(context.Background(), runBound)
	defer cancel()

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestResumeAfterSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GEMINI_SUPPLY_TEST_CHILD=killed-run",
		"GEMINI_SUPPLY_TEST_LIST="+e.listPath, "GEMINI_SUPPLY_TEST_DATA="+e.dataDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	said := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "child: ") {
				said <- l
				return
			}
		}
		said <- "child: exited"
	}()
	select {
	case l := <-said:
		if l != "child: bread in the cart, not reported" {
			kill()
			t.Fatalf("the child said %q; stderr:\n%s", l, stderr.String())
		}
	case <-ctx.Done():
		kill()
		t.Fatalf("the child never reached the moment to kill; stderr:\n%s", stderr.String())
	}
	kill()

	// What the kill left: the journal unfinished, the bread in flight.
	journals, _ := filepath.Glob(filepath.Join(shop.JournalDir(e.dataDir), "*.json"))
	if len(journals) != 1 {
		t.Fatalf("journals = %v", journals)
	}
	old, err := shop.ReadJournal(journals[0])
	if err != nil {
		t.Fatal(err)
	}
	if old.FinishedAt != nil || old.Items[1].Status != shop.ItemInFlight || old.Items[0].Status != shop.ItemDone {
		t.Fatalf("the killed run's journal: finished %v, items %+v", old.FinishedAt, old.Items)
	}
	if got := fmtMap(e.list()); got != "2x eggs=open bananas=completed olive oil=open sourdough bread=open" {
		t.Fatalf("list after the kill = %s", got)
	}

	// The next run.
	r := e.start()
	res, err := e.shop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmtMap(e.list()); got != "2x eggs=completed bananas=completed olive oil=completed sourdough bread=completed" {
		t.Errorf("list after the new run = %s", got)
	}
	cart := map[string]int{}
	for _, l := range r.DemoStore().Cart() {
		cart[l.ProductID] += l.Quantity
	}
	if want := map[string]int{"bananas-bunch": 1, "bread-sourdough-600g": 1, "eggs-large-12": 2, "olive-oil-1l": 1}; fmt.Sprint(cart) != fmt.Sprint(want) {
		t.Errorf("cart = %v, want %v (nothing added twice)", cart, want)
	}
	if got := fmtMap(outcomes(res.Summary)); got != "2x eggs=added olive oil=added sourdough bread=added" {
		t.Errorf("new run's outcomes = %s", got)
	}
	if old, err = shop.ReadJournal(journals[0]); err != nil || old.ResumedBy != res.Summary.RunID {
		t.Errorf("the killed run's journal was not marked resumed: %q (%v)", old.ResumedBy, err)
	}
	for _, w := range res.Summary.Warnings {
		if strings.Contains(w, "gained") || strings.Contains(w, "did not gain") {
			t.Errorf("review warning: %s", w)
		}
	}
}

// killedRunChild is the run that TestResumeAfterSIGKILL kills: it shops
// the list until the bread is in the cart, says so, and waits to be killed
// before the agent can report it.
func killedRunChild(t *testing.T) {
	cfg := newE2EConfig(os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE"), os.Getenv("GEMINI_SUPPLY_TEST_LIST"), os.Getenv("GEMINI_SUPPLY_TEST_DATA"))
	var runner *Runner
	deps := Deps{Logger: testLogger(t)}
	deps.Scripted.Wrap = func(next gemini.Script) gemini.Script {
		return func(req *gemini.Request) gemini.Reply {
			if g, err := scripted.ParseGoal(req.Goal()); err == nil && g.Item == "sourdough bread" {
				for _, l := range runner.DemoStore().Cart() {
					if l.ProductID == "bread-sourdough-600g" {
						fmt.Println("child: bread in the cart, not reported")
						select {} // until SIGKILL
					}
				}
			}
			return next(req)
		}
	}
	r, err := NewRunner(cfg, deps)
	if err != nil {
		fmt.Println("child: " + err.Error())
		return
	}
	runner = r
	_, err = r.Shop(context.Background(), runstatus.Request{Source: "test"})
	fmt.Printf("child: the run ended without being killed: %v\n", err)
}
