package panel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// screenshot is a PNG like the browser's: w×h, left half black, right white.
func screenshot(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.NRGBA{A: 0xff}
			if x >= w/2 {
				c = color.NRGBA{0xff, 0xff, 0xff, 0xff}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type frameEvent struct {
	ItemID string `json:"item_id"`
	Item   string `json:"item"`
	Turn   int    `json:"turn"`
	Action string `json:"action"`
	Image  string `json:"image"`
}

// The agents' screens reach an open page as they are taken: a "frame" event
// per new screen, a JPEG scaled to the page; with no page open nothing is
// converted; a finished item's tab and a new run's old tabs leave.
func TestFramesReachThePageAsJPEG(t *testing.T) {
	p, _ := newPanel(t, false)
	p.Show(Frame{ItemID: "a", Item: "milk", Turn: 0, Action: "started", Image: screenshot(t, 1440, 900)})
	p.mu.Lock()
	converted := p.frames["a"].data != ""
	p.mu.Unlock()
	if converted {
		t.Fatal("a frame was converted with no page open")
	}

	srv := httptest.NewServer(p)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	frames := make(chan frameEvent, 16)
	snaps := make(chan Snapshot, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				event = name
			}
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			switch event {
			case "frame":
				var f frameEvent
				if json.Unmarshal([]byte(data), &f) == nil {
					frames <- f
				}
			case "snapshot":
				var s Snapshot
				if json.Unmarshal([]byte(data), &s) == nil {
					snaps <- s
				}
			}
		}
	}()
	next := func() frameEvent {
		t.Helper()
		select {
		case f := <-frames:
			return f
		case <-time.After(60 * time.Second): // bounds a hang only
			t.Fatal("no frame")
			return frameEvent{}
		}
	}
	// The screen taken before the page opened comes at once.
	f := next()
	if f.ItemID != "a" || f.Item != "milk" || f.Turn != 0 {
		t.Fatalf("first frame %+v", f)
	}
	b64, ok := strings.CutPrefix(f.Image, "data:image/jpeg;base64,")
	if !ok {
		t.Fatalf("the frame is not a JPEG data URL: %.40q", f.Image)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a JPEG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 720 || b.Dy() != 450 {
		t.Fatalf("frame size %v, want 720×450", b)
	}
	// The next screen, with what the agent did; the card says it too.
	p.Show(Frame{ItemID: "a", Item: "milk", Turn: 1, Action: `typed “milk” and pressed Enter`, URL: "https://www.metro.ca/search", Image: screenshot(t, 1440, 900)})
	if f := next(); f.Turn != 1 || f.Action != `typed “milk” and pressed Enter` {
		t.Fatalf("second frame %+v", f)
	}
	deadline := time.After(60 * time.Second)
	for s := (Snapshot{}); s.Activity["a"].Turn != 1; {
		select {
		case s = <-snaps:
		case <-deadline:
			t.Fatal("the activity never reached the snapshot")
		}
	}
	// The item finishes: its tab leaves; a frame that cannot be decoded
	// is sent without an image.
	p.apply(runstatus.Event{RunID: "r1", Item: &report.ItemResult{ItemID: "a", Outcome: report.OutcomeAdded}})
	p.mu.Lock()
	_, kept := p.frames["a"]
	p.mu.Unlock()
	if kept {
		t.Fatal("a finished item's frame stayed")
	}
	p.Show(Frame{ItemID: "b", Item: "eggs", Turn: 2, Image: []byte("not an image")})
	if f := next(); f.ItemID != "b" || f.Image != "" {
		t.Fatalf("an undecodable frame: %+v", f)
	}
	p.apply(runstatus.Event{RunID: "r2", State: runstatus.StateInitializing})
	p.mu.Lock()
	n, acts := len(p.frames), len(p.state.Activity)
	p.mu.Unlock()
	if n != 0 || acts != 0 {
		t.Fatalf("a new run kept %d frames, %d activities", n, acts)
	}
}

func TestShrink(t *testing.T) {
	for _, tc := range []struct{ w, h, wantW, wantH int }{
		{1440, 900, 720, 450},
		{720, 450, 720, 450},
		{700, 400, 700, 400},
		{1441, 900, 480, 300},
		{3000, 10, 600, 2},
	} {
		img, err := png.Decode(bytes.NewReader(screenshot(t, tc.w, tc.h)))
		if err != nil {
			t.Fatal(err)
		}
		got := shrink(img, frameWidth).Bounds()
		if got.Dx() != tc.wantW || got.Dy() != tc.wantH {
			t.Errorf("%d×%d → %v, want %d×%d", tc.w, tc.h, got, tc.wantW, tc.wantH)
		}
	}
	// Averaging: a black and a white column make grey.
	src := image.NewRGBA(image.Rect(0, 0, 2, 2))
	for y := range 2 {
		src.Set(0, y, color.Black)
		src.Set(1, y, color.White)
	}
	if c := shrink(src, 1).(*image.RGBA).RGBAAt(0, 0); c.R != 127 || c.G != 127 || c.B != 127 || c.A != 255 {
		t.Fatalf("averaged %v, want grey", c)
	}
	// Images the fast path does not know go through At.
	gray := image.NewGray(image.Rect(0, 0, 4, 2))
	gray.SetGray(0, 0, color.Gray{200})
	gray.SetGray(1, 0, color.Gray{100})
	gray.SetGray(0, 1, color.Gray{200})
	gray.SetGray(1, 1, color.Gray{100})
	if c := shrink(gray, 2).(*image.RGBA).RGBAAt(0, 0); c.R != 150 {
		t.Fatalf("grey image averaged to %v, want 150", c)
	}
}

// A frame is converted once, however many pages show it.
func TestFrameConvertedOnce(t *testing.T) {
	lf := &liveFrame{Frame: Frame{ItemID: "a", Image: screenshot(t, 800, 600)}}
	first := lf.event()
	lf.Image = nil // a second conversion would fail
	if lf.event() != first || !strings.Contains(first, "data:image/jpeg") {
		t.Fatal("the frame was converted again")
	}
}

// TestStoppedRunEndsEveryCard: the run's summary gives every item its final
// state — an item still shopping when the run was stopped, and one never
// started, end as "not shopped" rather than "shopping…" or missing.
func TestStoppedRunEndsEveryCard(t *testing.T) {
	p, err := New(Options{Start: func(context.Context, runstatus.Request) error { return nil }, Stop: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	p.apply(runstatus.Event{RunID: "r1", State: runstatus.StateShopping, Item: &report.ItemResult{ItemID: "a", ItemName: "milk"}})
	p.apply(runstatus.Event{RunID: "r1", Item: &report.ItemResult{ItemID: "b", ItemName: "eggs", Outcome: report.OutcomeAdded}})
	sum := report.Summary{RunID: "r1", Cancelled: true, Items: []report.ItemResult{
		{ItemID: "a", ItemName: "milk", Outcome: report.OutcomeNotShopped},
		{ItemID: "b", ItemName: "eggs", Outcome: report.OutcomeAdded},
		{ItemID: "c", ItemName: "bread", Outcome: report.OutcomeNotShopped},
	}}
	p.apply(runstatus.Event{RunID: "r1", Kind: runstatus.KindRunFinished, State: runstatus.StateCancelled, Summary: &sum})
	p.mu.Lock()
	got := map[string]report.Outcome{}
	for _, it := range p.state.Items {
		got[it.ItemName] = it.Outcome
	}
	p.mu.Unlock()
	if fmt.Sprint(got) != "map[bread:not_shopped eggs:added milk:not_shopped]" {
		t.Errorf("cards = %v", got)
	}
}
