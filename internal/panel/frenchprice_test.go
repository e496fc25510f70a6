package panel

import (
	"context"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// A French panel shows a question's option prices the French way ("7,49 $").
func TestQuestionPricesInPanelLanguage(t *testing.T) {
	p, err := New(Options{Messages: messages.For("fr"), Start: (&control{}).start, Stop: (&control{}).stop})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.mu.Lock()
	p.clients[make(chan struct{}, 1)] = struct{}{} // a page is open
	p.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = p.Choose(ctx, choice.Question{ItemName: "beurre", Options: []choice.Option{{Name: "Lactantia", Price: "$7.49"}, {Name: "Natrel"}}})
	}()
	var opts []choice.Option
	testwait.Until(t, "the question", 60*time.Second, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.questions) == 1 {
			opts = p.questions[0].Options
		}
		return opts != nil
	})
	if opts[0].Price != "7,49\u00a0$" || opts[1].Price != "" {
		t.Errorf("option prices %q, %q; want 7,49 $ and none", opts[0].Price, opts[1].Price)
	}
	cancel()
	<-done
}
