package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
)

// Limits that keep a question inside one Telegram message (4096 characters)
// and its keyboard inside Telegram's limits.
const (
	maxMessageRunes = 4000
	maxOptions      = 10
	maxNameRunes    = 120
	maxContextRunes = 1500
	maxButtonRunes  = 40
)

// ReasonTimeout is the Answer.Reason (KindNothing) when nobody answered in time.
const ReasonTimeout = choice.ReasonTimeout

// Callback data actions (data is "<question id>|<action>[|<index>]", ≤ 64 bytes).
const (
	actProduct  = "p"
	actRemember = "s"
	actNothing  = "n"
	actCustom   = "c"
	actSkip     = "w"
	actYes      = "y"
	actNo       = "x"
	actPing     = "k"
)

func cbData(qid, act string, idx ...int) string {
	if len(idx) > 0 {
		return qid + "|" + act + "|" + strconv.Itoa(idx[0])
	}
	return qid + "|" + act
}

// parseCB splits callback data; ok is false for data of another question.
func parseCB(qid, data string) (act string, idx int, ok bool) {
	parts := strings.Split(data, "|")
	if len(parts) < 2 || parts[0] != qid {
		return "", 0, false
	}
	act = parts[1]
	idx = -1
	if len(parts) == 3 {
		n, err := strconv.Atoi(parts[2])
		if err != nil {
			return "", 0, false
		}
		idx = n
	}
	return act, idx, true
}

// ownCallback reads a button press for the question qid asked in message
// msgID: the data must name the question, and the press must come from that
// very message (data of a valid question replayed on another message, or on
// an inline message, is not an answer).
func ownCallback(qid string, msgID int, cq *tgbotapi.CallbackQuery) (act string, idx int, ok bool) {
	if cq == nil || cq.Message == nil || cq.Message.MessageID != msgID {
		return "", 0, false
	}
	return parseCB(qid, cq.Data)
}

// editedHint answers an edited message while a question is open: edits are
// never answers (an old "no" edited into "yes" must not answer a new
// question), so the user is asked to write again.
func editedHint(m messages.Catalog) string { return m.T("telegram.edited") }

// Choose asks the user which product to buy for q.ItemName and waits for the
// answer (choice.KindProduct with Index — Remember set for the ⭐ button —,
// KindNothing, or KindCustom with Text). One question is open at a time:
// Choose first waits for earlier questions to be answered.
//
// The message lists the options numbered with prices, then "Nothing (skip
// this item)", "Something else (reply with text)" and "Skip this week",
// with a button per option, a ⭐ button per option (choose and remember),
// Nothing, Something else and Skip this week. The user may press a button (on this message only), reply with an
// option's number, or write free text (= custom). Any other number (0, -2,
// 1.5, 99999999999999999999999) gets "Please choose 1–N" and the question
// stays open, as does an edited message (edits are never answers);
// "Something else" asks for the text. The answered message is edited to
// show the choice.
//
// No answer within the response timeout gives KindNothing with Reason
// "timeout" (and a nil error). A Telegram failure while asking, an unavailable
// bot, a closed bot or a cancelled ctx give an error.
func (b *Bot) Choose(ctx context.Context, q choice.Question) (choice.Answer, error) {
	if err := b.usable(); err != nil {
		return choice.Answer{}, fmt.Errorf("ask about %q: %w", q.ItemName, err)
	}
	if err := b.acquire(ctx); err != nil {
		return choice.Answer{}, fmt.Errorf("ask about %q: %w", q.ItemName, err)
	}
	c := b.begin()
	defer b.end(c)
	if err := ctx.Err(); err != nil {
		return choice.Answer{}, fmt.Errorf("telegram: question about %q: %w", q.ItemName, err)
	}

	shown := min(len(q.Options), maxOptions)
	text := questionText(b.msg, q, shown)
	msg := tgbotapi.NewMessage(b.chatID, text)
	msg.ReplyMarkup = questionKeyboard(b.msg, c.id, q, shown)
	sent, err := b.send(ctx, msg)
	if err != nil {
		return choice.Answer{}, fmt.Errorf("ask about %q: %w", q.ItemName, err)
	}
	b.log.Info("asked the user to choose", "item", q.ItemName, "options", len(q.Options))

	timer := time.NewTimer(b.responseTimeout)
	defer timer.Stop()
	awaitingText := false
	for {
		select {
		case <-ctx.Done():
			b.edit(ctx, sent.MessageID, text+"\n\n"+closedLine(b.msg, ctx))
			return choice.Answer{}, fmt.Errorf("telegram: question about %q: %w", q.ItemName, ctx.Err())
		case <-b.life.Done():
			return choice.Answer{}, fmt.Errorf("telegram: question about %q: %w", q.ItemName, ErrClosed)
		case <-timer.C:
			b.edit(ctx, sent.MessageID, text+"\n\n"+b.msg.T("telegram.timeout_skip", "timeout", human(b.msg, b.responseTimeout)))
			b.log.Info("no answer in time", "item", q.ItemName, "timeout", b.responseTimeout)
			return choice.Answer{Kind: choice.KindNothing, Reason: ReasonTimeout}, nil
		case u := <-c.inbox:
			r := interpretChoice(b.msg, c.id, sent.MessageID, u, shown, awaitingText)
			if u.CallbackQuery != nil {
				b.ack(ctx, u.CallbackQuery.ID, r.toast)
			}
			if r.say != "" {
				if _, err := b.send(ctx, tgbotapi.NewMessage(b.chatID, r.say)); err != nil {
					return choice.Answer{}, fmt.Errorf("ask about %q: %w", q.ItemName, err)
				}
			}
			if r.askText {
				awaitingText = true
				timer.Reset(b.responseTimeout)
				if _, err := b.send(ctx, tgbotapi.NewMessage(b.chatID, b.msg.T("question.ask_text", "item", q.ItemName))); err != nil {
					return choice.Answer{}, fmt.Errorf("ask about %q: %w", q.ItemName, err)
				}
			}
			if r.answer == nil {
				continue
			}
			a := *r.answer
			b.edit(ctx, sent.MessageID, text+"\n\n"+answerLine(b.msg, q, a))
			b.log.Info("the user answered", "item", q.ItemName, "kind", a.Kind, "index", a.Index, "remember", a.Remember)
			return a, nil
		}
	}
}

// reaction is what one update means for an open question.
type reaction struct {
	answer  *choice.Answer // final answer, if any
	askText bool           // "Something else": ask for the text
	say     string         // a message for the user (e.g. "Please choose 1–N")
	toast   string         // the short text shown for a button press
}

// interpretChoice reads one update of the configured chat for the question
// qid, asked in message msgID, with shown options.
func interpretChoice(m messages.Catalog, qid string, msgID int, u tgbotapi.Update, shown int, awaitingText bool) reaction {
	if cq := u.CallbackQuery; cq != nil {
		act, idx, ok := ownCallback(qid, msgID, cq)
		if !ok {
			return reaction{toast: m.T("telegram.toast_closed")}
		}
		switch {
		case act == actProduct && idx >= 0 && idx < shown:
			return reaction{answer: &choice.Answer{Kind: choice.KindProduct, Index: idx}, toast: m.T("telegram.toast_got_it")}
		case act == actRemember && idx >= 0 && idx < shown:
			return reaction{answer: &choice.Answer{Kind: choice.KindProduct, Index: idx, Remember: true}, toast: m.T("telegram.toast_remember")}
		case act == actNothing:
			return reaction{answer: &choice.Answer{Kind: choice.KindNothing}, toast: m.T("telegram.toast_nothing")}
		case act == actCustom:
			return reaction{askText: true, toast: m.T("telegram.toast_custom")}
		case act == actSkip:
			return reaction{answer: &choice.Answer{Kind: choice.KindSkip}, toast: m.T("telegram.toast_skip")}
		}
		return reaction{toast: m.T("telegram.toast_invalid")}
	}
	if u.EditedMessage != nil {
		return reaction{say: editedHint(m)}
	}
	if u.Message == nil {
		return reaction{}
	}
	// One reading of typed replies for every channel (choice.ParseReply):
	// a number that is not an option's is asked again, ⭐2 remembers.
	r := choice.ParseReplyIn(m, u.Message.Text, shown, awaitingText)
	return reaction{answer: r.Answer, askText: r.AskText, say: r.Retry}
}

// questionText is the question message.
func questionText(m messages.Catalog, q choice.Question, shown int) string {
	var sb strings.Builder
	sb.WriteString(m.T("telegram.shopping_for", "item", oneLine(q.ItemName, maxNameRunes)) + "\n")
	if ctx := strings.TrimSpace(q.Context); ctx != "" {
		fmt.Fprintf(&sb, "\n%s\n", truncate(ctx, maxContextRunes))
	}
	sb.WriteString("\n")
	for i := range shown {
		fmt.Fprintf(&sb, "%d. %s\n", i+1, optionLabel(m, q.Options[i], maxNameRunes))
	}
	fmt.Fprintf(&sb, "%d. %s\n", shown+1, m.T("question.nothing"))
	fmt.Fprintf(&sb, "%d. %s\n", shown+2, m.T("question.something_else_text"))
	fmt.Fprintf(&sb, "%d. %s\n", shown+3, m.T("question.skip_item"))
	if len(q.Options) > shown {
		sb.WriteString(m.T("question.showing", "shown", shown, "total", len(q.Options)) + "\n")
	}
	sb.WriteString("\n" + m.T("telegram.reply_hint"))
	if shown > 0 {
		sb.WriteString(" " + m.T("telegram.remember_hint"))
	}
	return truncate(sb.String(), maxMessageRunes)
}

// optionLabel is "Name ($4.99)", or "Name" without a price.
func optionLabel(m messages.Catalog, o choice.Option, limit int) string {
	name := oneLine(o.Name, limit)
	if name == "" {
		name = m.T("question.unnamed")
	}
	if p := oneLine(money.TextIn(o.Price, m.Lang()), 30); p != "" {
		return fmt.Sprintf("%s (%s)", name, p)
	}
	return name
}

// questionKeyboard: per option a row [n. name (price)] [⭐ n], then Nothing
// and Something else.
func questionKeyboard(m messages.Catalog, qid string, q choice.Question, shown int) tgbotapi.InlineKeyboardMarkup {
	var rows [][]tgbotapi.InlineKeyboardButton
	for i := range shown {
		label := fmt.Sprintf("%d. %s", i+1, optionLabel(m, q.Options[i], maxButtonRunes))
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(
			tgbotapi.NewInlineKeyboardButtonData(truncate(label, maxButtonRunes+20), cbData(qid, actProduct, i)),
			tgbotapi.NewInlineKeyboardButtonData(fmt.Sprintf("⭐ %d", i+1), cbData(qid, actRemember, i)),
		))
	}
	rows = append(rows,
		tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(m.T("question.nothing_button"), cbData(qid, actNothing))),
		tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(m.T("question.something_else_button"), cbData(qid, actCustom))),
		tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(m.T("question.skip_button"), cbData(qid, actSkip))),
	)
	return tgbotapi.NewInlineKeyboardMarkup(rows...)
}

// answerLine is appended to the question when it is answered.
func answerLine(m messages.Catalog, q choice.Question, a choice.Answer) string {
	if a.Kind == choice.KindProduct {
		label := optionLabel(m, q.Options[a.Index], maxNameRunes)
		if a.Remember {
			return m.T("question.chose_remember", "n", a.Index+1, "product", label)
		}
		return m.T("question.chose", "n", a.Index+1, "product", label)
	}
	a.Reason = "" // Telegram says its own timeout with its length
	return choice.AnswerLineIn(m, q, a)
}

// human prints a duration the way people say it ("10 minutes", "45 seconds").
func human(m messages.Catalog, d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(m, int(d/time.Hour), "common.hours")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(m, int(d/time.Minute), "common.minutes")
	case d >= time.Second && d%time.Second == 0:
		return plural(m, int(d/time.Second), "common.seconds")
	}
	return d.String()
}

// plural is key's text for n: key+"_one" for 1, else key with {n}.
func plural(m messages.Catalog, n int, key string) string {
	if n == 1 {
		return m.T(key + "_one")
	}
	return m.T(key, "n", n)
}

// oneLine collapses whitespace (names come from web pages) and truncates.
func oneLine(s string, limit int) string {
	return truncate(strings.Join(strings.Fields(s), " "), limit)
}

// truncate shortens s to at most limit runes, marking the cut with "…".
func truncate(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit-1]) + "…"
}

// splitText cuts s into parts of at most limit runes, at line ends when it can.
func splitText(s string, limit int) []string {
	var parts []string
	for utf8.RuneCountInString(s) > limit {
		r := []rune(s)
		cut := limit
		if i := strings.LastIndex(string(r[:limit]), "\n"); i > 0 {
			cut = utf8.RuneCountInString(string(r[:limit])[:i])
		}
		parts = append(parts, strings.TrimRight(string(r[:cut]), "\n"))
		s = strings.TrimLeft(string(r[cut:]), "\n")
	}
	if s = strings.TrimRight(s, "\n"); strings.TrimSpace(s) != "" || len(parts) == 0 {
		parts = append(parts, s)
	}
	return parts
}
