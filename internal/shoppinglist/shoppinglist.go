// Package shoppinglist holds the shopping list model — items, statuses, tags,
// quantities — and the Provider interface every list source implements (a YAML
// file here, a Home Assistant todo entity in package homeassistant).
package shoppinglist

import (
	"context"
	"errors"
	"fmt"

	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// Status is an item's completion status (the same words Home Assistant uses).
type Status string

const (
	StatusNeedsAction Status = "needs_action"
	StatusCompleted   Status = "completed"
)

// Tags written into item names by a run.
const (
	TagNotFound = "#404"
	TagFailed   = "#failed"
)

// Item is one entry of a shopping list.
type Item struct {
	// ID is stable for the item's life in its list (YAML id, HA uid).
	ID string
	// Name is the item as the user wrote it, tags removed ("2x milk").
	Name   string
	Status Status
	// Tags are the #tags found in the name, lower case, with the '#'.
	Tags []string
	// Explanation is the last run's explanation or failure reason, if any.
	Explanation string
	// Description is the household's own description of the item (a Home
	// Assistant item's description not written by a run; a YAML item's
	// description key). A run never changes it; its policy phrases ("no
	// substitute", "always ask", "any brand") count (DescriptionPolicy).
	Description string
	// Quantity is parsed from Name (1 when it names none): a count of
	// packages, or of pieces when Pieces is set ("12 eggs": how many
	// packages buy it depends on the product, PackagesFor).
	Quantity int
	// Pieces: Quantity counts pieces, not packages (Parsed.Pieces).
	Pieces bool
	// Product is Name without its quantity ("milk" for "2x milk").
	Product string
}

// Added is what a run reports for an item it put in the cart.
type Added struct {
	ProductName string
	Price       money.Price
	URL         string
	Quantity    int
}

// ErrItemGone is wrapped by a provider's errors when the item is no longer on
// the list: a person deleted it (or its id never existed). A run treats it
// as the person's decision, not as a failure.
var ErrItemGone = errors.New("item is no longer on the list")

// Find returns the item with id from items, or an error wrapping ErrItemGone.
func Find(items []Item, id string) (Item, error) {
	for _, it := range items {
		if it.ID == id {
			return it, nil
		}
	}
	return Item{}, fmt.Errorf("item %q: %w", id, ErrItemGone)
}

// Provider is a shopping list source. Implementations must be safe for
// concurrent use: several agents mark items at once.
type Provider interface {
	// Items returns every item of the list (callers filter by status and tags).
	Items(ctx context.Context) ([]Item, error)
	// Item returns one item's current state, read fresh from the list (a
	// person may have renamed, completed or deleted it since Items). An error
	// wrapping ErrItemGone means it is no longer on the list.
	Item(ctx context.Context, id string) (Item, error)
	// The Mark methods return an error wrapping ErrItemGone when the item
	// was deleted meanwhile.
	//
	// MarkCompleted records that the item is in the cart.
	MarkCompleted(ctx context.Context, id string, added Added) error
	// MarkNotFound tags the item #404 with the agent's explanation.
	MarkNotFound(ctx context.Context, id string, explanation string) error
	// MarkFailed tags the item #failed with the reason.
	MarkFailed(ctx context.Context, id string, reason string) error
	// SendSummary delivers the run summary wherever this list lives.
	SendSummary(ctx context.Context, s report.Summary) error
}
