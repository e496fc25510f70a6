package choice

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
)

// MaxCustomRunes bounds the free text of a KindCustom answer, on every
// channel (Telegram, the phone, the panel): the text becomes the item's
// search and the agent's goal, like an item name (shoppinglist.MaxNameRunes).
// A longer reply is asked again, never cut silently.
const MaxCustomRunes = 200

// CleanText is the one reading of typed free text every channel shares:
// line breaks, tabs and runs of spaces fold into one space; control
// characters and invisible ones (zero-width, bidirectional overrides, BOM
// and other format characters, Hangul fillers) are dropped; the result is
// trimmed. A reply of nothing but such characters is empty.
func CleanText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || r == '\u2028' || r == '\u2029':
			space = true
			continue
		case invisible(r):
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// invisible reports whether r shows nothing (or reorders what follows)
// and so must not make a reply mean something it does not show.
func invisible(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u034F', '\u17B4', '\u17B5', '\u180E', '\uFFFC':
		return true
	}
	return r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// CustomText reads free text for a KindCustom answer: the cleaned text, or
// a re-ask when it is empty or longer than MaxCustomRunes.
func CustomText(raw string) (text, retry string) { return CustomTextIn(messages.Catalog{}, raw) }

// CustomTextIn is CustomText with the re-ask in the catalogue's language.
func CustomTextIn(c messages.Catalog, raw string) (text, retry string) {
	text = CleanText(raw)
	switch n := utf8.RuneCountInString(text); {
	case n == 0:
		return "", c.T("question.retry_describe")
	case n > MaxCustomRunes:
		return "", c.T("question.retry_long", "n", n, "max", MaxCustomRunes)
	}
	return text, ""
}

// Reply is what one typed reply to a question means.
type Reply struct {
	// Answer is the final answer, when the reply decides.
	Answer *Answer
	// AskText: the person chose "Something else" and must now describe it.
	AskText bool
	// Retry is the re-ask text for a reply that decides nothing
	// ("Please choose 1–N, or describe what you want.").
	Retry string
}

// ParseReply is ParseReplyIn with English re-asks.
func ParseReply(text string, shown int, awaitingText bool) Reply {
	return ParseReplyIn(messages.Catalog{}, text, shown, awaitingText)
}

// ParseReplyIn reads a typed reply to a question showing shown options
// numbered 1…shown, then shown+1 "Nothing", shown+2 "Something else" and
// shown+3 "Skip this week". "2" (or "#2", "2.") chooses option 2; "⭐2",
// "2⭐", "2*" or "remember 2" chooses it and remembers it; "nothing"/"none"
// is Nothing; "skip"/"skip this week"/"next week"/"not this week" skips;
// "something else" asks for the text; a number out of range is re-asked; any other
// text is what the person wants instead (KindCustom). awaitingText (after
// "Something else") takes any text as KindCustom. The words are read in
// every language of the catalogue ("rien", "pas cette semaine", "retenir
// 2", "autre chose"); the re-asks are in c's language.
func ParseReplyIn(c messages.Catalog, text string, shown int, awaitingText bool) Reply {
	// Invisible characters cannot hide a number ("\u200b2" is 2), nor
	// make an empty reply a search.
	text = CleanText(text)
	if text == "" {
		return Reply{Retry: c.T("question.retry_empty")}
	}
	if awaitingText {
		return customReply(c, text)
	}
	num, remember := text, false
	for _, mark := range append([]string{"⭐", "*"}, replyWords("question.words_remember")...) {
		if t, ok := strings.CutPrefix(strings.ToLower(num), mark); ok {
			num, remember = t, true
		} else if t, ok := strings.CutSuffix(num, mark); ok {
			num, remember = t, true
		}
	}
	if n, ok := readNumber(num); ok {
		// Any number that is not an option's number is asked again
		// ("1.5", "0", "99999999999999999999999").
		switch {
		case n >= 1 && n <= shown:
			return Reply{Answer: &Answer{Kind: KindProduct, Index: n - 1, Remember: remember}}
		case n == shown+1 && !remember:
			return Reply{Answer: &Answer{Kind: KindNothing}}
		case n == shown+2 && !remember:
			return Reply{AskText: true}
		case n == shown+3 && !remember:
			return Reply{Answer: &Answer{Kind: KindSkip}}
		}
		return Reply{Retry: c.T("question.retry_range", "max", shown+3)}
	}
	word := strings.ToLower(strings.Trim(text, ".!"))
	switch {
	case slices.Contains(replyWords("question.words_nothing"), word):
		return Reply{Answer: &Answer{Kind: KindNothing}}
	case slices.Contains(replyWords("question.words_skip"), word):
		return Reply{Answer: &Answer{Kind: KindSkip}}
	case slices.Contains(replyWords("question.words_else"), word):
		return Reply{AskText: true}
	}
	return customReply(c, text)
}

// replyWords is the typed replies of key in every language of the
// catalogue ("nothing", "rien", …), lower case.
func replyWords(key string) []string {
	var out []string
	for _, lang := range messages.Languages {
		for _, w := range strings.Split(messages.For(lang).T(key), "|") {
			if w = strings.ToLower(w); strings.TrimSpace(w) != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// customReply is a KindCustom answer, or a re-ask (CustomTextIn).
func customReply(c messages.Catalog, text string) Reply {
	t, retry := CustomTextIn(c, text)
	if retry != "" {
		return Reply{Retry: retry}
	}
	return Reply{Answer: &Answer{Kind: KindCustom, Text: t}}
}

// ParseYesNo reads a typed reply to a safety confirmation; ok is false when
// it is neither yes nor no.
func ParseYesNo(text string) (yes, ok bool) {
	word := strings.ToLower(strings.Trim(CleanText(text), ".!"))
	switch {
	case slices.Contains(replyWords("question.words_yes"), word):
		return true, true
	case slices.Contains(replyWords("question.words_no"), word):
		return false, true
	}
	return false, false
}

// numberRE is a reply that is a number at all: any size, a sign, decimals
// with either mark, digit groups, an exponent ("99999999999999999999999",
// "-2", "1.5", "1,5", "1 000", "2e3", "٣").
var numberRE = regexp.MustCompile(`^[+\-−]?(\p{Nd}+([ '_.,]\p{Nd}+)*[.,]?|[.,]\p{Nd}+)([eE][+\-]?\p{Nd}+)?$`)

// optionRE is the only shape that names an option: a plain whole number.
var optionRE = regexp.MustCompile(`^\+?[0-9]+$`)

// readNumber reads a reply ("2", "#2", "2." or " 2 "). isNumber reports
// whether it is a number at all; n is the option it names, 0 when none (not
// a plain whole number, or too large). Any number is an attempt at an
// option, never a product to search for.
func readNumber(s string) (n int, isNumber bool) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "#"))
	s = strings.TrimSuffix(s, ".")
	if !numberRE.MatchString(s) {
		return 0, false
	}
	if optionRE.MatchString(s) {
		if v, err := strconv.Atoi(strings.TrimPrefix(s, "+")); err == nil {
			return v, true
		}
	}
	return 0, true
}

// ErrClosed is the cause (context.Cause) of the ctx a channel asks with
// when the question was closed by someone else: answered on another
// channel, or not answered in time. errors.As gives the *Closed.
var ErrClosed = errors.New("question closed")

// Closed says why a question was closed for a channel that did not answer
// it, so the channel can say so ("answered on the phone") instead of
// "cancelled".
type Closed struct {
	// By is the channel that answered ("phone", "Telegram"); empty when
	// nobody answered in time.
	By string
	// Line describes the answer ("✅ You chose 2. Milk (1 l)").
	Line string
	// Timeout: nobody answered within it.
	Timeout bool
}

func (c *Closed) Error() string {
	if c.Timeout {
		return "question closed: no answer in time"
	}
	return "question closed: answered on " + c.By
}

// Is makes errors.Is(c, ErrClosed) true.
func (c *Closed) Is(target error) bool { return target == ErrClosed }

// AnswerLine describes an answer to q for the person, in English.
func AnswerLine(q Question, a Answer) string { return AnswerLineIn(messages.Catalog{}, q, a) }

// AnswerLineIn describes an answer to q for the person in c's language
// ("✅ You chose 2. Milk").
func AnswerLineIn(c messages.Catalog, q Question, a Answer) string {
	switch a.Kind {
	case KindProduct:
		label := "?"
		if a.Index >= 0 && a.Index < len(q.Options) {
			label = OptionLabelIn(c, q.Options[a.Index])
		}
		if a.Remember {
			return c.T("question.chose_remember", "n", a.Index+1, "product", label)
		}
		return c.T("question.chose", "n", a.Index+1, "product", label)
	case KindCustom:
		return c.T("question.asked_for", "text", a.Text)
	case KindSkip:
		return c.T("question.skipped")
	}
	if a.Reason == ReasonTimeout {
		return c.T("question.no_answer")
	}
	return c.T("question.nothing_chosen")
}

// Labels every channel shows for the answers beyond the options, in
// English (the catalogue's question.skip, question.skipped and
// question.skip_explanation in other languages).
var (
	// SkipLabel names the "Skip this week" answer.
	SkipLabel = messages.For("en").T("question.skip")
	// SkipLine describes it once chosen.
	SkipLine = messages.For("en").T("question.skipped")
	// SkipExplanation is the skipped item's explanation in the summary.
	SkipExplanation = messages.For("en").T("question.skip_explanation")
)

// OptionLabel is OptionLabelIn in English.
func OptionLabel(o Option) string { return OptionLabelIn(messages.Catalog{}, o) }

// OptionLabelIn is "Name (price)", or "Name" without a price, on one line;
// the price's amounts written the way c's language writes money.
func OptionLabelIn(c messages.Catalog, o Option) string {
	name := strings.Join(strings.Fields(o.Name), " ")
	if name == "" {
		name = c.T("question.unnamed")
	}
	if p := strings.Join(strings.Fields(o.Price), " "); p != "" {
		return fmt.Sprintf("%s (%s)", name, money.TextIn(p, c.Lang()))
	}
	return name
}
