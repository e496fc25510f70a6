package testwait

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatalf instead of stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	Until(t, "three increments", 10*time.Second, func() bool { return n.Load() == 3 })
}

func TestUntilFailsAfterTheLimit(t *testing.T) {
	// A condition that never holds: Until must call Fatalf (here recorded,
	// and the loop ends because the recorder's Fatalf returns and the
	// condition below turns true once failed is set).
	r := &recorder{TB: t}
	Until(r, "never", 20*time.Millisecond, func() bool { return r.failed != "" }, func() string { return "the log" })
	if !strings.Contains(r.failed, "timed out after") || !strings.Contains(r.failed, "never") || !strings.Contains(r.failed, "the log") {
		t.Fatalf("Until did not fail: %q", r.failed)
	}
}
