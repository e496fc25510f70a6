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
var light = []string{"config", "shoppinglist", "report", "money", "runstatus", "choice", "screen", "atomicfile"}

func TestImportRules(t *testing.T) {
	tests := []struct {
		pkg string
		// may lists what pkg may import besides the light packages.
		may []string
	}{
		{"agent", nil},
		{"browser", []string{"store"}},
		{"store", nil},
		{"shop", []string{"agent", "browser", "store"}},
		{"homeassistant", nil},
		{"mqtt", nil},
		{"telegram", nil},
		{"serve", nil},
		{"panel", nil},
		{"preferences", nil},
		{"products", []string{"preferences"}},
		{"demostore", nil},
		{"config", nil},
		{"money", nil},
		{"report", nil},
		{"choice", nil},
		{"ask", nil},
		{"screen", nil},
		{"atomicfile", nil},
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
