package browser

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindDriver: a binary built in the clone (`make` puts it in bin/, the
// README's `go build` at the top) finds the driver scripts/setup.sh
// unpacked into the clone's .cache, with no environment variable; so does
// one run from inside the clone.
func TestFindDriver(t *testing.T) {
	t.Setenv("PLAYWRIGHT_DRIVER_PATH", "")
	t.Setenv("GEMINI_SUPPLY_CACHE", "")
	if _, err := os.Stat(filepath.Join(imageDriverDir, "package", "cli.js")); err == nil {
		t.Skip("this machine has the add-on image's driver")
	}
	clone := t.TempDir()
	driver := filepath.Join(clone, ".cache", "playwright-driver")
	if err := os.MkdirAll(filepath.Join(driver, "package"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(driver, "package", "cli.js"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name, exe, wd, want string
	}{
		{"make's bin/", filepath.Join(clone, "bin", "gemini-supply"), elsewhere, driver},
		{"go build at the top", filepath.Join(clone, "gemini-supply"), elsewhere, driver},
		{"run from a directory of the clone", filepath.Join(elsewhere, "gemini-supply"), filepath.Join(clone, "examples"), driver},
		{"nowhere near a clone", filepath.Join(elsewhere, "gemini-supply"), elsewhere, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FindDriver(tc.exe, tc.wd); got != tc.want {
				t.Errorf("FindDriver(%s, %s) = %q, want %q", tc.exe, tc.wd, got, tc.want)
			}
		})
	}
	t.Run("the environment wins", func(t *testing.T) {
		t.Setenv("PLAYWRIGHT_DRIVER_PATH", "/somewhere")
		if got := FindDriver(filepath.Join(clone, "bin", "x"), clone); got != "/somewhere" {
			t.Errorf("FindDriver = %q, want $PLAYWRIGHT_DRIVER_PATH", got)
		}
	})
}
