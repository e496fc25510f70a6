package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/screen"
)

func clicksOf(t *testing.T, tab *Tab) []string {
	t.Helper()
	var out []string
	for _, v := range eval(t, tab, `() => { const c = window.clicks; window.clicks = []; return c; }`).([]any) {
		out = append(out, v.(string))
	}
	return out
}

func TestClicksLandAtNormalisedPoints(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/clicks"))

	// Box bN covers x in [col*360, col*360+360), y in [row*225, row*225+225).
	center := func(i int) screen.Point { return norm((i%4)*360+180, (i/4)*225+112) }
	tests := []struct {
		name   string
		p      screen.Point
		button screen.Button
		count  int
		want   []string
	}{
		{"left single", center(5), screen.ButtonLeft, 1, []string{"b5:down:0", "b5:up:0", "b5:click:0:1"}},
		{"double", center(6), screen.ButtonLeft, 2, []string{"b6:down:0", "b6:up:0", "b6:click:0:1", "b6:down:0", "b6:up:0", "b6:click:0:2", "b6:dblclick"}},
		{"right", center(9), screen.ButtonRight, 1, []string{"b9:down:2", "b9:contextmenu:2", "b9:up:2", "b9:auxclick:2"}},
		{"middle", center(10), screen.ButtonMiddle, 1, []string{"b10:down:1", "b10:up:1", "b10:auxclick:1"}},
		{"clamped beyond 999", screen.Point{X: 5000, Y: 1200}, screen.ButtonLeft, 1, []string{"b15:down:0", "b15:up:0", "b15:click:0:1"}},
		{"clamped below 0", screen.Point{X: -40, Y: -3}, screen.ButtonLeft, 1, []string{"b0:down:0", "b0:up:0", "b0:click:0:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clicksOf(t, tab)
			mustDo(t, "click", tab.Click(ctx, tt.p, tt.button, tt.count))
			got := slices.DeleteFunc(clicksOf(t, tab), func(s string) bool { return strings.HasSuffix(s, ":enter") })
			if !slices.Equal(got, tt.want) {
				t.Fatalf("events %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("triple click selects a paragraph", func(t *testing.T) {
		mustDo(t, "triple click", tab.Click(ctx, norm(450, 266), screen.ButtonLeft, 3))
		if sel := eval(t, tab, `() => window.getSelection().toString().trim()`); sel != "alpha beta gamma" {
			t.Fatalf("selection %q after a triple click", sel)
		}
	})
	t.Run("move hovers", func(t *testing.T) {
		clicksOf(t, tab)
		mustDo(t, "move", tab.Move(ctx, center(2)))
		if got := clicksOf(t, tab); !slices.Contains(got, "b2:enter") {
			t.Fatalf("hover events %q, want b2:enter", got)
		}
	})
	t.Run("mouse down and up", func(t *testing.T) {
		clicksOf(t, tab)
		mustDo(t, "move", tab.Move(ctx, center(3)))
		mustDo(t, "down", tab.MouseDown(ctx, screen.ButtonLeft))
		mustDo(t, "up", tab.MouseUp(ctx, screen.ButtonLeft))
		got := slices.DeleteFunc(clicksOf(t, tab), func(s string) bool { return strings.HasSuffix(s, ":enter") })
		if !slices.Equal(got, []string{"b3:down:0", "b3:up:0", "b3:click:0:1"}) {
			t.Fatalf("events %q", got)
		}
	})
	t.Run("unknown button is rejected", func(t *testing.T) {
		err := tab.Click(ctx, center(1), "left-ish", 1)
		var ie *InputError
		if !errors.As(err, &ie) || !ie.Rejected() {
			t.Fatalf("error %v, want a rejected InputError", err)
		}
	})
}

func keyEvents(t *testing.T, tab *Tab) []string {
	t.Helper()
	var out []string
	for _, v := range eval(t, tab, `() => { const e = window.events; window.events = []; return e; }`).([]any) {
		out = append(out, v.(string))
	}
	return out
}

func inputValue(t *testing.T, tab *Tab, id string) string {
	t.Helper()
	return eval(t, tab, `(id) => document.getElementById(id).value`, id).(string)
}

func TestTypingFiresKeyEvents(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/keys"))
	field := norm(500, 120)

	mustDo(t, "type at", tab.TypeAt(ctx, field, "Ab 1", false, true))
	if v := inputValue(t, tab, "in"); v != "Ab 1" {
		t.Fatalf("value %q after TypeAt", v)
	}
	want := []string{
		"keydown:Control", "keydown:a", "keyup:a", "keyup:Control", "keydown:Delete", "keyup:Delete", // clear: select all + delete
		"keydown:A", "keypress:A", "input:insertText", "keyup:A",
		"keydown:b", "keypress:b", "input:insertText", "keyup:b",
		"keydown: ", "keypress: ", "input:insertText", "keyup: ",
		"keydown:1", "keypress:1", "input:insertText", "keyup:1",
	}
	if got := keyEvents(t, tab); !slices.Equal(got, want) {
		t.Fatalf("events %q\nwant %q", got, want)
	}

	// Characters no US key makes are inserted; clearing replaces the text.
	mustDo(t, "type at (clear)", tab.TypeAt(ctx, field, "café", true, true))
	if v := inputValue(t, tab, "in"); v != "café" {
		t.Fatalf("value %q after clearing and typing café", v)
	}
	got := keyEvents(t, tab)
	if !slices.Contains(got, "keydown:Enter") || !slices.Contains(got, "keyup:Enter") || !slices.Contains(got, "keydown:Delete") {
		t.Fatalf("events %q lack the clear (Delete) or Enter keys", got)
	}

	// Without clearing, text is appended at the click point's caret.
	mustDo(t, "type at (append)", tab.TypeAt(ctx, field, "!", false, false))
	if v := inputValue(t, tab, "in"); !strings.HasSuffix(v, "!") || !strings.HasPrefix(v, "caf") {
		t.Fatalf("value %q after appending", v)
	}
	keyEvents(t, tab)

	// Type goes to whatever has focus.
	mustDo(t, "type", tab.Type(ctx, "xy", false))
	if v := inputValue(t, tab, "in"); !strings.HasSuffix(v, "xy") {
		t.Fatalf("value %q after Type", v)
	}
	if got := keyEvents(t, tab); !slices.Contains(got, "keydown:x") || !slices.Contains(got, "keyup:y") {
		t.Fatalf("Type fired %q", got)
	}

	t.Run("key down and up", func(t *testing.T) {
		mustDo(t, "key down", tab.KeyDown(ctx, "shift"))
		mustDo(t, "key up", tab.KeyUp(ctx, "SHIFT"))
		if got := keyEvents(t, tab); !slices.Equal(got, []string{"keydown:Shift", "keyup:Shift"}) {
			t.Fatalf("events %q", got)
		}
	})
}

func TestKeyCombinationsSelectAll(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/keys"))
	for _, combo := range []string{"Control+a", "ctrl+A", "CONTROL+a"} {
		t.Run(combo, func(t *testing.T) {
			mustDo(t, "type", tab.TypeAt(ctx, norm(500, 120), "select me", false, true))
			mustDo(t, "press", tab.PressKeys(ctx, combo))
			sel := eval(t, tab, `() => { const e = document.getElementById('in'); return [e.selectionStart, e.selectionEnd]; }`).([]any)
			if fmt.Sprint(sel) != "[0 9]" {
				t.Fatalf("selection %v after %s, want [0 9]", sel, combo)
			}
			mustDo(t, "delete", tab.PressKeys(ctx, "Backspace"))
			if v := inputValue(t, tab, "in"); v != "" {
				t.Fatalf("value %q after select-all and Backspace", v)
			}
		})
	}
	t.Run("modifiers are released", func(t *testing.T) {
		mustDo(t, "press", tab.PressKeys(ctx, "Control+Shift+ArrowLeft"))
		keyEvents(t, tab)
		mustDo(t, "type", tab.Type(ctx, "z", false))
		if v := inputValue(t, tab, "in"); v != "z" {
			t.Fatalf("typing after a combination gave %q (a modifier stuck?)", v)
		}
	})
	t.Run("unknown key is rejected", func(t *testing.T) {
		err := tab.PressKeys(ctx, "Control+Banana")
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Fatalf("error %v, want InputError", err)
		}
	})
}

func TestScrollingMovesThePage(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/tall"))
	scroll := func() (float64, float64) {
		v := eval(t, tab, `() => [window.scrollX, window.scrollY]`).([]any)
		return toF(v[0]), toF(v[1])
	}
	inner := func() float64 { return toF(eval(t, tab, `() => document.getElementById('inner').scrollTop`)) }

	mustDo(t, "scroll document down", tab.ScrollDocument(ctx, screen.DirectionDown))
	if _, y := scroll(); y != 720 { // 0.8 of 900
		t.Fatalf("scrollY %v after scrolling the document down, want 720", y)
	}
	mustDo(t, "scroll document right", tab.ScrollDocument(ctx, screen.DirectionRight))
	if x, _ := scroll(); x != 720 { // 0.5 of 1440
		t.Fatalf("scrollX %v after scrolling right, want 720", x)
	}
	mustDo(t, "scroll document up", tab.ScrollDocument(ctx, screen.DirectionUp))
	if _, y := scroll(); y != 0 {
		t.Fatalf("scrollY %v after scrolling back up", y)
	}
	mustDo(t, "scroll document left", tab.ScrollDocument(ctx, screen.DirectionLeft))

	// Scrolling at a point scrolls what is under it: the inner box...
	mustDo(t, "scroll at inner", tab.ScrollAt(ctx, norm(300, 250), screen.DirectionDown, 200))
	waitFor(t, "the inner box to scroll", patience, func() bool { return inner() == 180 }) // 0.2 of 900
	if _, y := scroll(); y != 0 {
		t.Fatalf("the page scrolled (%v) when the inner box should have", y)
	}
	// ...and elsewhere the page, by the magnitude (0 means 800).
	mustDo(t, "scroll at page", tab.ScrollAt(ctx, norm(1000, 700), screen.DirectionDown, 0))
	waitFor(t, "the page to scroll by 720", patience, func() bool { _, y := scroll(); return y == 720 })
	mustDo(t, "scroll at page (clamped magnitude)", tab.ScrollAt(ctx, norm(1000, 700), screen.DirectionUp, 5000))
	waitFor(t, "the page to scroll back", patience, func() bool { _, y := scroll(); return y == 0 })

	if err := tab.ScrollDocument(ctx, "sideways"); err == nil {
		t.Fatal("an unknown direction was accepted")
	}
}

func toF(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return -1
}

func TestScreenshotIsViewportPNG(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/color?c=rgb(255,0,0)"))
	b, err := tab.Screenshot(ctx)
	mustDo(t, "screenshot", err)
	img, err := png.Decode(bytes.NewReader(b))
	mustDo(t, "decode PNG", err)
	if sz := img.Bounds().Size(); sz.X != 1440 || sz.Y != 900 {
		t.Fatalf("screenshot is %v, want the 1440x900 viewport", sz)
	}
	if c := rgb(img.At(720, 700)); c != [3]uint8{255, 0, 0} {
		t.Fatalf("pixel under the page is %v, want red", c)
	}
	// The banner is drawn over the top of the page.
	if c := rgb(img.At(720, BannerHeight/2)); c == [3]uint8{255, 0, 0} {
		t.Fatal("no banner at the top of the screenshot")
	}
}

func rgb(c color.Color) [3]uint8 {
	r, g, b, _ := c.RGBA()
	return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
}

func TestTabsRunConcurrentlyWithoutCrossing(t *testing.T) {
	f := sharedSite(t)
	ctx := testCtx(t)
	colors := map[string][3]uint8{"rgb(0,128,0)": {0, 128, 0}, "rgb(0,0,255)": {0, 0, 255}}
	type result struct {
		color string
		url   string
		value string
		shot  []byte
		err   error
	}
	var wg sync.WaitGroup
	results := make(chan result, len(colors))
	for c := range colors {
		tab := newTab(t, f.host)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := result{color: c}
			defer func() { results <- r }()
			if r.err = tab.Navigate(ctx, "http://shop.test/color?c="+c); r.err != nil {
				return
			}
			text := c
			for range 3 {
				if r.err = tab.TypeAt(ctx, norm(400, 320), text, false, true); r.err != nil {
					return
				}
				if r.err = tab.Click(ctx, norm(1000, 600), screen.ButtonLeft, 1); r.err != nil {
					return
				}
			}
			r.url = tab.URL()
			r.value = eval(t, tab, `() => document.getElementById('in').value`).(string)
			r.shot, r.err = tab.Screenshot(ctx)
		}()
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil {
			t.Fatalf("tab %s: %v", r.color, r.err)
		}
		if !strings.HasSuffix(r.url, "c="+r.color) {
			t.Errorf("tab %s is at %s", r.color, r.url)
		}
		if r.value != r.color {
			t.Errorf("tab %s's field holds %q", r.color, r.value)
		}
		img, err := png.Decode(bytes.NewReader(r.shot))
		if err != nil {
			t.Fatal(err)
		}
		if got := rgb(img.At(1200, 800)); got != colors[r.color] {
			t.Errorf("tab %s's screenshot shows %v", r.color, got)
		}
	}
	t.Run("closing one tab leaves the other working", func(t *testing.T) {
		a, b := newTab(t, f.host), newTab(t, f.host)
		mustDo(t, "navigate a", a.Navigate(ctx, "http://shop.test/color?c=red"))
		mustDo(t, "navigate b", b.Navigate(ctx, "http://shop.test/color?c=blue"))
		mustDo(t, "close a", a.Close())
		mustDo(t, "close a again", a.Close())
		if err := a.Click(ctx, norm(1, 1), screen.ButtonLeft, 1); !errors.Is(err, ErrClosed) {
			t.Fatalf("a closed tab answered %v, want ErrClosed", err)
		}
		if _, err := b.Screenshot(ctx); err != nil {
			t.Fatalf("the other tab: %v", err)
		}
	})
}

func TestNavigationActions(t *testing.T) {
	f := sharedSite(t)
	tab := newTab(t, f.host)
	ctx := testCtx(t)
	// https:// is added; shop.test serves plain HTTP only, so the TLS
	// handshake fails and the model is told.
	err := tab.Navigate(ctx, "shop.test/one")
	var ne *NavigationError
	if !errors.As(err, &ne) || ne.URL != "https://shop.test/one" || !ne.Rejected() {
		t.Fatalf("Navigate without scheme: %v, want a rejected NavigationError for https://shop.test/one", err)
	}
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/one"))
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/two"))
	mustDo(t, "back", tab.GoBack(ctx))
	if u := tab.URL(); u != "http://shop.test/one" {
		t.Fatalf("after GoBack at %s", u)
	}
	mustDo(t, "forward", tab.GoForward(ctx))
	if u := tab.URL(); u != "http://shop.test/two" {
		t.Fatalf("after GoForward at %s", u)
	}
	start := time.Now()
	mustDo(t, "wait", tab.Wait(ctx, 50*time.Millisecond))
	if time.Since(start) < 50*time.Millisecond {
		t.Fatal("Wait returned early")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := tab.Wait(cctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
	t.Run("drag and drop", func(t *testing.T) {
		mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/clicks"))
		eval(t, tab, `() => { window.drag = []; for (const t of ['mousedown','mousemove','mouseup']) document.addEventListener(t, e => window.drag.push(t + '@' + e.clientX + ',' + e.clientY)); }`)
		from, to := norm(100, 100), norm(700, 500)
		mustDo(t, "drag", tab.DragAndDrop(ctx, from, to))
		d := fmt.Sprint(eval(t, tab, `() => window.drag`))
		fx, fy := tab.px(from)
		tx, ty := tab.px(to)
		down := fmt.Sprintf("mousedown@%d,%d", int(fx), int(fy))
		up := fmt.Sprintf("mouseup@%d,%d]", int(tx), int(ty))
		if !strings.Contains(d, down) || !strings.HasSuffix(d, up) || strings.Count(d, "mousemove") < 10 {
			t.Fatalf("drag events %s", d)
		}
	})
}

// TestActionsAreBounded: typing has a length cap and stops at the action
// timeout (issue 13: 20,000 characters typed for 66 s), and Wait is cut to
// the action timeout; the errors are ones the model reads.
func TestActionsAreBounded(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	defer site.close()
	o := baseOptions(t, siteProfile(), t.TempDir(), site.rules, nil)
	o.ActionTimeout = time.Second
	h := launch(t, o)
	defer closeHost(t, h)
	tab := newTab(t, h)
	ctx := testCtx(t)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/keys"))
	field := norm(500, 120)

	var ie *InputError
	err := tab.TypeAt(ctx, field, strings.Repeat("a", 20000), false, true)
	if !errors.As(err, &ie) || !ie.Rejected() || !strings.Contains(err.Error(), "at most 1000") {
		t.Fatalf("typing 20,000 characters: %v, want a rejected InputError naming the limit", err)
	}
	if v := inputValue(t, tab, "in"); v != "" {
		t.Fatalf("the refused text was typed: %d characters", len(v))
	}

	// Each key costs the page 20 ms, so 1000 keys cannot fit in the
	// 1 s action timeout: typing stops there and says so.
	eval(t, tab, `() => document.getElementById('in').addEventListener('keydown', () => { const end = performance.now() + 20; while (performance.now() < end) {} })`)
	err = tab.TypeAt(ctx, field, strings.Repeat("b", MaxTypeChars), false, true)
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Rejected() || !strings.Contains(err.Error(), "typing stopped after") {
		t.Fatalf("typing past the action timeout: %v, want a rejected TimeoutError", err)
	}
	if n := len(inputValue(t, tab, "in")); n == 0 || n >= MaxTypeChars {
		t.Fatalf("%d characters typed, want some but not all", n)
	}

	// Wait is cut to the action timeout (it returns; the test's context
	// would end a wait of an hour).
	mustDo(t, "wait an hour", tab.Wait(ctx, time.Hour))
}
