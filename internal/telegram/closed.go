package telegram

import (
	"context"
	"errors"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/messages"
)

// closedLine is appended to a question whose ctx ended before it was
// answered here: answered on another channel (the ask package's cause),
// no answer in time, or the run stopped.
func closedLine(m messages.Catalog, ctx context.Context) string { //nolint:revive // ctx is the question's, read for its cause
	var c *choice.Closed
	switch {
	case errors.As(context.Cause(ctx), &c) && c.Timeout:
		return m.T("telegram.no_answer")
	case errors.As(context.Cause(ctx), &c):
		return c.Line + "\n" + m.T("telegram.answered_on", "channel", c.By)
	}
	return m.T("telegram.cancelled")
}
