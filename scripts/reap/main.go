// Command reap runs a command as a child subreaper, reaps every process it
// leaves behind (a Playwright driver and its Chromium that outlive the test
// binary are reparented here) and says how much CPU the command and all its
// descendants used (user+sys, from getrusage of the reaped children).
//
//	REAP_OUT=file reap command [args…]   writes "wall user sys" (seconds) to file
//	REAP_LOG=file reap command [args…]   appends "dir wall user sys" (dir: the
//	                                     working directory, the package's under go test)
//
// Orphans are reaped as they end, while the command runs (a test that
// checks that a process it killed is gone never meets a zombie of ours).
// After the command ends, reap waits for the descendants still running:
// for as long as they take, or at most REAP_GRACE (a Go duration), after
// which it exits and leaves them to init (their CPU is then not counted).
// SIGINT, SIGTERM, SIGQUIT and SIGHUP are passed on to the command, so go
// test's timeout still reaches the test binary.
//
// scripts/measure-tests.sh runs each test binary under it with REAP_OUT;
// make test runs every test binary under it with REAP_LOG and a grace, and
// scripts/testsummary prints the CPU per package (docs/testing.md).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER (linux/prctl.h)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: REAP_OUT=file | REAP_LOG=file [REAP_GRACE=30s] reap command [args…]")
		os.Exit(2)
	}
	var grace time.Duration = -1 // wait for every descendant
	if v := os.Getenv("REAP_GRACE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(os.Stderr, "reap: REAP_GRACE=%q is not a duration\n", v)
			os.Exit(2)
		}
		grace = d
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "reap: PR_SET_CHILD_SUBREAPER: %v\n", e)
		os.Exit(2)
	}
	start := time.Now()
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "reap: %v\n", err)
		os.Exit(2)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	// One loop reaps the command and every orphan as each ends: wait4(-1)
	// blocks until some child ends. It ends with an error once no child is
	// left (ECHILD).
	ended := make(chan syscall.WaitStatus, 1)
	allGone := make(chan struct{})
	go func() {
		defer close(allGone)
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				return
			}
			if pid == cmd.Process.Pid {
				ended <- ws
			}
		}
	}()
	ws := <-ended
	wall := time.Since(start)
	if grace < 0 {
		<-allGone
	} else {
		t := time.NewTimer(grace)
		select {
		case <-allGone:
		case <-t.C:
		}
		t.Stop()
	}
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fmt.Fprintf(os.Stderr, "reap: getrusage: %v\n", err)
		os.Exit(code)
	}
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	line := fmt.Sprintf("%.2f %.2f %.2f\n", wall.Seconds(), sec(ru.Utime), sec(ru.Stime))
	if out := os.Getenv("REAP_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(line), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "reap: %v\n", err)
		}
	}
	if log := os.Getenv("REAP_LOG"); log != "" {
		if err := appendLine(log, line); err != nil {
			fmt.Fprintf(os.Stderr, "reap: %v\n", err)
		}
	}
	os.Exit(code)
}

// appendLine appends "dir wall user sys" in one write (O_APPEND: lines of
// test binaries ending at the same time do not mix).
func appendLine(path, line string) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(fmt.Sprintf("%q %s", dir, line))
	return errors.Join(err, f.Close())
}
