package browser

import (
	"context"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/screen"
)

// BenchmarkTabActions measures what one agent turn costs in the browser:
// each action including its settle step, and a viewport screenshot.
func BenchmarkTabActions(b *testing.B) {
	f := sharedSite(b)
	tab := newTab(b, f.host)
	ctx := context.Background()
	mustDo(b, "navigate", tab.Navigate(ctx, "http://shop.test/keys"))
	actions := []struct {
		name string
		do   func() error
	}{
		{"click", func() error { return tab.Click(ctx, norm(500, 220), screen.ButtonLeft, 1) }},
		{"type_at_10_chars", func() error { return tab.TypeAt(ctx, norm(500, 120), "semi-skim!", false, true) }},
		{"press_keys", func() error { return tab.PressKeys(ctx, "Control+a") }},
		{"scroll_at", func() error { return tab.ScrollAt(ctx, norm(700, 700), screen.DirectionDown, 100) }},
		{"navigate", func() error { return tab.Navigate(ctx, "http://shop.test/keys") }},
	}
	for _, a := range actions {
		b.Run(a.name, func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				if err := a.do(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/action")
		})
	}
	b.Run("screenshot_png", func(b *testing.B) {
		var size int
		start := time.Now()
		for b.Loop() {
			png, err := tab.Screenshot(ctx)
			if err != nil {
				b.Fatal(err)
			}
			size = len(png)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/screenshot")
		b.ReportMetric(float64(size)/1024, "KiB/screenshot")
	})
}

// BenchmarkStorePage measures a store page the way the agent meets it:
// navigate to the demo store's search results over HTTPS (every request
// through the policy proxy, which terminates TLS and checks each one)
// until every product image has loaded, then a screenshot.
func BenchmarkStorePage(b *testing.B) {
	f := sharedDemo(b)
	tab := newTab(b, f.host)
	ctx := context.Background()
	search := f.host.Profile().SearchURL("milk")
	imagesLoaded := `() => { const imgs = [...document.images].filter(i => i.src.includes('product-images.metro.ca'));
  return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0); }`
	b.Run("navigate_search_with_images", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			if err := tab.Navigate(ctx, search); err != nil {
				b.Fatal(err)
			}
			waitFor(b, "the product images", patienceBench, func() bool { return eval(b, tab, imagesLoaded).(bool) })
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/page")
	})
	b.Run("screenshot", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			if _, err := tab.Screenshot(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/screenshot")
	})
}

const patienceBench = time.Minute
