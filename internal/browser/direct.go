package browser

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Direct actions for code that knows the page (a replay): one trusted
// click at an element's box and one in-page wait for a change, instead of
// Playwright's actionability polling (which, on a page whose renderer is
// busy, waited seconds to resolve an element) or a poll from Go.

// PressElement clicks the first match of a CSS selector once, with a
// trusted mouse click (CDP input events) at the centre of its box, after
// scrolling it into view. The element must be there, enabled, and the
// topmost element at that point (not under a dialog or an overlay), else
// nothing is clicked and the error says why. It does not wait for the
// page to settle: the caller waits for the click's effect (WaitChange).
func (t *Tab) PressElement(ctx context.Context, selector string) error {
	return t.act(ctx, "press "+selector, false, func(c call) error {
		v, err := t.page.Evaluate(`(sel) => {
  let el = null;
  try { el = document.querySelector(sel); } catch (e) { return {why: 'the selector does not parse'}; }
  if (!el) return {why: 'not on the page'};
  if (el.disabled || el.getAttribute('aria-disabled') === 'true') return {why: 'disabled'};
  let r = el.getBoundingClientRect();
  if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {
    el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
    r = el.getBoundingClientRect();
  }
  if (r.width < 1 || r.height < 1) return {why: 'not visible'};
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  if (!hit || !(hit === el || el.contains(hit))) return {why: 'covered by ' + (hit ? hit.tagName.toLowerCase() + (hit.id ? '#' + hit.id : '') : 'nothing')};
  return {x, y};
}`, selector)
		if err != nil {
			return err
		}
		m, _ := v.(map[string]any)
		if why, _ := m["why"].(string); why != "" {
			return fmt.Errorf("%s cannot be clicked: %s", selector, why)
		}
		x, okx := number(m["x"])
		y, oky := number(m["y"])
		if !okx || !oky {
			return errors.New("the element's position could not be read")
		}
		return t.page.Mouse().Click(x, y)
	})
}

// number reads a JSON number Playwright returned (an int or a float).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// WaitChange waits in the page, at most d (and the action timeout), until
// the first match of selector holds a text other than from (trimmed, as
// ReadElements reads it; a missing element reads ""), or the first match
// of appears (when not "") is visible. It reports whether either happened:
// false when d passed first. One page-side wait (a mutation observer), not
// a poll.
func (t *Tab) WaitChange(ctx context.Context, selector, from, appears string, d time.Duration) (bool, error) {
	changed := false
	err := t.act(ctx, "wait for "+selector+" to change", false, func(c call) error {
		wait := min(d, time.Until(c.deadline))
		v, err := t.page.Evaluate(`([sel, from, appears, ms]) => new Promise((done) => {
  const q = (s) => { try { return s ? document.querySelector(s) : null; } catch (e) { return null; } };
  const text = (el) => el ? (el.innerText || el.textContent || '').trim() : '';
  const seen = () => text(q(sel)) !== from || (() => { const a = q(appears); return !!a && (a.checkVisibility ? a.checkVisibility() : !!a.offsetParent); })();
  if (seen()) { done(true); return; }
  const obs = new MutationObserver(() => { if (seen()) { obs.disconnect(); clearTimeout(timer); done(true); } });
  const timer = setTimeout(() => { obs.disconnect(); done(seen()); }, ms);
  obs.observe(document.documentElement, {subtree: true, childList: true, characterData: true, attributes: true});
})`, []any{selector, from, appears, float64(max(wait.Milliseconds(), 1))})
		if err != nil {
			return err
		}
		changed = v == true
		return nil
	})
	if err != nil {
		return false, err // fn may still be running: changed is not read
	}
	return changed, nil
}
