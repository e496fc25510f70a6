// Package procstat reads Linux's process table (/proc/<pid>/stat): each
// process's parent, command name and CPU time. The benchmarks and
// scripts/cpuclass use it to count what a run and its Chromium cost.
package procstat

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the kernel's USER_HZ: /proc/<pid>/stat counts CPU time in it.
const clockTick = 10 * time.Millisecond

// Proc is one process as /proc/<pid>/stat describes it.
type Proc struct {
	PPID int
	Comm string        // the command name (may hold spaces)
	CPU  time.Duration // user + system time so far
}

// All reads every process's stat, by pid; a process that ends while it
// reads is left out.
func All() (map[int]Proc, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	procs := make(map[int]Proc, len(entries))
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
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		procs[pid] = Proc{PPID: ppid, Comm: s[open+1 : end], CPU: time.Duration(ut+st) * clockTick}
	}
	return procs, nil
}

// Descends reports whether pid is root or one of its descendants in procs.
func Descends(procs map[int]Proc, pid, root int) bool {
	for p := pid; p > 1; p = procs[p].PPID {
		if p == root {
			return true
		}
	}
	return false
}
