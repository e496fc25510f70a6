package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/shop"
)

// TestShopTodoEntity: `shop --todo-entity todo.x` with home_assistant_url
// and home_assistant_token shops the Home Assistant list from the terminal
// (serve's provider), even with a YAML list configured, and ends with the
// list updated in Home Assistant; the YAML file is not touched.
func TestShopTodoEntity(t *testing.T) {
	env := browserEnv(t)
	f, err := fakeha.Start(fakeha.Options{Token: "ha-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SetLanguage("fr-CA") // language auto: the household is told in Home Assistant's language
	f.AddTodoList("todo.groceries", "Groceries", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{UID: "1", Summary: "bananas", Status: "needs_action"},
		fakeha.TodoItem{UID: "2", Summary: "dragon fruit", Status: "needs_action"})
	env["GEMINI_SUPPLY_HOME_ASSISTANT_URL"] = f.URL()
	env["GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN"] = "ha-token"
	home := isolateConfig(t, env)
	yamlList := filepath.Join(home, "list.yaml")
	const yamlText = "items:\n  - name: coffee\n"
	if err := os.WriteFile(yamlList, []byte(yamlText), 0o644); err != nil {
		t.Fatal(err)
	}
	env["GEMINI_SUPPLY_SHOPPING_LIST"] = yamlList

	code, out, errOut := runLong(t, "shop", "--store", "demo", "--model", "scripted", "--todo-entity", "todo.groceries",
		"--data-dir", filepath.Join(home, "data"), "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	var res shop.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, out)
	}
	if c := res.Summary.Counts(); c.Added != 1 || c.NotFound != 1 {
		t.Errorf("counts %s, want 1 added (bananas), 1 not found (dragon fruit)", c)
	}
	items := map[string]fakeha.TodoItem{}
	for _, it := range f.TodoItems("todo.groceries") {
		items[it.UID] = it
	}
	if it := items["1"]; it.Status != "completed" {
		t.Errorf("bananas in Home Assistant = %+v, want completed", it)
	}
	if it := items["2"]; it.Status != "needs_action" || !strings.Contains(it.Summary, "#404") {
		t.Errorf("dragon fruit in Home Assistant = %+v, want open and tagged #404", it)
	}
	if b, _ := os.ReadFile(yamlList); string(b) != yamlText {
		t.Errorf("the YAML list was touched:\n%s", b)
	}
	// Home Assistant speaks French: so does the summary notification.
	if n := f.Notifications()["gemini_supply_summary"]; !strings.HasPrefix(n.Title, "gemini-supply : 1 ajouté") ||
		!strings.Contains(n.Message, "# Épicerie") || strings.Contains(n.Message, "Shopping run") {
		t.Errorf("summary notification in Home Assistant's French: %+v", n)
	}
}

// TestShopTodoEntityNeedsHomeAssistant: --todo-entity without Home
// Assistant configured is a configuration error (exit 2) that says what
// to set.
func TestShopTodoEntityNeedsHomeAssistant(t *testing.T) {
	home := isolateConfig(t, map[string]string{})
	code, _, errOut := runInProcess(t, "shop", "--store", "demo", "--model", "scripted", "--todo-entity", "todo.groceries",
		"--data-dir", filepath.Join(home, "data"))
	if code != 2 || !strings.Contains(errOut, "home_assistant_url") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

// TestShopTodoEntityDryRun: --dry-run --todo-entity lists what the Home
// Assistant list would shop, and changes nothing there.
func TestShopTodoEntityDryRun(t *testing.T) {
	f, err := fakeha.Start(fakeha.Options{Token: "ha-token"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.AddTodoList("todo.groceries", "Groceries", fakeha.ShoppingListFeatures,
		fakeha.TodoItem{UID: "1", Summary: "2x bananas", Status: "needs_action"},
		fakeha.TodoItem{UID: "2", Summary: "coffee #failed", Status: "needs_action"})
	isolateConfig(t, map[string]string{
		"GEMINI_SUPPLY_HOME_ASSISTANT_URL":   f.URL(),
		"GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN": "ha-token",
	})
	code, out, errOut := runInProcess(t, "shop", "--dry-run", "--todo-entity", "todo.groceries")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	for _, want := range []string{"Shopping list: todo.groceries", "2 × bananas", "coffee — tagged #failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	for _, c := range f.Calls() {
		if c.Changed {
			t.Errorf("a dry run changed Home Assistant: %+v", c)
		}
	}
}
