package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryProblemAtOnce: a file with four mistakes — an unknown key and a
// duration without a unit (found reading the file), a store and a
// concurrency out of range (found checking the values) — and a bad
// environment variable report all five at once, as docs/configuration.md
// promises, not one per attempt.
func TestEveryProblemAtOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("gemini_modle: x\ntime_budget: 300\nconcurrency: 20\nstore: costco\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvPrefix + "MAX_TURNS": "lots"}
	_, err := Load(LoadOptions{ConfigPath: path, HomeDir: dir, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Load: %v, want an *Error", err)
	}
	want := []string{"gemini_modle", "time_budget", "concurrency", "store", EnvPrefix + "MAX_TURNS"}
	if len(e.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(e.Problems), len(want), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w+":") {
			t.Errorf("no problem for %s:\n%v", w, err)
		}
	}
	if !strings.Contains(err.Error(), "in "+path+", line 1: unknown key") {
		t.Errorf("the file's problems do not say where they are:\n%v", err)
	}
}

// TestMissingCredentialsWithTheOtherProblems: a run's missing Gemini API
// key is reported together with the file's mistakes (issue 34), not on a
// second attempt once they are fixed.
func TestMissingCredentialsWithTheOtherProblems(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("gemini_modle: x\ntime_budget: 300\nstore: demo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{ConfigPath: path, HomeDir: dir, Need: NeedAll, LookupEnv: func(string) (string, bool) { return "", false }})
	if err == nil {
		t.Fatal("Load: no error")
	}
	for _, w := range []string{"gemini_modle", "time_budget", "gemini_api_key"} {
		if !strings.Contains(err.Error(), w+":") {
			t.Errorf("no problem for %s:\n%v", w, err)
		}
	}
}
