// Command reap runs a command as a child subreaper, reaps every process it
// leaves behind (a Playwright driver and its Chromium that outlive the test
// binary are reparented here) and writes "wall user sys" in seconds, for
// the command and all its descendants, to the file named by $REAP_OUT.
// scripts/measure-tests.sh runs each test binary under it
// (docs/testing.md).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER (linux/prctl.h)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: REAP_OUT=file reap command [args…]")
		os.Exit(2)
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "reap: PR_SET_CHILD_SUBREAPER: %v\n", e)
		os.Exit(2)
	}
	start := time.Now()
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "reap: %v\n", err)
			os.Exit(2)
		}
		code = ee.ExitCode()
	}
	wall := time.Since(start)
	// Orphans: wait until none is left (each ends with its pipe to the
	// exited command).
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil {
			break
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err == nil {
		if out := os.Getenv("REAP_OUT"); out != "" {
			sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
			line := fmt.Sprintf("%.2f %.2f %.2f\n", wall.Seconds(), sec(ru.Utime), sec(ru.Stime))
			if err := os.WriteFile(out, []byte(line), 0o644); err != nil {
				fmt.Fprintf(os.Stderr, "reap: %v\n", err)
			}
		}
	}
	os.Exit(code)
}
