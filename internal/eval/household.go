package eval

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

type answerKind int

const (
	answerSkip answerKind = iota
	answerChoose
	answerSearch
	answerAbsent
)

type householdAnswer struct {
	kind answerKind
	arg  string
}

// parseHousehold reads a case's household field.
func parseHousehold(s string) (householdAnswer, error) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(s), " ")
	arg = strings.TrimSpace(arg)
	switch verb {
	case "", "skip":
		if arg != "" {
			return householdAnswer{}, fmt.Errorf("household %q: skip takes nothing after it", s)
		}
		return householdAnswer{kind: answerSkip}, nil
	case "absent":
		if arg != "" {
			return householdAnswer{}, fmt.Errorf("household %q: absent takes nothing after it", s)
		}
		return householdAnswer{kind: answerAbsent}, nil
	case "choose":
		if arg == "" {
			return householdAnswer{}, fmt.Errorf("household %q: choose needs a product id or an option's position", s)
		}
		return householdAnswer{kind: answerChoose, arg: arg}, nil
	case "search":
		if arg == "" {
			return householdAnswer{}, fmt.Errorf("household %q: search needs the text to search for", s)
		}
		return householdAnswer{kind: answerSearch, arg: arg}, nil
	}
	return householdAnswer{}, fmt.Errorf("household %q is not skip, absent, choose PRODUCT-ID, choose N or search TEXT", s)
}

// household answers the questions of one case as the case scripts it,
// through the interface every question channel of a run implements
// (shop.ChoiceResolver), and remembers what it was asked.
type household struct {
	answer householdAnswer

	mu    sync.Mutex
	asked []choice.Question
	notes []string
}

var _ shop.ChoiceResolver = (*household)(nil)

func (h *household) Choose(ctx context.Context, q choice.Question) (choice.Answer, error) {
	if err := ctx.Err(); err != nil {
		return choice.Answer{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, q)
	switch h.answer.kind {
	case answerChoose:
		if i, ok := pick(q.Options, h.answer.arg); ok {
			return choice.Answer{Kind: choice.KindProduct, Index: i}, nil
		}
		h.notes = append(h.notes, fmt.Sprintf("the household wanted %s, which was not among the %d options offered", h.answer.arg, len(q.Options)))
		return choice.Answer{Kind: choice.KindNothing}, nil
	case answerSearch:
		return choice.Answer{Kind: choice.KindCustom, Text: h.answer.arg}, nil
	}
	return choice.Answer{Kind: choice.KindNothing}, nil
}

// pick finds the option the household wants as a person would: by its
// position ("choose 2": the second option), or for a product by what the
// question shows — its id when the option gives one (or its address
// does), else its name as the store shows it (English or French, with the
// size when several options share the name).
func pick(opts []choice.Option, want string) (int, bool) {
	if n, err := strconv.Atoi(want); err == nil {
		return n - 1, n >= 1 && n <= len(opts)
	}
	for i, o := range opts {
		if optionID(o) == want {
			return i, true
		}
	}
	p, ok := demostore.ProductByID(want)
	if !ok {
		return 0, false
	}
	var named []int
	for i, o := range opts {
		if optionID(o) != "" {
			continue // an option with another id is another product
		}
		n := normName(o.Name)
		if strings.Contains(n, normName(p.Name)) || strings.Contains(n, normName(p.NameFR)) {
			named = append(named, i)
		}
	}
	switch {
	case len(named) == 1:
		return named[0], true
	case len(named) > 1:
		for _, i := range named {
			if strings.Contains(normName(opts[i].Name), normName(p.Size)) {
				return i, true
			}
		}
	}
	return 0, false
}

// normName lower-cases a name and squeezes its spaces and punctuation.
func normName(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '%'
	}), " ")
}

// optionID is an option's product id, from the option or its address.
func optionID(o choice.Option) string {
	if o.ProductID != "" {
		return o.ProductID
	}
	return store.ProductID(o.URL)
}

func (h *household) questions() ([]choice.Question, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]choice.Question(nil), h.asked...), append([]string(nil), h.notes...)
}
