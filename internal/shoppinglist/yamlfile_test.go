package shoppinglist

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// testCtx bounds a hang only: generous, since a loaded machine makes 200 locked writes slow.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func writeList(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "list.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// seqIDs returns a generator of "id1", "id2", …
func seqIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return "id" + strconv.Itoa(n)
	}
}

// rawItems decodes the file independently of the provider.
func rawItems(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Items []map[string]any `yaml:"items"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("file no longer valid YAML: %v\n%s", err, b)
	}
	return doc.Items
}

func TestYAMLRoundTripKeepsCommentsAndUnknownKeys(t *testing.T) {
	path := writeList(t, `# Our groceries, edited by hand
owner: sam   # not a key the provider knows
items:
  # dairy first
  - id: m1
    name: 2x milk 2%
    brand: any     # unknown item key
  - bread  # the usual
  - {name: butter, tags: [costco]}
  - id: e1
    name: eggs
    status: completed
# end of list
`)
	ctx := testCtx(t)
	f, err := OpenYAML(path, WithIDGenerator(seqIDs()))
	if err != nil {
		t.Fatal(err)
	}
	items, err := f.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Item{
		{ID: "m1", Name: "2x milk 2%", Status: StatusNeedsAction, Quantity: 2, Product: "milk 2%"},
		{ID: "id1", Name: "bread", Status: StatusNeedsAction, Quantity: 1, Product: "bread"},
		{ID: "id2", Name: "butter", Status: StatusNeedsAction, Tags: []string{"#costco"}, Quantity: 1, Product: "butter"},
		{ID: "e1", Name: "eggs", Status: StatusCompleted, Quantity: 1, Product: "eggs"},
	}
	if !reflect.DeepEqual(items, want) {
		t.Fatalf("Items =\n%+v\nwant\n%+v", items, want)
	}

	if err := f.MarkCompleted(ctx, "m1", Added{ProductName: "Québon 2% milk 2 L", Price: money.Parse("$5.49"), URL: "https://www.metro.ca/p/1", Quantity: 2}); err != nil {
		t.Fatal(err)
	}
	if err := f.MarkNotFound(ctx, "id2", "no butter: out of stock"); err != nil {
		t.Fatal(err)
	}
	if err := f.MarkFailed(ctx, "id1", "time budget of 5m0s exceeded"); err != nil {
		t.Fatal(err)
	}

	b, _ := os.ReadFile(path)
	text := string(b)
	for _, keep := range []string{"# Our groceries, edited by hand", "# not a key the provider knows", "owner: sam",
		"# dairy first", "brand: any", "# unknown item key", "# the usual", "# end of list"} {
		if !strings.Contains(text, keep) {
			t.Errorf("file lost %q:\n%s", keep, text)
		}
	}

	raw := rawItems(t, path)
	wantRaw := []map[string]any{
		{"id": "m1", "name": "2x milk 2%", "brand": "any", "status": "completed", "added": map[string]any{"product": "Québon 2% milk 2 L",
			"price_text": "$5.49", "price_cents": 549, "quantity": 2, "url": "https://www.metro.ca/p/1"}},
		{"id": "id1", "name": "bread", "tags": []any{"#failed"}, "error": "time budget of 5m0s exceeded"},
		{"id": "id2", "name": "butter", "tags": []any{"costco", "#404"}, "explanation": "no butter: out of stock"},
		{"id": "e1", "name": "eggs", "status": "completed"},
	}
	if !reflect.DeepEqual(raw, wantRaw) {
		t.Errorf("file items =\n%v\nwant\n%v\nfile:\n%s", raw, wantRaw, text)
	}

	// A second provider on the same file sees the same items.
	g, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := g.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again[2].Explanation != "no butter: out of stock" || !again[2].HasTag(TagNotFound) || again[1].Explanation != "time budget of 5m0s exceeded" {
		t.Errorf("re-read items = %+v", again)
	}
	// Reading assigns nothing new and leaves the file byte-identical.
	if b2, _ := os.ReadFile(path); string(b2) != text {
		t.Errorf("Items rewrote an unchanged file:\n%s", b2)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, want 0600 kept", st.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".list.yaml.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestYAMLMarkTransitions(t *testing.T) {
	type step func(ctx context.Context, f *YAMLFile) error
	completed := func(ctx context.Context, f *YAMLFile) error {
		return f.MarkCompleted(ctx, "x", Added{ProductName: "Butter 454 g", Price: money.Parse("see store"), Quantity: 0})
	}
	notFound := func(ctx context.Context, f *YAMLFile) error { return f.MarkNotFound(ctx, "x", "none left") }
	failed := func(ctx context.Context, f *YAMLFile) error { return f.MarkFailed(ctx, "x", "browser crashed") }

	tests := []struct {
		name  string
		entry string
		steps []step
		want  map[string]any
	}{
		{"not found", `{id: x, name: butter}`, []step{notFound},
			map[string]any{"id": "x", "name": "butter", "tags": []any{"#404"}, "explanation": "none left"}},
		{"failed then not found replaces the tag and reason", `{id: x, name: butter}`, []step{failed, notFound},
			map[string]any{"id": "x", "name": "butter", "tags": []any{"#404"}, "explanation": "none left"}},
		{"not found then failed", `{id: x, name: butter, tags: ["#costco"]}`, []step{notFound, failed},
			map[string]any{"id": "x", "name": "butter", "tags": []any{"#costco", "#failed"}, "error": "browser crashed"}},
		{"retried and completed clears run tags, also typed in the name", `{id: x, name: "butter #404", tags: ["#failed"], error: old}`, []step{completed},
			map[string]any{"id": "x", "name": "butter", "status": "completed", "added": map[string]any{"product": "Butter 454 g", "price_text": "see store", "quantity": 1}}},
		{"completed keeps the person's quantity and moves an old report under added", `{id: x, name: eggs, quantity: 3, product: old, price_text: "$1", price_cents: 100, url: "https://x/1"}`, []step{completed},
			map[string]any{"id": "x", "name": "eggs", "quantity": 3, "status": "completed", "added": map[string]any{"product": "Butter 454 g", "price_text": "see store", "quantity": 1}}},
		{"a name that is only a run tag keeps it", `{id: x, name: "#404 #failed", tags: ["#failed"]}`, []step{},
			map[string]any{"id": "x", "name": "#404 #failed", "tags": []any{"#failed"}}},
		{"not found twice is idempotent", `{id: x, name: butter}`, []step{notFound, notFound},
			map[string]any{"id": "x", "name": "butter", "tags": []any{"#404"}, "explanation": "none left"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			path := writeList(t, "items:\n  - "+tt.entry+"\n")
			f, err := OpenYAML(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.steps {
				if err := s(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
			got := rawItems(t, path)
			if len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				b, _ := os.ReadFile(path)
				t.Errorf("item = %v\nwant %v\nfile:\n%s", got, tt.want, b)
			}
		})
	}
}

func TestYAMLAssignsIDs(t *testing.T) {
	ctx := testCtx(t)
	path := writeList(t, `items:
  - milk   # bare name
  - name: bread
  - id: dup
    name: eggs
  - id: dup
    name: butter
  - id: 7
    name: 7up
  -
`)
	f, err := OpenYAML(path, WithIDGenerator(seqIDs()))
	if err != nil {
		t.Fatal(err)
	}
	items, err := f.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	if want := []string{"id1", "id2", "dup", "id3", "7"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids = %v, want %v", ids, want)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "# bare name") {
		t.Errorf("upgrading the bare name lost its comment:\n%s", b)
	}
	// Saved: a provider with a different generator reads the same ids.
	g, err := OpenYAML(path, WithIDGenerator(func() string { return "other" }))
	if err != nil {
		t.Fatal(err)
	}
	again, err := g.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range again {
		if again[i].ID != ids[i] {
			t.Errorf("item %d id = %q after reopen, want %q (ids not saved)", i, again[i].ID, ids[i])
		}
	}
	if raw := rawItems(t, path); raw[0]["name"] != "milk" || raw[0]["id"] != "id1" {
		t.Errorf("bare name not upgraded to a mapping: %v", raw[0])
	}
}

func TestYAMLGeneratorClashIsRetried(t *testing.T) {
	ctx := testCtx(t)
	path := writeList(t, "items:\n  - id: a\n    name: milk\n  - bread\n")
	n := 0
	f, err := OpenYAML(path, WithIDGenerator(func() string {
		n++
		if n < 3 {
			return "a"
		}
		return "b"
	}))
	if err != nil {
		t.Fatal(err)
	}
	items, err := f.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if items[1].ID != "b" {
		t.Errorf("id = %q, want b (a is taken)", items[1].ID)
	}
}

func TestYAMLEmptyAndShapes(t *testing.T) {
	tests := []struct {
		name, content string
		want          int
	}{
		{"empty file", "", 0},
		{"only a comment", "# nothing yet\n", 0},
		{"no items key", "owner: sam\n", 0},
		{"null items", "items:\n", 0},
		{"bare list", "- milk\n- bread\n", 2},
		{"quantity key wins", "items:\n  - {name: milk, quantity: 3}\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeList(t, tt.content)
			f, err := OpenYAML(path)
			if err != nil {
				t.Fatal(err)
			}
			items, err := f.Items(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tt.want {
				t.Errorf("len(items) = %d, want %d", len(items), tt.want)
			}
			if tt.name == "quantity key wins" && items[0].Quantity != 3 {
				t.Errorf("quantity = %d, want 3", items[0].Quantity)
			}
		})
	}
}

func TestYAMLMalformedIsNeverWritten(t *testing.T) {
	tests := []struct {
		name    string
		content string
		line    int
		problem string
	}{
		{"unterminated quote", "items:\n  - name: milk\n  - name: \"bread\n", 3, "found unexpected end of stream"},
		{"unclosed flow list", "items:\n  - name: milk\n    tags: [a, b\n  - bread\n", 2, "did not find expected ',' or ']'"}, // the line yaml.v3 reports
		{"bad indentation", "items:\n  - name: milk\n     status: completed\n", 3, "mapping values are not allowed"},
		{"items not a list", "items:\n  name: milk\n", 2, "items must be a list"},
		{"top level scalar", "milk\n", 1, "must be a mapping"},
		{"unknown status", "items:\n  - name: milk\n    status: done\n", 3, `status "done"`},
		{"no name", "items:\n  - id: a\n    status: completed\n", 2, "no name"},
		{"quantity not a number", "items:\n  - name: milk\n    quantity: two\n", 3, "quantity must be a whole number"},
		{"quantity zero", "items:\n  - name: milk\n    quantity: 0\n", 3, "quantity 0"},
		{"duplicate key", "items:\n  - name: milk\n    name: bread\n", 3, `key "name" appears twice`},
		{"nested item", "items:\n  - [milk]\n", 2, "must be a name or a mapping"},
		{"tags a mapping", "items:\n  - name: milk\n    tags: {a: b}\n", 3, "tags must be a list"},
		{"two documents", "items:\n  - milk\n---\nitems:\n  - bread\n", 3, "more than one YAML document"},
		{"alias", "x: &m milk\nitems:\n  - name: *m\n", 3, "alias"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			path := writeList(t, tt.content)
			_, err := OpenYAML(path)
			checkFormatError(t, err, tt.line, tt.problem)

			// A file that breaks after opening: every method fails, nothing is written.
			good := writeList(t, "items:\n  - {id: a, name: milk}\n")
			f, err := OpenYAML(good)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(good, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err = f.Items(ctx)
			checkFormatError(t, err, tt.line, tt.problem)
			checkFormatError(t, f.MarkCompleted(ctx, "a", Added{}), tt.line, tt.problem)
			checkFormatError(t, f.MarkNotFound(ctx, "a", "x"), tt.line, tt.problem)
			checkFormatError(t, f.MarkFailed(ctx, "a", "x"), tt.line, tt.problem)
			if b, _ := os.ReadFile(good); string(b) != tt.content {
				t.Errorf("malformed file was changed:\n%s", b)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(good), ".*tmp-*")); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func checkFormatError(t *testing.T, err error, line int, problem string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v, want a *FormatError", err)
	}
	if fe.Line != line {
		t.Errorf("error line = %d, want %d (%v)", fe.Line, line, err)
	}
	if !strings.Contains(err.Error(), "line "+strconv.Itoa(line)+":") || !strings.Contains(err.Error(), problem) {
		t.Errorf("error %q should name line %d and %q", err, line, problem)
	}
}

func TestYAMLUnknownIDAndMissingFile(t *testing.T) {
	ctx := testCtx(t)
	path := writeList(t, "items:\n  - {id: a, name: milk}\n")
	f, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := f.MarkFailed(ctx, "gone", "x"); !errors.Is(err, ErrUnknownItem) {
		t.Errorf("MarkFailed(unknown) = %v, want ErrUnknownItem", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a failed mark changed the file")
	}
	if _, err := OpenYAML(filepath.Join(t.TempDir(), "nope.yaml")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("OpenYAML(missing) = %v, want 'does not exist'", err)
	}
	if _, err := OpenYAML(""); err == nil {
		t.Error("OpenYAML(\"\") succeeded")
	}
}

func TestYAMLReadOnly(t *testing.T) {
	ctx := testCtx(t)
	content := "items:\n  - milk\n  - {name: bread}\n"
	path := writeList(t, content)
	f, err := OpenYAML(path, ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	items, err := f.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].ID == "" || items[0].ID == items[1].ID {
		t.Errorf("read-only items need distinct ids in memory: %+v", items)
	}
	for name, err := range map[string]error{
		"MarkCompleted": f.MarkCompleted(ctx, items[0].ID, Added{}),
		"MarkNotFound":  f.MarkNotFound(ctx, items[0].ID, "x"),
		"MarkFailed":    f.MarkFailed(ctx, items[0].ID, "x"),
		"SendSummary":   f.SendSummary(ctx, report.Summary{}),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s = %v, want ErrReadOnly", name, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("read-only provider changed the file:\n%s", b)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("read-only provider created files: %v", entries)
	}
}

func TestYAMLSendSummary(t *testing.T) {
	ctx := testCtx(t)
	path := writeList(t, "items: []\n")
	f, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(filepath.Dir(f.Path()), "list.summary.md"); f.SummaryPath() != want {
		t.Errorf("SummaryPath = %q, want %q", f.SummaryPath(), want)
	}
	s := report.Summary{Items: []report.ItemResult{{ItemName: "milk", Outcome: report.OutcomeAdded, Quantity: 1, Price: money.Parse("$1.00")}}}
	if err := f.SendSummary(ctx, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.SummaryPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != s.Markdown() {
		t.Errorf("summary file = %q, want the summary's markdown", b)
	}
	if summaryPath("/a/b.YML") != "/a/b.summary.md" || summaryPath("/a/list") != "/a/list.summary.md" {
		t.Error("summaryPath")
	}
}

func TestYAMLWritesThroughSymlink(t *testing.T) {
	ctx := testCtx(t)
	target := writeList(t, "items:\n  - {id: a, name: milk}\n")
	link := filepath.Join(t.TempDir(), "link.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f, err := OpenYAML(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.MarkNotFound(ctx, "a", "x"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced by a file")
	}
	if raw := rawItems(t, target); raw[0]["explanation"] != "x" {
		t.Errorf("target not updated: %v", raw)
	}
}

// TestYAMLConcurrentMarks: 50 goroutines on two providers of the same file
// (two providers take the file lock against each other as two processes
// would) each mark a different item; no update may be lost.
func TestYAMLConcurrentMarks(t *testing.T) {
	const n = 50
	ctx := testCtx(t)
	var b strings.Builder
	b.WriteString("# fifty items\nitems:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: i%d  # item %d\n    name: item %d\n", i, i, i)
	}
	path := writeList(t, b.String())
	providers := make([]*YAMLFile, 2)
	for i := range providers {
		f, err := OpenYAML(path)
		if err != nil {
			t.Fatal(err)
		}
		providers[i] = f
	}

	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f, id := providers[i%2], fmt.Sprintf("i%d", i)
			switch i % 3 {
			case 0:
				errs <- f.MarkCompleted(ctx, id, Added{ProductName: "p" + id, Price: money.Parse("$1.00"), Quantity: 1})
			case 1:
				errs <- f.MarkNotFound(ctx, id, "nf "+id)
			default:
				errs <- f.MarkFailed(ctx, id, "failed "+id)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	raw := rawItems(t, path)
	if len(raw) != n {
		t.Fatalf("%d items in the file, want %d", len(raw), n)
	}
	for i, it := range raw {
		id := fmt.Sprintf("i%d", i)
		var ok bool
		switch i % 3 {
		case 0:
			added, _ := it["added"].(map[string]any)
			ok = it["status"] == "completed" && added["product"] == "p"+id
		case 1:
			ok = it["explanation"] == "nf "+id && reflect.DeepEqual(it["tags"], []any{"#404"})
		default:
			ok = it["error"] == "failed "+id && reflect.DeepEqual(it["tags"], []any{"#failed"})
		}
		if !ok {
			t.Errorf("update lost for %s: %v", id, it)
		}
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "# item 49") || !strings.Contains(string(data), "# fifty items") {
		t.Error("comments lost under concurrent marks")
	}
}

// TestYAMLSecondProcessWaitsForLock starts a second process that takes the
// list lock, proves this process's mark waits for it, and that both updates
// land (the mark re-reads the file the other process wrote).
func TestYAMLSecondProcessWaitsForLock(t *testing.T) {
	ctx := testCtx(t)
	path := writeList(t, "items:\n  - {id: a, name: milk}\n  - {id: b, name: bread}\n")

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GEMINI_SUPPLY_TEST_HELPER=hold-lock", "GEMINI_SUPPLY_TEST_LIST="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })

	// Wait until the child holds the lock.
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-lines:
		if l != "locked" {
			t.Fatalf("helper said %q, want locked", l)
		}
	case <-ctx.Done():
		t.Fatal("helper process never took the lock")
	}

	f, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	var once sync.Once
	f.onLockWait = func() { once.Do(func() { close(waiting) }) }
	done := make(chan error, 1)
	go func() { done <- f.MarkCompleted(ctx, "b", Added{ProductName: "POM bread", Quantity: 1}) }()

	select {
	case <-waiting:
	case err := <-done:
		t.Fatalf("mark finished (%v) while another process held the lock", err)
	case <-ctx.Done():
		t.Fatal("mark never started waiting for the lock")
	}
	select {
	case err := <-done:
		t.Fatalf("mark finished (%v) while another process held the lock", err)
	default:
	}
	if raw := rawItems(t, path); raw[1]["status"] != nil {
		t.Fatalf("file changed while the lock was held: %v", raw)
	}

	// Let the child write its update and release the lock.
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("mark did not finish after the lock was released")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper process: %v", err)
	}
	raw := rawItems(t, path)
	if raw[0]["error"] != "from the other process" || raw[1]["status"] != "completed" {
		t.Errorf("an update was lost: %v", raw)
	}
}

// TestHelperProcess is not a test: it is the second process of
// TestYAMLSecondProcessWaitsForLock. It takes the lock, says "locked", waits
// for a line on stdin, marks item a failed and releases the lock.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("GEMINI_SUPPLY_TEST_HELPER") != "hold-lock" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, err := OpenYAML(os.Getenv("GEMINI_SUPPLY_TEST_LIST"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	err = f.update(ctx, "helper", func(d *document) (bool, error) {
		fmt.Println("locked")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return false, err
		}
		for i := range d.entries {
			if d.entries[i].item.ID == "a" {
				setRunTag(d.entries[i].node, TagFailed)
				setString(d.entries[i].node, keyError, "from the other process")
			}
		}
		return true, nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	os.Exit(0)
}

func TestYAMLLockWaitHonoursContext(t *testing.T) {
	path := writeList(t, "items:\n  - {id: a, name: milk}\n")
	holder, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := holder.lock(testCtx(t), "hold")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock() // idempotent
	f, err := OpenYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.onLockWait = cancel // give up as soon as it has to wait
	err = f.MarkFailed(ctx, "a", "x")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "holds the lock") {
		t.Errorf("MarkFailed with the lock held and ctx cancelled = %v", err)
	}
	// The semaphore was released: the same provider works once the lock is free.
	unlock()
	if err := f.MarkFailed(testCtx(t), "a", "x"); err != nil {
		t.Errorf("after release: %v", err)
	}
}

func BenchmarkYAMLMark(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("items:\n")
	for i := range 30 {
		fmt.Fprintf(&sb, "  - id: i%d\n    name: item %d  # comment\n", i, i)
	}
	path := filepath.Join(b.TempDir(), "list.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := OpenYAML(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := f.MarkNotFound(ctx, fmt.Sprintf("i%d", i%30), "x"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkYAMLMarkWrites: every mark changes the file (a new explanation),
// so each one reads, checks, writes and renames.
func BenchmarkYAMLMarkWrites(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("items:\n")
	for i := range 30 {
		fmt.Fprintf(&sb, "  - id: i%d\n    name: item %d  # comment\n", i, i)
	}
	path := filepath.Join(b.TempDir(), "list.yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := OpenYAML(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := f.MarkNotFound(ctx, fmt.Sprintf("i%d", i%30), strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// With the household's language French, the summary file is French.
func TestYAMLSendSummaryInFrench(t *testing.T) {
	ctx := testCtx(t)
	path := writeList(t, "items: []\n")
	fr := messages.For("fr")
	f, err := OpenYAML(path, WithMessages(fr))
	if err != nil {
		t.Fatal(err)
	}
	s := report.Summary{Items: []report.ItemResult{{ItemName: "lait", Outcome: report.OutcomeAdded, Quantity: 1, Price: money.Parse("$1.00")}},
		Usage: report.Usage{TotalTokens: 10, PromptTokens: 8, OutputTokens: 2}}
	if err := f.SendSummary(ctx, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.SummaryPath())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != s.MarkdownIn(fr) {
		t.Errorf("summary file = %q, want the French markdown", b)
	}
	for _, w := range []string{"# Épicerie", "1,00\u00a0$", "environ 0,00\u00a0$"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("summary file lacks %q:\n%s", w, b)
		}
	}
	if left := fr.Foreign(string(b)); len(left) > 0 {
		t.Errorf("English left in the summary file: %q", left)
	}
}
