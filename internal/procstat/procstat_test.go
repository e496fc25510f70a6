package procstat

import (
	"os"
	"os/exec"
	"testing"
)

// TestAllSeesThisProcessAndItsChild: the table has this process with its
// parent, its CPU time, and a child started here descends from it.
func TestAllSeesThisProcessAndItsChild(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for x := 0; x < 3e8; x++ { // some CPU time of its own (ticks of 10 ms)
	}
	procs, err := All()
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	self, ok := procs[os.Getpid()]
	switch {
	case !ok:
		t.Fatal("this process is not in the table")
	case self.PPID != os.Getppid():
		t.Errorf("parent = %d, want %d", self.PPID, os.Getppid())
	case self.CPU <= 0:
		t.Errorf("CPU time = %v after a busy loop", self.CPU)
	}
	child := cmd.Process.Pid
	if c := procs[child]; c.Comm != "sleep" || !Descends(procs, child, os.Getpid()) {
		t.Errorf("the child %d: %+v, descends from this process: %v", child, c, Descends(procs, child, os.Getpid()))
	}
	if Descends(procs, os.Getpid(), child) {
		t.Error("this process descends from its child")
	}
}
