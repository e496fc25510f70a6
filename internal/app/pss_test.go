package app

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// treePSS is the summed proportional set size (PSS, /proc/<pid>/smaps_rollup)
// of this process and every process it started, in bytes: gemini-supply
// (the test binary runs it in-process), its Chromium and the Playwright
// driver. PSS shares each shared page among the processes that map it, so
// the sum is what the tree costs the machine (RSS would count Chromium's
// shared pages once per process).
func treePSS() int64 {
	parent := map[int]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
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
		s := string(b)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		parent[pid] = ppid
	}
	self := os.Getpid()
	var sum int64
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if p == self {
				sum += pss(pid)
				break
			}
		}
	}
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

// pssPeak samples treePSS every interval until stop is called, which
// returns the peak seen.
func pssPeak(interval time.Duration) (stop func() int64) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var peak int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			peak = max(peak, treePSS())
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		cancel()
		wg.Wait()
		return max(peak, treePSS())
	}
}
