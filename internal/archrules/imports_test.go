package archrules

import (
	"go/build"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gemini-supply/gemini-supply/internal/"

// internalImports lists the project packages that pkg (relative to
// internal/) imports in its non-test files.
func internalImports(t *testing.T, pkg string) []string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", filepath.FromSlash(pkg))
	p, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("read package %s: %v", pkg, err)
	}
	var out []string
	for _, imp := range p.Imports {
		if rest, ok := strings.CutPrefix(imp, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

// light are the shared value packages every package may use.
var light = []string{"config", "messages", "shoppinglist", "report", "reviewpack", "money", "runstatus", "choice", "screen", "atomicfile", "slots"}

func TestImportRules(t *testing.T) {
	tests := []struct {
		pkg string
		// may lists what pkg may import besides the light packages.
		may []string
	}{
		{"agent", nil},
		{"browser", []string{"store"}},
		{"store", nil},
		{"shop", []string{"agent", "browser", "store", "guide"}},
		{"guide", []string{"agent"}},
		{"homeassistant", nil},
		{"mqtt", nil},
		{"telegram", nil},
		{"serve", nil},
		{"panel", nil},
		{"preferences", nil},
		{"products", []string{"preferences"}},
		{"demostore", nil},
		{"eval", []string{"app", "shop", "store", "demostore"}},
		{"usual", []string{"browser", "store", "shop", "products"}},
		{"config", nil},
		{"money", nil},
		{"report", nil},
		{"reviewpack", nil},
		{"choice", nil},
		{"ask", nil},
		{"screen", nil},
		{"atomicfile", nil},
		{"messages", nil},
		// The offline planner sees only what a model is sent (the agent's
		// page text): never the demo store's catalogue or cart.
		{"scripted", []string{"agent", "fake/gemini"}},
	}
	for _, tc := range tests {
		t.Run(tc.pkg, func(t *testing.T) {
			for _, imp := range internalImports(t, tc.pkg) {
				if slices.Contains(tc.may, imp) || slices.Contains(light, imp) {
					continue
				}
				t.Errorf("internal/%s imports internal/%s, which docs/architecture.md does not allow", tc.pkg, imp)
			}
		})
	}
}

// The offline planner must not reach the demo store even through another
// package: it would see the store's catalogue and cart, which a model
// never sees (go list -deps ./internal/scripted).
func TestScriptedPlannerCannotSeeTheStore(t *testing.T) {
	seen := map[string]bool{}
	var walk func(pkg string, path []string)
	walk = func(pkg string, path []string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, imp := range internalImports(t, pkg) {
			if imp == "demostore" {
				t.Errorf("internal/scripted reaches internal/demostore: %s", strings.Join(append(path, pkg, imp), " → "))
			}
			walk(imp, append(path, pkg))
		}
	}
	walk("scripted", nil)
	if !seen["agent"] {
		t.Fatal("the walk did not follow scripted's imports")
	}
}
