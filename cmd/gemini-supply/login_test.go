package main

import (
	"strings"
	"testing"
)

func TestLoginCommandRefusesWhatItCannotDo(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"demo store", map[string]string{"GEMINI_SUPPLY_STORE": "demo"}, nil, 2, "demo store runs in memory"},
		{"no credentials", map[string]string{"GEMINI_SUPPLY_STORE": "metro"}, nil, 2, "metro_username"},
		{"bad wait", nil, []string{"--wait", "0s"}, 2, "--wait must be positive"},
		{"stray argument", nil, []string{"now"}, 2, `unexpected argument "now"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolateConfig(t, tt.env)
			code, _, stderr := runInProcess(t, append([]string{"login"}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		isolateConfig(t, nil)
		code, _, stderr := runInProcess(t, "login", "-h")
		if code != 0 || !strings.Contains(stderr, "--headful") && !strings.Contains(stderr, "-headful") {
			t.Fatalf("exit %d, usage %q", code, stderr)
		}
	})
}

// The login never prints the username (an email address), on stdout or
// stderr, whether it succeeds or not (here: the remote browser is not
// there, so it fails after announcing itself).
func TestLoginDoesNotPrintTheUsername(t *testing.T) {
	const user = "household.person@example.com"
	isolateConfig(t, map[string]string{
		"GEMINI_SUPPLY_STORE": "metro", "GEMINI_SUPPLY_METRO_USERNAME": user, "GEMINI_SUPPLY_METRO_PASSWORD": "pw-secret",
		"GEMINI_SUPPLY_BROWSER_REMOTE_URL": "http://127.0.0.1:1",
	})
	code, stdout, stderr := runInProcess(t, "login")
	if !strings.Contains(stdout, "Logging in to metro") {
		t.Fatalf("exit %d, stdout %q, stderr %q: the login did not start", code, stdout, stderr)
	}
	for _, out := range []string{stdout, stderr} {
		if strings.Contains(out, user) || strings.Contains(out, "household.person") {
			t.Fatalf("the username was printed: %q", out)
		}
	}
}
