package app

import (
	"bufio"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/procstat"
)

// chromiumCPU adds to last the CPU time (user + system, /proc/<pid>/stat)
// of each Chromium process this process started, by pid: sampled during a
// run, the last sample of a process that ended still counts.
func chromiumCPU(last map[int]time.Duration) {
	walkTree(func(pid int, p procstat.Proc) {
		if strings.HasPrefix(p.Comm, "chrom") {
			last[pid] = p.CPU
		}
	})
}

// walkTree calls f for every process this process started (and itself).
func walkTree(f func(pid int, p procstat.Proc)) {
	procs, err := procstat.All()
	if err != nil {
		return
	}
	self := os.Getpid()
	for pid, p := range procs {
		if procstat.Descends(procs, pid, self) {
			f(pid, p)
		}
	}
}

// treePSS is the summed proportional set size (PSS, /proc/<pid>/smaps_rollup)
// of this process and every process it started, in bytes: gemini-supply
// (the test binary runs it in-process), its Chromium and the Playwright
// driver. PSS shares each shared page among the processes that map it, so
// the sum is what the tree costs the machine (RSS would count Chromium's
// shared pages once per process).
func treePSS() int64 {
	var sum int64
	walkTree(func(pid int, _ procstat.Proc) { sum += pss(pid) })
	return sum
}

// pss is one process's PSS in bytes (0 when it is gone).
func pss(pid int) int64 {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// sampleRun samples the Chromium processes' CPU every cpuEvery and
// treePSS every pssEvery (a multiple of cpuEvery) until stop is called,
// which returns the peak PSS (bytes) and the CPU the run's Chromium
// processes used.
//
// Reading smaps_rollup makes the kernel walk every mapping of the process:
// for the ~25 processes of a 4-tab run that cost about 0.8 ms each, 3.4
// CPU-s of a 45 s run at a 250 ms interval, taken from the cores the run
// is measured on (docs/browser.md, "Memory"). A tab's pages live for
// seconds, so a PSS sample a second is enough for the peak; the CPU
// counters (/proc/<pid>/stat) are cheap and sampled more often so that a
// renderer that ends with its tab loses little.
func sampleRun(cpuEvery, pssEvery time.Duration) (stop func() (peak int64, cpu time.Duration)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var peak int64
	last := map[int]time.Duration{}
	chromiumCPU(last)
	before := maps.Clone(last) // processes from before the run (none, usually)
	every := max(1, int(pssEvery/cpuEvery))
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(cpuEvery)
		defer t.Stop()
		for tick := 0; ; tick++ {
			if tick%every == 0 {
				peak = max(peak, treePSS())
			}
			chromiumCPU(last)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() (int64, time.Duration) {
		cancel()
		wg.Wait()
		peak = max(peak, treePSS())
		chromiumCPU(last)
		var cpu time.Duration
		for pid, d := range last {
			cpu += d - before[pid]
		}
		return peak, cpu
	}
}
