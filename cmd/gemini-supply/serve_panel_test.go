package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestServePanelDrivesARun: `serve --ui` serves the panel; its Start runs
// the YAML list in the demo store with the scripted model, its state ends
// review_ready with the items' results, and serve stops cleanly after.
func TestServePanelDrivesARun(t *testing.T) {
	exe := os.Getenv("GEMINI_SUPPLY_BROWSER_EXECUTABLE")
	if exe == "" || os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		t.Fatal("the browser environment is not set: run make test, or eval \"$(bash scripts/setup.sh)\" first")
	}
	isolate(t)
	dir := t.TempDir()
	list := filepath.Join(dir, "list.yaml")
	if err := os.WriteFile(list, []byte("items:\n  - name: milk\n  - name: dragon fruit\n  - name: butter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"GEMINI_SUPPLY_STORE": "demo", "GEMINI_SUPPLY_GEMINI_MODEL": "scripted", "GEMINI_SUPPLY_SHOPPING_LIST": list,
		"GEMINI_SUPPLY_DATA_DIR": filepath.Join(dir, "data"), "GEMINI_SUPPLY_BROWSER_PROFILE_DIR": filepath.Join(dir, "profile"),
		"GEMINI_SUPPLY_HOME_ASSISTANT_URL": "", "GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN": "", "GEMINI_SUPPLY_MQTT_BROKER": "",
	} {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errb := &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--ui", "127.0.0.1:0"}, stdio{in: strings.NewReader(""), out: &syncbuf.Buffer{}, err: errb})
	}()
	addr := regexp.MustCompile(`msg="panel listening" component=panel addr=(127\.0\.0\.1:\d+)`)
	var base string
	testwait.Until(t, "the panel to listen", 90*time.Second, func() bool {
		if m := addr.FindStringSubmatch(errb.String()); m != nil {
			base = "http://" + m[1]
		}
		return base != ""
	})
	// A page of the panel is open (its event stream): the panel asks.
	sctx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	sreq, _ := http.NewRequestWithContext(sctx, "GET", base+"/events", nil)
	stream, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	go func() { _, _ = io.Copy(io.Discard, stream.Body) }()
	req, _ := http.NewRequest("POST", base+"/api/start", nil)
	req.Header.Set(panel.ActionHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /api/start: %d", resp.StatusCode)
	}
	state := func() panel.Snapshot {
		resp, err := http.Get(base + "/api/state")
		if err != nil {
			return panel.Snapshot{}
		}
		defer resp.Body.Close()
		var s panel.Snapshot
		_ = json.NewDecoder(resp.Body).Decode(&s)
		return s
	}
	// Butter is sold out: the agent asks, in the panel; the household
	// answers "Something else".
	var q panel.Question
	testwait.Until(t, "the butter question in the panel", 3*time.Minute, func() bool {
		s := state()
		if len(s.Questions) == 1 {
			q = s.Questions[0]
		}
		return q.ID != ""
	})
	if q.Kind != "choice" || q.Item != "butter" || len(q.Options) == 0 {
		t.Fatalf("question %+v", q)
	}
	body, _ := json.Marshal(map[string]any{"id": q.ID, "answer": "custom", "text": "greek yogurt"})
	req, _ = http.NewRequest("POST", base+"/api/answer", strings.NewReader(string(body)))
	req.Header.Set(panel.ActionHeader, "1")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /api/answer: %d", resp.StatusCode)
	}
	var snap panel.Snapshot
	testwait.Until(t, "the run to be reviewed", 3*time.Minute, func() bool {
		resp, err := http.Get(base + "/api/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		snap = panel.Snapshot{}
		return json.NewDecoder(resp.Body).Decode(&snap) == nil && snap.State == "review_ready"
	})
	outcomes := map[string]string{}
	for _, it := range snap.Items {
		outcomes[it.ItemName] = string(it.Outcome)
	}
	// "greek yogurt" instead of butter: the agent searched again and added it.
	if outcomes["milk"] != "added" || outcomes["dragon fruit"] != "not_found" || outcomes["butter"] != "added" || snap.Summary == nil || len(snap.Questions) != 0 {
		t.Fatalf("the panel's run: %+v (summary %v)\n%s", outcomes, snap.Summary != nil, errb)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d:\n%s", code, errb)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("serve did not stop")
	}
}
