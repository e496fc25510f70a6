package browser

import (
	"context"
	"fmt"
)

// Sleep puts the tab's page to sleep while its agent waits for the model:
// its main thread is paused in the debugger (Debugger.enable, then
// Debugger.pause), so none of its scripts, timers, event handlers or
// rendering runs; what would have run waits in its queues, nothing is
// lost. Nothing of the page is changed: the request policy, the guard and
// the cart ledger see the same requests when it wakes. Wake it before the
// next action or screenshot (a paused page answers neither).
//
// Chosen by measurement (docs/browser.md, "Tabs sleep while the model
// thinks"): Page.setWebLifecycleState "frozen" left a headless page's
// 10 ms timer ticking as before (Chromium 156: the headless page never
// becomes hidden, and only a hidden page freezes);
// Emulation.setCPUThrottlingRate only slows the page down and
// Emulation.setScriptExecutionDisabled drops the timers' work instead of
// deferring it. Dedicated and shared workers run on (the tab's guard
// refuses the widget's).
func (t *Tab) Sleep(ctx context.Context) error { return t.lifecycle(ctx, true) }

// Wake resumes a slept tab's page (Debugger.disable ends the pause): its
// queued work runs and the screenshot after it shows the page as it is.
func (t *Tab) Wake(ctx context.Context) error { return t.lifecycle(ctx, false) }

func (t *Tab) lifecycle(ctx context.Context, asleep bool) error {
	state := "awake"
	if asleep {
		state = "asleep"
	}
	t.st.mu.Lock()
	sess := t.st.guardSess
	t.st.mu.Unlock()
	if sess == nil {
		return fmt.Errorf("set the page %s: %w", state, ErrClosed)
	}
	return t.act(ctx, "set the page "+state, false, func(call) error {
		if !asleep {
			_, err := sess.Send("Debugger.disable", nil) // resumes a paused page
			return err
		}
		if _, err := sess.Send("Debugger.enable", nil); err != nil {
			return err
		}
		_, err := sess.Send("Debugger.pause", nil)
		return err
	})
}
