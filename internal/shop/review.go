package shop

import (
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
)

// CartLine is one line of the store's cart.
type CartLine struct {
	Name string `json:"name"`
	// ProductID is the store's product identifier when the reader knows it.
	ProductID string `json:"product_id,omitempty"`
	URL       string `json:"url,omitempty"`
	Quantity  int    `json:"quantity"`
	// Price is the price of one unit.
	Price money.Price `json:"price"`
}

// Cart is the cart as read at one moment.
type Cart struct {
	Lines  []CartLine `json:"lines"`
	ReadAt time.Time  `json:"read_at"`
	// Usage is the model use of reading the cart (zero when read by code).
	Usage report.Usage `json:"usage"`
	// Source says how the cart was read (CartFromPage, CartFromModel).
	Source string `json:"source,omitempty"`
}

// Units is the total number of units in the cart.
func (c Cart) Units() int {
	n := 0
	for _, l := range c.Lines {
		n += l.Quantity
	}
	return n
}

// LineChange is a cart line whose quantity changed during the run.
type LineChange struct {
	Name      string      `json:"name"`
	ProductID string      `json:"product_id,omitempty"`
	URL       string      `json:"url,omitempty"`
	Before    int         `json:"before"`
	After     int         `json:"after"`
	Price     money.Price `json:"price"`
	// Items are the list items whose reports this change accounts for.
	Items []string `json:"items,omitempty"`
}

// Warning is one thing the user should look at before checking out. Its
// kind is of the review pack's one vocabulary (reviewpack.WarningKind): an
// item's warning goes into the pack as it is.
type Warning struct {
	Kind    reviewpack.WarningKind `json:"kind"`
	Item    string                 `json:"item,omitempty"`
	Message string                 `json:"message"`
	// Text is Message as a catalogue key and values ("key", "args"), said
	// in the reader's language.
	messages.Text
}

// warning is a warning said by the catalogue, its Message the English text.
func warning(kind reviewpack.WarningKind, item string, t messages.Text) Warning {
	return Warning{Kind: kind, Item: item, Message: t.English(), Text: t}
}

// Review compares the cart before and after the run with what the agents
// reported (the "review pack"). The run never goes past it: checking out is
// the user's job.
type Review struct {
	Before   *Cart        `json:"before,omitempty"`
	After    *Cart        `json:"after,omitempty"`
	Changes  []LineChange `json:"changes"`
	Warnings []Warning    `json:"warnings"`
	CartURL  string       `json:"cart_url,omitempty"`
	// UnappliedUpdates are the list updates that could not be applied: the
	// cart is as reported, the list does not say so.
	UnappliedUpdates []report.UnappliedUpdate `json:"unapplied_updates,omitempty"`
}

// WarningTexts returns the warnings' messages (for report.Summary.Warnings).
func (r Review) WarningTexts() []string {
	out := make([]string, 0, len(r.Warnings))
	for _, w := range r.Warnings {
		out = append(out, w.Message)
	}
	return out
}

// WarnSummary adds the warnings to the summary, with their keys.
func (r Review) WarnSummary(s *report.Summary) {
	for _, w := range r.Warnings {
		s.WarnAs(w.Message, w.Text)
	}
}

// Unavailable is the review of a run whose cart could not be read.
func Unavailable(why string) Review {
	return Review{Warnings: []Warning{warning(reviewpack.WarnCartUnchecked, "", messages.Say("warning.cart_unchecked", "why", why))}}
}

// Compare builds the review: the lines whose quantity changed, and warnings
// for every reported-added item that no cart change accounts for (or with
// fewer units, or at another price), and for every change no report explains.
func Compare(before, after Cart, results []report.ItemResult) Review {
	b, a := before, after
	rev := Review{Before: &b, After: &a}

	type slot struct {
		change LineChange
		left   int // units gained and not yet accounted for
	}
	var slots []*slot
	beforeIdx := make(map[string]CartLine)
	for _, l := range before.Lines {
		k := lineKey(l)
		if prev, ok := beforeIdx[k]; ok {
			prev.Quantity += l.Quantity
			beforeIdx[k] = prev
			continue
		}
		beforeIdx[k] = l
	}
	seen := make(map[string]bool)
	afterIdx := make(map[string]CartLine)
	var afterOrder []string
	for _, l := range after.Lines {
		k := lineKey(l)
		if prev, ok := afterIdx[k]; ok {
			prev.Quantity += l.Quantity
			afterIdx[k] = prev
			continue
		}
		afterIdx[k] = l
		afterOrder = append(afterOrder, k)
	}
	for _, k := range afterOrder {
		l := afterIdx[k]
		seen[k] = true
		was := beforeIdx[k].Quantity
		if l.Quantity == was {
			continue
		}
		slots = append(slots, &slot{
			change: LineChange{Name: l.Name, ProductID: l.ProductID, URL: l.URL, Before: was, After: l.Quantity, Price: l.Price},
			left:   max(l.Quantity-was, 0),
		})
	}
	var gone []string
	for k := range beforeIdx {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		l := beforeIdx[k]
		slots = append(slots, &slot{change: LineChange{Name: l.Name, ProductID: l.ProductID, URL: l.URL, Before: l.Quantity, After: 0, Price: l.Price}})
	}

	for _, r := range results {
		if r.Outcome != report.OutcomeAdded {
			continue
		}
		want := max(r.Quantity, 1)
		// Best match first: product id or URL, then the name.
		var best *slot
		bestScore := 0
		for _, s := range slots {
			if s.left == 0 {
				continue
			}
			if sc := matchScore(r, s.change); sc > bestScore {
				best, bestScore = s, sc
			}
		}
		label := r.ItemName
		if best == nil {
			rev.Warnings = append(rev.Warnings, warning(reviewpack.WarnMissing, label,
				messages.Say("warning.missing", "item", label, "product", productLabel(r))))
			continue
		}
		got := min(best.left, want)
		best.left -= got
		best.change.Items = append(best.change.Items, r.ItemName)
		if got < want {
			rev.Warnings = append(rev.Warnings, warning(reviewpack.WarnQuantityShort, label,
				messages.Say("warning.quantity_short", "item", label, "want", want, "product", best.change.Name, "got", got)))
		}
		if r.Price.Known && best.change.Price.Known && r.Price.UnitCents != best.change.Price.UnitCents {
			rev.Warnings = append(rev.Warnings, warning(reviewpack.WarnPriceDiffers, label,
				messages.Say("warning.price_differs", "item", label, "reported", r.Price.Text, "cart", best.change.Price.Text, "product", best.change.Name)))
		}
	}
	for _, s := range slots {
		rev.Changes = append(rev.Changes, s.change)
		c := s.change
		switch {
		case c.After < c.Before:
			rev.Warnings = append(rev.Warnings, warning(reviewpack.WarnUnexpectedChange, "",
				messages.Say("warning.cart_lost", "product", c.Name, "before", c.Before, "after", c.After)))
		case s.left > 0:
			rev.Warnings = append(rev.Warnings, warning(reviewpack.WarnUnexpectedChange, "",
				messages.Say("warning.cart_gained", "n", s.left, "product", c.Name)))
		}
	}
	if rev.Changes == nil {
		rev.Changes = []LineChange{}
	}
	if rev.Warnings == nil {
		rev.Warnings = []Warning{}
	}
	return rev
}

func productLabel(r report.ItemResult) string {
	s := r.ProductName
	if s == "" && r.Price.Text == "" {
		return "@warning.no_product_name" // said in the reader's language
	}
	if s == "" {
		s = "no product name"
	}
	if r.Price.Text != "" {
		s += ", " + r.Price.Text
	}
	return s
}

// lineKey identifies a cart line across two readings.
func lineKey(l CartLine) string {
	switch {
	case l.ProductID != "":
		return "id:" + strings.ToLower(l.ProductID)
	case l.URL != "":
		if p := urlPath(l.URL); p != "" {
			return "url:" + p
		}
	}
	return "name:" + strings.Join(words(l.Name), " ")
}

// matchScore says how well a reported item matches a cart change: 3 for the
// same product (id in the URL, or the same URL path), 2 for names that
// contain each other's words, 1 for names sharing most words, 0 for none.
func matchScore(r report.ItemResult, c LineChange) int {
	rp := urlPath(r.URL)
	if rp != "" {
		if c.ProductID != "" && pathHasSegment(rp, strings.ToLower(c.ProductID)) {
			return 3
		}
		if cp := urlPath(c.URL); cp != "" && cp == rp {
			return 3
		}
	}
	rw, cw := words(r.ProductName), words(c.Name)
	if len(rw) == 0 || len(cw) == 0 {
		return 0
	}
	if subset(cw, rw) || subset(rw, cw) {
		return 2
	}
	common := 0
	set := make(map[string]bool, len(rw))
	for _, w := range rw {
		set[w] = true
	}
	for _, w := range cw {
		if set[w] {
			common++
		}
	}
	if common*3 >= len(cw)*2 {
		return 1
	}
	return 0
}

func urlPath(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Path == "" {
		return ""
	}
	return strings.TrimRight(strings.ToLower(u.Path), "/")
}

func pathHasSegment(path, seg string) bool {
	for _, s := range strings.Split(path, "/") {
		if s == seg {
			return true
		}
	}
	return false
}

// words lower-cases s and splits it on anything but letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func subset(small, big []string) bool {
	set := make(map[string]bool, len(big))
	for _, w := range big {
		set[w] = true
	}
	for _, w := range small {
		if !set[w] {
			return false
		}
	}
	return true
}
