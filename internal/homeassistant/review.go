package homeassistant

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// The review pack on the phone: after a run, the phones of ha_notify get
// one notification (tag ReviewTag) with what needs a look and up to three
// actions — Open the cart (a URI action: the companion app opens the
// store's cart), and, for the first added item with a warning, Wrong
// product and Remove from cart. Pressing one carries the action out
// (the panel's cart action, source "phone"); the notification is replaced
// with what it did. Change quantity needs a number, so it stays in the
// panel.

// ReviewTag is the tag of the review notification.
const ReviewTag = "gemini_supply_review"

// reviewActionPrefix starts the action ids of the review notification:
// "GS_REVIEW|<kind>|<run id>|<item id>".
const reviewActionPrefix = "GS_REVIEW|"

// ReviewPhone sends each run's review pack to the phones and carries out
// the actions pressed on them. It is a serve Subscriber.
type ReviewPhone struct {
	p   *Phone
	act func(context.Context, reviewpack.Request) (reviewpack.Action, error)
	log *slog.Logger

	mu    sync.Mutex
	carts map[string]string // run id → its cart's address, for the notification after a press
}

// NewReviewPhone returns the review on p's phones; act carries out an
// action (app.CartActions).
func NewReviewPhone(p *Phone, act func(context.Context, reviewpack.Request) (reviewpack.Action, error)) *ReviewPhone {
	return &ReviewPhone{p: p, act: act, log: p.log.With("component", "homeassistant.review"), carts: map[string]string{}}
}

// Consume sends the review of every finished run, and carries out the
// actions pressed, until sub.C is closed or ctx ends.
func (rp *ReviewPhone) Consume(ctx context.Context, sub *runstatus.Subscription) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	// Subscribed before any review goes out, so that no press is missed;
	// the client restores it across reconnects.
	presses, err := rp.p.c.SubscribeEvents(ctx, EventNotificationAction)
	if err != nil {
		rp.log.Warn("the review's phone actions are unavailable", "err", err)
	} else {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer presses.Close()
			rp.listen(ctx, presses)
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-sub.C:
			if !ok {
				return nil
			}
			if ev.Kind == runstatus.KindRunFinished && ev.Pack != nil && len(ev.Pack.Items) > 0 {
				rp.mu.Lock()
				rp.carts = map[string]string{ev.Pack.RunID: ev.Pack.CartURL} // the last run's
				rp.mu.Unlock()
				rp.send(ctx, *ev.Pack, reviewText(rp.p.msg, *ev.Pack), true)
			}
		}
	}
}

// listen carries out the review actions pressed on a phone, one at a time.
func (rp *ReviewPhone) listen(ctx context.Context, presses *Subscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-presses.C:
			if !ok {
				return
			}
			var d struct {
				Action string `json:"action"`
			}
			if json.Unmarshal(ev.Data, &d) != nil {
				continue
			}
			req, ok := parseReviewAction(d.Action)
			if !ok {
				continue // a question's action, or another integration's
			}
			req.By = rp.p.c.UserName(ctx, ev.UserID)
			act, err := rp.act(ctx, req)
			text := act.TextIn(rp.p.msg)
			if err != nil {
				text = rp.p.msg.T("phone.action_failed", "action", reviewpack.KindText(rp.p.msg, req.Kind), "error", err)
			}
			rp.log.Info("a review action was pressed on a phone", "action", req.Kind, "run", req.RunID, "item", req.ItemID, "err", err)
			rp.mu.Lock()
			cart := rp.carts[req.RunID]
			rp.mu.Unlock()
			rp.send(ctx, reviewpack.Pack{RunID: req.RunID, CartURL: cart}, text, false)
		}
	}
}

// send shows (or replaces) the review notification on every phone.
func (rp *ReviewPhone) send(ctx context.Context, pk reviewpack.Pack, text string, itemActions bool) {
	m := rp.p.msg
	var actions []map[string]any
	if strings.HasPrefix(pk.CartURL, "https://") {
		actions = append(actions, map[string]any{"action": "URI", "title": m.T("phone.open_cart"), "uri": pk.CartURL})
	}
	if itemActions {
		if it, ok := needsALook(pk); ok {
			name := phoneTruncate(it.ItemName, phoneMaxButtonRunes-7)
			actions = append(actions,
				map[string]any{"action": reviewAction(reviewpack.ActWrongProduct, pk.RunID, it.ItemID), "title": m.T("phone.wrong", "item", name)},
				map[string]any{"action": reviewAction(reviewpack.ActRemove, pk.RunID, it.ItemID), "title": m.T("phone.remove", "item", name)})
		}
	}
	data := map[string]any{"tag": ReviewTag, "group": "gemini_supply"}
	if len(actions) > 0 {
		data["actions"] = actions[:min(len(actions), phoneMaxActions)]
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var errs []error
	for _, s := range rp.p.services {
		if _, err := rp.p.c.CallService(sctx, "notify", s, nil, map[string]any{"title": m.T("phone.review_title"), "message": text, "data": data}, false); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		rp.log.Warn("could not send the review to a phone", "err", errors.Join(errs...))
	}
}

// needsALook is the first added item with a warning (the one the phone's
// actions are for).
func needsALook(pk reviewpack.Pack) (reviewpack.Item, bool) {
	for _, it := range pk.Items {
		if it.Outcome == report.OutcomeAdded && len(it.Warnings) > 0 {
			return it, true
		}
	}
	return reviewpack.Item{}, false
}

// reviewText is the notification's text: the counts, then every warning.
func reviewText(m messages.Catalog, pk reviewpack.Pack) string {
	added, other := 0, 0
	var b strings.Builder
	for _, it := range pk.Items {
		if it.Outcome == report.OutcomeAdded {
			added++
		} else {
			other++
		}
	}
	b.WriteString(m.T("phone.review_counts", "added", added, "other", other))
	n := 0
	for _, it := range pk.Items {
		for _, w := range it.Warnings {
			if n == 5 {
				b.WriteString("\n" + m.T("phone.review_more"))
				return b.String()
			}
			b.WriteString("\n• " + phoneTruncate(it.ItemName, phoneMaxNameRunes) + ": " + phoneTruncate(w.Said(m), phoneMaxContextRune/2))
			n++
		}
	}
	if n == 0 {
		b.WriteString(" " + m.T("phone.review_fine"))
	}
	return b.String()
}

func reviewAction(kind reviewpack.ActionKind, runID, itemID string) string {
	return reviewActionPrefix + string(kind) + "|" + runID + "|" + itemID
}

func parseReviewAction(s string) (reviewpack.Request, bool) {
	rest, ok := strings.CutPrefix(s, reviewActionPrefix)
	if !ok {
		return reviewpack.Request{}, false
	}
	parts := strings.SplitN(rest, "|", 3)
	if len(parts) != 3 {
		return reviewpack.Request{}, false
	}
	kind := reviewpack.ActionKind(parts[0])
	if kind != reviewpack.ActRemove && kind != reviewpack.ActWrongProduct {
		return reviewpack.Request{}, false
	}
	return reviewpack.Request{RunID: parts[1], ItemID: parts[2], Kind: kind, Source: "phone"}, true
}
