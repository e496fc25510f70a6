package choice

import (
	"strings"
	"testing"
)

func TestParseReply(t *testing.T) {
	product := func(i int, remember bool) *Answer { return &Answer{Kind: KindProduct, Index: i, Remember: remember} }
	tests := []struct {
		text         string
		awaitingText bool
		want         *Answer
		askText      bool
		retry        bool
	}{
		{text: "2", want: product(1, false)},
		{text: " #3. ", want: product(2, false)},
		{text: "⭐2", want: product(1, true)},
		{text: "2⭐", want: product(1, true)},
		{text: "2*", want: product(1, true)},
		{text: "Remember 1", want: product(0, true)},
		{text: "4", want: &Answer{Kind: KindNothing}},
		{text: "Nothing.", want: &Answer{Kind: KindNothing}},
		{text: "5", askText: true},
		{text: "something else", askText: true},
		{text: "6", want: &Answer{Kind: KindSkip}},
		{text: "Skip this week", want: &Answer{Kind: KindSkip}},
		{text: "skip", want: &Answer{Kind: KindSkip}},
		{text: "next week!", want: &Answer{Kind: KindSkip}},
		{text: "⭐6", retry: true}, // Skip cannot be remembered
		{text: "7", retry: true},
		{text: "0", retry: true},
		{text: "⭐4", retry: true}, // Nothing cannot be remembered
		// Any number that is not an option's is asked again, never searched for.
		{text: "99999999999999999999999", retry: true},
		{text: "1.5", retry: true},
		{text: "1,5", retry: true},
		{text: "-2", retry: true},
		{text: "2e3", retry: true},
		{text: "⭐1.5", retry: true},
		{text: "1 000", retry: true},
		{text: "", retry: true},
		{text: "the lactose-free one", want: &Answer{Kind: KindCustom, Text: "the lactose-free one"}},
		{text: "2", awaitingText: true, want: &Answer{Kind: KindCustom, Text: "2"}},
		// Control and invisible characters are dropped, newlines folded
		// (issue 24: these were searched for as custom text).
		{text: "\x00", retry: true},
		{text: "\u200b", awaitingText: true, retry: true},
		{text: "\u200b2", want: product(1, false)},
		{text: "\u202e2", want: product(1, false)},
		{text: "\ufeff2\u2060", want: product(1, false)},
		{text: "⭐\ufe0f2", want: product(1, true)},
		{text: "\u3164", retry: true},
		{text: "lactose\n\r\tfree\u2028milk\x07", want: &Answer{Kind: KindCustom, Text: "lactose free milk"}},
		{text: "ye\u200bs", awaitingText: true, want: &Answer{Kind: KindCustom, Text: "yes"}},
		{text: strings.Repeat("é", MaxCustomRunes), want: &Answer{Kind: KindCustom, Text: strings.Repeat("é", MaxCustomRunes)}},
		{text: strings.Repeat("x", MaxCustomRunes+1), retry: true},
		{text: strings.Repeat("x", MaxCustomRunes+1), awaitingText: true, retry: true},
	}
	for _, tt := range tests {
		got := ParseReply(tt.text, 3, tt.awaitingText)
		switch {
		case tt.want != nil && (got.Answer == nil || *got.Answer != *tt.want):
			t.Errorf("ParseReply(%q) = %+v, want answer %+v", tt.text, got, *tt.want)
		case tt.want == nil && got.Answer != nil:
			t.Errorf("ParseReply(%q) answered %+v", tt.text, *got.Answer)
		case got.AskText != tt.askText || (got.Retry != "") != tt.retry:
			t.Errorf("ParseReply(%q) = %+v, want askText %v retry %v", tt.text, got, tt.askText, tt.retry)
		}
	}
}

func TestParseYesNoIgnoresInvisibles(t *testing.T) {
	for text, want := range map[string]bool{"\u200byes": true, "NO\u202e": false, " y\n": true} {
		if yes, ok := ParseYesNo(text); !ok || yes != want {
			t.Errorf("ParseYesNo(%q) = %v, %v; want %v, true", text, yes, ok, want)
		}
	}
	if _, ok := ParseYesNo("\x00"); ok {
		t.Error("a NUL read as yes or no")
	}
}

func TestCustomText(t *testing.T) {
	if got, retry := CustomText("  two\n\nlines\u200d "); got != "two lines" || retry != "" {
		t.Errorf("CustomText = %q, %q", got, retry)
	}
	if _, retry := CustomText(strings.Repeat("a", MaxCustomRunes+1)); !strings.Contains(retry, "at most 200") {
		t.Errorf("too long: %q", retry)
	}
}
