package addon

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// apparmorParser finds apparmor_parser: the path scripts/setup.sh exports
// (it installs Debian's apparmor package), else $PATH, else /usr/sbin. The
// test fails when it is missing rather than skipping: setup installs it.
func apparmorParser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GEMINI_SUPPLY_TEST_APPARMOR_PARSER"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("apparmor_parser"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/apparmor_parser", "/sbin/apparmor_parser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatal("apparmor_parser not found: run scripts/setup.sh (it installs the Debian package apparmor), or make test which runs it")
	return ""
}

// parseProfile runs apparmor_parser on path without loading anything into a
// kernel (-Q) and without its cache (-K): a full compile of the profile,
// which needs no AppArmor support in this container.
func parseProfile(t *testing.T, parser, path string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, parser, "-Q", "-K", path).CombinedOutput()
	return string(out), err
}

func TestAppArmorProfileParses(t *testing.T) {
	parser := apparmorParser(t)
	path := filepath.Join(repoRoot(t), "apparmor.txt")
	if out, err := parseProfile(t, parser, path); err != nil {
		t.Fatalf("apparmor_parser rejects apparmor.txt: %v\n%s", err, out)
	}
	// The parser really checks: a broken profile is refused.
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("profile x {\n  /data/** bogus,\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := parseProfile(t, parser, bad); err == nil {
		t.Fatalf("apparmor_parser accepted a broken profile; the check proves nothing:\n%s", out)
	}
}

// The Supervisor attaches the profile named after the slug, and the profile
// grants what the app needs and none of the broad rules.
func TestAppArmorProfileScope(t *testing.T) {
	profile := string(readFile(t, "apparmor.txt"))
	slug := loadManifest(t).Slug
	if !regexp.MustCompile(`(?m)^profile ` + regexp.QuoteMeta(slug) + ` flags=\(attach_disconnected,mediate_deleted\) \{`).MatchString(profile) {
		t.Errorf("apparmor.txt: want `profile %s flags=(attach_disconnected,mediate_deleted) {`", slug)
	}
	var rules []string
	for _, line := range strings.Split(profile, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			rules = append(rules, line)
		}
	}
	has := func(prefix string) bool {
		for _, r := range rules {
			if strings.HasPrefix(r, prefix) {
				return true
			}
		}
		return false
	}
	for _, need := range []string{
		"/init ", "/command/** ", "/usr/lib/bashio/** ", // s6-overlay, bashio
		"/usr/bin/** ",                          // the binary
		"/usr/lib/chromium/** ", "/dev/shm/** ", // Chromium
		"/opt/playwright-driver/** ", "/opt/playwright-driver/node ", // the driver under node
		"/data/** ", "/config/** ", "/tmp/** ",
		"network inet stream",
	} {
		if !has(need) {
			t.Errorf("apparmor.txt lacks a rule for %q", strings.TrimSpace(need))
		}
	}
	for _, broad := range []string{
		"file,", "capability,", "network,", "mount", "umount", "pivot_root",
		"capability sys_admin", "capability sys_ptrace", "capability net_admin", "capability sys_module",
		"/** ", "/share", "/media", "/backup", "/ssl",
	} {
		if has(broad) {
			t.Errorf("apparmor.txt allows %q, more than the app needs", broad)
		}
	}
}
