package browser

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/playwright-community/playwright-go"
)

// ErrNeedsPerson means the store's sign-in asks for something only a
// person can give (a "not a robot" check, a code sent by e-mail or SMS)
// and no one was offered the tab (Options.NeedsPerson is nil).
var ErrNeedsPerson = errors.New("the store's sign-in needs a person (a check or a code the scripted login cannot answer)")

// challengeProbe says whether the page shows a sign-in challenge: a
// one-time-code field, a captcha, or an element marked as a challenge.
const challengeProbe = `() => {
  const shown = e => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  for (const e of document.querySelectorAll('input[autocomplete=one-time-code], [data-challenge], .g-recaptcha, iframe[src*=captcha], #captcha')) {
    if (shown(e)) return true;
  }
  return false;
}`

// challengeShown reads the page for a sign-in challenge (false when the
// page does not answer in a few seconds).
func challengeShown(page playwright.Page) bool {
	ch := make(chan bool, 1)
	go func() {
		v, err := page.Evaluate(challengeProbe)
		b, _ := v.(bool)
		ch <- err == nil && b
	}()
	select {
	case b := <-ch:
		return b
	case <-time.After(identityProbeWait):
		return false
	}
}

// Handoff is a tab given to a person: input goes to this tab only, and its
// requests stay under the request policy (a login tab's may reach the
// store's login hosts, never a checkout, payment or order page). Typed text
// is never logged or traced.
type Handoff struct {
	page   playwright.Page
	width  int
	height int
}

func newHandoff(page playwright.Page, width, height int) *Handoff {
	if width <= 0 || height <= 0 {
		width, height = 1440, 900
		if vs := page.ViewportSize(); vs != nil && vs.Width > 0 && vs.Height > 0 {
			width, height = vs.Width, vs.Height
		}
	}
	return &Handoff{page: page, width: width, height: height}
}

// URL is the tab's current address, without its query (it may carry codes).
func (t *Handoff) URL() string { return redactURL(t.page.URL()) }

// Click clicks at (x, y) in 0–999 screen coordinates.
func (t *Handoff) Click(ctx context.Context, x, y int) error {
	if x < 0 || x > 999 || y < 0 || y > 999 {
		return fmt.Errorf("browser: take-over click (%d, %d) is outside 0–999", x, y)
	}
	px, py := float64(x)*float64(t.width)/1000, float64(y)*float64(t.height)/1000
	if err := t.page.Mouse().Click(px, py); err != nil {
		return fmt.Errorf("browser: take-over click: %w", err)
	}
	return nil
}

// Type types text into the focused element. Errors never carry the text.
func (t *Handoff) Type(ctx context.Context, text string) error {
	if err := t.page.Keyboard().InsertText(text); err != nil {
		return fmt.Errorf("browser: take-over typing: %w", sanitizeLoginErr(err))
	}
	return nil
}

// Key presses one key ("Enter", "Tab", "Backspace"…).
func (t *Handoff) Key(ctx context.Context, key string) error {
	k, err := canonicalKey(key)
	if err != nil {
		return fmt.Errorf("browser: take-over key: %w", err)
	}
	if err := t.page.Keyboard().Press(k); err != nil {
		return fmt.Errorf("browser: take-over key: %w", err)
	}
	return nil
}

// Screenshot is the tab's screen as PNG.
func (t *Handoff) Screenshot(ctx context.Context) ([]byte, error) {
	b, err := t.page.Screenshot(playwright.PageScreenshotOptions{Type: playwright.ScreenshotTypePng,
		Timeout: playwright.Float(float64(boundedBy(ctx, 15*time.Second).Milliseconds()))})
	if err != nil {
		return nil, fmt.Errorf("browser: take-over screenshot: %w", err)
	}
	return b, nil
}

// Evaluate runs a read-only script in the tab (the offline guide reads the
// page's elements with it).
func (t *Handoff) Evaluate(ctx context.Context, script string, arg any) (any, error) {
	type answer struct {
		v   any
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := t.page.Evaluate(script, arg)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Size is the tab's viewport in CSS pixels.
func (t *Handoff) Size() (width, height int) { return t.width, t.height }

// handOffLogin offers the login tab to a person and, once they say they are
// done, checks the signed-in marker.
func (h *Host) handOffLogin(ctx context.Context, page playwright.Page, step string) error {
	if h.opts.NeedsPerson == nil {
		return fmt.Errorf("browser: logging in to %s stopped at %q: %w", h.profile.Name, step, ErrNeedsPerson)
	}
	h.log.Warn("the store's sign-in needs a person; offering the login tab", "step", step)
	if err := h.opts.NeedsPerson(ctx, newHandoff(page, h.opts.Width, h.opts.Height)); err != nil {
		return fmt.Errorf("browser: the person did not finish the sign-in: %w", err)
	}
	signedIn := func() bool {
		return h.readSession(page, time.Now().Add(boundedBy(ctx, h.opts.LoginStepTimeout)), h.opts.LoginStepTimeout) == sessionSignedIn
	}
	if !signedIn() {
		// The person may hand the tab back anywhere: read the store's home
		// page before calling the sign-in unfinished.
		_, _ = page.Goto(h.profile.HomeURL, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad,
			Timeout: playwright.Float(float64(boundedBy(ctx, h.opts.LoginStepTimeout).Milliseconds()))})
	}
	if !signedIn() {
		return fmt.Errorf("browser: the sign-in was handed back without the signed-in marker on %s: %w", redactURL(page.URL()), ErrNeedsPerson)
	}
	h.log.Info("logged in to the store with a person's help", "store", h.profile.Name)
	return nil
}
