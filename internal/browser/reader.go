package browser

import (
	"context"
	"fmt"
	"strings"

	"github.com/playwright-community/playwright-go"
)

// A reader is a tab that only reads the store's pages by code (past orders,
// favourites, delivery slots): nothing it does may change anything at the
// store. Its guard pauses every request of the tab and lets only GET and
// HEAD through — a form's POST, a script's fetch or XHR with another
// method, a beacon (always a POST) are failed before they leave the
// browser, whatever the page's scripts try (a form posted as a navigation
// is answered "204 No Content" by the guard: the page stays as it was). The store policy (the proxy and
// the guard's document checks) applies as for every tab, so a GET of a
// checkout or order page is refused as well; workers and sockets are
// refused as in every tab (diet.go).

// readMethods are the only methods a reader's requests may use.
var readMethods = map[string]bool{"GET": true, "HEAD": true}

// NewReader opens a reader: a new tab from which no request but a GET or
// a HEAD reaches any host. Close it when done.
func (h *Host) NewReader(ctx context.Context) (*Tab, error) {
	t, err := h.NewTab(ctx)
	if err != nil {
		return nil, err
	}
	if err := t.readOnly(ctx); err != nil {
		_ = t.Close()
		return nil, err
	}
	return t, nil
}

// readOnly makes the tab a reader for the rest of its life.
func (t *Tab) readOnly(ctx context.Context) error {
	t.st.mu.Lock()
	sess := t.st.guardSess
	t.st.readOnly = true
	t.st.mu.Unlock()
	if sess == nil {
		return fmt.Errorf("making the tab a reader: %w", ErrClosed)
	}
	return t.act(ctx, "make the tab a reader", false, func(call) error {
		return t.st.updateGuard()
	})
}

// IsReader says whether the tab is a reader.
func (t *Tab) IsReader() bool {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.readOnly
}

// refuseWrite fails a paused request of a reader whose method is not GET
// or HEAD, and says whether it did.
func (h *Host) refuseWrite(sess playwright.CDPSession, st *pageState, id string, ev map[string]any) bool {
	r, _ := ev["request"].(map[string]any)
	method, _ := r["method"].(string)
	if readMethods[strings.ToUpper(method)] {
		return false
	}
	raw, _ := r["url"].(string)
	if typ, _ := ev["resourceType"].(string); typ == "Document" {
		// A form posted as a navigation: answered "204 No Content" by the
		// guard, so the page stays (a failed navigation would commit an
		// error page over what the reader reads).
		refuseFrame(sess, id)
	} else {
		_, _ = sess.Send("Fetch.failRequest", map[string]any{"requestId": id, "errorReason": abortFrame})
	}
	st.notice(fmt.Sprintf("A %s to %s was refused: this tab only reads.", method, redactURL(raw)))
	h.log.Warn("reader: a request that could change something was refused", "method", method, "url", redactURL(raw))
	return true
}
