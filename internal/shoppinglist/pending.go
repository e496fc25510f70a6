package shoppinglist

import (
	"context"
	"errors"
)

// ErrUpdatePending is wrapped by a Mark error when the list could not be
// updated before the call's deadline (its service was unreachable or still
// starting) and the provider kept the update to apply it as soon as it can.
// The update is not lost, but it has not landed yet: a Flusher says what
// became of it.
var ErrUpdatePending = errors.New("list update not applied yet: queued until the list is reachable again")

// Flusher is implemented by providers that queue updates (see
// ErrUpdatePending). Flush applies the queued updates, waiting at most until
// ctx is done, and returns why each update that could not be applied was not,
// by item ID; an empty map means every update has landed. An update reported
// here stays queued until the provider stops, and is not reported again.
type Flusher interface {
	Flush(ctx context.Context) map[string]error
}
