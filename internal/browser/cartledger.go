package browser

import (
	"net/url"
	"strings"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// CartRequest is one cart-changing request a tab sent — from its page, its
// frames or its workers, as Playwright attributes them to the page — and
// how the store answered. The shopping run reads a tab's requests to know
// exactly what each item's tab did to the cart (store.CartChange says what
// the request asked for, when the profile describes the operation).
type CartRequest struct {
	store.CartChange
	Method string    `json:"method"`
	At     time.Time `json:"at"`
	// Status is the store's HTTP status; 0 while unanswered or when the
	// request failed (Failed).
	Status int  `json:"status,omitempty"`
	Failed bool `json:"failed,omitempty"`
	// Refused says the tab's cart limit stopped the request before it was
	// made (cartlimit.go): the store never saw it (Failed too).
	Refused bool `json:"refused,omitempty"`
}

// Done reports whether the store accepted the change (a 2xx answer).
func (c CartRequest) Done() bool { return c.Status >= 200 && c.Status < 300 }

// maxLedger bounds a tab's ledger (an agent adds a handful of units; a page
// that sends thousands of cart requests is recorded up to this many).
const maxLedger = 1000

// cartLedger is a tab's record of its cart-changing requests. Playwright's
// event goroutine writes it (under pageState.mu); the tab's owner reads it.
type cartLedger struct {
	reqs  []CartRequest
	index map[playwright.Request]int
}

// onCartRequest records r when it changes the cart. Called with st.mu held.
// It returns what it recorded.
func (l *cartLedger) onRequest(p store.Profile, r playwright.Request) (CartRequest, bool) {
	u, err := url.Parse(r.URL())
	// A cart path of a store host at all (whatever the method)? Most
	// requests stop here.
	if err != nil || len(l.reqs) >= maxLedger || !p.IsCartChange("POST", u) {
		return CartRequest{}, false
	}
	hdrs := r.Headers() // lower-case names
	method := r.Method()
	if !p.IsCartChange(method, u) {
		// A method-override header makes a GET a state change to servers
		// that read it (the proxy checks it as that method too).
		overridden := false
		for _, k := range store.MethodOverrideHeaders {
			for _, m := range strings.Split(hdrs[strings.ToLower(k)], ",") {
				if m = strings.TrimSpace(m); m != "" && p.IsCartChange(m, u) {
					method, overridden = m, true
				}
			}
		}
		if !overridden {
			return CartRequest{}, false
		}
	}
	body, _ := r.PostDataBuffer()
	ct := hdrs["content-type"]
	if l.index == nil {
		l.index = map[playwright.Request]int{}
	}
	l.index[r] = len(l.reqs)
	l.reqs = append(l.reqs, CartRequest{CartChange: p.ReadCartChange(u, ct, body), Method: method, At: time.Now()})
	return l.reqs[len(l.reqs)-1], true
}

func (l *cartLedger) onResponse(r playwright.Request, status int) (CartRequest, bool) {
	if i, ok := l.index[r]; ok {
		l.reqs[i].Status = status
		return l.reqs[i], true
	}
	return CartRequest{}, false
}

func (l *cartLedger) onFailed(r playwright.Request, refused bool) {
	if i, ok := l.index[r]; ok {
		l.reqs[i].Failed = true
		l.reqs[i].Refused = refused
		delete(l.index, r)
	}
}

func (l *cartLedger) onFinished(r playwright.Request) { delete(l.index, r) }

// CartRequests returns the cart-changing requests this tab has sent so far,
// oldest first, with the store's answers as far as they came.
func (t *Tab) CartRequests() []CartRequest {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return append([]CartRequest(nil), t.st.cart.reqs...)
}
