package homeassistant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// EventNotificationAction is the event the companion app fires when an
// action of an actionable notification is pressed (reply_text carries the
// typed text of a behavior: textInput action; Android adds the
// notification's data fields, such as tag).
const EventNotificationAction = "mobile_app_notification_action"

// ClearNotification is the message that clears the notification with the
// given tag on the phone.
const ClearNotification = "clear_notification"

// Limits of a phone question: Android shows at most three actions, and a
// push notification must stay small.
const (
	phoneMaxActions     = 3
	phoneMaxOptions     = 10
	phoneMaxNameRunes   = 80
	phoneMaxContextRune = 300
	phoneMaxButtonRunes = 30
	phoneClearTimeout   = 10 * time.Second
)

// Action id parts: "GS_<question id>_<kind>[<index>]".
const (
	phoneActProduct = "P"
	phoneActNothing = "N"
	phoneActSkip    = "W"
	phoneActReply   = "R"
	phoneActYes     = "Y"
	phoneActNo      = "X"
)

// PhoneOptions configures a Phone.
type PhoneOptions struct {
	// Services are the companion apps' notify services
	// ("notify.mobile_app_pixel_8"; the "notify." prefix may be left out).
	Services []string
	// Logger; nil uses the client's.
	Logger *slog.Logger
	// Messages is the language of the notifications (the zero value:
	// English).
	Messages messages.Catalog
}

// Phone asks questions as actionable notifications of the Home Assistant
// companion app and reads the answers from mobile_app_notification_action
// events. It implements the ask package's Chooser and Confirmer: it never
// times out by itself (the caller's ctx does) and, when its ctx ends, it
// clears the notification (clear_notification with the question's tag).
type Phone struct {
	c        *Client
	services []string // service names without "notify."
	log      *slog.Logger
	msg      messages.Catalog
}

// NewPhone returns a Phone on c, or an error naming a service that is not a
// notify.mobile_app_* service.
func NewPhone(c *Client, opts PhoneOptions) (*Phone, error) {
	if len(opts.Services) == 0 {
		return nil, errors.New("phone questions: no notify service configured")
	}
	p := &Phone{c: c, msg: opts.Messages}
	for _, s := range opts.Services {
		name, err := PhoneService(s)
		if err != nil {
			return nil, err
		}
		p.services = append(p.services, name)
	}
	if opts.Logger == nil {
		opts.Logger = c.log
	}
	p.log = opts.Logger.With("component", "homeassistant.phone")
	return p, nil
}

// PhoneService checks a configured notify service and returns its name
// without the "notify." domain.
func PhoneService(s string) (string, error) {
	name := strings.TrimPrefix(strings.TrimSpace(s), "notify.")
	rest, ok := strings.CutPrefix(name, "mobile_app_")
	if !ok || rest == "" || strings.ContainsFunc(rest, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_'
	}) {
		return "", fmt.Errorf("%q is not a companion app notify service like notify.mobile_app_my_phone", s)
	}
	return name, nil
}

// PushOpen shows a notification on every phone whose tap opens url (the
// panel): "url" for iOS, "clickAction" for Android; tag replaces an
// earlier one of the same tag. It fails only when no phone got it.
func (p *Phone) PushOpen(ctx context.Context, tag, title, message, url string) error {
	data := map[string]any{
		"title":   title,
		"message": message,
		"data": map[string]any{
			"tag": tag, "group": "gemini_supply",
			"url": url, "clickAction": url,
		},
	}
	var errs []error
	for _, s := range p.services {
		if _, err := p.c.CallService(ctx, "notify", s, nil, data, false); err != nil {
			errs = append(errs, err)
			p.log.Warn("could not notify the phone", "service", "notify."+s, "error", err)
		}
	}
	if len(errs) == len(p.services) {
		return fmt.Errorf("notify the phone: %w", errors.Join(errs...))
	}
	return nil
}

// NeedsYouTag is the tag of the "Needs you" push (take over).
const NeedsYouTag = "gemini_supply_needs_you"

// PushNeedsYou tells the phones that a tab needs a person ("Needs you:
// sign in"), a tap opening the panel at url, where the Needs you card is.
func (p *Phone) PushNeedsYou(ctx context.Context, reason, url string) error {
	title, body := p.msg.T("phone.needs_you"), p.msg.T("phone.needs_you_body")
	if reason == runstatus.ReasonSignInChallenge {
		title, body = p.msg.T("phone.needs_you_sign_in"), p.msg.T("phone.needs_you_sign_in_body")
	}
	return p.PushOpen(ctx, NeedsYouTag, title, body, url)
}

// phoneQuestion is one open notification.
type phoneQuestion struct {
	p   *Phone
	id  string
	tag string
	sub *Subscription
}

func (p *Phone) open(ctx context.Context) (*phoneQuestion, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	id := hex.EncodeToString(b[:])
	// Subscribe before the notification goes out: an answer cannot be missed.
	sub, err := p.c.SubscribeEvents(ctx, EventNotificationAction)
	if err != nil {
		return nil, err
	}
	return &phoneQuestion{p: p, id: id, tag: "gemini_supply_" + id, sub: sub}, nil
}

func (q *phoneQuestion) action(kind string, idx ...int) string {
	a := "GS_" + q.id + "_" + kind
	if len(idx) > 0 {
		a += strconv.Itoa(idx[0])
	}
	return a
}

// send shows (or replaces, by tag) the notification on every phone. It
// fails only when no phone got it.
func (q *phoneQuestion) send(ctx context.Context, title, message string, actions []map[string]any) error {
	data := map[string]any{
		"title":   title,
		"message": message,
		"data": map[string]any{
			"tag":     q.tag,
			"group":   "gemini_supply",
			"actions": actions,
		},
	}
	var errs []error
	for _, s := range q.p.services {
		if _, err := q.p.c.CallService(ctx, "notify", s, nil, data, false); err != nil {
			errs = append(errs, err)
			q.p.log.Warn("could not notify the phone", "service", "notify."+s, "error", err)
		}
	}
	if len(errs) == len(q.p.services) {
		return fmt.Errorf("notify the phone: %w", errors.Join(errs...))
	}
	return nil
}

// close clears the notification on every phone and ends the subscription.
func (q *phoneQuestion) close(ctx context.Context) {
	q.sub.Close()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), phoneClearTimeout)
	defer cancel()
	for _, s := range q.p.services {
		data := map[string]any{"message": ClearNotification, "data": map[string]any{"tag": q.tag}}
		if _, err := q.p.c.CallService(cctx, "notify", s, nil, data, false); err != nil {
			q.p.log.Warn("could not clear the notification", "service", "notify."+s, "error", err)
		}
	}
}

// phoneReply is one action pressed for this question.
type phoneReply struct {
	kind  string
	index int
	text  string
	// userID is who pressed (the event's context: the phone's owner).
	userID string
}

// next waits for the next action of this question.
func (q *phoneQuestion) next(ctx context.Context) (phoneReply, error) {
	prefix := "GS_" + q.id + "_"
	for {
		select {
		case <-ctx.Done():
			return phoneReply{}, context.Cause(ctx)
		case ev, ok := <-q.sub.C:
			if !ok {
				if err := q.p.c.Err(); err != nil {
					return phoneReply{}, err
				}
				return phoneReply{}, ErrClosed
			}
			var d struct {
				Action    string `json:"action"`
				ReplyText string `json:"reply_text"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				continue
			}
			rest, ok := strings.CutPrefix(d.Action, prefix)
			if !ok || rest == "" {
				continue // another notification's action
			}
			r := phoneReply{kind: rest[:1], index: -1, text: d.ReplyText, userID: ev.UserID}
			if len(rest) > 1 {
				n, err := strconv.Atoi(rest[1:])
				if err != nil {
					continue
				}
				r.index = n
			}
			return r, nil
		}
	}
}

// Choose shows q as an actionable notification: the numbered options in
// the text, buttons for the first options within Android's three actions,
// and a Reply action (behavior: textInput) for a number (⭐2 to remember),
// "nothing", or what the person wants instead. An invalid reply replaces
// the notification with "Please choose 1–N"; "Something else" asks for the
// text. The notification is cleared once answered, or when ctx ends (the
// cause says whether another channel answered or the time ran out). An
// error means no phone could be notified, or ctx ended.
func (p *Phone) Choose(ctx context.Context, q choice.Question) (choice.Answer, error) {
	pq, err := p.open(ctx)
	if err != nil {
		return choice.Answer{}, fmt.Errorf("ask on the phone about %q: %w", q.ItemName, err)
	}
	defer pq.close(ctx)
	shown := min(len(q.Options), phoneMaxOptions)
	m := p.msg
	title := m.T("phone.which_one", "item", phoneTruncate(q.ItemName, phoneMaxNameRunes))
	body := phoneQuestionText(m, q, shown)
	reply := map[string]any{"action": pq.action(phoneActReply), "title": m.T("phone.reply"), "behavior": "textInput",
		"textInputButtonTitle": m.T("phone.send"), "textInputPlaceholder": m.T("phone.placeholder", "max", shown+3)}
	var actions []map[string]any
	for i := range min(shown, phoneMaxActions-1) {
		actions = append(actions, map[string]any{"action": pq.action(phoneActProduct, i),
			"title": phoneTruncate(fmt.Sprintf("%d. %s", i+1, q.Options[i].Name), phoneMaxButtonRunes)})
	}
	if len(actions) < phoneMaxActions-1 {
		// The spare button: for a one-option question (often the only
		// in-stock alternative) "not this week" is the likely other answer;
		// Nothing stays a typed reply.
		actions = append(actions, map[string]any{"action": pq.action(phoneActSkip), "title": m.T("question.skip_button")})
	}
	actions = append(actions, reply)
	if err := pq.send(ctx, title, body, actions); err != nil {
		return choice.Answer{}, fmt.Errorf("ask on the phone about %q: %w", q.ItemName, err)
	}
	p.log.Info("asked on the phone", "item", q.ItemName, "options", len(q.Options), "tag", pq.tag)

	awaitingText := false
	for {
		r, err := pq.next(ctx)
		if err != nil {
			return choice.Answer{}, fmt.Errorf("phone question about %q: %w", q.ItemName, err)
		}
		var res choice.Reply
		switch {
		case r.kind == phoneActProduct && r.index >= 0 && r.index < shown:
			res.Answer = &choice.Answer{Kind: choice.KindProduct, Index: r.index}
		case r.kind == phoneActNothing:
			res.Answer = &choice.Answer{Kind: choice.KindNothing}
		case r.kind == phoneActSkip:
			res.Answer = &choice.Answer{Kind: choice.KindSkip}
		case r.kind == phoneActReply:
			res = choice.ParseReplyIn(m, r.text, shown, awaitingText)
		default:
			continue
		}
		switch {
		case res.Answer != nil:
			res.Answer.By = p.c.UserName(ctx, r.userID)
			p.log.Info("answered on the phone", "item", q.ItemName, "kind", res.Answer.Kind, "index", res.Answer.Index, "remember", res.Answer.Remember, "by", res.Answer.By)
			return *res.Answer, nil
		case res.AskText:
			awaitingText = true
			err = pq.send(ctx, title, m.T("question.ask_text", "item", phoneTruncate(q.ItemName, phoneMaxNameRunes)),
				[]map[string]any{reply})
		default:
			err = pq.send(ctx, title, res.Retry+"\n\n"+body, actions)
		}
		if err != nil {
			return choice.Answer{}, fmt.Errorf("ask on the phone about %q: %w", q.ItemName, err)
		}
	}
}

// Confirm shows a safety confirmation with Allow and Deny buttons. It
// returns only when a button is pressed, or with an error when no phone
// could be notified or ctx ended (never an automatic yes).
func (p *Phone) Confirm(ctx context.Context, explanation, action string) (bool, error) {
	yes, _, err := p.ConfirmBy(ctx, explanation, action)
	return yes, err
}

// ConfirmBy is Confirm that also says who pressed the button (the Home
// Assistant user of the phone, "" when not known) — ask's ConfirmerBy.
func (p *Phone) ConfirmBy(ctx context.Context, explanation, action string) (bool, string, error) {
	pq, err := p.open(ctx)
	if err != nil {
		return false, "", fmt.Errorf("ask for confirmation on the phone: %w", err)
	}
	defer pq.close(ctx)
	m := p.msg
	var sb strings.Builder
	if a := phoneTruncate(strings.Join(strings.Fields(action), " "), phoneMaxContextRune); a != "" {
		sb.WriteString(m.T("question.safety_action", "action", a) + "\n")
	}
	if e := strings.TrimSpace(explanation); e != "" {
		sb.WriteString(m.T("question.safety_why", "why", phoneTruncate(e, phoneMaxContextRune)) + "\n")
	}
	sb.WriteString(m.T("question.safety_allow"))
	actions := []map[string]any{
		{"action": pq.action(phoneActYes), "title": m.T("phone.allow")},
		{"action": pq.action(phoneActNo), "title": m.T("phone.deny"), "destructive": true},
	}
	if err := pq.send(ctx, m.T("question.safety_title"), sb.String(), actions); err != nil {
		return false, "", fmt.Errorf("ask for confirmation on the phone: %w", err)
	}
	p.log.Info("asked on the phone to confirm an action", "action", action, "tag", pq.tag)
	for {
		r, err := pq.next(ctx)
		if err != nil {
			return false, "", fmt.Errorf("phone confirmation: %w", err)
		}
		switch r.kind {
		case phoneActYes, phoneActNo:
			yes := r.kind == phoneActYes
			by := p.c.UserName(ctx, r.userID)
			p.log.Info("confirmation answered on the phone", "action", action, "allowed", yes, "by", by)
			return yes, by, nil
		}
	}
}

func phoneQuestionText(m messages.Catalog, q choice.Question, shown int) string {
	var sb strings.Builder
	if c := strings.TrimSpace(q.Context); c != "" {
		sb.WriteString(phoneTruncate(c, phoneMaxContextRune) + "\n")
	}
	for i := range shown {
		fmt.Fprintf(&sb, "%d. %s\n", i+1, phoneTruncate(choice.OptionLabelIn(m, q.Options[i]), phoneMaxNameRunes))
	}
	fmt.Fprintf(&sb, "%d. %s\n", shown+1, m.T("question.nothing"))
	fmt.Fprintf(&sb, "%d. %s\n", shown+2, m.T("question.something_else"))
	fmt.Fprintf(&sb, "%d. %s\n", shown+3, m.T("question.skip_item"))
	if len(q.Options) > shown {
		sb.WriteString(m.T("question.showing", "shown", shown, "total", len(q.Options)) + "\n")
	}
	sb.WriteString(m.T("phone.hint"))
	return sb.String()
}

func phoneTruncate(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit-1]) + "…"
}
