package browser

import (
	"encoding/base64"
	"errors"
	"fmt"
)

// captureWorld is the isolated world a screenshot's script runs in (one per
// document, made on demand): the page's scripts neither see its globals nor
// can they replace the DOM getters and methods it calls.
const captureWorld = "gemini-supply-screenshot"

// hideCaretScript hides the text caret of the field that has the focus, so
// that two screenshots of the same page are the same whatever the phase of
// the caret's blink (a caret shows only in the focused field: the focus is
// followed into open shadow roots and same-origin frames), waits for the
// document's fonts (as long as 1 s), and returns whether it hid a caret;
// window.__gsShowCaret, in the isolated world only, puts the field's own
// caret-color back.
const hideCaretScript = `(async () => {
  let el = document.activeElement;
  for (let i = 0; el && i < 32; i++) {
    if (el.shadowRoot && el.shadowRoot.activeElement) { el = el.shadowRoot.activeElement; continue; }
    let inner = null;
    try { inner = (el.tagName === 'IFRAME' || el.tagName === 'FRAME') && el.contentDocument ? el.contentDocument.activeElement : null; } catch (e) {}
    if (!inner) break;
    el = inner;
  }
  let hid = false;
  if (el && el.style && el !== document.body) {
    const value = el.style.getPropertyValue('caret-color'), priority = el.style.getPropertyPriority('caret-color');
    el.style.setProperty('caret-color', 'transparent', 'important');
    window.__gsShowCaret = () => { el.style.setProperty('caret-color', value, priority); delete window.__gsShowCaret; };
    hid = true;
  }
  await Promise.race([document.fonts ? document.fonts.ready : null, new Promise(r => setTimeout(r, 1000))]);
  return hid;
})()`

// showCaretScript undoes hideCaretScript.
const showCaretScript = `window.__gsShowCaret && window.__gsShowCaret()`

// capture takes the viewport through the tab's own CDP session
// (Page.captureScreenshot), the focused field's caret hidden for it. It
// replaces Playwright's page screenshot, which before every screenshot
// walks every element of every frame of the page — the hostile widget's 36
// frames on the demo's product page, and each of them twice — to hide
// every field's caret, and puts them back after: measured in
// docs/browser.md ("Screenshots"). What the model sees is the same image
// (TestScreenshotIsPlaywrights). format is "png" or "jpeg" (with quality).
func (t *Tab) capture(format string, quality int) ([]byte, error) {
	t.st.mu.Lock()
	sess, frame := t.st.guardSess, t.st.mainFrame
	t.st.mu.Unlock()
	if sess == nil {
		return nil, fmt.Errorf("screenshot: %w", ErrClosed)
	}
	// The caret and the fonts only make screenshots alike: a page whose
	// world cannot be made or whose script fails (a navigation under it)
	// is still shot as it is.
	var ctxID any
	hid := false
	if frame != "" {
		if res, err := sess.Send("Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": captureWorld}); err == nil {
			ctxID = field(res, "executionContextId")
		}
	}
	if ctxID != nil {
		res, err := sess.Send("Runtime.evaluate", map[string]any{"expression": hideCaretScript, "contextId": ctxID,
			"awaitPromise": true, "returnByValue": true})
		if err == nil {
			r, _ := field(res, "result").(map[string]any)
			hid, _ = r["value"].(bool)
		}
	}
	args := map[string]any{"format": format}
	if format == "jpeg" {
		args["quality"] = quality
	}
	res, err := sess.Send("Page.captureScreenshot", args)
	if hid {
		_, _ = sess.Send("Runtime.evaluate", map[string]any{"expression": showCaretScript, "contextId": ctxID})
	}
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	data, _ := field(res, "data").(string)
	if data == "" {
		return nil, errors.New("screenshot: the browser returned no image")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("screenshot: decoding the image: %w", err)
	}
	return b, nil
}

// field is one field of a CDP result.
func field(res any, name string) any {
	m, _ := res.(map[string]any)
	return m[name]
}
