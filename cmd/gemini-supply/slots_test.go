package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// TestSlotsDemoJSON: `slots --store demo --model scripted --json` lists
// the demo store's windows as {"read_at","slots":[{"start","end","fee",
// "available"}]} with RFC 3339 times, at least one available and one full.
func TestSlotsDemoJSON(t *testing.T) {
	env := browserEnv(t)
	home := isolateConfig(t, env)
	code, out, errOut := runLong(t, "slots", "--store", "demo", "--model", "scripted", "--data-dir", filepath.Join(home, "data"), "--json")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	var got struct {
		ReadAt string `json:"read_at"`
		Slots  []struct {
			Start, End string
			Fee        *float64
			Available  *bool
		} `json:"slots"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not the JSON: %v\n%s", err, out)
	}
	if _, err := time.Parse(time.RFC3339, got.ReadAt); err != nil {
		t.Errorf("read_at %q: %v", got.ReadAt, err)
	}
	avail, full := 0, 0
	for i, s := range got.Slots {
		st, err1 := time.Parse(time.RFC3339, s.Start)
		en, err2 := time.Parse(time.RFC3339, s.End)
		if err1 != nil || err2 != nil || !en.After(st) || s.Fee == nil || s.Available == nil {
			t.Errorf("slot %d: %+v", i, s)
			continue
		}
		if *s.Available {
			avail++
		} else {
			full++
		}
	}
	if avail == 0 || full == 0 {
		t.Errorf("%d available, %d full: want both\n%s", avail, full, out)
	}
}
