package ask_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/ask"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// recorder is a channel that answers at once and keeps what it was shown.
type recorder struct {
	q                   choice.Question
	explanation, action string
}

func (r *recorder) Choose(_ context.Context, q choice.Question) (choice.Answer, error) {
	r.q = q
	return choice.Answer{Kind: choice.KindNothing}, nil
}

func (r *recorder) Confirm(_ context.Context, explanation, action string) (bool, error) {
	r.explanation, r.action = explanation, action
	return false, nil
}

// TestQuestionsAreBounded: whatever the agent puts in a question (a 100 KB
// item name, explanation or product name), every channel is shown bounded
// texts.
func TestQuestionsAreBounded(t *testing.T) {
	rec := &recorder{}
	a, err := ask.New(ask.Options{Timeout: time.Minute}, ask.Channel{Name: "rec", Chooser: rec, Confirmer: rec})
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("x", 100<<10)
	if _, err := a.Choose(context.Background(), choice.Question{ItemName: huge, Context: huge, Options: []choice.Option{{Name: huge, Price: huge, URL: "https://www.metro.ca/" + huge}}}); err != nil {
		t.Fatal(err)
	}
	q := rec.q
	if utf8.RuneCountInString(q.ItemName) > report.MaxNameRunes || utf8.RuneCountInString(q.Context) > report.MaxTextRunes ||
		utf8.RuneCountInString(q.Options[0].Name) > report.MaxProductRunes || len(q.Options[0].Price) > 60 || q.Options[0].URL != "" {
		t.Fatalf("the channel was shown %d/%d/%d/%d bytes", len(q.ItemName), len(q.Context), len(q.Options[0].Name), len(q.Options[0].URL))
	}
	if _, err := a.Confirm(context.Background(), huge, huge); err != nil {
		t.Fatal(err)
	}
	if utf8.RuneCountInString(rec.explanation) > report.MaxTextRunes || utf8.RuneCountInString(rec.action) > report.MaxTextRunes {
		t.Fatal("the confirmation was not bounded")
	}
}
