package products

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// Bounds of a remembered product's fields (the file may be edited by hand,
// or by anything that can write the data directory): replay opens its
// address and the panel, the products command and the agent's goal show
// its texts.
const (
	maxIDRunes    = 200
	maxSizeRunes  = 100
	maxPriceRunes = 50
)

// validate says why an entry may not be used, or nil: a key of a real item
// name (within the item-name limit), a product name, sane counts, short
// texts without control characters, and an address — when there is one —
// that is an absolute http(s) address without credentials and passes the
// store's check (WithURLCheck).
func (m *Memory) validate(key string, p Product) error {
	if key == "" || utf8.RuneCountInString(key) > shoppinglist.MaxNameRunes {
		return fmt.Errorf("its key is empty or longer than %d characters", shoppinglist.MaxNameRunes)
	}
	if s := p.Substitute; s != nil {
		sp := s.product()
		if err := m.validate(key, sp); err != nil {
			return fmt.Errorf("its substitute: %w", err)
		}
		if s.InARow < 0 {
			return fmt.Errorf("its substitute was bought %d times in a row", s.InARow)
		}
	}
	if len(p.Rejected) > MaxRejected {
		return fmt.Errorf("it marks %d products wrong, more than %d", len(p.Rejected), MaxRejected)
	}
	for _, r := range p.Rejected {
		if err := m.validRejected(key, r); err != nil {
			return fmt.Errorf("a product marked wrong: %w", err)
		}
	}
	if p.HouseholdQuantity < 0 || p.HouseholdQuantity > shoppinglist.MaxQuantity || p.ListQuantity < 0 || p.ListQuantity > shoppinglist.MaxQuantity {
		return fmt.Errorf("its household quantity %d (for the list's %d) is not between 0 and %d", p.HouseholdQuantity, p.ListQuantity, shoppinglist.MaxQuantity)
	}
	if !p.Standing() && (p.Substitute != nil || !p.Policy.IsZero() || len(p.Rejected) > 0) {
		// Only a substitute, a policy or marks: no product of its own.
		if p.URL != "" || p.ProductID != "" || p.Pinned {
			return errors.New("it has an address, a product id or a pin but no product name")
		}
		return nil
	}
	switch {
	case key == "" || utf8.RuneCountInString(key) > shoppinglist.MaxNameRunes:
		return fmt.Errorf("its key is empty or longer than %d characters", shoppinglist.MaxNameRunes)
	case strings.TrimSpace(p.Name) == "":
		return errors.New("it has no product name")
	case p.Quantity < 0 || p.Quantity > shoppinglist.MaxQuantity:
		return fmt.Errorf("its quantity %d is not between 0 and %d", p.Quantity, shoppinglist.MaxQuantity)
	case p.TimesChosen < 0:
		return fmt.Errorf("it was chosen %d times", p.TimesChosen)
	}
	if err := checkTexts(key, p); err != nil {
		return err
	}
	if p.URL == "" {
		return nil
	}
	if m.checkURL != nil {
		if err := m.checkURL(p.URL); err != nil {
			return fmt.Errorf("its address %q may not be opened: %w", report.Clip(p.URL, 80), err)
		}
	}
	return nil
}

// checkTexts checks the lengths and characters of an entry's texts and the
// form of its address (when it has one).
func checkTexts(key string, p Product) error {
	for _, f := range []struct {
		what, s string
		max     int
	}{
		{"key", key, shoppinglist.MaxNameRunes}, {"name", p.Name, report.MaxProductRunes},
		{"product id", p.ProductID, maxIDRunes}, {"size", p.Size, maxSizeRunes}, {"price", p.Price, maxPriceRunes},
	} {
		if utf8.RuneCountInString(f.s) > f.max {
			return fmt.Errorf("its %s is longer than %d characters", f.what, f.max)
		}
		if strings.IndexFunc(f.s, func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError }) >= 0 {
			return fmt.Errorf("its %s holds control characters", f.what)
		}
	}
	if p.URL == "" {
		return nil
	}
	if len(p.URL) > report.MaxURLBytes {
		return fmt.Errorf("its address is longer than %d bytes", report.MaxURLBytes)
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return fmt.Errorf("its address %q is not an http(s) address of a store", report.Clip(p.URL, 80))
	}
	return nil
}

// validRejected says why a product marked wrong may not be kept: it has a
// name, and its texts and address have the form of a remembered product's.
// Its address is never opened, so the store's check does not apply (a
// mark is kept even when the store's rules change).
func (m *Memory) validRejected(key string, r Rejected) error {
	if strings.TrimSpace(r.Name) == "" {
		return errors.New("it has no product name")
	}
	return checkTexts(key, r.product())
}
