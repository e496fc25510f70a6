package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/screen"
)

// Scroll amounts of ScrollDocument, as fractions of the viewport.
const (
	docScrollVertical   = 0.8
	docScrollHorizontal = 0.5
	defaultMagnitude    = 800
)

// px maps a normalised point (0–999 on both axes, clamped) to viewport
// pixels.
func (t *Tab) px(p screen.Point) (float64, float64) {
	x := min(max(p.X, 0), 999)
	y := min(max(p.Y, 0), 999)
	return float64(x) / 1000 * float64(t.h.opts.Width), float64(y) / 1000 * float64(t.h.opts.Height)
}

func mouseButton(b screen.Button) (*playwright.MouseButton, error) {
	switch screen.Button(strings.ToLower(string(b))) {
	case "", screen.ButtonLeft:
		return playwright.MouseButtonLeft, nil
	case screen.ButtonRight:
		return playwright.MouseButtonRight, nil
	case screen.ButtonMiddle:
		return playwright.MouseButtonMiddle, nil
	}
	return nil, &InputError{Input: string(b), Reason: "unknown mouse button (left, right or middle)"}
}

// Screenshot returns the viewport as PNG (or JPEG, per Options), the
// focused field's caret hidden (capture). With the store's auth marker on
// every page, a store page without it returns ErrAuthExpired instead
// (unless Options.SkipAuthCheck).
func (t *Tab) Screenshot(ctx context.Context) ([]byte, error) {
	var out []byte
	err := t.act(ctx, "screenshot", false, func(c call) error {
		if err := t.checkSignedIn(c); err != nil {
			return err
		}
		if t.g.keeperSess == nil {
			// Tabs share one window (no CDP to open windows): only the
			// front tab paints, so take turns in front.
			t.h.shotMu.Lock()
			defer t.h.shotMu.Unlock()
			if err := t.page.BringToFront(); err != nil {
				return err
			}
		}
		b, err := t.capture(t.h.opts.ScreenshotFormat, t.h.opts.JPEGQuality)
		out = b
		return err
	})
	if err != nil {
		return nil, err // fn may still be running: out is not read
	}
	return out, nil
}

// checkSignedIn returns ErrAuthExpired when the tab shows a page of the
// store's own site that says the shopper is signed out (readSession: a
// loaded store document without the marker, or the identity site). A page
// that is still loading or does not answer in time is not evidence: the
// screenshot is taken and the agent goes on.
func (t *Tab) checkSignedIn(c call) error {
	p := t.h.profile
	if t.h.opts.SkipAuthCheck || !p.AuthMarkerOnEveryPage || p.AuthMarkerSelector == "" {
		return nil
	}
	t.st.mu.Lock()
	sent := t.st.sentToLogin
	t.st.mu.Unlock()
	if sent {
		// The store redirected this tab's navigation to its identity site
		// (the policy kept the tab where it was): it says "sign in".
		return fmt.Errorf("%w: the store sent the tab to sign in", ErrAuthExpired)
	}
	cur, err := url.Parse(t.page.URL())
	home, herr := url.Parse(p.HomeURL)
	if err != nil || herr != nil {
		return nil
	}
	if !strings.EqualFold(cur.Hostname(), home.Hostname()) && !t.h.loginOnlyHost(cur.Hostname()) {
		return nil
	}
	// Keep a second for the screenshot itself.
	v := t.h.readSession(t.page, c.deadline.Add(-time.Second), authGraceOnScreenshot)
	if v != sessionSignedOut {
		if v == sessionUnknown {
			t.h.log.Debug("the session check could not tell (page loading or slow); not treated as signed out", "url", redactURL(cur.String()))
		}
		return nil
	}
	return fmt.Errorf("%w: %s", ErrAuthExpired, redactURL(t.page.URL()))
}

// Click clicks button count times (1 single, 2 double, 3 triple) at p.
func (t *Tab) Click(ctx context.Context, p screen.Point, button screen.Button, count int) error {
	b, err := mouseButton(button)
	if err != nil {
		return err
	}
	count = min(max(count, 1), 3)
	x, y := t.px(p)
	return t.act(ctx, "click", true, func(call) error {
		if err := t.page.Mouse().Move(x, y); err != nil {
			return err
		}
		return t.page.Mouse().Click(x, y, playwright.MouseClickOptions{Button: b, ClickCount: playwright.Int(count)})
	})
}

// Move moves the mouse to p (hover).
func (t *Tab) Move(ctx context.Context, p screen.Point) error {
	x, y := t.px(p)
	return t.act(ctx, "move", true, func(call) error { return t.page.Mouse().Move(x, y) })
}

// MouseDown presses a mouse button where the mouse is.
func (t *Tab) MouseDown(ctx context.Context, button screen.Button) error {
	b, err := mouseButton(button)
	if err != nil {
		return err
	}
	return t.act(ctx, "mouse down", true, func(call) error {
		return t.page.Mouse().Down(playwright.MouseDownOptions{Button: b})
	})
}

// MouseUp releases a mouse button where the mouse is.
func (t *Tab) MouseUp(ctx context.Context, button screen.Button) error {
	b, err := mouseButton(button)
	if err != nil {
		return err
	}
	return t.act(ctx, "mouse up", true, func(call) error {
		return t.page.Mouse().Up(playwright.MouseUpOptions{Button: b})
	})
}

// MaxTypeChars is the most characters one typing action types: enough
// for any search, quantity or postal code; more is refused with an error
// the model reads (typing is key by key, about 30 keys a second).
const MaxTypeChars = 1000

// checkTypeLength refuses text longer than MaxTypeChars.
func checkTypeLength(text string) error {
	if n := utf8.RuneCountInString(text); n > MaxTypeChars {
		return &InputError{Input: text[:min(len(text), 40)] + "…", Reason: fmt.Sprintf("the text is %d characters long; at most %d can be typed in one action", n, MaxTypeChars)}
	}
	return nil
}

// typeText presses a key for every character a US keyboard has and
// inserts the rest, so pages see keydown/keyup for ordinary typing. It
// stops at the call's deadline, saying how far it got.
func (t *Tab) typeText(c call, text string) error {
	kb := t.page.Keyboard()
	ss := strokes(text)
	for i, s := range ss {
		if time.Now().After(c.deadline) {
			return &TimeoutError{Action: "type", Limit: t.h.opts.ActionTimeout,
				Detail: fmt.Sprintf("typing stopped after %d of %d keys; type less at once, or check what the field shows", i, len(ss))}
		}
		var err error
		if s.key != "" {
			err = kb.Press(s.key)
		} else {
			err = kb.InsertText(s.insert)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TypeAt clicks p, optionally clears the field (select all + delete),
// types text key by key and optionally presses Enter.
func (t *Tab) TypeAt(ctx context.Context, p screen.Point, text string, pressEnter, clearBefore bool) error {
	if err := checkTypeLength(text); err != nil {
		return err
	}
	x, y := t.px(p)
	return t.act(ctx, "type", true, func(c call) error {
		m := t.page.Mouse()
		if err := m.Move(x, y); err != nil {
			return err
		}
		if err := m.Click(x, y); err != nil {
			return err
		}
		if clearBefore {
			if err := t.page.Keyboard().Press("ControlOrMeta+a"); err != nil {
				return err
			}
			if err := t.page.Keyboard().Press("Delete"); err != nil {
				return err
			}
		}
		if err := t.typeText(c, text); err != nil {
			return err
		}
		if pressEnter {
			return t.page.Keyboard().Press("Enter")
		}
		return nil
	})
}

// Type types text into whatever has focus, optionally pressing Enter.
func (t *Tab) Type(ctx context.Context, text string, pressEnter bool) error {
	if err := checkTypeLength(text); err != nil {
		return err
	}
	return t.act(ctx, "type", true, func(c call) error {
		if err := t.typeText(c, text); err != nil {
			return err
		}
		if pressEnter {
			return t.page.Keyboard().Press("Enter")
		}
		return nil
	})
}

// PressKeys presses a key or a combination such as "Control+a" or
// "Meta+Shift+t" (names case-insensitive, see canonicalKey).
func (t *Tab) PressKeys(ctx context.Context, keys string) error {
	mods, key, err := parseCombo(keys)
	if err != nil {
		return err
	}
	return t.act(ctx, "press keys", true, func(call) error {
		kb := t.page.Keyboard()
		for i, m := range mods {
			if err := kb.Down(m); err != nil {
				for j := i - 1; j >= 0; j-- {
					_ = kb.Up(mods[j])
				}
				return err
			}
		}
		err := kb.Press(key)
		for j := len(mods) - 1; j >= 0; j-- {
			if uerr := kb.Up(mods[j]); err == nil {
				err = uerr
			}
		}
		return err
	})
}

// KeyDown holds a key down.
func (t *Tab) KeyDown(ctx context.Context, key string) error {
	k, err := canonicalKey(key)
	if err != nil {
		return err
	}
	return t.act(ctx, "key down", true, func(call) error { return t.page.Keyboard().Down(k) })
}

// KeyUp releases a key.
func (t *Tab) KeyUp(ctx context.Context, key string) error {
	k, err := canonicalKey(key)
	if err != nil {
		return err
	}
	return t.act(ctx, "key up", true, func(call) error { return t.page.Keyboard().Up(k) })
}

func directionDelta(d screen.Direction, dx, dy float64) (float64, float64, error) {
	switch screen.Direction(strings.ToLower(string(d))) {
	case screen.DirectionDown:
		return 0, dy, nil
	case screen.DirectionUp:
		return 0, -dy, nil
	case screen.DirectionRight:
		return dx, 0, nil
	case screen.DirectionLeft:
		return -dx, 0, nil
	}
	return 0, 0, &InputError{Input: string(d), Reason: "unknown scroll direction (up, down, left or right)"}
}

// ScrollDocument scrolls the whole page by most of a screen (up/down) or
// half a screen (left/right). If the document itself does not scroll (an
// app that scrolls an inner element), it scrolls what is under the middle
// of the viewport.
func (t *Tab) ScrollDocument(ctx context.Context, d screen.Direction) error {
	w, h := float64(t.h.opts.Width), float64(t.h.opts.Height)
	dx, dy, err := directionDelta(d, w*docScrollHorizontal, h*docScrollVertical)
	if err != nil {
		return err
	}
	return t.act(ctx, "scroll document", true, func(call) error {
		moved, err := t.page.Evaluate(`([dx, dy]) => {
  const x = window.scrollX, y = window.scrollY;
  window.scrollBy({left: dx, top: dy, behavior: 'instant'});
  return window.scrollX !== x || window.scrollY !== y;
}`, []float64{dx, dy})
		if err != nil {
			return err
		}
		if ok, _ := moved.(bool); ok {
			return nil
		}
		if err := t.page.Mouse().Move(w/2, h/2); err != nil {
			return err
		}
		return t.page.Mouse().Wheel(dx, dy)
	})
}

// ScrollAt scrolls what is under p by magnitude, in normalised units of
// the viewport (0–999; 0 means 800, larger values are clamped).
func (t *Tab) ScrollAt(ctx context.Context, p screen.Point, d screen.Direction, magnitude int) error {
	if magnitude <= 0 {
		magnitude = defaultMagnitude
	}
	magnitude = min(magnitude, 999)
	w, h := float64(t.h.opts.Width), float64(t.h.opts.Height)
	dx, dy, err := directionDelta(d, float64(magnitude)/1000*w, float64(magnitude)/1000*h)
	if err != nil {
		return err
	}
	x, y := t.px(p)
	return t.act(ctx, "scroll", true, func(call) error {
		if err := t.page.Mouse().Move(x, y); err != nil {
			return err
		}
		if err := t.page.Mouse().Wheel(dx, dy); err != nil {
			return err
		}
		// Wheel events are handled asynchronously: wait two frames so the
		// scroll has landed before the next screenshot.
		_, err := t.page.Evaluate(`() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
		return err
	})
}

// DragAndDrop presses the left button at from, moves to to and releases.
func (t *Tab) DragAndDrop(ctx context.Context, from, to screen.Point) error {
	fx, fy := t.px(from)
	tx, ty := t.px(to)
	return t.act(ctx, "drag and drop", true, func(call) error {
		m := t.page.Mouse()
		if err := m.Move(fx, fy); err != nil {
			return err
		}
		if err := m.Down(); err != nil {
			return err
		}
		if err := m.Move(tx, ty, playwright.MouseMoveOptions{Steps: playwright.Int(12)}); err != nil {
			_ = m.Up()
			return err
		}
		return m.Up()
	})
}

var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// normalizeURL adds https:// to an address without a scheme. "host:port"
// counts as having none.
func normalizeURL(raw string) string {
	s := strings.TrimSpace(raw)
	if strings.Contains(s, "://") {
		return s
	}
	if m := schemeRE.FindString(s); m != "" {
		rest := s[len(m):]
		if rest == "" || rest[0] < '0' || rest[0] > '9' { // "about:blank", "javascript:…", not "host:8080"
			return s
		}
	}
	return "https://" + strings.TrimPrefix(s, "//")
}

// Navigate opens an address in the tab (https:// added when no scheme is
// given). Addresses the store policy forbids return a *BlockedError
// without any request being made.
func (t *Tab) Navigate(ctx context.Context, raw string) error {
	return t.navigate(ctx, raw, true)
}

// Load opens an address like Navigate but returns once the document is
// parsed and its scripts have run (DOMContentLoaded), without waiting for
// frames, images or the page to settle: for code that reads known elements
// next (the replay), not for the model's screenshot.
func (t *Tab) Load(ctx context.Context, raw string) error {
	return t.navigate(ctx, raw, false)
}

func (t *Tab) navigate(ctx context.Context, raw string, settle bool) error {
	u := normalizeURL(raw)
	if pol := t.h.profile.CheckURL(u); !pol.Allowed {
		if pu, err := url.Parse(u); err == nil && pu.Host != "" && !t.h.profile.HostAllowed(pu.Hostname()) {
			t.h.noteBlockedHost(pu.Hostname(), "navigate")
		}
		return &BlockedError{URL: u, Reason: pol.Reason}
	}
	until := playwright.WaitUntilStateLoad
	if !settle {
		until = playwright.WaitUntilStateDomcontentloaded
	}
	return t.act(ctx, "navigate", settle, func(c call) error {
		_, err := t.page.Goto(u, playwright.PageGotoOptions{WaitUntil: until, Timeout: c.ms()})
		return t.navResult(u, err)
	})
}

// navResult turns a navigation's error into what the caller should see: a
// policy block, a network failure for the model, or nothing for a slow
// page (the model sees what loaded).
func (t *Tab) navResult(u string, err error) error {
	if err == nil {
		return nil
	}
	t.st.mu.Lock()
	blocked := t.st.lastBlock
	t.st.mu.Unlock()
	if blocked != nil {
		return blocked
	}
	if isTargetClosed(err) {
		return err
	}
	if errorIsTimeout(err) {
		t.h.log.Debug("navigation did not finish loading in time; going on with what loaded", "url", redactURL(u))
		return nil
	}
	if strings.Contains(err.Error(), "net::ERR_") {
		if !strings.Contains(err.Error(), "net::ERR_ABORTED") {
			// Chromium commits an error page a moment after the failure;
			// wait for it so the next navigation is not interrupted by it.
			_ = t.page.WaitForURL(func(s string) bool { return strings.HasPrefix(s, "chrome-error:") },
				playwright.PageWaitForURLOptions{Timeout: playwright.Float(2000), WaitUntil: playwright.WaitUntilStateCommit})
		}
		return &NavigationError{URL: u, Err: err}
	}
	return err
}

func errorIsTimeout(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "Timeout") || strings.Contains(err.Error(), "timeout"))
}

// GoBack goes back in the tab's history.
func (t *Tab) GoBack(ctx context.Context) error {
	return t.act(ctx, "go back", true, func(c call) error {
		_, err := t.page.GoBack(playwright.PageGoBackOptions{WaitUntil: playwright.WaitUntilStateCommit, Timeout: c.ms()})
		return t.navResult("(back)", err)
	})
}

// GoForward goes forward in the tab's history.
func (t *Tab) GoForward(ctx context.Context) error {
	return t.act(ctx, "go forward", true, func(c call) error {
		_, err := t.page.GoForward(playwright.PageGoForwardOptions{WaitUntil: playwright.WaitUntilStateCommit, Timeout: c.ms()})
		return t.navResult("(forward)", err)
	})
}

// Wait waits d (at most the action timeout: a longer wait is cut to it),
// or until ctx ends.
func (t *Tab) Wait(ctx context.Context, d time.Duration) error {
	d = min(max(d, 0), maxWait, t.h.opts.ActionTimeout)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait: %w", ctx.Err())
	case <-t.g.gone:
		return fmt.Errorf("wait: %w", ErrBrowserGone)
	}
}

// Element is what ReadElements found for one CSS selector (its first
// match).
type Element struct {
	Found    bool
	Visible  bool
	Text     string // visible text (innerText), trimmed
	Disabled bool
	Attr     string // the attribute ReadElements was asked for, if any
}

// ReadElements reads the first match of each CSS selector in one look at
// the page (code reading a known page layout — the replay of a remembered
// product — not the model). attr names an attribute to read from each
// match ("" for none). A selector that does not parse counts as not found.
func (t *Tab) ReadElements(ctx context.Context, selectors map[string]string, attr string) (map[string]Element, error) {
	out := map[string]Element{}
	// Playwright serialises only map[string]any objects.
	sels := make(map[string]any, len(selectors))
	for k, v := range selectors {
		sels[k] = v
	}
	err := t.act(ctx, "read the page", false, func(c call) error {
		v, err := t.page.Evaluate(`([sels, attr]) => {
  const out = {};
  for (const [k, sel] of Object.entries(sels)) {
    let el = null;
    try { el = sel ? document.querySelector(sel) : null; } catch (e) { el = null; }
    out[k] = el ? {found: true, visible: el.checkVisibility ? el.checkVisibility() : !!el.offsetParent, text: (el.innerText || el.textContent || '').trim(), disabled: !!el.disabled || el.getAttribute('aria-disabled') === 'true', attr: attr ? (el.getAttribute(attr) || '') : ''} : {found: false};
  }
  return out;
}`, []any{sels, attr})
		if err != nil {
			return err
		}
		m, _ := v.(map[string]any)
		for k, raw := range m {
			e, _ := raw.(map[string]any)
			found, _ := e["found"].(bool)
			vis, _ := e["visible"].(bool)
			text, _ := e["text"].(string)
			dis, _ := e["disabled"].(bool)
			at, _ := e["attr"].(string)
			out[k] = Element{Found: found, Visible: vis, Text: text, Disabled: dis, Attr: at}
		}
		return nil
	})
	if err != nil {
		return nil, err // fn may still be running: out is not read
	}
	return out, nil
}

// Row is one match of ReadRows' row selector: the text of the first match
// of each field selector inside it (an input's value), and the row's
// attribute ReadRows was asked for.
type Row struct {
	Fields map[string]string
	Attr   string
}

// maxRows bounds what ReadRows returns: a page cannot make code read an
// unbounded list.
const maxRows = 500

// ReadRows reads every match of a CSS selector (a cart's lines) in one
// look at the page: for each, the first match of each field selector
// inside it and the attribute attr ("" for none). A selector that does
// not parse matches nothing; a field not found reads "".
func (t *Tab) ReadRows(ctx context.Context, row string, fields map[string]string, attr string) ([]Row, error) {
	sels := make(map[string]any, len(fields))
	for k, v := range fields {
		sels[k] = v
	}
	var out []Row
	err := t.act(ctx, "read the page's rows", false, func(c call) error {
		v, err := t.page.Evaluate(`([row, sels, attr, max]) => {
  let rows = [];
  try { rows = Array.from(document.querySelectorAll(row)).slice(0, max); } catch (e) { return []; }
  const text = (el) => !el ? '' : (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) ? String(el.value || '') : (el.innerText || el.textContent || '').trim();
  return rows.map((r) => {
    const f = {};
    for (const [k, sel] of Object.entries(sels)) {
      let el = null;
      try { el = sel ? r.querySelector(sel) : null; } catch (e) { el = null; }
      f[k] = text(el);
    }
    return {fields: f, attr: attr ? (r.getAttribute(attr) || '') : ''};
  });
}`, []any{row, sels, attr, maxRows})
		if err != nil {
			return err
		}
		list, _ := v.([]any)
		out = make([]Row, 0, len(list))
		for _, raw := range list {
			m, _ := raw.(map[string]any)
			r := Row{Fields: map[string]string{}}
			r.Attr, _ = m["attr"].(string)
			f, _ := m["fields"].(map[string]any)
			for k, fv := range f {
				r.Fields[k], _ = fv.(string)
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err // fn may still be running: out is not read
	}
	return out, nil
}

// ClickElement clicks the first match of a CSS selector as a person would
// (scrolled into view, real mouse events). It does not wait for the page
// to settle: the caller looks for the click's effect itself.
func (t *Tab) ClickElement(ctx context.Context, selector string) error {
	return t.act(ctx, "click "+selector, false, func(c call) error {
		return t.page.Locator(selector).First().Click(playwright.LocatorClickOptions{Timeout: c.ms()})
	})
}

// FillElement types text into the first match of a CSS selector,
// replacing what it held.
func (t *Tab) FillElement(ctx context.Context, selector, text string) error {
	return t.act(ctx, "fill "+selector, false, func(c call) error {
		return t.page.Locator(selector).First().Fill(text, playwright.LocatorFillOptions{Timeout: c.ms()})
	})
}

// FetchJSON fetches an address from the page, as its own scripts would
// (same-origin credentials; the store policy applies as to any request),
// and returns the body of a 2xx answer.
func (t *Tab) FetchJSON(ctx context.Context, raw string) ([]byte, error) {
	if pol := t.h.profile.CheckURL(raw); !pol.Allowed {
		return nil, &BlockedError{URL: raw, Reason: pol.Reason}
	}
	var body string
	err := t.act(ctx, "fetch "+redactURL(raw), false, func(c call) error {
		v, err := t.page.Evaluate(`async (u) => {
  const r = await fetch(u, {credentials: 'same-origin', headers: {'Accept': 'application/json'}});
  return {status: r.status, body: await r.text()};
}`, raw)
		if err != nil {
			return err
		}
		m, _ := v.(map[string]any)
		status := 0
		switch n := m["status"].(type) {
		case int:
			status = n
		case float64:
			status = int(n)
		}
		body, _ = m["body"].(string)
		if status < 200 || status > 299 {
			return fmt.Errorf("status %d", status)
		}
		return nil
	})
	if err != nil {
		return nil, err // fn may still be running: body is not read
	}
	return []byte(body), nil
}

// PostJSON posts a JSON body to an address from the page, as its own
// scripts would (same-origin credentials; the store policy, the cart gate
// and the tab's cart ledger apply as to any request), and returns the
// answer's status and body. Code uses it for a cart operation the store
// profile describes (the review pack's actions), never for anything the
// policy would refuse.
func (t *Tab) PostJSON(ctx context.Context, raw string, body map[string]any) (int, []byte, error) {
	if pol := t.h.profile.CheckURL(raw); !pol.Allowed {
		return 0, nil, &BlockedError{URL: raw, Reason: pol.Reason}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return 0, nil, fmt.Errorf("post %s: %w", redactURL(raw), err)
	}
	status, text := 0, ""
	err = t.act(ctx, "post "+redactURL(raw), false, func(c call) error {
		v, err := t.page.Evaluate(`async ([u, b]) => {
  const r = await fetch(u, {method: 'POST', credentials: 'same-origin', headers: {'Content-Type': 'application/json', 'Accept': 'application/json'}, body: b});
  return {status: r.status, body: await r.text()};
}`, []any{raw, string(payload)})
		if err != nil {
			return err
		}
		m, _ := v.(map[string]any)
		n, _ := number(m["status"])
		status = int(n)
		text, _ = m["body"].(string)
		return nil
	})
	if err != nil {
		return 0, nil, err // fn may still be running: status and text are not read
	}
	return status, []byte(text), nil
}
