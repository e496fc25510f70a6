// Command cpuclass runs a command as a child subreaper and says where its
// CPU went: every 100 ms it reads /proc for the command's descendants
// (Chromium's browser, renderer, GPU and utility processes, the Playwright
// driver, the test binary…) and, when the command has ended, prints the
// user+sys seconds and the number of processes of each kind, with the
// total the kernel counted for all of them (getrusage). A process's last
// 100 ms may be missed, so the sampled sum is a little below the total.
//
//	go build -o bin/cpuclass ./scripts/cpuclass
//	cd internal/app && ../../bin/cpuclass ./app.test -test.run '^TestCheckoutBlocked$'
//
// docs/testing.md ("Where the CPU goes") shows its output.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/procstat"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER (linux/prctl.h)

var (
	subType  = regexp.MustCompile(`--utility-sub-type=(\S+)`)
	procType = regexp.MustCompile(`--type=(\S+)`)
)

type proc struct {
	kind string
	cpu  time.Duration // user + system so far
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cpuclass command [args…]")
		os.Exit(2)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "cpuclass: PR_SET_CHILD_SUBREAPER: %v\n", e)
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "cpuclass: %v\n", err)
		os.Exit(2)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	seen := map[int]*proc{}
	code := 0
	for running := true; running; {
		sample(os.Getpid(), seen)
		select {
		case err := <-done:
			running = false
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
	// Orphans left behind (a driver, its Chromium): sample until none is left.
	for {
		sample(os.Getpid(), seen)
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); err != nil {
			break
		} else if pid == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	report(seen)
	os.Exit(code)
}

// sample records the CPU time of every descendant of root.
func sample(root int, seen map[int]*proc) {
	procs, _ := procstat.All()
	children := map[int][]int{}
	for pid, p := range procs {
		children[p.PPID] = append(children[p.PPID], pid)
	}
	for stack := []int{root}; len(stack) > 0; {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			stack = append(stack, c)
			// A zygote's child keeps the zygote's command line until it
			// becomes a renderer: asked again until then.
			if seen[c] == nil || seen[c].kind == "chromium zygote" || seen[c].kind == "?" {
				seen[c] = &proc{kind: kind(c)}
			}
			seen[c].cpu = procs[c].CPU
		}
	}
}

// kind names a process from its command line (Chromium rewrites its own,
// keeping its switches).
func kind(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return "?"
	}
	cl := strings.ReplaceAll(string(b), "\x00", " ")
	switch {
	case subType.MatchString(cl):
		s := subType.FindStringSubmatch(cl)[1]
		return "chromium " + s[strings.LastIndexByte(s, '.')+1:]
	case procType.MatchString(cl):
		return "chromium " + procType.FindStringSubmatch(cl)[1]
	case strings.Contains(cl, "run-driver"):
		return "playwright driver"
	case strings.Contains(cl, "chrom"):
		return "chromium browser"
	}
	f := strings.Fields(cl)
	if len(f) == 0 {
		return "?"
	}
	return filepath.Base(f[0])
}

func report(seen map[int]*proc) {
	sum, count := map[string]time.Duration{}, map[string]int{}
	var total time.Duration
	for _, p := range seen {
		d := p.cpu
		sum[p.kind] += d
		count[p.kind]++
		total += d
	}
	kinds := make([]string, 0, len(sum))
	for k := range sum {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int { return int(sum[b] - sum[a]) })
	for _, k := range kinds {
		fmt.Fprintf(os.Stderr, "cpuclass: %8.2f s  %3d × %s\n", sum[k].Seconds(), count[k], k)
	}
	fmt.Fprintf(os.Stderr, "cpuclass: %8.2f s  sampled\n", total.Seconds())
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err == nil {
		fmt.Fprintf(os.Stderr, "cpuclass: %8.2f s  counted by the kernel (user+sys of all)\n",
			time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds())
	}
}
