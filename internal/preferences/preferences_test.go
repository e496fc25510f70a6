package preferences

import (
	"os"
	"path/filepath"
	"strings"
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

// TestKeyOfAnOverlongText: the longest item a list may hold, with tags,
// has its key; a text past maxKeyInput has none (and costs nothing).
func TestKeyOfAnOverlongText(t *testing.T) {
	longest := strings.Repeat("é", 200) + " #404 #failed" // report.MaxNameRunes runes, two bytes each
	if got := Key(longest); got != strings.Repeat("é", 200) {
		t.Errorf("Key of the longest item = %.40q…, want its 200 letters", got)
	}
	if got := Key(strings.Repeat("k", maxKeyInput+1)); got != "" {
		t.Errorf("Key of a %d-byte text = %.40q…, want none", maxKeyInput+1, got)
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

// TestReadFile reads the older file as earlier versions wrote it: every
// field kept, keys written by hand normalised, sorted by key.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if got, err := ReadFile(dir); err != nil || len(got) != 0 {
		t.Fatalf("no file: %v, %v; want nothing", got, err)
	}
	const old = `{
  "version": 1,
  "products": {
    "milk": {"name": "Natrel 2L 1% Milk", "url": "https://www.metro.ca/p/456", "product_id": "456", "price": "$5.49", "when": "2025-03-01T10:00:00Z"},
    "2x Bananas #404": {"name": "Dole Bananas", "when": "2025-03-02T09:12:00Z"}
  }
}`
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Key: "banana", Product: Product{Name: "Dole Bananas", When: time.Date(2025, 3, 2, 9, 12, 0, 0, time.UTC)}},
		{Key: "milk", Product: Product{Name: "Natrel 2L 1% Milk", URL: "https://www.metro.ca/p/456", ProductID: "456", Price: "$5.49", When: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)}},
	}
	if len(got) != len(want) {
		t.Fatalf("read %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Key != want[i].Key || got[i].Name != want[i].Name || got[i].URL != want[i].URL ||
			got[i].ProductID != want[i].ProductID || got[i].Price != want[i].Price || !got[i].When.Equal(want[i].When) {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestReadFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not JSON", "{not json", "delete it"},
		{"newer format", `{"version": 2, "products": {}}`, "upgrade gemini-supply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, FileName), []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFile(dir)
			if err == nil || !strings.Contains(err.Error(), FileName) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadFile = %v; want an error naming the file and saying %q", err, tc.want)
			}
		})
	}
}

func BenchmarkKey(b *testing.B) {
	for b.Loop() {
		Key("2x President's Choice Organic Bananas #404")
	}
}
