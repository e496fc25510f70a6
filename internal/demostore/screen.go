package demostore

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // ReadScreen reads JPEG screenshots too
	"image/png"
)

// Overlays says which of the store's page-level overlays a screenshot shows:
// what a person (or the model) looking at the tab would see. Both overlays
// belong to one tab's page, unlike the store's State, which all tabs of a
// browser share.
type Overlays struct {
	// CookieBanner: the consent banner and its dark filter are up.
	CookieBanner bool
	// PostalCodeDialog: the "Delivery or Pickup?" dialog is open and not
	// itself covered by the cookie banner's filter.
	PostalCodeDialog bool
}

// Probe points, in CSS pixels of the viewport, derived from the layout and
// the page CSS (banner: white with a 4px #d5102a top border; header #d5102a;
// dialog: a white panel over a 45% black backdrop).
var (
	probeBannerBorder = [][2]int{{20, layConsent.y + 1}, {ViewportWidth - 20, layConsent.y + 1}}
	probeBannerInside = [][2]int{{20, layConsent.y + 40}, {ViewportWidth - 20, layConsent.y + 40}}
	probeHeader       = [2]int{1000, layHeader.y + layHeader.h/2}
	probePanelInside  = [][2]int{{layPostal.x + 8, layPostalInput.y + 20}, {layPostal.x + layPostal.w - 8, layPostalInput.y + 20}, {layPostal.x + layPostal.w/2, layPostal.y + 10}}
	probePanelOutside = [][2]int{{layPostal.x - 8, layPostalInput.y + 20}, {layPostal.x + layPostal.w + 8, layPostalInput.y + 20}}
)

// ReadScreen tells from a screenshot of a store page (PNG or JPEG of the
// ViewportWidth x ViewportHeight viewport, at any scale, scrolled to the
// top) which overlays it shows, by looking at fixed points of the layout.
func ReadScreen(shot []byte) (Overlays, error) {
	img, _, err := image.Decode(bytes.NewReader(shot))
	if err != nil {
		return Overlays{}, fmt.Errorf("demostore: decode the screenshot: %w", err)
	}
	b := img.Bounds()
	if b.Dx() < 100 || b.Dy() < 100 {
		return Overlays{}, fmt.Errorf("demostore: the screenshot is %dx%d, too small to be a store page", b.Dx(), b.Dy())
	}
	at := func(p [2]int) (r, g, bl int) {
		c := img.At(b.Min.X+p[0]*b.Dx()/ViewportWidth, b.Min.Y+p[1]*b.Dy()/ViewportHeight)
		r32, g32, b32, _ := c.RGBA()
		return int(r32 >> 8), int(g32 >> 8), int(b32 >> 8)
	}
	all := func(ps [][2]int, f func(r, g, b int) bool) bool {
		for _, p := range ps {
			if !f(at(p)) {
				return false
			}
		}
		return true
	}
	var o Overlays
	o.CookieBanner = all(probeBannerBorder, isRed) && all(probeBannerInside, isWhite)
	dimmed := isDimRed(at(probeHeader))
	o.PostalCodeDialog = !o.CookieBanner && dimmed &&
		all(probePanelInside, isWhite) && all(probePanelOutside, func(r, g, b int) bool { return !isWhite(r, g, b) })
	return o, nil
}

// Colour tests, tolerant of JPEG noise. The store red is #d5102a; under a
// 45% black backdrop it is about (117, 9, 23).
func isWhite(r, g, b int) bool  { return r >= 225 && g >= 225 && b >= 225 }
func isRed(r, g, b int) bool    { return r >= 170 && g <= 90 && b <= 110 }
func isDimRed(r, g, b int) bool { return r >= 60 && r <= 160 && g <= 60 && b <= 70 }

// SketchScreen returns a flat PNG sketch of a store page (white content,
// the red header) with the given overlays drawn where the page draws them.
// ReadScreen reads it as it reads the real page; it is meant for tests of
// code that reads screenshots without running a browser.
func SketchScreen(o Overlays) []byte {
	img := image.NewRGBA(image.Rect(0, 0, ViewportWidth, ViewportHeight))
	fill := func(r rect, c color.RGBA) {
		for y := r.y; y < r.y+r.h; y++ {
			for x := r.x; x < r.x+r.w; x++ {
				img.SetRGBA(x, y, c)
			}
		}
	}
	dim := func() {
		for y := range ViewportHeight {
			for x := range ViewportWidth {
				c := img.RGBAAt(x, y)
				img.SetRGBA(x, y, color.RGBA{uint8(int(c.R) * 55 / 100), uint8(int(c.G) * 55 / 100), uint8(int(c.B) * 55 / 100), 255})
			}
		}
	}
	white, red := color.RGBA{255, 255, 255, 255}, color.RGBA{0xd5, 0x10, 0x2a, 255}
	fill(rect{0, 0, ViewportWidth, ViewportHeight}, white)
	fill(layPromo, color.RGBA{0x1b, 0x1b, 0x1b, 255})
	fill(layHeader, red)
	if o.PostalCodeDialog {
		dim()
		fill(layPostal, white)
		fill(layPostalSubmit, red)
	}
	if o.CookieBanner {
		dim()
		fill(layConsent, white)
		fill(rect{layConsent.x, layConsent.y, layConsent.w, 4}, red)
		fill(layConsentAccept, red)
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // encoding to memory cannot fail
	return buf.Bytes()
}

// ProductURL returns the URL of the product page the store serves for a
// product ID ("https://www.metro.ca/en/online-grocery/aisles/<aisle>/<name>/p/<id>"),
// or "" when the catalogue has no such product.
func ProductURL(id string) string {
	p, ok := byID[id]
	if !ok {
		return ""
	}
	return "https://" + HostStore + langEN.productURL(p)
}
