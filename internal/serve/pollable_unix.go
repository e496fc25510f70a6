//go:build unix

package serve

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// PollableFile is a duplicate of a file descriptor in non-blocking mode, so
// that reads from it can be interrupted with SetReadDeadline or Close. Close
// puts the descriptor back into blocking mode (a terminal shared with the
// shell must not stay non-blocking).
type PollableFile struct {
	*os.File
}

// Pollable returns f (typically os.Stdin) as a PollableFile. It fails for
// descriptors the runtime cannot poll (regular files); the caller then
// reads f directly.
func Pollable(f *os.File) (*PollableFile, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("pollable %s: %w", f.Name(), err)
	}
	dup := -1
	var opErr error
	if err := rc.Control(func(fd uintptr) {
		dup, opErr = syscall.Dup(int(fd))
		if opErr == nil {
			syscall.CloseOnExec(dup)
			opErr = syscall.SetNonblock(dup, true)
		}
	}); err != nil {
		return nil, fmt.Errorf("pollable %s: %w", f.Name(), err)
	}
	if opErr != nil {
		if dup >= 0 {
			_ = syscall.Close(dup)
		}
		return nil, fmt.Errorf("pollable %s: %w", f.Name(), opErr)
	}
	nf := os.NewFile(uintptr(dup), f.Name())
	if err := nf.SetReadDeadline(time.Time{}); err != nil {
		_ = syscall.SetNonblock(dup, false)
		_ = nf.Close()
		return nil, fmt.Errorf("pollable %s: %w", f.Name(), err)
	}
	return &PollableFile{File: nf}, nil
}

// Close restores blocking mode and closes the duplicate.
func (p *PollableFile) Close() error {
	if rc, err := p.File.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), false) })
	}
	return p.File.Close()
}
