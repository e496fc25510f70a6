// Command testsummary reads `go test -json` on its standard input and prints
// what plain `go test` prints — each package's ok/FAIL line, the full output
// of every failing test, build errors — followed by one summary line and the
// slowest tests:
//
//	make test: 37 packages ok in 412 s
//	cpu: 780 CPU-s, 95 % of 2 cores for 412 s; by package: internal/app 410, …
//	slowest tests:
//	   48.1 s  internal/app  TestShopEndToEnd
//	   …
//	tests: 612 passed, 0 failed, 0 skipped
//
// The cpu line is printed with -cpu FILE: the lines scripts/reap appended
// there (REAP_LOG) for each test binary, its directory and the user+sys CPU
// of the binary and every process it started (Chromium, the driver).
//
// It exits 1 when a package failed or did not build, so `go test -json … |
// testsummary` in a pipefail shell keeps the suite's exit code. make test
// runs it (Makefile); docs/testing.md describes it.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	slowest := flag.Int("slowest", 10, "how many of the slowest tests to list")
	prefix := flag.String("trim", "github.com/gemini-supply/gemini-supply/", "module path trimmed from package names in the summary")
	cpuLog := flag.String("cpu", "", "file where scripts/reap logged each test binary's CPU (REAP_LOG)")
	flag.Parse()
	start := time.Now()
	s := newSummary(os.Stdout, *prefix)
	if *cpuLog != "" {
		root, err := os.Getwd()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
			os.Exit(2)
		}
		s.cpuLog, s.root, s.cores = *cpuLog, root, runtime.NumCPU()
	}
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: reading go test -json: %v\n", err)
		os.Exit(2)
	}
	// Read live, the run took as long as the pipe was open; a saved
	// stream (bin/test-events.json) read again took as long as its events
	// span.
	if !s.finish(max(time.Since(start), s.last.Sub(s.first)), *slowest) {
		os.Exit(1)
	}
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output and build-fail events
	FailedBuild string
}

// testTime is one top-level test's duration.
type testTime struct {
	pkg, test string
	elapsed   float64
}

// summary holds the output of the tests still running: a test's lines are
// printed only if it fails, as plain go test does.
type summary struct {
	out    io.Writer
	prefix string
	// held output of running top-level tests (and their subtests), by
	// package then top-level test name
	held   map[string]map[string][]string
	ok     int
	failed []string
	// top-level tests that passed, failed and were skipped
	passedTests, failedTests, skippedTests int
	times                                  []testTime
	// nonJSON counts lines that were not test2json events (printed as is)
	nonJSON int
	// cpuLog, when set, is reap's log of each test binary's CPU (-cpu);
	// root is the module's directory, cores what the machine has.
	cpuLog, root string
	cores        int
	// first and last are the times of the first and last events that
	// carry one.
	first, last time.Time
}

func newSummary(out io.Writer, prefix string) *summary {
	return &summary{out: out, prefix: prefix, held: map[string]map[string][]string{}}
}

func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			s.nonJSON++
			fmt.Fprintln(s.out, string(line))
			continue
		}
		if !e.Time.IsZero() {
			if s.first.IsZero() {
				s.first = e.Time
			}
			s.last = e.Time
		}
		s.handle(e)
	}
	return sc.Err()
}

// top is a test's top-level name ("TestA/sub" → "TestA").
func top(test string) string {
	name, _, _ := strings.Cut(test, "/")
	return name
}

// progress lines of -test.v that plain go test does not print.
func progress(out string) bool {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if strings.HasPrefix(out, p) {
			return true
		}
	}
	return false
}

func (s *summary) handle(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
		return
	case "build-fail":
		return
	}
	if e.Test == "" {
		switch e.Action {
		case "output":
			if e.Output == "PASS\n" {
				return
			}
			fmt.Fprint(s.out, e.Output)
		case "pass":
			s.ok++
			delete(s.held, e.Package)
		case "fail":
			// Output of tests that never ended (a panic, a timeout): they
			// count as failed.
			for _, lines := range s.held[e.Package] {
				s.failedTests++
				for _, l := range lines {
					fmt.Fprint(s.out, l)
				}
			}
			delete(s.held, e.Package)
			s.failed = append(s.failed, e.Package)
		case "skip":
			delete(s.held, e.Package)
		}
		return
	}
	name := top(e.Test)
	pkg := s.held[e.Package]
	if pkg == nil {
		pkg = map[string][]string{}
		s.held[e.Package] = pkg
	}
	switch e.Action {
	case "output":
		if !progress(e.Output) {
			pkg[name] = append(pkg[name], e.Output)
		}
	case "pass", "skip":
		if e.Test == name {
			if e.Action == "skip" {
				s.skippedTests++
			}
			if e.Action == "pass" {
				s.passedTests++
				s.times = append(s.times, testTime{pkg: e.Package, test: name, elapsed: e.Elapsed})
			}
			delete(pkg, name)
		}
	case "fail":
		if e.Test == name {
			s.failedTests++
			s.times = append(s.times, testTime{pkg: e.Package, test: name, elapsed: e.Elapsed})
			for _, l := range pkg[name] {
				fmt.Fprint(s.out, l)
			}
			delete(pkg, name)
		}
	}
}

// finish prints the summary; it reports whether every package passed.
func (s *summary) finish(took time.Duration, slowest int) bool {
	trim := func(p string) string { return strings.TrimPrefix(p, s.prefix) }
	fmt.Fprintln(s.out)
	if len(s.failed) == 0 {
		fmt.Fprintf(s.out, "make test: %d packages ok in %.0f s\n", s.ok, took.Seconds())
	} else {
		fmt.Fprintf(s.out, "make test: %d packages ok, %d FAILED in %.0f s:", s.ok, len(s.failed), took.Seconds())
		for _, p := range s.failed {
			fmt.Fprintf(s.out, " %s", trim(p))
		}
		fmt.Fprintln(s.out)
	}
	if s.cpuLog != "" {
		s.printCPU(took)
	}
	ts := slowestTests(s.times, slowest)
	if len(ts) > 0 {
		fmt.Fprintf(s.out, "slowest tests:\n")
		for _, t := range ts {
			fmt.Fprintf(s.out, "  %6.1f s  %s  %s\n", t.elapsed, trim(t.pkg), t.test)
		}
	}
	// The plain count of tests last, alone on its line.
	fmt.Fprintf(s.out, "tests: %d passed, %d failed, %d skipped\n", s.passedTests, s.failedTests, s.skippedTests)
	return len(s.failed) == 0
}

// slowestTests returns the n longest top-level tests, longest first.
func slowestTests(ts []testTime, n int) []testTime {
	c := slices.Clone(ts)
	slices.SortStableFunc(c, func(a, b testTime) int {
		return cmp.Or(cmp.Compare(b.elapsed, a.elapsed), strings.Compare(a.pkg+" "+a.test, b.pkg+" "+b.test))
	})
	return c[:min(n, len(c))]
}

// pkgCPU is one test binary's run as scripts/reap logged it.
type pkgCPU struct {
	pkg string  // the package's directory, relative to the module root
	cpu float64 // user+sys seconds of the binary and what it started
}

// readCPULog reads the lines scripts/reap appends to REAP_LOG:
// "<quoted dir> wall user sys". A line it cannot read is skipped (a line
// cut short by a killed reap says nothing true).
func readCPULog(path, root string) ([]pkgCPU, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []pkgCPU
	for _, line := range strings.Split(string(b), "\n") {
		q, err := strconv.QuotedPrefix(line)
		if err != nil {
			continue
		}
		dir, _ := strconv.Unquote(q)
		f := strings.Fields(line[len(q):])
		if len(f) != 3 {
			continue
		}
		user, err1 := strconv.ParseFloat(f[1], 64)
		sys, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if rel, err := filepath.Rel(root, dir); err == nil && !strings.HasPrefix(rel, "..") {
			dir = filepath.ToSlash(rel)
		}
		out = append(out, pkgCPU{pkg: dir, cpu: user + sys})
	}
	return out, nil
}

// printCPU prints the suite's CPU, what share of the machine's cores it
// kept busy over the run, and the packages that used the most.
func (s *summary) printCPU(took time.Duration) {
	pkgs, err := readCPULog(s.cpuLog, s.root)
	if err == nil && len(pkgs) == 0 {
		err = errors.New("no test binary was logged")
	}
	if err != nil {
		fmt.Fprintf(s.out, "cpu: not measured (%v)\n", err)
		return
	}
	var total float64
	for _, p := range pkgs {
		total += p.cpu
	}
	slices.SortStableFunc(pkgs, func(a, b pkgCPU) int {
		return cmp.Or(cmp.Compare(b.cpu, a.cpu), strings.Compare(a.pkg, b.pkg))
	})
	fmt.Fprintf(s.out, "cpu: %.0f CPU-s, %.0f %% of %d cores for %.0f s; by package:", total, 100*total/(float64(max(s.cores, 1))*max(took.Seconds(), 1)), s.cores, took.Seconds())
	for i, p := range pkgs[:min(len(pkgs), 6)] {
		if i > 0 {
			fmt.Fprint(s.out, ",")
		}
		fmt.Fprintf(s.out, " %s %.0f", p.pkg, p.cpu)
	}
	fmt.Fprintln(s.out)
}
