package panel

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFrame measures the conversion of one screenshot for the live
// view (PNG → scaled JPEG), done once per screen while a page is open;
// bytes/frame is what every open page receives per screen.
func BenchmarkFrame(b *testing.B) {
	// A demo store page as an agent's tab takes it (1440×900 PNG).
	shot, err := os.ReadFile(filepath.Join("testdata", "store-page.png"))
	if err != nil {
		b.Fatal(err)
	}
	var n int
	for b.Loop() {
		out, err := toJPEG(shot)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.ReportMetric(float64(len(shot)), "png-bytes")
	b.ReportMetric(float64(n), "bytes/frame")
}
