package app

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/browser"
	"github.com/gemini-supply/gemini-supply/internal/panel"
)

// The browser's take-over errors reach the panel as its own: a refusal
// keeps the policy's rule and reason (answered 403 and shown on the card),
// a tab nobody is asked for is the panel's ErrNotHeld (404).
func TestTakeoverErrorsForThePanel(t *testing.T) {
	refused := fmt.Errorf("take over: %w", &browser.RefusedError{Rule: "order", Reason: "pages under /checkout may not be opened by the agent (the agent never orders)"})
	var pr *panel.RefusedError
	if err := held(refused); !errors.As(err, &pr) || pr.Rule != "order" || pr.Reason != "pages under /checkout may not be opened by the agent (the agent never orders)" {
		t.Fatalf("a refusal = %#v", err)
	}
	if err := held(fmt.Errorf("x: %w", browser.ErrNotHeld)); !errors.Is(err, panel.ErrNotHeld) {
		t.Fatalf("no such tab = %v", err)
	}
	other := errors.New("the tab did not answer")
	if err := held(other); err != other {
		t.Fatalf("another error = %v", err)
	}
	if held(nil) != nil {
		t.Fatal("no error became one")
	}
}
