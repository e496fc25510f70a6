package browser_test

import (
	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/browser"
)

// The browser's Tab is the agent's Computer; it can put its page in text
// (the offline planner's eyes) and name the element at a point (the
// trace's words).
var (
	_ agent.Computer      = (*browser.Tab)(nil)
	_ agent.PageDescriber = (*browser.Tab)(nil)
	_ agent.ElementNamer  = (*browser.Tab)(nil)
)
