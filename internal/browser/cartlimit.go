package browser

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// The cart limit: a hard guard against a unit nobody asked for. The shop
// gives an item's tab a CartLimit when it hands the tab to the item; the
// tab's guard (its own CDP session, policy.go) then pauses every request
// that may change the cart and asks the limit about each add
// (store.CartAdd) before it is made. A refused add never reaches the store:
// the page sees a failed request, the model reads a notice, and the tab's
// ledger records the request as Refused. Only a profile that describes its
// adds (store.Profile.CartOps: the demo store) can be guarded this way; a
// quantity change (store.CartSet) is not an add and is never refused.

// CartLimit decides, before an add request of the tab goes to the store,
// whether it may: add is what the request asks for, tabUnits the units the
// tab's adds let through since the limit was set have put in the cart or
// are putting there (answered 2xx, or still on their way). A non-nil error
// refuses the request; its text says why (the model reads it).
type CartLimit func(add store.CartChange, tabUnits int) error

// cartGrant is an add the limit let through, until the store answers it.
type cartGrant struct {
	key   string // requestKey
	units int
	state grantState
}

type grantState int

const (
	grantPending grantState = iota
	grantDone               // answered 2xx: the units are in the cart
	grantFreed              // refused, failed or answered otherwise: nothing added
)

// requestKey names a request for matching the guard's pauses with
// Playwright's events: its method and URL without the fragment.
func requestKey(method, rawURL string) string {
	if i := strings.IndexByte(rawURL, '#'); i >= 0 {
		rawURL = rawURL[:i]
	}
	return strings.ToUpper(method) + " " + rawURL
}

// LimitCart makes f the tab's cart limit (nil lifts it); the units counted
// for it start at 0. The tab's guard pauses the requests that may change the
// cart only while a limit is set.
func (t *Tab) LimitCart(f CartLimit) error {
	t.st.mu.Lock()
	t.st.cartLimit = f
	t.st.grants = nil
	t.st.mu.Unlock()
	if !t.h.limitsAdds() {
		return nil
	}
	if err := t.st.updateGuard(); err != nil {
		return fmt.Errorf("setting the tab's cart limit: %w", err)
	}
	return nil
}

// limitsAdds says whether the profile names an add operation, so that an
// add can be read from its request (CartOps).
func (h *Host) limitsAdds() bool {
	for _, op := range h.profile.CartOps {
		if op.Kind == store.CartAdd {
			return true
		}
	}
	return false
}

// grantedUnits are the units of the grants not freed. Called with s.mu held.
func (s *pageState) grantedUnitsLocked() int {
	n := 0
	for _, g := range s.grants {
		if g.state != grantFreed {
			n += g.units
		}
	}
	return n
}

// settleGrant resolves the oldest pending grant for key: done (the store
// answered 2xx) or freed. Called with s.mu held.
func (s *pageState) settleGrantLocked(key string, done bool) {
	for _, g := range s.grants {
		if g.state == grantPending && g.key == key {
			g.state = grantFreed
			if done {
				g.state = grantDone
			}
			return
		}
	}
}

// takeRefusalLocked reports whether the guard refused a request for key (and
// forgets one such refusal). Called with s.mu held.
func (s *pageState) takeRefusalLocked(key string) bool {
	for i, k := range s.refusals {
		if k == key {
			s.refusals = append(s.refusals[:i], s.refusals[i+1:]...)
			return true
		}
	}
	return false
}

// refuseAdd asks the tab's cart limit about a paused request (request
// stage) and, when it is an add the limit refuses, fails it before it is
// made and returns true.
func (h *Host) refuseAdd(sess playwright.CDPSession, st *pageState, id string, ev map[string]any) bool {
	st.mu.Lock()
	limit := st.cartLimit
	st.mu.Unlock()
	if limit == nil {
		return false
	}
	r, _ := ev["request"].(map[string]any)
	raw, _ := r["url"].(string)
	method, _ := r["method"].(string)
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	hdrs := map[string]string{}
	if hs, ok := r["headers"].(map[string]any); ok {
		for k, v := range hs {
			if s, ok := v.(string); ok {
				hdrs[strings.ToLower(k)] = s
			}
		}
	}
	cart := h.profile.IsCartChange(method, u)
	for _, k := range store.MethodOverrideHeaders {
		for _, m := range strings.Split(hdrs[strings.ToLower(k)], ",") {
			if m = strings.TrimSpace(m); m != "" && h.profile.IsCartChange(m, u) {
				cart = true
			}
		}
	}
	if !cart {
		return false
	}
	c := h.profile.ReadCartChange(u, hdrs["content-type"], pausedBody(r))
	if c.Kind != store.CartAdd {
		return false
	}
	c.ProductText = h.addedProductText(sess, c.ProductID)
	key := requestKey(method, raw)
	// One decision at a time per tab: two adds sent together are counted
	// one after the other.
	st.limitMu.Lock()
	defer st.limitMu.Unlock()
	st.mu.Lock()
	if limit = st.cartLimit; limit == nil { // lifted meanwhile
		st.mu.Unlock()
		return false
	}
	used := st.grantedUnitsLocked()
	st.mu.Unlock()
	if err := limit(c, used); err != nil {
		st.mu.Lock()
		st.refusals = append(st.refusals, key)
		if len(st.refusals) > maxLedger {
			st.refusals = st.refusals[1:]
		}
		st.mu.Unlock()
		st.notice(fmt.Sprintf("The add to the cart was refused before it reached the store: %v.", err))
		h.log.Warn("the item's cart limit refused an add to the cart", "item", st.itemName(),
			"path", c.Path, "product", c.ProductID, "units", c.Quantity, "tab_units", used, "why", err)
		_, _ = sess.Send("Fetch.failRequest", map[string]any{"requestId": id, "errorReason": abortFrame})
		return true
	}
	st.mu.Lock()
	st.grants = append(st.grants, &cartGrant{key: key, units: max(c.Quantity, 1)})
	st.mu.Unlock()
	return false
}

// productTextWait bounds the guard's read of an added product's text.
const productTextWait = 5 * time.Second

// maxProductText bounds the text read of an added product.
const maxProductText = 500

// addedProductText reads what the tab's page shows of the product an add
// names (Profile.AddedProductText: its name and size), for the cart limit
// to know how it is sold; "" when the profile names no selector, the add no
// product, or the page shows none. The page's scripts run while the add is
// paused, so the read does not wait for it; it is bounded all the same (a
// page whose main thread is stuck answers late: the read then returns ""
// and its call ends with the session).
func (h *Host) addedProductText(sess playwright.CDPSession, productID string) string {
	sel := h.profile.AddedProductText
	if sel == "" || productID == "" {
		return ""
	}
	js, _ := json.Marshal(sel)
	id, _ := json.Marshal(productID)
	expr := fmt.Sprintf(`(() => { const sel = %s.split("{id}").join(CSS.escape(%s));
  return Array.from(document.querySelectorAll(sel), e => (e.innerText || e.textContent || "").trim()).join(" ").slice(0, %d); })()`,
		js, id, maxProductText)
	got := make(chan string, 1)
	go func() {
		res, err := sess.Send("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
		text := ""
		if m, ok := res.(map[string]any); ok && err == nil {
			if v, ok := m["result"].(map[string]any); ok {
				text, _ = v["value"].(string)
			}
		}
		got <- text
	}()
	select {
	case t := <-got:
		return t
	case <-time.After(productTextWait):
		h.log.Debug("reading the added product's text took too long", "product", productID)
		return ""
	}
}

func (s *pageState) itemName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.item
}

// pausedBody is a paused request's body as far as the event carries it
// (postDataEntries, base64, or postData).
func pausedBody(r map[string]any) []byte {
	if es, ok := r["postDataEntries"].([]any); ok && len(es) > 0 {
		var b []byte
		for _, e := range es {
			m, _ := e.(map[string]any)
			s, _ := m["bytes"].(string)
			d, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				b = nil
				break
			}
			b = append(b, d...)
		}
		if b != nil {
			return b
		}
	}
	s, _ := r["postData"].(string)
	return []byte(s)
}

// updateGuard enables the guard's pauses for what the tab needs now: a
// replay tab and a reader pause every request, a tab with a cart limit its fetch, XHR,
// beacon and other requests (an add is one of them, or a document).
func (s *pageState) updateGuard() error {
	s.guardMu.Lock()
	defer s.guardMu.Unlock()
	s.mu.Lock()
	sess, every, limited := s.guardSess, s.replayOnly || s.readOnly, s.cartLimit != nil
	s.mu.Unlock()
	if sess == nil {
		return ErrClosed
	}
	_, err := sess.Send("Fetch.enable", guardPatterns(every, limited))
	return err
}
