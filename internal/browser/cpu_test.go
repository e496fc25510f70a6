package browser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// clockTick is the kernel's USER_HZ: /proc/<pid>/stat counts CPU time in
// these ticks (100 per second on Linux).
const clockTick = 10 * time.Millisecond

// chromiumProc is one Chromium process this test process started: its
// kind ("browser", "renderer", "gpu-process", "utility"…: its --type) and
// the CPU time (user + system) it used so far.
type chromiumProc struct {
	kind string
	cpu  time.Duration
}

// chromiumProcs returns every Chromium process this test process started
// (its descendants whose command name starts with "chrom"), so that other
// programs' browsers on a shared machine are not counted.
func chromiumProcs(tb testing.TB) map[int]chromiumProc {
	tb.Helper()
	parent := map[int]int{}
	procs := map[int]chromiumProc{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		tb.Skipf("no /proc to read CPU times from: %v", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid … utime(14) stime(15): comm may hold spaces.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		parent[pid] = ppid
		if strings.HasPrefix(s[open+1:end], "chrom") {
			ut, _ := strconv.ParseInt(f[11], 10, 64)
			st, _ := strconv.ParseInt(f[12], 10, 64)
			procs[pid] = chromiumProc{kind: processKind(pid), cpu: time.Duration(ut+st) * clockTick}
		}
	}
	self := os.Getpid()
	for pid := range procs {
		mine := false
		for p := pid; p > 1; p = parent[p] {
			if p == self {
				mine = true
				break
			}
		}
		if !mine {
			delete(procs, pid)
		}
	}
	return procs
}

// processKind is a Chromium process's --type ("browser" without one).
// Chromium rewrites its command line into one string, so it is split on
// spaces too.
func processKind(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	for _, a := range strings.Fields(strings.ReplaceAll(string(b), "\x00", " ")) {
		if k, ok := strings.CutPrefix(a, "--type="); ok {
			return k
		}
	}
	return "browser"
}

// browserCPU sums the CPU time of every Chromium process this test
// process started. Processes that ended are not counted: compare it
// around work done by processes that live on (the browser and its
// renderers), or use cpuSince.
func browserCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var sum time.Duration
	for _, p := range chromiumProcs(tb) {
		sum += p.cpu
	}
	return sum
}

// cpuSince is the CPU time the Chromium processes alive now used since
// before (a snapshot of chromiumProcs), by kind: a process started since
// counts whole, one that ended since counts nothing (take the snapshot
// before closing what ends).
func cpuSince(tb testing.TB, before map[int]chromiumProc) map[string]time.Duration {
	tb.Helper()
	out := map[string]time.Duration{}
	for pid, p := range chromiumProcs(tb) {
		out[p.kind] += p.cpu - before[pid].cpu
	}
	return out
}
