package browser

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// caretPage builds, on shop.test's home page, a large text field whose
// caret is magenta, where the case puts it, and gives it the focus.
const caretField = `const field = () => { const i = document.createElement('input'); i.value = 'milk'; i.style.cssText = 'font:40px monospace;width:400px;height:80px;caret-color:rgb(255,0,255);border:0;outline:0;padding:0 20px'; return i; };
const box = document.createElement('div'); box.style.cssText = 'position:fixed;left:100px;top:300px;width:500px;height:120px;background:#fff'; document.body.appendChild(box);`

var caretCases = []struct {
	name  string
	build string // builds the field in box and focuses it (JS, after caretField)
	style string // the field's own inline caret-color, read back after (JS expression)
	hooks string // what the page does to itself first (JS)
}{
	{name: "a field of the page",
		build: `const i = field(); box.appendChild(i); i.focus();`,
		style: `document.querySelector('input').style.getPropertyValue('caret-color')`},
	{name: "a field in a same-origin frame",
		build: `const f = document.createElement('iframe'); f.style.cssText = 'border:0;width:480px;height:100px'; box.appendChild(f);
const d = f.contentDocument; d.open(); d.write('<body style="margin:0"></body>'); d.close();
const i = field(); d.body.appendChild(d.adoptNode(i)); f.focus(); i.focus();`,
		style: `document.querySelector('iframe').contentDocument.querySelector('input').style.getPropertyValue('caret-color')`},
	{name: "a field in an open shadow root",
		build: `const host = document.createElement('div'); box.appendChild(host); const root = host.attachShadow({mode: 'open'});
const i = field(); root.appendChild(i); i.focus();`,
		style: `document.querySelector('div div').shadowRoot.querySelector('input').style.getPropertyValue('caret-color')`},
	{name: "a page that replaced the DOM's getters and setters",
		hooks: `Object.defineProperty(Document.prototype, 'activeElement', {get() { throw new Error('no'); }});
const set = CSSStyleDeclaration.prototype.setProperty;
CSSStyleDeclaration.prototype.setProperty = function (k, v, p) { window.__pageSaw = (window.__pageSaw || 0) + 1; if (k !== 'caret-color') return set.call(this, k, v, p); };`,
		build: `const i = field(); box.appendChild(i); i.focus();`,
		style: `document.querySelector('input').style.getPropertyValue('caret-color')`},
}

// TestScreenshotHidesTheCaret: the focused field's caret blinks (a raw
// capture of the tab catches it shown), yet no screenshot the model gets
// shows it, wherever the field is; the field keeps the focus and its own
// caret-color, and the page sees none of it — not even a page that
// replaced the DOM functions the screenshot's script would call.
func TestScreenshotHidesTheCaret(t *testing.T) {
	f := sharedSite(t)
	ctx := testCtx(t)
	for _, tc := range caretCases {
		t.Run(tc.name, func(t *testing.T) {
			tab := newTab(t, f.host)
			mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/"))
			eval(t, tab, "() => {"+tc.hooks+"\n"+caretField+"\n"+tc.build+"\nreturn 1; }")
			waitFor(t, "a raw capture that shows the caret", 30*time.Second, func() bool {
				return magenta(t, rawCapture(t, tab))
			})
			for i := range 6 {
				b, err := tab.Screenshot(ctx)
				mustDo(t, "screenshot", err)
				if magenta(t, b) {
					t.Fatalf("screenshot %d shows the caret", i+1)
				}
			}
			if got := eval(t, tab, "() => "+tc.style); got != "rgb(255, 0, 255)" {
				t.Errorf("the field's own caret-color is %v after the screenshots, want rgb(255, 0, 255)", got)
			}
			if got := eval(t, tab, `() => { const d = document.querySelector('iframe'); return (d ? d.contentDocument : document).hasFocus(); }`); got != true {
				t.Errorf("the field's document lost the focus (hasFocus %v)", got)
			}
			if got := eval(t, tab, `() => [typeof window.__gsShowCaret, window.__pageSaw || 0].join(' ')`); got != "undefined 0" {
				t.Errorf("the page saw the screenshot's script: %v (want no global and no call of its setProperty)", got)
			}
		})
	}
}

// TestScreenshotIsPlaywrights: the image the model gets is, pixel for
// pixel, the one Playwright's own page screenshot takes (its caret hidden
// too), at the viewport's size.
func TestScreenshotIsPlaywrights(t *testing.T) {
	f := sharedSite(t)
	ctx := testCtx(t)
	tab := newTab(t, f.host)
	mustDo(t, "navigate", tab.Navigate(ctx, "http://shop.test/clicks"))
	eval(t, tab, "() => {"+caretField+"\n"+caretCases[0].build+"\nreturn 1; }")
	ours, err := tab.Screenshot(ctx)
	mustDo(t, "screenshot", err)
	theirs, err := tab.page.Screenshot(playwright.PageScreenshotOptions{Type: playwright.ScreenshotTypePng, Scale: playwright.ScreenshotScaleCss})
	mustDo(t, "Playwright's screenshot", err)
	a, b := decodePNG(t, ours), decodePNG(t, theirs)
	if a.Bounds() != b.Bounds() || a.Bounds().Dx() != 1440 || a.Bounds().Dy() != 900 {
		t.Fatalf("ours is %v, Playwright's %v; want both 1440x900", a.Bounds(), b.Bounds())
	}
	for y := range a.Bounds().Dy() {
		for x := range a.Bounds().Dx() {
			if rgb(a.At(x, y)) != rgb(b.At(x, y)) {
				t.Fatalf("pixel %d,%d: ours %v, Playwright's %v", x, y, rgb(a.At(x, y)), rgb(b.At(x, y)))
			}
		}
	}
}

// rawCapture is the tab's viewport as Chromium paints it, nothing hidden.
func rawCapture(t *testing.T, tab *Tab) []byte {
	t.Helper()
	res, err := tab.st.guardSess.Send("Page.captureScreenshot", map[string]any{"format": "png"})
	mustDo(t, "raw capture", err)
	b, err := base64.StdEncoding.DecodeString(field(res, "data").(string))
	mustDo(t, "decode raw capture", err)
	return b
}

// magenta says whether the field's box (caretField) holds a magenta pixel:
// the caret.
func magenta(t *testing.T, b []byte) bool {
	t.Helper()
	img := decodePNG(t, b)
	for y := 300; y < 420; y++ {
		for x := 100; x < 600; x++ {
			if rgb(img.At(x, y)) == [3]uint8{255, 0, 255} {
				return true
			}
		}
	}
	return false
}

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	mustDo(t, "decode PNG", err)
	return img
}
