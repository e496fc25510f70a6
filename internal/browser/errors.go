package browser

import (
	"errors"
	"fmt"
	"time"

	"github.com/playwright-community/playwright-go"
)

// ErrBrowserGone means the browser crashed, was killed or disconnected (or
// the tab's renderer crashed) while a call was in flight or before it. The
// Host relaunches the browser once; the caller should retry its work on a
// new tab.
var ErrBrowserGone = errors.New("the browser is gone (crashed, killed or disconnected)")

// ErrAuthExpired means a tab found itself signed out of the store: the
// store's page lacks the signed-in marker. Log in again (Host.Login) and
// retry.
var ErrAuthExpired = errors.New("the store session has expired (the page shows no signed-in marker)")

// ErrClosed means the Host or the Tab was closed by its owner.
var ErrClosed = errors.New("the browser host or tab is closed")

// BlockedError is returned when an action asks for something the store
// policy forbids (a host outside the allowlist, a blocked path, a non-http
// address). The agent reports it to the model, which may correct itself.
type BlockedError struct {
	URL    string
	Reason string
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("blocked by the store policy: %s (%s)", e.URL, e.Reason)
}

// Rejected marks the error as one to report to the model rather than to
// end the run with.
func (*BlockedError) Rejected() bool { return true }

// InputError is returned for model input the browser cannot act on (an
// unknown key name, an empty key combination). Like BlockedError it is
// reported to the model.
type InputError struct {
	Input  string
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("invalid input %q: %s", e.Input, e.Reason)
}

// Rejected marks the error as one to report to the model.
func (*InputError) Rejected() bool { return true }

// isTargetClosed reports whether err says the page, context or browser was
// closed under the call.
func isTargetClosed(err error) bool {
	return errors.Is(err, playwright.ErrTargetClosed)
}

// TimeoutError is returned when an action did not finish within the
// action timeout (a page too slow to answer, typing cut short). Like
// BlockedError it is reported to the model, in words it can act on.
type TimeoutError struct {
	Action string
	Limit  time.Duration
	Detail string // what was done before the limit, if known
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("the %s action did not finish within its time limit of %s", e.Action, e.Limit)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Rejected marks the error as one to report to the model.
func (*TimeoutError) Rejected() bool { return true }

// ErrLoginRefused means the identity site did not let the login through:
// after the credentials were submitted the page stayed on the identity site
// (a wrong username or password, or a challenge to solve by hand). Only
// this error is a reason to check the credentials.
var ErrLoginRefused = errors.New("the store's identity site did not accept the sign-in (wrong username or password, or a challenge to solve by hand: check metro_username/metro_password, or run `gemini-supply login --headful`)")

// LoginStepError says which login step failed and how.
type LoginStepError struct {
	N    int    // 1-based step number
	What string // the step's description ("open the login panel")
	// TimedOut: the page did not show what the step waits for within its
	// bound — a page that did not answer in time, not a refused password.
	TimedOut bool
	Limit    time.Duration
	Err      error
}

func (e *LoginStepError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("login step %d (%s) timed out: the page did not answer in time (waited %s)", e.N, e.What, e.Limit.Round(time.Millisecond))
	}
	return fmt.Sprintf("login step %d (%s) failed: %v", e.N, e.What, e.Err)
}

func (e *LoginStepError) Unwrap() error { return e.Err }

// isTimeout reports whether err is a Playwright timeout.
func isTimeout(err error) bool {
	return errors.Is(err, playwright.ErrTimeout)
}
