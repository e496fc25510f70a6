package demostore

import (
	"bytes"
	"image"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"
)

func TestReadScreenReadsTheSketches(t *testing.T) {
	for _, o := range []Overlays{{}, {CookieBanner: true}, {PostalCodeDialog: true}} {
		shot := SketchScreen(o)
		got, err := ReadScreen(shot)
		if err != nil || got != o {
			t.Errorf("ReadScreen(SketchScreen(%+v)) = %+v, %v", o, got, err)
		}
		// JPEG screenshots (browser screenshot_format: jpeg) read the same.
		img, _, _ := image.Decode(bytes.NewReader(shot))
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 60}); err != nil {
			t.Fatal(err)
		}
		if got, err := ReadScreen(buf.Bytes()); err != nil || got != o {
			t.Errorf("ReadScreen(JPEG of %+v) = %+v, %v", o, got, err)
		}
	}
	// The banner's filter covers an open dialog: only the banner shows.
	if got, _ := ReadScreen(SketchScreen(Overlays{CookieBanner: true, PostalCodeDialog: true})); got != (Overlays{CookieBanner: true}) {
		t.Errorf("banner over the dialog read as %+v", got)
	}
	if _, err := ReadScreen([]byte("not an image")); err == nil || !strings.Contains(err.Error(), "decode the screenshot") {
		t.Errorf("ReadScreen(garbage) error = %v", err)
	}
}

func TestProductURLIsServed(t *testing.T) {
	s := startStore(t, Options{})
	c := s.Client()
	if got := ProductURL("no-such-product"); got != "" {
		t.Errorf("ProductURL(unknown) = %q, want empty", got)
	}
	for _, p := range Catalogue() {
		u := ProductURL(p.ID)
		if !strings.HasPrefix(u, s.BaseURL()+"/en/online-grocery/aisles/"+p.Aisle+"/") {
			t.Fatalf("ProductURL(%s) = %q", p.ID, u)
		}
		r := get(t, c, u)
		if r.status != http.StatusOK || !strings.Contains(r.body, `data-product-id="`+p.ID+`"`) {
			t.Fatalf("GET %s: status %d, product page of %s not served", u, r.status, p.ID)
		}
	}
}
