package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// buildReap builds the command once for the test.
func buildReap(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "reap")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestReapLogsAndKeepsTheExitCode: the command's exit code is reap's, the
// CPU of a grandchild that outlives the command is counted, the log line
// names the working directory, and a descendant that never ends does not
// hold reap past its grace (go test would wait for it otherwise).
func TestReapLogsAndKeepsTheExitCode(t *testing.T) {
	bin := buildReap(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "cpu.log")
	tests := []struct {
		name   string
		script string
		grace  string // REAP_GRACE
		code   int
		minCPU float64
	}{
		// The orphan burns CPU after its parent exited with 3. It ends by
		// itself, so reap's grace only bounds a hang: on a loaded machine
		// its loop takes seconds (a 1 s grace left it to init, uncounted).
		{"orphan that ends", `(i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done) & exit 3`, "5m", 3, 0.05},
		// An orphan that sleeps far longer than the test is left to init
		// once the grace is over.
		{"orphan that never ends", `sleep 100000 & echo $! > sleeper.pid; exit 0`, "1s", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(log)
			cmd := exec.Command(bin, "sh", "-c", tt.script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "REAP_LOG="+log, "REAP_GRACE="+tt.grace)
			err := cmd.Run()
			if b, rerr := os.ReadFile(filepath.Join(dir, "sleeper.pid")); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL) // left to init by reap: ours to end
				}
			}
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			q, err := strconv.QuotedPrefix(string(b))
			if err != nil {
				t.Fatalf("log line %q: %v", b, err)
			}
			if d, _ := strconv.Unquote(q); d != dir {
				t.Errorf("log names %q, want %q", d, dir)
			}
			f := strings.Fields(string(b)[len(q):])
			if len(f) != 3 {
				t.Fatalf("log line %q: want dir wall user sys", b)
			}
			user, _ := strconv.ParseFloat(f[1], 64)
			sys, _ := strconv.ParseFloat(f[2], 64)
			if user+sys < tt.minCPU {
				t.Errorf("CPU %.2f s, want at least %.2f (the orphan's)", user+sys, tt.minCPU)
			}
		})
	}
}
