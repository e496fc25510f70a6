package browser

import (
	"os"
	"path/filepath"
	"testing"
)

// A headless launch runs the headless shell installed beside the
// configured Chromium (Debian's layout); a headful one, or one without the
// shell, runs the configured binary.
func TestBrowserExecutablePrefersTheHeadlessShell(t *testing.T) {
	withShell, without := t.TempDir(), t.TempDir()
	touch := func(dir, name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := touch(withShell, "chromium", 0o755)
	shell := touch(withShell, HeadlessShell, 0o755)
	alone := touch(without, "chromium", 0o755)
	notExec := t.TempDir()
	fullNE := touch(notExec, "chromium", 0o755)
	touch(notExec, HeadlessShell, 0o644)
	for _, tc := range []struct {
		name     string
		exe      string
		headless bool
		want     string
	}{
		{"headless, shell beside it", full, true, shell},
		{"headful (login), shell beside it", full, false, full},
		{"headless, no shell", alone, true, alone},
		{"the shell configured", shell, true, shell},
		{"the shell configured, headful", shell, false, shell},
		{"a shell that is not executable", fullNE, true, fullNE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := browserExecutable(tc.exe, tc.headless); got != tc.want {
				t.Errorf("browserExecutable(%q, %v) = %q, want %q", tc.exe, tc.headless, got, tc.want)
			}
		})
	}
}
