package shoppinglist

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestYAMLAdd: added items go to the end of the list as mappings with an
// id; the file's comments and other items stay; an empty file becomes a
// list.
func TestYAMLAdd(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"after the items, comments kept", "# our list\nitems:\n  # bakery\n  - bread # weekly\n",
			"# our list\nitems:\n  # bakery\n  - id: id1\n    name: bread # weekly\n  - id: id2\n    name: Greek Yogurt\n  - id: id3\n    name: coffee\n"},
		{"empty file", "", "items:\n  - id: id1\n    name: Greek Yogurt\n  - id: id2\n    name: coffee\n"},
		{"items with no value", "# mine\nitems:\n", "# mine\nitems:\n  - id: id1\n    name: Greek Yogurt\n  - id: id2\n    name: coffee\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "list.yaml")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			n := 0
			f, err := OpenYAML(path, WithIDGenerator(func() string { n++; return "id" + string(rune('0'+n)) }))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Add(context.Background(), "Greek Yogurt", " ", "coffee"); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if string(b) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", b, tc.want)
			}
			items, err := f.Items(context.Background())
			if err != nil || len(items) == 0 || !strings.EqualFold(items[len(items)-1].Name, "coffee") {
				t.Errorf("items %+v, %v", items, err)
			}
		})
	}
}
