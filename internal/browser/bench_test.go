package browser

import (
	"context"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
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
	// The product page carries the demo store's hostile express-checkout
	// widget (frames, workers, sockets, redirects): what an agent tab pays
	// for it is the browser's CPU per page: navigate (settled, as the
	// agent's action), a screenshot, and the widget's whole attack (until
	// it reports done), which an agent's page goes through while the model
	// thinks. ms/page is navigate and screenshot only; nav-cpu-ms/page the
	// browser's CPU in that part.
	//
	// product_page_with_widget is the page awake while the model thinks
	// (as before issue 39); product_page_with_widget_asleep is what an
	// agent tab does now: it sleeps (Tab.Sleep, frozen) after the
	// screenshot for the same think time — the widget's bound, as the
	// frozen widget never reports — and wakes before the next navigation.
	product := demostore.ProductURL("milk-2pct-2l")
	done := func() int { return f.store.Requests()["GET "+demostore.HostStore+" /en/promo/express-done"] }
	for _, asleep := range []bool{false, true} {
		name := "product_page_with_widget"
		if asleep {
			name += "_asleep"
		}
		b.Run(name, func(b *testing.B) {
			var took, navCPU time.Duration
			cpu := browserCPU(b)
			for b.Loop() {
				n, start, cpu0 := done(), time.Now(), browserCPU(b)
				if err := tab.Navigate(ctx, product); err != nil {
					b.Fatal(err)
				}
				if _, err := tab.Screenshot(ctx); err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
				navCPU += browserCPU(b) - cpu0
				if asleep {
					mustDo(b, "sleep", tab.Sleep(ctx))
				}
				// A widget refused before it runs never reports; its page then
				// gets the widget's own bound (10 s) to cost what it costs.
				for end := time.Now().Add(widgetBound); done() == n && time.Now().Before(end); {
					time.Sleep(50 * time.Millisecond)
				}
				if asleep {
					mustDo(b, "wake", tab.Wake(ctx))
				}
			}
			b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N), "ms/page")
			b.ReportMetric(float64((browserCPU(b)-cpu).Milliseconds())/float64(b.N), "chromium-cpu-ms/page")
			b.ReportMetric(float64(navCPU.Milliseconds())/float64(b.N), "nav-cpu-ms/page")
		})
	}
	// agent_item_on_widget_page is what one agent item costs the browser
	// on the demo store, as the agent shops it (issue 39): a tab of its
	// own, opened on the item's search results by code, a screenshot, the
	// model's think time (the tab asleep), the product page with the
	// widget (the model's click), a screenshot, a think, a last screenshot,
	// and the tab closed. chromium-cpu-ms/item is every Chromium process's
	// CPU over the item (a renderer that ends with its tab counted up to
	// the close), split into the browser process, the renderers and the
	// rest (GPU process, network service): where it goes.
	b.Run("agent_item_on_widget_page", func(b *testing.B) {
		kinds := map[string]time.Duration{}
		var took time.Duration
		for b.Loop() {
			before, start := chromiumProcs(b), time.Now()
			tab, err := f.host.NewTab(ctx)
			if err != nil {
				b.Fatal(err)
			}
			think := func() {
				mustDo(b, "sleep", tab.Sleep(ctx))
				time.Sleep(benchThink)
				mustDo(b, "wake", tab.Wake(ctx))
			}
			mustDo(b, "open the search results", tab.Navigate(ctx, search))
			if _, err := tab.Screenshot(ctx); err != nil {
				b.Fatal(err)
			}
			think()
			mustDo(b, "open the product page", tab.Navigate(ctx, product))
			for range 2 {
				if _, err := tab.Screenshot(ctx); err != nil {
					b.Fatal(err)
				}
				think()
			}
			if _, err := tab.Screenshot(ctx); err != nil {
				b.Fatal(err)
			}
			for k, d := range cpuSince(b, before) {
				kinds[k] += d
			}
			took += time.Since(start)
			_ = tab.Close()
		}
		var sum time.Duration
		for _, d := range kinds {
			sum += d
		}
		per := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
		b.ReportMetric(per(sum), "chromium-cpu-ms/item")
		b.ReportMetric(per(kinds["browser"]), "browser-cpu-ms/item")
		b.ReportMetric(per(kinds["renderer"]), "renderer-cpu-ms/item")
		b.ReportMetric(per(sum-kinds["browser"]-kinds["renderer"]), "gpu+network-cpu-ms/item")
		b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N), "ms/item")
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
	// What the offline planner's page text adds to each turn: the search
	// page's accessibility tree (two CDP calls) and its size.
	b.Run("describe_search_page", func(b *testing.B) {
		if err := tab.Navigate(ctx, search); err != nil {
			b.Fatal(err)
		}
		var size int
		start := time.Now()
		for b.Loop() {
			tree, err := tab.DescribePage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			size = len(tree)
		}
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/describe")
		b.ReportMetric(float64(size)/1024, "KiB/describe")
	})
}

const patienceBench = time.Minute

// benchThink is the model's think time in agent_item_on_widget_page (the
// shopping bench's fake model answers in 1 s).
const benchThink = time.Second

// widgetBound is how long the express-checkout widget lets each trick take
// before it reports done.
const widgetBound = 10 * time.Second
