package shop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// TestLongItemNamesAreRefused (issue 24): a 100 KB item name is refused
// before shopping — no agent runs for it, the list file keeps it exactly
// as written (no tag, not checked off) — with a report that says why, and
// no text the run carries (results, events, summary, journal) is larger
// than the bounds, while the other item is shopped.
func TestLongItemNamesAreRefused(t *testing.T) {
	long := strings.Repeat("chocolate ", 10*1024) // 100 KB
	long = strings.TrimSpace(long)
	path := filepath.Join(t.TempDir(), "list.yaml")
	b, _ := json.Marshal(long)
	src := "items:\n  - {id: a, name: " + string(b) + "}\n  - {id: b, name: milk}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := shoppinglist.OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	a := newFakeAgent(map[string]behaviour{"milk": added("Milk", "$1")})
	cfg := baseConfig(t, nil, &fakeHost{authed: true}, a)
	cfg.Provider = list
	bus := &runstatus.Bus{}
	cfg.Bus = bus
	events := collect(bus)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	evs := events()
	if a.attemptsFor(long) != 0 || a.attemptsFor("milk") != 1 {
		t.Fatalf("attempts: long name %d, milk %d", a.attemptsFor(long), a.attemptsFor("milk"))
	}
	var longRes *report.ItemResult
	for i, it := range res.Summary.Items {
		if it.ItemID == "a" {
			longRes = &res.Summary.Items[i]
		}
	}
	if longRes == nil || longRes.Outcome != report.OutcomeSkipped || !strings.Contains(longRes.Explanation, "more than the 200") {
		t.Fatalf("the long item's result: %+v", longRes)
	}
	if n := utf8.RuneCountInString(longRes.ItemName); n > report.MaxNameRunes || !strings.HasPrefix(longRes.ItemName, "chocolate") {
		t.Fatalf("the reported name is %d characters: %.40q", n, longRes.ItemName)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(after), string(b)) {
		t.Fatal("the long item is no longer on the list as written")
	}
	items, err := list.Items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.ID == "a" && (it.Status == shoppinglist.StatusCompleted || len(it.Tags) > 0 || it.Name != long) {
			t.Fatalf("the long item was changed: status %s, tags %v, name %d bytes", it.Status, it.Tags, len(it.Name))
		}
	}
	// Every text is bounded: no event, summary or journal near the name's size.
	for _, e := range evs {
		if j, _ := json.Marshal(e); len(j) > 16<<10 {
			t.Fatalf("a %s event of %d bytes", e.Kind, len(j))
		}
	}
	if md := res.Summary.Markdown(); len(md) > 16<<10 {
		t.Fatalf("the summary is %d bytes", len(md))
	}
	if j, err := os.ReadFile(res.JournalPath); err != nil || len(j) > 16<<10 {
		t.Fatalf("the journal: %d bytes, %v", len(j), err)
	}
}
