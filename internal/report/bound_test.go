package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestBounded(t *testing.T) {
	long := strings.Repeat("é", 5000)
	r := ItemResult{ItemID: "x", ItemName: long, ProductName: long, URL: "https://www.metro.ca/" + strings.Repeat("a", MaxURLBytes), Explanation: long, Replay: long}.Bounded()
	for name, got := range map[string]struct {
		s     string
		limit int
	}{
		"name": {r.ItemName, MaxNameRunes}, "product": {r.ProductName, MaxProductRunes},
		"explanation": {r.Explanation, MaxTextRunes}, "replay": {r.Replay, MaxTextRunes},
	} {
		if n := utf8.RuneCountInString(got.s); n != got.limit || !strings.HasSuffix(got.s, "…") {
			t.Errorf("%s: %d runes, want %d ending in …", name, n, got.limit)
		}
	}
	if r.URL != "" {
		t.Errorf("an over-long URL was kept (cut it would lead elsewhere)")
	}
	if Clip("milk", MaxNameRunes) != "milk" {
		t.Error("a short text was changed")
	}
	s := Summary{Items: []ItemResult{{ItemName: long}}, Warnings: []string{long}}.Bounded()
	if utf8.RuneCountInString(s.Items[0].ItemName) != MaxNameRunes || utf8.RuneCountInString(s.Warnings[0]) != MaxTextRunes {
		t.Error("the summary is not bounded")
	}
}
