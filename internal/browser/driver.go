package browser

import (
	"os"
	"path/filepath"
)

// driverCacheDir is where scripts/setup.sh (and so make) unpacks the
// Playwright driver, under the repository: .cache/playwright-driver.
var driverCacheDir = filepath.Join(".cache", "playwright-driver")

// imageDriverDir is where the add-on image keeps the driver.
const imageDriverDir = "/opt/playwright-driver"

// FindDriver is the Playwright driver directory to use when none is set:
// $PLAYWRIGHT_DRIVER_PATH; else $GEMINI_SUPPLY_CACHE/playwright-driver;
// else the .cache/playwright-driver that scripts/setup.sh (and make)
// installed beside the binary or in a directory above it (bin/ in the
// repository), or in the working directory or one above it (a binary built
// elsewhere, run from the clone); else the add-on image's. "" when none
// holds package/cli.js. exe is the running binary, wd the working
// directory ("" for either: not looked at).
func FindDriver(exe, wd string) string {
	if d := os.Getenv("PLAYWRIGHT_DRIVER_PATH"); d != "" {
		return d
	}
	var dirs []string
	if c := os.Getenv("GEMINI_SUPPLY_CACHE"); c != "" {
		dirs = append(dirs, filepath.Join(c, "playwright-driver"))
	}
	if exe != "" {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dirs = append(dirs, upward(filepath.Dir(exe))...)
	}
	if wd != "" {
		dirs = append(dirs, upward(wd)...)
	}
	dirs = append(dirs, imageDriverDir)
	for _, d := range dirs {
		if fi, err := os.Stat(filepath.Join(d, "package", "cli.js")); err == nil && !fi.IsDir() {
			return d
		}
	}
	return ""
}

// upward is dir/.cache/playwright-driver for dir and each directory above
// it (at most 8: a clone is not deeper than that below where one runs it).
func upward(dir string) []string {
	var out []string
	for range 8 {
		out = append(out, filepath.Join(dir, driverCacheDir))
		up := filepath.Dir(dir)
		if up == dir {
			break
		}
		dir = up
	}
	return out
}

// driverDefault is FindDriver for the running binary and working directory.
func driverDefault() string {
	exe, _ := os.Executable()
	wd, _ := os.Getwd()
	return FindDriver(exe, wd)
}
