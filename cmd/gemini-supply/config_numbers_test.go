package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A NaN or infinite price used to pass validation: the journal then stopped
// being written, `--json` printed nothing and exited 1, and the summary said
// "about $NaN". Now the configuration is refused before anything runs: exit
// 2, the problem named on stderr, nothing on stdout, no run started.
func TestNonFinitePricesNeverReachARun(t *testing.T) {
	creds := map[string]string{"GEMINI_API_KEY": "k", "GEMINI_SUPPLY_METRO_USERNAME": "me@example.com", "GEMINI_SUPPLY_METRO_PASSWORD": "p"}
	list := writeTestList(t)
	cases := []struct {
		name  string
		price string
		args  []string
		want  string
	}{
		{"shop --json NaN", "NaN", []string{"shop", "--json", "--shopping-list", list}, "gemini_input_price_per_mtok: NaN is not a finite number"},
		{"shop Inf", "Inf", []string{"shop", "--shopping-list", list}, "gemini_input_price_per_mtok: +Inf is not a finite number"},
		{"shop negative", "-1", []string{"shop", "--json", "--shopping-list", list}, "gemini_input_price_per_mtok: -1 must not be negative"},
		{"demo --json NaN", "NaN", []string{"demo", "--json"}, "gemini_input_price_per_mtok: NaN is not a finite number"},
		{"serve NaN", "nan", []string{"serve"}, "gemini_input_price_per_mtok: NaN is not a finite number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := withEnv(creds, "GEMINI_SUPPLY_GEMINI_INPUT_PRICE_PER_MTOK", tc.price)
			env = withEnv(env, "GEMINI_SUPPLY_BROWSER_EXECUTABLE", "/nonexistent/chromium") // a run that started would say so
			home := isolateConfig(t, env)
			before, _ := os.ReadFile(list)
			code, out, errs := runInProcess(t, tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			if !strings.Contains(errs, tc.want) || strings.Contains(errs, "chromium") {
				t.Errorf("stderr lacks %q (or a run started):\n%s", tc.want, errs)
			}
			if out != "" {
				t.Errorf("stdout should be empty, got:\n%s", out)
			}
			if strings.Contains(out+errs, "$NaN") || strings.Contains(out+errs, "$+Inf") {
				t.Errorf("a cost in NaN/Inf was printed:\n%s%s", out, errs)
			}
			if after, _ := os.ReadFile(list); string(after) != string(before) {
				t.Errorf("the list was written:\n%s", after)
			}
			if runs, _ := filepath.Glob(filepath.Join(home, ".local", "share", "gemini-supply", "runs", "*")); len(runs) != 0 {
				t.Errorf("a run journal was written: %v", runs)
			}
		})
	}
}
