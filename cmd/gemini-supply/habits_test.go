package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/products"
)

// TestCLIHabits: the command line as people type it. Flags after the
// arguments; products of the store a run used; a duration without a unit
// said as the config file says it; a misspelt GEMINI_SUPPLY_ variable and
// an unknown flag named with the closest known one; a missing list's
// error said once.
func TestCLIHabits(t *testing.T) {
	isolateConfig(t, map[string]string{})
	data := t.TempDir()
	mem, err := products.Open(data, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Added("bread", products.Product{Name: "POM White Bread", URL: "https://www.metro.ca/en/p/bread-white-675g"}); err != nil {
		t.Fatal(err)
	}
	metro := filepath.Join(data, products.FileName("metro"))

	t.Run("products list finds the store a run used and creates nothing", func(t *testing.T) {
		code, out, errs := runInProcess(t, "products", "list", "--data-dir", data)
		if code != 0 || !strings.Contains(out, "POM White Bread") {
			t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
		}
		empty := t.TempDir()
		if code, out, _ := runInProcess(t, "products", "list", "--data-dir", empty); code != 0 || !strings.Contains(out, "No products are remembered") {
			t.Fatalf("an empty data dir: exit %d:\n%s", code, out)
		}
		for _, p := range []string{metro, filepath.Join(empty, products.FileName("metro"))} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("listing created %s", p)
			}
		}
	})
	t.Run("flags after the arguments", func(t *testing.T) {
		code, out, errs := runInProcess(t, "products", "forget", "bread", "--store", "demo", "--data-dir", data)
		if code != 0 || !strings.Contains(out, "Forgot bread (POM White Bread)") {
			t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
		}
	})
	list := writeTestList(t)
	for _, tc := range []struct {
		name    string
		environ []string
		args    []string
		code    int
		want    string
	}{
		{"a duration without a unit", nil, []string{"shop", "--dry-run", "--shopping-list", list, "--time-budget", "300"}, 2, `"300" needs a unit: write "300s"`},
		{"a misspelt variable", []string{"GEMINI_SUPPLY_POSTALCODE=H2X 1Y4", "GEMINI_SUPPLY_TEST_LOG=1"}, []string{"shop", "--dry-run", "--shopping-list", list}, 0,
			"GEMINI_SUPPLY_POSTALCODE is not a setting and is ignored (did you mean GEMINI_SUPPLY_POSTAL_CODE?)"},
		{"an unknown flag", nil, []string{"shop", "--concurency", "2"}, 2, "did you mean --concurrency?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := loadOptions.Environ
			loadOptions.Environ = func() []string { return tc.environ }
			defer func() { loadOptions.Environ = old }()
			code, out, errs := runInProcess(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, want %d; stderr lacks %q:\n%s\n%s", code, tc.code, tc.want, errs, out)
			}
			if strings.Contains(errs, "TEST_LOG") {
				t.Errorf("a variable the tests use was warned about:\n%s", errs)
			}
		})
	}
	t.Run("a missing list is said once", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "list.yaml")
		code, out, errs := runInProcess(t, "shop", "--store", "demo", "--model", "scripted", "--shopping-list", missing, "--data-dir", t.TempDir())
		if n := strings.Count(out+errs, "does not exist"); code != 1 || n != 1 {
			t.Fatalf("exit %d, the error said %d times:\n%s\n%s", code, n, out, errs)
		}
	})
}
