package choice

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxCustomRunes bounds the free text of a KindCustom answer.
const MaxCustomRunes = 300

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

// ParseReply reads a typed reply to a question showing shown options
// numbered 1…shown, then shown+1 "Nothing" and shown+2 "Something else".
// "2" (or "#2", "2.") chooses option 2; "⭐2", "2⭐", "2*" or "remember 2"
// chooses it and remembers it; "nothing"/"skip"/"none" skips; "something
// else" asks for the text; a number out of range is re-asked; any other
// text is what the person wants instead (KindCustom). awaitingText (after
// "Something else") takes any text as KindCustom.
func ParseReply(text string, shown int, awaitingText bool) Reply {
	text = strings.TrimSpace(text)
	if text == "" {
		return Reply{Retry: "Please reply with a number or describe what you want."}
	}
	if awaitingText {
		return Reply{Answer: &Answer{Kind: KindCustom, Text: truncateRunes(text, MaxCustomRunes)}}
	}
	num, remember := text, false
	for _, mark := range []string{"⭐", "*", "remember "} {
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
		}
		return Reply{Retry: fmt.Sprintf("Please choose 1–%d, or describe what you want.", shown+2)}
	}
	switch strings.ToLower(strings.Trim(text, ".!")) {
	case "nothing", "skip", "none":
		return Reply{Answer: &Answer{Kind: KindNothing}}
	case "something else":
		return Reply{AskText: true}
	}
	return Reply{Answer: &Answer{Kind: KindCustom, Text: truncateRunes(text, MaxCustomRunes)}}
}

// ParseYesNo reads a typed reply to a safety confirmation; ok is false when
// it is neither yes nor no.
func ParseYesNo(text string) (yes, ok bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!")) {
	case "yes", "y", "ok", "allow":
		return true, true
	case "no", "n", "stop", "deny":
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

func truncateRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit-1]) + "…"
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

// AnswerLine describes an answer to q for the person ("✅ You chose 2. Milk").
func AnswerLine(q Question, a Answer) string {
	switch a.Kind {
	case KindProduct:
		label := "?"
		if a.Index >= 0 && a.Index < len(q.Options) {
			label = OptionLabel(q.Options[a.Index])
		}
		if a.Remember {
			return fmt.Sprintf("⭐ You chose %d. %s, and I'll remember it for next time.", a.Index+1, label)
		}
		return fmt.Sprintf("✅ You chose %d. %s", a.Index+1, label)
	case KindCustom:
		return "✏️ You asked for: " + a.Text
	}
	if a.Reason == ReasonTimeout {
		return "⏱ No answer in time: skipping this item."
	}
	return "🚫 Nothing: skipping this item."
}

// OptionLabel is "Name (price)", or "Name" without a price, on one line.
func OptionLabel(o Option) string {
	name := strings.Join(strings.Fields(o.Name), " ")
	if name == "" {
		name = "(unnamed product)"
	}
	if p := strings.Join(strings.Fields(o.Price), " "); p != "" {
		return fmt.Sprintf("%s (%s)", name, p)
	}
	return name
}
