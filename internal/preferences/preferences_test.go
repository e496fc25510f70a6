package preferences

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2x Bananas #404", "banana"},
		{"bananas", "banana"},
		{"Banana", "banana"},
		{"2 x milk", "milk"},
		{"x3 Eggs", "egg"},
		{"12 eggs", "egg"},
		{"milk x2", "milk"},
		{"milk ×2", "milk"},
		{"milk (2)", "milk"},
		{"(2) milk", "milk"},
		{"2x 3 bananas", "banana"},
		{"Cherry Tomatoes #failed", "cherry tomato"},
		{"tomato", "tomato"},
		{"Strawberries", "strawberry"},
		{"strawberry", "strawberry"},
		{"peaches", "peach"},
		{"glasses", "glass"},
		{"hummus", "hummus"},
		{"asparagus", "asparagus"},
		{"cookies", "cookie"},
		{"cookie", "cookie"},
		{"loaves of bread", "loaf of bread"},
		{"Kiwis", "kiwi"},
		{"olives", "olive"},
		{"quiches", "quiche"},
		{"President's Choice   1% Milk", "president choice 1% milk"},
		{"2 L milk", "2 l milk"},
		{"500 g butter", "500 g butter"},
		{"organic milk", "organic milk"},
		{"  Milk, 2% ", "milk 2%"},
		{"#404", ""},
		{"", ""},
		{"pommes de terre", "pomme de terre"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Key(tt.in)
			if got != tt.want {
				t.Errorf("Key(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Key(got); again != got {
				t.Errorf("Key not idempotent: Key(%q) = %q", got, again)
			}
		})
	}
}

// TestKeyFoldsSingularAndPlural checks that both forms of common grocery
// words meet at one key.
func TestKeyFoldsSingularAndPlural(t *testing.T) {
	pairs := [][2]string{
		{"apple", "apples"}, {"banana", "bananas"}, {"egg", "eggs"}, {"berry", "berries"},
		{"tomato", "tomatoes"}, {"potato", "potatoes"}, {"peach", "peaches"}, {"box", "boxes"},
		{"radish", "radishes"}, {"cookie", "cookies"}, {"brownie", "brownies"}, {"pie", "pies"},
		{"loaf", "loaves"}, {"olive", "olives"}, {"avocado", "avocados"}, {"cheese", "cheeses"},
		{"turkey", "turkeys"}, {"kiwi", "kiwis"}, {"onion", "onions"}, {"lemon", "lemons"},
		{"orange", "oranges"}, {"pea", "peas"}, {"quiche", "quiches"}, {"sandwich", "sandwiches"},
		{"glass", "glasses"}, {"chip", "chips"}, {"leaf", "leaves"}, {"cherry", "cherries"},
	}
	for _, p := range pairs {
		if a, b := Key(p[0]), Key(p[1]); a != b {
			t.Errorf("Key(%q) = %q but Key(%q) = %q", p[0], a, p[1], b)
		}
	}
}

func TestRememberLookupRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	p := Product{Name: "Dole Bananas", URL: "https://www.metro.ca/en/p/123", ProductID: "123", Price: "$1.29", When: when}
	if err := s.Remember(Key("2x Bananas #404"), p); err != nil {
		t.Fatal(err)
	}
	// A fresh store (the next run) finds it under any spelling of the same item.
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bananas", "Banana", "3x bananas #failed"} {
		got, ok := s2.Lookup(name)
		if !ok || got != p {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v", name, got, ok, p)
		}
	}
	// The file is readable JSON with the documented shape.
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Version  int                        `json:"version"`
		Products map[string]json.RawMessage `json:"products"`
	}
	if err := json.Unmarshal(data, &f); err != nil || f.Version != 1 || len(f.Products) != 1 || f.Products["banana"] == nil {
		t.Fatalf("file = %s (err %v)", data, err)
	}
	st, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v; want 0600", st.Mode().Perm(), err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// TestLookupRule: a remembered product is used unless the list entry names a
// brand or other qualifiers.
func TestLookupRule(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	milk := Product{Name: "Natrel 2L 2% Milk", ProductID: "m1"}
	organic := Product{Name: "Organic Meadow 2L Milk", ProductID: "m2"}
	if err := s.Remember("milk", milk); err != nil {
		t.Fatal(err)
	}
	if err := s.Remember("organic milk", organic); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		item string
		want string // product id, "" = none
	}{
		{"milk", "m1"},
		{"Milk", "m1"},
		{"2x milk", "m1"},
		{"milk #404", "m1"},
		{"Organic milk", "m2"},
		{"2 organic milks", "m2"},
		{"Natrel milk", ""}, // brand named: ask, don't assume
		{"milk 2%", ""},     // qualifier
		{"lactose-free milk", ""},
		{"chocolate milk", ""},
		{"bread", ""},
	}
	for _, tt := range tests {
		got, ok := s.Lookup(tt.item)
		if (tt.want == "") == ok || (ok && got.ProductID != tt.want) {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.item, got.ProductID, ok, tt.want)
		}
	}
}

func TestForget(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remember("eggs", Product{Name: "Burnbrae 12 eggs"}); err != nil {
		t.Fatal(err)
	}
	err = s.Forget("nope")
	if !errors.Is(err, ErrNotRemembered) || !strings.Contains(err.Error(), "preferences list") {
		t.Fatalf("Forget(unknown) = %v; want ErrNotRemembered naming the list command", err)
	}
	if err := s.Forget("Eggs"); err != nil { // any spelling of the item works
		t.Fatal(err)
	}
	if _, ok := s.Lookup("egg"); ok {
		t.Fatal("still remembered after Forget")
	}
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Fatalf("List = %v, %v", l, err)
	}
}

func TestListSortedAndRememberValidation(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"yogurt", "apples", "milk"} {
		if err := s.Remember(k, Product{Name: k + " product"}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range l {
		keys = append(keys, e.Key)
		if e.When.IsZero() {
			t.Errorf("%s: When not set", e.Key)
		}
	}
	if got := strings.Join(keys, ","); got != "apple,milk,yogurt" {
		t.Errorf("keys = %s", got)
	}
	if err := s.Remember("#404", Product{Name: "x"}); err == nil {
		t.Error("Remember with an empty key succeeded")
	}
	if err := s.Remember("milk", Product{}); err == nil {
		t.Error("Remember without a product name succeeded")
	}
}

// TestTwoStoresSameFile: the service and the CLI each open the file; each sees
// the other's changes and neither loses them.
func TestTwoStoresSameFile(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Remember("milk", Product{Name: "A milk"}); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Lookup("milk"); !ok {
		t.Fatal("b does not see a's write")
	}
	if err := b.Forget("milk"); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Lookup("milk"); ok {
		t.Fatal("a still sees the product b forgot")
	}
	if err := a.Remember("bread", Product{Name: "A bread"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Remember("eggs", Product{Name: "B eggs"}); err != nil {
		t.Fatal(err)
	}
	l, err := a.List()
	if err != nil || len(l) != 2 {
		t.Fatalf("List = %v, %v; want bread and egg", l, err)
	}
}

func TestConcurrentRemember(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		st := s
		if i%2 == 1 {
			st = other
		}
		wg.Go(func() {
			errs <- st.Remember(fmt.Sprintf("item %d", i), Product{Name: fmt.Sprintf("product %d", i)})
			st.Lookup("item 0")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.List()
	if err != nil || len(l) != 40 {
		t.Fatalf("List has %d entries (err %v); want 40: concurrent writes lost updates", len(l), err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(""); err == nil || !strings.Contains(err.Error(), "data_dir") {
		t.Errorf("Open(\"\") = %v; want an error naming data_dir", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), FileName) || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("Open(corrupt) = %v; want an error naming the file and what to do", err)
	}
}

// TestLookupKeepsLastGoodCopy: a file broken after start-up does not make the
// run forget what it knew.
func TestLookupKeepsLastGoodCopy(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remember("milk", Product{Name: "Natrel"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("garbage that is longer than before, surely"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Lookup("milk"); !ok || p.Name != "Natrel" {
		t.Fatalf("Lookup = %+v, %v", p, ok)
	}
	if _, err := s.List(); err == nil {
		t.Fatal("List on a corrupt file succeeded")
	}
}

func BenchmarkKey(b *testing.B) {
	for b.Loop() {
		Key("2x President's Choice Organic Bananas #404")
	}
}

func BenchmarkLookup(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		if err := s.Remember(fmt.Sprintf("item %d", i), Product{Name: "p"}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		s.Lookup("item 150")
	}
}
