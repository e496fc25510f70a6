package telegram

import (
	"context"
	"errors"
	"fmt"

	"github.com/gemini-supply/gemini-supply/internal/choice"
)

// closedLine is appended to a question whose ctx ended before it was
// answered here: answered on another channel (the ask package's cause),
// no answer in time, or the run stopped.
func closedLine(ctx context.Context) string {
	var c *choice.Closed
	switch {
	case errors.As(context.Cause(ctx), &c) && c.Timeout:
		return "⏱ No answer in time."
	case errors.As(context.Cause(ctx), &c):
		return fmt.Sprintf("%s\n(answered on %s)", c.Line, c.By)
	}
	return "🛑 Cancelled: the run stopped before you answered."
}
