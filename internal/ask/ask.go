// Package ask puts one question — a product choice or a safety
// confirmation — to every configured channel at once (Telegram, the Home
// Assistant companion app on the phone, the panel) and returns the
// first valid answer. The other channels are then closed with a cause
// (choice.Closed) that says who answered, so each can edit or clear its
// message ("answered on the phone"); a channel that cannot deliver is
// skipped, so the others (Telegram as the fallback) still ask.
//
// Every channel keeps the same semantics: it re-asks on an invalid reply
// and returns only a valid answer; ⭐ (remember) travels in the answer.
// The Asker owns the response timeout: when it passes, every channel is
// closed with a timeout cause and the answer is KindNothing with Reason
// "timeout" (a confirmation is No). The caller's time budget stays paused
// meanwhile: shop pauses it around present_options (a waitsForUser tool),
// the agent around its Confirmer.
package ask

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// Chooser asks a person to choose a product (shop.ChoiceResolver's method).
// It returns a valid answer, or an error when it cannot ask; it stops when
// ctx ends (the cause is a *choice.Closed when another channel answered or
// the time ran out).
type Chooser interface {
	Choose(ctx context.Context, q choice.Question) (choice.Answer, error)
}

// Confirmer asks a person to allow a flagged action (agent.Confirmer's method).
type Confirmer interface {
	Confirm(ctx context.Context, explanation, action string) (bool, error)
}

// ConfirmerBy is a Confirmer that also says who answered (a Home
// Assistant user's name, "" when not known). The panel and the phone are;
// a channel that is not is asked with Confirm and names nobody.
type ConfirmerBy interface {
	ConfirmBy(ctx context.Context, explanation, action string) (allowed bool, by string, err error)
}

// confirmation is one channel's answer to a safety confirmation.
type confirmation struct {
	yes bool
	by  string
}

// Channel is one way to reach the household. Chooser or Confirmer may be
// nil when the channel cannot ask that kind of question.
type Channel struct {
	// Name is how the other channels name it ("the phone", "Telegram").
	Name      string
	Chooser   Chooser
	Confirmer Confirmer
}

// Options configures an Asker.
type Options struct {
	// Timeout is how long a question waits for an answer (required).
	Timeout time.Duration
	// Logger; nil discards.
	Logger *slog.Logger
	// Messages is the language of the line that tells the other channels
	// what was answered (the zero value speaks English).
	Messages messages.Catalog
}

// Asker fans questions out to its channels. It implements
// shop.ChoiceResolver and agent.Confirmer.
type Asker struct {
	channels []Channel
	timeout  time.Duration
	log      *slog.Logger
	msg      messages.Catalog
	// expiry starts a question's timeout (time.After; a test ends it on cue).
	expiry func(time.Duration) <-chan time.Time
}

// ErrNoChannel: no channel can ask this kind of question.
var ErrNoChannel = errors.New("no channel can ask")

// New returns an Asker over channels (in the order they are listed).
func New(opts Options, channels ...Channel) (*Asker, error) {
	if opts.Timeout <= 0 {
		return nil, errors.New("ask: a positive timeout is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Asker{channels: channels, timeout: opts.Timeout, log: opts.Logger.With("component", "ask"), msg: opts.Messages, expiry: time.After}, nil
}

// Channels names the channels that can choose and confirm.
func (a *Asker) Channels() []string {
	names := make([]string, len(a.channels))
	for i, c := range a.channels {
		names[i] = c.Name
	}
	return names
}

// Choose asks every channel that can choose; the first valid answer wins.
// Nobody answering within the timeout gives KindNothing with Reason
// "timeout" and a nil error. An error means no channel could ask (every
// one failed) or ctx ended.
func (a *Asker) Choose(ctx context.Context, q choice.Question) (choice.Answer, error) {
	q = q.Bounded() // every channel shows bounded texts
	var asks []func(context.Context) (choice.Answer, error)
	var names []string
	for _, c := range a.channels {
		if c.Chooser != nil {
			ch := c.Chooser
			asks = append(asks, func(ctx context.Context) (choice.Answer, error) { return ch.Choose(ctx, q) })
			names = append(names, c.Name)
		}
	}
	timedOut := func(ans choice.Answer) bool {
		return ans.Kind == choice.KindNothing && ans.Reason == choice.ReasonTimeout
	}
	ans, err := fanOut(ctx, a, names, asks, timedOut, func(ans choice.Answer) string { return choice.AnswerLineIn(a.msg, q, ans) })
	if errors.Is(err, errTimeout) {
		a.log.Info("no answer in time", "item", q.ItemName, "timeout", a.timeout)
		return choice.Answer{Kind: choice.KindNothing, Reason: choice.ReasonTimeout}, nil
	}
	if err != nil {
		return choice.Answer{}, fmt.Errorf("ask about %q: %w", q.ItemName, err)
	}
	return ans, nil
}

// Confirm asks every channel that can confirm; the first answer wins. No
// answer within the timeout is No (false, nil); an error (no channel could
// ask, ctx ended) is never a yes.
func (a *Asker) Confirm(ctx context.Context, explanation, action string) (bool, error) {
	yes, _, err := a.ConfirmBy(ctx, explanation, action)
	return yes, err
}

// ConfirmBy is Confirm that also says who answered, when the channel that
// answered first knows ("" otherwise, and on a timeout).
func (a *Asker) ConfirmBy(ctx context.Context, explanation, action string) (bool, string, error) {
	explanation, action = report.Clip(explanation, report.MaxTextRunes), report.Clip(action, report.MaxTextRunes)
	var asks []func(context.Context) (confirmation, error)
	var names []string
	for _, c := range a.channels {
		if c.Confirmer != nil {
			cf := c.Confirmer
			asks = append(asks, func(ctx context.Context) (confirmation, error) {
				if by, ok := cf.(ConfirmerBy); ok {
					yes, who, err := by.ConfirmBy(ctx, explanation, action)
					return confirmation{yes: yes, by: who}, err
				}
				yes, err := cf.Confirm(ctx, explanation, action)
				return confirmation{yes: yes}, err
			})
			names = append(names, c.Name)
		}
	}
	c, err := fanOut(ctx, a, names, asks, nil, func(c confirmation) string {
		if c.yes {
			return a.msg.T("question.yes")
		}
		return a.msg.T("question.no")
	})
	if errors.Is(err, errTimeout) {
		a.log.Info("no confirmation in time: treated as no", "action", action)
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("ask for confirmation: %w", err)
	}
	return c.yes, c.by, nil
}

var errTimeout = errors.New("no answer in time")

type result[T any] struct {
	i   int
	v   T
	err error
}

// fanOut runs every ask at once under one ctx and returns the first valid
// answer (gaveUp answers — a channel's own timeout — do not win). The
// others are cancelled with a *choice.Closed cause; fanOut waits for them
// to finish (they edit or clear their messages) before it returns.
func fanOut[T any](ctx context.Context, a *Asker, names []string, asks []func(context.Context) (T, error), gaveUp func(T) bool, line func(T) string) (T, error) {
	var zero T
	if len(asks) == 0 {
		return zero, ErrNoChannel
	}
	qctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make(chan result[T], len(asks))
	var wg sync.WaitGroup
	for i, f := range asks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := f(qctx)
			results <- result[T]{i: i, v: v, err: err}
		}()
	}
	defer wg.Wait()
	expired := a.expiry(a.timeout)
	var errs []error
	open := len(asks)
	quiet := 0 // channels that gave up without an error
	for open > 0 {
		select {
		case <-ctx.Done():
			cancel(context.Cause(ctx))
			return zero, ctx.Err()
		case <-expired:
			cancel(&choice.Closed{Timeout: true})
			return zero, errTimeout
		case r := <-results:
			open--
			switch {
			case r.err != nil:
				a.log.Warn("a channel could not ask", "channel", names[r.i], "error", r.err)
				errs = append(errs, fmt.Errorf("%s: %w", names[r.i], r.err))
			case gaveUp != nil && gaveUp(r.v):
				quiet++
			default:
				a.log.Info("answered", "channel", names[r.i])
				cancel(&choice.Closed{By: names[r.i], Line: line(r.v)})
				return r.v, nil
			}
		}
	}
	if quiet > 0 {
		return zero, errTimeout
	}
	return zero, errors.Join(errs...)
}
