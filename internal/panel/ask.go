package panel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Question is a question waiting in the panel: a product choice or a
// safety confirmation, with the same options as on Telegram.
type Question struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // "choice" or "confirm"
	// A choice: the item, why the agent asks, the numbered products.
	Item    string          `json:"item,omitempty"`
	Context string          `json:"context,omitempty"`
	Options []choice.Option `json:"options,omitempty"`
	// A confirmation: what the model explained, the action it wants.
	Explanation string `json:"explanation,omitempty"`
	Action      string `json:"action,omitempty"`

	answers chan reply
}

// reply is a person's answer from the page.
type reply struct {
	choice  choice.Answer // choice.By: who answered, for a confirmation too
	confirm bool
}

// ErrNobodyWatching: no page of the panel is open, so it cannot ask (the
// other channels still do; with none, the run goes on as without a way to
// ask — a question nobody can see would only hold the item).
var ErrNobodyWatching = errors.New("panel: no page is open")

// Choose asks in the panel (ask's Chooser): the question shows on every
// open page until one answers it, or ctx ends — another channel answered
// or the time ran out (the page then says so).
func (p *Panel) Choose(ctx context.Context, q choice.Question) (choice.Answer, error) {
	// The options as the page shows them: prices in the panel's language
	// ("7,49 $"); answers are by index, so the copy changes nothing else.
	opts := slices.Clone(q.Options)
	for i := range opts {
		opts[i].Price = money.TextIn(opts[i].Price, p.opts.Messages.Lang())
	}
	pq, err := p.addQuestion(Question{Kind: "choice", Item: q.ItemName, Context: q.Context, Options: opts})
	if err != nil {
		return choice.Answer{}, err
	}
	select {
	case r := <-pq.answers:
		p.removeQuestion(pq.ID, "")
		return r.choice, nil
	case <-ctx.Done():
		p.removeQuestion(pq.ID, p.closedNote(ctx, q.ItemName))
		return choice.Answer{}, context.Cause(ctx)
	}
}

// Confirm asks for a safety confirmation in the panel (ask's Confirmer).
func (p *Panel) Confirm(ctx context.Context, explanation, action string) (bool, error) {
	yes, _, err := p.ConfirmBy(ctx, explanation, action)
	return yes, err
}

// ConfirmBy is Confirm that also says who answered (behind ingress; ""
// when not known) — ask's ConfirmerBy.
func (p *Panel) ConfirmBy(ctx context.Context, explanation, action string) (bool, string, error) {
	pq, err := p.addQuestion(Question{Kind: "confirm", Explanation: explanation, Action: action})
	if err != nil {
		return false, "", err
	}
	select {
	case r := <-pq.answers:
		p.removeQuestion(pq.ID, "")
		return r.confirm, r.choice.By, nil
	case <-ctx.Done():
		p.removeQuestion(pq.ID, p.closedNote(ctx, p.opts.Messages.T("panel.the_safety_check")))
		return false, "", context.Cause(ctx)
	}
}

// closedNote says why a question left the panel unanswered here, in the
// panel's language.
func (p *Panel) closedNote(ctx context.Context, what string) string {
	m := p.opts.Messages
	var c *choice.Closed
	if errors.As(context.Cause(ctx), &c) {
		switch {
		case c.Timeout:
			return m.T("panel.note_timeout", "what", what)
		case c.By != "":
			return m.T("panel.note_answered", "what", what, "channel", c.By)
		}
	}
	return m.T("panel.note_withdrawn", "what", what)
}

func (p *Panel) addQuestion(q Question) (*Question, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	q.ID = hex.EncodeToString(b)
	q.answers = make(chan reply, 1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.clients) == 0 {
		return nil, ErrNobodyWatching
	}
	p.questions = append(p.questions, &q)
	p.nudgeLocked()
	return &q, nil
}

func (p *Panel) removeQuestion(id, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, q := range p.questions {
		if q.ID == id {
			p.questions = append(p.questions[:i], p.questions[i+1:]...)
			break
		}
	}
	if note != "" {
		p.state.Note = note
	}
	p.nudgeLocked()
}

// answerRequest is what the page posts to /api/answer.
type answerRequest struct {
	ID     string `json:"id"`
	Answer string `json:"answer"` // product | nothing | skip | custom | yes | no
	Index  int    `json:"index"`  // product: the option's index
	Text   string `json:"text"`   // custom: what to look for instead
	// Remember (product): ⭐, pin the product as the item's own.
	Remember bool `json:"remember"`
}

// serveAnswer takes a page's answer to a waiting question: checked like a
// reply on Telegram (an option that exists, a non-empty text within the
// limit), first answer wins.
func (p *Panel) serveAnswer(w http.ResponseWriter, r *http.Request) {
	m := p.opts.Messages
	var req answerRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10)).Decode(&req); err != nil {
		http.Error(w, "the answer must be JSON", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	var q *Question
	for _, x := range p.questions {
		if x.ID == req.ID {
			q = x
		}
	}
	p.mu.Unlock()
	if q == nil {
		http.Error(w, m.T("panel.answer_gone"), http.StatusConflict)
		return
	}
	var rep reply
	switch {
	case q.Kind == "confirm" && (req.Answer == "yes" || req.Answer == "no"):
		rep.confirm = req.Answer == "yes"
	case q.Kind == "choice" && req.Answer == "product":
		if req.Index < 0 || req.Index >= len(q.Options) {
			http.Error(w, m.T("panel.answer_choose", "n", len(q.Options)), http.StatusBadRequest)
			return
		}
		rep.choice = choice.Answer{Kind: choice.KindProduct, Index: req.Index, Remember: req.Remember}
	case q.Kind == "choice" && req.Answer == "nothing":
		rep.choice = choice.Answer{Kind: choice.KindNothing}
	case q.Kind == "choice" && req.Answer == "skip":
		rep.choice = choice.Answer{Kind: choice.KindSkip}
	case q.Kind == "choice" && req.Answer == "custom":
		// The same reading as a typed reply on Telegram or the phone.
		text, retry := choice.CustomText(req.Text)
		if retry != "" {
			http.Error(w, m.T("panel.answer_text", "max", choice.MaxCustomRunes, "why", retry), http.StatusBadRequest)
			return
		}
		rep.choice = choice.Answer{Kind: choice.KindCustom, Text: text}
	default:
		http.Error(w, m.T("panel.answer_wrong"), http.StatusBadRequest)
		return
	}
	rep.choice.By = runstatus.ByFrom(r.Context()) // who answered (behind ingress)
	select {
	case q.answers <- rep:
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, m.T("panel.answer_gone"), http.StatusConflict)
	}
}
