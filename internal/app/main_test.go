package app

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs one end-to-end test more at a time than there are cores,
// unless -parallel says otherwise: each of them waits part of its time (on
// the fake model, a page settling, the session check), and this package is
// the longest of make test, so a core left idle here is time the whole
// suite waits (docs/testing.md, "Round four"). The run the six-item tests
// share (sixAtOne) is closed and removed after every test.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(runtime.GOMAXPROCS(0)+1)); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	sixAtOne.close()
	os.Exit(code)
}
