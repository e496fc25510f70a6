package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/testbrowser"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestStartFromTheUsualDuringServe: with serve on the demo store, the
// panel's "Start from the usual" proposes the demo store's past orders and
// favourites (what is on the list left out, what is at home unticked); the
// household unticks one and ticks one at home; exactly the ticked items go
// onto the YAML list, then the run shops them.
func TestStartFromTheUsualDuringServe(t *testing.T) {
	env := browserEnv(t)
	browser := testbrowser.Launch(t)
	isolate(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yaml")
	if err := os.WriteFile(list, []byte("# ours\nitems:\n  - name: bread # weekly\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const wait = 5 * time.Minute // bounds a hang only
	base, errb, cancel, done := serveUI(t, map[string]string{
		"GEMINI_SUPPLY_STORE": "demo", "GEMINI_SUPPLY_GEMINI_MODEL": "scripted", "GEMINI_SUPPLY_SHOPPING_LIST": list,
		"GEMINI_SUPPLY_DATA_DIR": filepath.Join(dir, "data"), "GEMINI_SUPPLY_HOME_ASSISTANT_URL": "",
		"GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN": "", "GEMINI_SUPPLY_MQTT_BROKER": "", "GEMINI_SUPPLY_LANGUAGE": "en",
		"GEMINI_SUPPLY_BROWSER_EXECUTABLE": env["GEMINI_SUPPLY_BROWSER_EXECUTABLE"],
	}, wait)
	defer func() { cancel(); <-done }()
	page, err := browser.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 1280, Height: 800}})
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(float64(wait / time.Millisecond))
	if _, err := page.Goto(base); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#usual-open").Click(); err != nil {
		t.Fatal(err)
	}
	item := func(name string) playwright.Locator { return page.Locator(`#usual-list li[data-item="` + name + `"]`) }
	box := func(name string) playwright.Locator { return item(name).Locator("input[type=checkbox]") }
	testwait.Until(t, "the proposal", wait, func() bool { n, _ := page.Locator("#usual-list li").Count(); return n >= 4 })
	for name, ticked := range map[string]bool{"Ground Coffee Medium Roast": true, "Orange Juice No Pulp": true, "Large White Eggs": false} {
		if got, err := box(name).IsChecked(); err != nil || got != ticked {
			t.Fatalf("%s ticked %v (%v), want %v\n%s", name, got, err, ticked, errb.String())
		}
	}
	if n, _ := page.Locator(`#usual-list li[data-item*="Bread"]`).Count(); n != 0 {
		t.Errorf("bread is on the list but proposed")
	}
	if err := box("Orange Juice No Pulp").Uncheck(); err != nil {
		t.Fatal(err)
	}
	if err := box("Large White Eggs").Check(); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#usual-start").Click(); err != nil {
		t.Fatal(err)
	}
	// On the list (comments kept), then shopped by the run.
	testwait.Until(t, "the ticked items shopped", wait, func() bool {
		b, _ := os.ReadFile(list)
		s := string(b)
		return strings.Contains(s, "# ours") && strings.Contains(s, "# weekly") &&
			strings.Count(s, "status: completed") >= 3 && strings.Contains(s, "name: Large White Eggs") &&
			strings.Contains(s, "name: Ground Coffee Medium Roast")
	})
	b, _ := os.ReadFile(list)
	if strings.Contains(string(b), "Orange Juice") || strings.Contains(string(b), "2% Partly Skimmed Milk") {
		t.Errorf("an unticked item went on the list:\n%s", b)
	}
}
