package browser_test

import (
	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
)

// The browser's Tab is the agent's Computer.
var _ agent.Computer = (*browser.Tab)(nil)
