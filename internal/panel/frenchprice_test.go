package panel

import (
	"context"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
)

// A French panel shows a question's option prices the French way ("7,49 $").
func TestQuestionPricesInPanelLanguage(t *testing.T) {
	p, err := New(Options{Messages: messages.For("fr"), Start: (&control{}).start, Stop: (&control{}).stop})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	openPage(p)
	got := make(chan choice.Answer, 1)
	askInBackground(t, p, ctx, choice.Question{ItemName: "beurre", Options: []choice.Option{{Name: "Lactantia", Price: "$7.49"}, {Name: "Natrel"}}}, got)
	p.mu.Lock()
	opts := p.questions[0].Options
	p.mu.Unlock()
	if opts[0].Price != "7,49\u00a0$" || opts[1].Price != "" {
		t.Errorf("option prices %q, %q; want 7,49 $ and none", opts[0].Price, opts[1].Price)
	}
	cancel()
	<-got
}
