package runstatus

import "context"

// Who did something (started or stopped a run, answered a question, acted
// on the cart) is a Home Assistant user's name: the display name Home
// Assistant's ingress sends with each panel request (X-Remote-User-Display-
// Name, else X-Remote-User-Name), or the person whose phone pressed an
// action. Empty when not known (a page outside ingress, MQTT, a voice
// command, Telegram). Journals keep it and History shows it.

type byKey struct{}

// WithBy is ctx carrying who asked for what ctx does ("" changes nothing).
func WithBy(ctx context.Context, by string) context.Context {
	if by == "" {
		return ctx
	}
	return context.WithValue(ctx, byKey{}, by)
}

// ByFrom is who ctx was asked by ("" when not known).
func ByFrom(ctx context.Context) string {
	by, _ := ctx.Value(byKey{}).(string)
	return by
}

// StopCause is the cause a run's context is cancelled with when someone
// stops it: Err (serve.ErrStopped) for errors.Is, and who stopped it, from
// where.
type StopCause struct {
	Err    error
	Source string
	By     string
}

func (c *StopCause) Error() string { return c.Err.Error() }
func (c *StopCause) Unwrap() error { return c.Err }
