package choice

import "testing"

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
		{text: "6", retry: true},
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
