package shoppinglist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/money"
)

// TestYAMLNamelessEntriesAreLeftAlone: an entry whose name is only tags or
// empty is reported with an empty Name, never planned (also when retrying
// tagged items), never marked, and the file keeps it exactly as written.
func TestYAMLNamelessEntriesAreLeftAlone(t *testing.T) {
	ctx := testCtx(t)
	content := "items:\n  - \"#404\"\n  - \"  \"\n  - {id: k, name: \"#failed\", tags: [\"#failed\"]}\n  - {id: m, name: milk}\n"
	path := writeList(t, content)
	f, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	items, err := f.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 4 {
		t.Fatalf("items = %+v, want 4", items)
	}
	for _, it := range items[:3] {
		if it.Name != "" || it.ID == "" {
			t.Errorf("nameless entry read as %+v", it)
		}
		if err := f.MarkFailed(ctx, it.ID, "x"); !errors.Is(err, errNoName) {
			t.Errorf("MarkFailed(%q) = %v, want errNoName", it.ID, err)
		}
	}
	for _, retry := range []bool{false, true} {
		p := PlanRun(items, retry)
		if len(p.Unnamed) != 3 || len(p.ToShop) != 1 || p.ToShop[0].ID != "m" {
			t.Errorf("PlanRun(retry=%v) = %+v, want 3 unnamed and milk to shop", retry, p)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("the file changed:\n%s", b)
	}
	// A mark of another item keeps the person's words.
	if err := f.MarkNotFound(ctx, "m", "none"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`- "#404"`, `name: "#failed"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("file lost %s:\n%s", want, b)
		}
	}
}

// TestYAMLQuantityRequestSurvivesReports: "quantity: 3" is what the person
// asks for; a report of 1 added does not change it.
func TestYAMLQuantityRequestSurvivesReports(t *testing.T) {
	ctx := testCtx(t)
	path := writeList(t, "items:\n  - {id: e, name: eggs, quantity: 3}\n  - {id: m, name: 2x milk}\n")
	f, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"e", "m"} {
		if err := f.MarkCompleted(ctx, id, Added{ProductName: "p", Price: money.Parse("$2.00"), Quantity: 1}); err != nil {
			t.Fatal(err)
		}
	}
	items, err := f.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if items[0].Quantity != 3 || items[1].Quantity != 2 || items[1].Name != "2x milk" {
		t.Errorf("requests changed by a report: %+v", items)
	}
	raw := rawItems(t, path)
	if raw[0]["quantity"] != 3 || raw[0]["added"].(map[string]any)["quantity"] != 1 {
		t.Errorf("request and report not kept apart: %v", raw[0])
	}
}

// TestYAMLEditorsWithoutLock runs an editor that takes no lock — appending
// with ">>", rewriting the file in place (truncate, then write in two
// pieces: readers see it half-written), or both — while 200 marks are made.
// Every edit and every mark is in the file at the end.
func TestYAMLEditorsWithoutLock(t *testing.T) {
	const marks, edits = 200, 200
	appendEdit := func(path string, n int) error {
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(fh, "  - edit %d\n", n)
		return errors.Join(err, fh.Close())
	}
	rewriteEdit := func(path string, n int) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		next := append(b, fmt.Sprintf("  - edit %d\n", n)...)
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		half := len(next) / 2
		_, err = fh.Write(next[:half])
		runtime.Gosched()
		if err == nil {
			_, err = fh.Write(next[half:])
		}
		return errors.Join(err, fh.Close())
	}
	tests := []struct {
		name string
		edit func(path string, n int) error
	}{
		{"appending", appendEdit},
		{"rewriting in place", rewriteEdit},
		{"both", func(path string, n int) error {
			if n%2 == 0 {
				return appendEdit(path, n)
			}
			return rewriteEdit(path, n)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			var b strings.Builder
			b.WriteString("items:\n")
			for i := range marks {
				fmt.Fprintf(&b, "  - {id: m%d, name: item %d}\n", i, i)
			}
			path := writeList(t, b.String())
			f, err := OpenYAML(path)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, marks+edits)
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := range edits {
					if err := tt.edit(path, i); err != nil {
						errs <- fmt.Errorf("edit %d: %w", i, err)
					}
				}
			}()
			go func() {
				defer wg.Done()
				for i := range marks {
					id := fmt.Sprintf("m%d", i)
					var err error
					if i%2 == 0 {
						err = f.MarkCompleted(ctx, id, Added{ProductName: "p" + id, Quantity: 1})
					} else {
						err = f.MarkNotFound(ctx, id, "nf "+id)
					}
					if err != nil {
						errs <- fmt.Errorf("mark %s: %w", id, err)
					}
				}
			}()
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if t.Failed() {
				b, _ := os.ReadFile(path)
				t.Fatalf("file:\n%s", b)
			}
			// The next access settles what the editor wrote last.
			if _, err := f.Items(ctx); err != nil {
				t.Fatal(err)
			}
			raw := rawItems(t, path)
			byName := map[string]map[string]any{}
			for _, it := range raw {
				byName[fmt.Sprint(it["name"])] = it
			}
			for i := range edits {
				if byName[fmt.Sprintf("edit %d", i)] == nil {
					t.Errorf("edit %d lost", i)
				}
			}
			for i := range marks {
				it := byName[fmt.Sprintf("item %d", i)]
				id := fmt.Sprintf("m%d", i)
				ok := false
				if i%2 == 0 {
					added, _ := it["added"].(map[string]any)
					ok = it["status"] == "completed" && added["product"] == "p"+id
				} else {
					ok = it["explanation"] == "nf "+id
				}
				if !ok {
					t.Errorf("mark of %s lost: %v", id, it)
				}
			}
			if len(raw) != marks+edits {
				t.Errorf("%d entries, want %d", len(raw), marks+edits)
			}
		})
	}
}

// TestYAMLUnwritableList: a list in a read-only directory, or a read-only
// file, is reported by CheckWritable. File permissions do not bind root,
// so as root the check runs in a child process as user nobody.
func TestYAMLUnwritableList(t *testing.T) {
	if os.Getenv("GEMINI_SUPPLY_TEST_HELPER") == "check-writable" {
		f, err := OpenYAML(os.Getenv("GEMINI_SUPPLY_TEST_LIST"))
		if err == nil {
			err = f.CheckWritable(context.Background())
		}
		fmt.Println(err)
		return
	}
	for _, tt := range []struct {
		name             string
		dirMode, fileMod os.FileMode
		want             string
	}{
		{"writable", 0o777, 0o666, "<nil>"},
		{"read-only directory", 0o555, 0o666, "directory"},
		{"read-only file", 0o777, 0o444, "cannot be written"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Not t.TempDir: its parent is private to this user.
			base, err := os.MkdirTemp("", "gemini-supply-unwritable-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(base) })
			if err := os.Chmod(base, 0o755); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(base, "list")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "list.yaml")
			if err := os.WriteFile(path, []byte("items:\n  - milk\n"), tt.fileMod); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.fileMod); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tt.dirMode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) }) // runs before RemoveAll
			got := checkWritableAsUser(t, base, path)
			if !strings.Contains(got, tt.want) {
				t.Errorf("CheckWritable = %q, want it to mention %q", got, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != "items:\n  - milk\n" {
				t.Errorf("the check changed the list: %s", b)
			}
		})
	}
}

// checkWritableAsUser runs CheckWritable in a child test process, as user
// nobody when this process is root, and returns what it printed.
func checkWritableAsUser(t *testing.T, base, path string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// nobody must be able to run the test binary: copy it next to the list.
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		exe = filepath.Join(base, "helper.test")
		if err := os.WriteFile(exe, data, 0o755); err != nil {
			t.Fatal(err)
		}
		for d := base; d != "/" && d != "."; d = filepath.Dir(d) {
			if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o005 != 0o005 {
				t.Skipf("%s is not reachable by user nobody", d)
			}
		}
	}
	cmd := exec.CommandContext(testCtx(t), exe, "-test.run=^TestYAMLUnwritableList$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GEMINI_SUPPLY_TEST_HELPER=check-writable", "GEMINI_SUPPLY_TEST_LIST="+path, "HOME=/")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	return strings.SplitN(string(out), "\n", 2)[0]
}
