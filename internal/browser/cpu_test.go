package browser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/procstat"
)

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
	all, err := procstat.All()
	if err != nil {
		tb.Skipf("no /proc to read CPU times from: %v", err)
	}
	procs := map[int]chromiumProc{}
	self := os.Getpid()
	for pid, p := range all {
		if strings.HasPrefix(p.Comm, "chrom") && procstat.Descends(all, pid, self) {
			procs[pid] = chromiumProc{kind: processKind(pid), cpu: p.CPU}
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
