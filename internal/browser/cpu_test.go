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

// browserCPU sums the CPU time (user + system) of every Chromium process
// this test process started (its descendants whose command name starts
// with "chrom"), so that other programs' browsers on a shared machine are
// not counted. Processes that ended are not counted: compare it around
// work done by processes that live on (the browser and its renderers).
func browserCPU(tb testing.TB) time.Duration {
	tb.Helper()
	parent := map[int]int{}
	cpu := map[int]time.Duration{}
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
			cpu[pid] = time.Duration(ut+st) * clockTick
		}
	}
	self := os.Getpid()
	var sum time.Duration
	for pid, d := range cpu {
		for p := pid; p > 1; p = parent[p] {
			if p == self {
				sum += d
				break
			}
		}
	}
	return sum
}
