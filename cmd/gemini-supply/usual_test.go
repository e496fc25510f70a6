package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/usual"
)

// TestUsualDemo: in the demo (offline), `usual --json` proposes items from
// the demo store's past orders and favourites, marks one probably still at
// home with its cycle and leaves out what is on the list; --add adds
// nothing unconfirmed, and once confirmed appends the due items to the
// YAML list keeping its comments.
func TestUsualDemo(t *testing.T) {
	env := browserEnv(t)
	home := isolateConfig(t, env)
	list := filepath.Join(home, "list.yaml")
	const listText = "# our list\nitems:\n  # bakery\n  - bread # every week\n"
	if err := os.WriteFile(list, []byte(listText), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"usual", "--store", "demo", "--model", "scripted", "--shopping-list", list,
		"--data-dir", filepath.Join(home, "data"), "--orders", "4"} // favourites by default
	code, out, errOut := runWithInput(t, "", append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var p usual.Proposal
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not the JSON proposal: %v\n%s", err, out)
	}
	var fromOrder, fromFav, atHome bool
	for _, it := range p.Items {
		fromOrder = fromOrder || it.Source == usual.FromOrder
		fromFav = fromFav || it.Source == usual.FromFavourite
		if it.ProbablyAtHome && it.CycleDays > 0 && !it.LastBought.IsZero() && strings.Contains(it.Reason, "probably still at home") {
			atHome = true
		}
		if strings.Contains(strings.ToLower(it.Name), "bread") {
			t.Errorf("%q is on the list but proposed", it.Name)
		}
	}
	if !fromOrder || !fromFav || !atHome || len(p.OnList) != 1 || len(p.NotRead) > 0 {
		t.Fatalf("proposal: order %v, favourite %v, at home %v, on list %+v, not read %v\n%s", fromOrder, fromFav, atHome, p.OnList, p.NotRead, out)
	}
	if !strings.Contains(out, `"cycle_days"`) || !strings.Contains(out, `"last_bought"`) || !strings.Contains(out, `"probably_at_home"`) {
		t.Errorf("JSON lacks the issue's fields:\n%s", out)
	}

	// Not confirmed: nothing added (the first read gave the item its id,
	// as every read of a list does).
	read, _ := os.ReadFile(list)
	code, _, errOut = runWithInput(t, "", append(args, "--add")...)
	if b, _ := os.ReadFile(list); code != 0 || string(b) != string(read) {
		t.Fatalf("unconfirmed --add changed the list (exit %d):\n%s\n%s", code, b, errOut)
	}
	// Confirmed: the due items, not those at home, after the comments.
	code, _, errOut = runWithInput(t, "y\n", append(args, "--add")...)
	b, _ := os.ReadFile(list)
	got := string(b)
	if code != 0 || !strings.HasPrefix(got, string(read)) || !strings.Contains(got, "# every week") ||
		!strings.Contains(got, "name: Ground Coffee Medium Roast") || !strings.Contains(got, "name: Plain Greek Yogurt 2%") ||
		strings.Contains(got, "Milk") {
		t.Fatalf("confirmed --add (exit %d):\n%s\n%s", code, got, errOut)
	}
}

// TestUsualAddsToHomeAssistant: --add puts the chosen items on the Home
// Assistant to-do list (the fake speaks HA's protocol), an item at home
// only when named (add anyway).
func TestUsualAddsToHomeAssistant(t *testing.T) {
	env := browserEnv(t)
	f, err := fakeha.Start(fakeha.Options{Token: "ha-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.AddTodoList("todo.groceries", "Groceries", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{UID: "1", Summary: "coffee", Status: "needs_action"})
	env["GEMINI_SUPPLY_HOME_ASSISTANT_URL"] = f.URL()
	env["GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN"] = "ha-token"
	home := isolateConfig(t, env)
	code, out, errOut := runWithInput(t, "", "usual", "--store", "demo", "--model", "scripted", "--todo-entity", "todo.groceries",
		"--data-dir", filepath.Join(home, "data"), "--from", "latest", "--add", "--yes", "--item", "large white eggs")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var summaries []string
	for _, it := range f.TodoItems("todo.groceries") {
		summaries = append(summaries, it.Summary+"/"+it.Status)
	}
	if strings.Join(summaries, ",") != "coffee/needs_action,Large White Eggs/needs_action" {
		t.Fatalf("Home Assistant list: %v\n%s", summaries, out)
	}
}
