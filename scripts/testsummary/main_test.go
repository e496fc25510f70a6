package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A stream as go test -json writes it: one package passes, one fails a
// subtest (with parallel output of a passing test interleaved), one does not
// build, one panics in a test that never reports its end.
const stream = `{"Action":"start","Package":"m/ok"}
{"Action":"run","Package":"m/ok","Test":"TestSlow"}
{"Action":"output","Package":"m/ok","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"m/ok","Test":"TestSlow","Output":"    slow_test.go:9: chatter of a passing test\n"}
{"Action":"output","Package":"m/ok","Test":"TestSlow","Output":"--- PASS: TestSlow (12.50s)\n"}
{"Action":"pass","Package":"m/ok","Test":"TestSlow","Elapsed":12.5}
{"Action":"run","Package":"m/ok","Test":"TestQuick"}
{"Action":"pass","Package":"m/ok","Test":"TestQuick","Elapsed":0.1}
{"Action":"output","Package":"m/ok","Output":"PASS\n"}
{"Action":"output","Package":"m/ok","Output":"ok  \tm/ok\t12.7s\n"}
{"Action":"pass","Package":"m/ok","Elapsed":12.7}
{"Action":"run","Package":"m/bad","Test":"TestTable"}
{"Action":"output","Package":"m/bad","Test":"TestTable","Output":"=== RUN   TestTable\n"}
{"Action":"run","Package":"m/bad","Test":"TestTable/b"}
{"Action":"output","Package":"m/bad","Test":"TestTable/b","Output":"    t_test.go:20: got 1, want 2\n"}
{"Action":"output","Package":"m/bad","Test":"TestOther","Output":"    o_test.go:5: other chatter\n"}
{"Action":"pass","Package":"m/bad","Test":"TestOther","Elapsed":0.2}
{"Action":"output","Package":"m/bad","Test":"TestTable/b","Output":"    --- FAIL: TestTable/b (0.00s)\n"}
{"Action":"fail","Package":"m/bad","Test":"TestTable/b","Elapsed":0}
{"Action":"output","Package":"m/bad","Test":"TestTable","Output":"--- FAIL: TestTable (3.00s)\n"}
{"Action":"fail","Package":"m/bad","Test":"TestTable","Elapsed":3}
{"Action":"output","Package":"m/bad","Output":"FAIL\n"}
{"Action":"output","Package":"m/bad","Output":"FAIL\tm/bad\t3.1s\n"}
{"Action":"fail","Package":"m/bad","Elapsed":3.1}
{"ImportPath":"m/nobuild [m/nobuild.test]","Action":"build-output","Output":"nobuild/x.go:3:1: syntax error\n"}
{"ImportPath":"m/nobuild [m/nobuild.test]","Action":"build-fail"}
{"Action":"output","Package":"m/nobuild","Output":"FAIL\tm/nobuild [build failed]\n"}
{"Action":"fail","Package":"m/nobuild","Elapsed":0,"FailedBuild":"m/nobuild [m/nobuild.test]"}
{"Action":"run","Package":"m/panics","Test":"TestBoom"}
{"Action":"output","Package":"m/panics","Test":"TestBoom","Output":"panic: boom\n"}
{"Action":"output","Package":"m/panics","Output":"FAIL\tm/panics\t0.3s\n"}
{"Action":"fail","Package":"m/panics","Elapsed":0.3}
`

func TestSummaryPrintsFailuresAndSlowest(t *testing.T) {
	var out bytes.Buffer
	s := newSummary(&out, "m/")
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	if s.finish(95*time.Second, 2) {
		t.Error("finish reported success with failed packages")
	}
	got := out.String()
	for _, want := range []string{
		"ok  \tm/ok\t12.7s\n",
		"    t_test.go:20: got 1, want 2\n    --- FAIL: TestTable/b (0.00s)\n--- FAIL: TestTable (3.00s)\nFAIL\nFAIL\tm/bad\t3.1s\n",
		"nobuild/x.go:3:1: syntax error\nFAIL\tm/nobuild [build failed]\n",
		"panic: boom\n",
		"make test: 1 packages ok, 3 FAILED in 95 s: bad nobuild panics\n",
		"slowest tests:\n    12.5 s  ok  TestSlow\n     3.0 s  bad  TestTable\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "\ntests: 3 passed, 2 failed, 0 skipped\n") {
		t.Errorf("the last line is not the plain count (a failed test and one that panicked):\n%s", got)
	}
	for _, not := range []string{"=== RUN", "chatter", "TestQuick"} {
		if strings.Contains(got, not) {
			t.Errorf("output has %q (plain go test does not print it):\n%s", not, got)
		}
	}
}

func TestSummaryAllPassing(t *testing.T) {
	var out bytes.Buffer
	s := newSummary(&out, "m/")
	if err := s.read(strings.NewReader(stream[:strings.Index(stream, `{"Action":"run","Package":"m/bad"`)])); err != nil {
		t.Fatal(err)
	}
	if !s.finish(61*time.Second, 10) {
		t.Error("finish reported a failure with every package passing")
	}
	if got := out.String(); !strings.Contains(got, "\nmake test: 1 packages ok in 61 s\nslowest tests:\n") {
		t.Errorf("summary line missing:\n%s", got)
	}
}

// TestSummaryCPUPerPackage: with -cpu, the line after the summary gives the
// suite's CPU from reap's log, its share of the cores over the run, and the
// packages that used the most; a line reap could not finish is skipped.
func TestSummaryCPUPerPackage(t *testing.T) {
	root := t.TempDir()
	log := filepath.Join(root, "cpu.log")
	lines := fmt.Sprintf("%q 300.10 250.00 50.00\n%q 2.00 1.50 0.50\n%q 80.00 90.00 10.00\n%q 1.0",
		filepath.Join(root, "internal", "app"), filepath.Join(root, "internal", "money"), filepath.Join(root, "cmd", "x"), filepath.Join(root, "internal", "cut"))
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := newSummary(&out, "m/")
	s.cpuLog, s.root, s.cores = log, root, 2
	if err := s.read(strings.NewReader(stream[:strings.Index(stream, `{"Action":"run","Package":"m/bad"`)])); err != nil {
		t.Fatal(err)
	}
	s.finish(250*time.Second, 10)
	want := "\nmake test: 1 packages ok in 250 s\ncpu: 402 CPU-s, 80 % of 2 cores for 250 s; by package: internal/app 300, cmd/x 100, internal/money 2\nslowest tests:\n"
	if got := out.String(); !strings.Contains(got, want) {
		t.Errorf("output lacks %q:\n%s", want, got)
	}

	out.Reset()
	s = newSummary(&out, "m/")
	s.cpuLog, s.root = filepath.Join(root, "missing"), root
	s.finish(time.Second, 1)
	if got := out.String(); !strings.Contains(got, "cpu: not measured (") {
		t.Errorf("a missing log is not said:\n%s", got)
	}
}

// TestSummaryOfASavedStream: a stream read again from its file
// (bin/test-events.json) is timed by its events, not by how fast the file
// was read: "make test: … in 0 s" and a CPU share over 100 % were printed.
func TestSummaryOfASavedStream(t *testing.T) {
	saved := `{"Time":"2026-11-28T21:00:00Z","Action":"start","Package":"m/ok"}
{"Time":"2026-11-28T21:00:01Z","Action":"run","Package":"m/ok","Test":"TestA"}
{"Time":"2026-11-28T21:10:20Z","Action":"pass","Package":"m/ok","Test":"TestA","Elapsed":619}
{"Time":"2026-11-28T21:10:20.4Z","Action":"pass","Package":"m/ok","Elapsed":620.4}
`
	s := newSummary(&bytes.Buffer{}, "m/")
	if err := s.read(strings.NewReader(saved)); err != nil {
		t.Fatal(err)
	}
	if got := s.last.Sub(s.first); got != 620400*time.Millisecond {
		t.Fatalf("the stream spans %v, want 10m20.4s", got)
	}
	s = newSummary(&bytes.Buffer{}, "m/")
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	if !s.first.IsZero() || !s.last.IsZero() {
		t.Errorf("a stream without times spans %v to %v, want nothing", s.first, s.last)
	}
}
