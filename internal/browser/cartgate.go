package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// cartGate keeps the login and cart changes apart: while Login runs no
// cart-changing request goes to the store (the proxy holds it until the
// login ends), and a login starts only once the cart requests already on
// their way have been answered. A re-login after an expired session so never
// runs while another tab is mid-add: its add is neither sent with a session
// that is being replaced nor lost in between.
type cartGate struct {
	mu       sync.Mutex
	inflight int
	waiting  int           // cart requests held while a login runs
	login    chan struct{} // open while a login runs; closed when it ends
	drained  chan struct{} // closed when inflight drops to 0 (while a login waits)
}

// enter waits while a login runs (bounded by ctx), then counts one cart
// request in flight until release is called.
func (g *cartGate) enter(ctx context.Context) (release func(), err error) {
	for {
		g.mu.Lock()
		wait := g.login
		if wait == nil {
			g.inflight++
			g.mu.Unlock()
			var once sync.Once
			return func() { once.Do(g.exit) }, nil
		}
		g.waiting++
		g.mu.Unlock()
		var err error
		select {
		case <-wait:
		case <-ctx.Done():
			err = ctx.Err()
		}
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// held is how many cart requests wait for a login to end.
func (g *cartGate) held() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

func (g *cartGate) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if g.inflight == 0 && g.drained != nil {
		close(g.drained)
		g.drained = nil
	}
}

// hold stops new cart requests and waits, at most bound, for those in
// flight to be answered; it returns how many were still in flight then
// (0: drained) and the function that lets cart requests through again.
func (g *cartGate) hold(ctx context.Context, bound time.Duration) (left int, resume func()) {
	g.mu.Lock()
	g.login = make(chan struct{})
	var drained chan struct{}
	if g.inflight > 0 {
		g.drained = make(chan struct{})
		drained = g.drained
	}
	g.mu.Unlock()
	resume = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.login != nil {
			close(g.login)
			g.login = nil
		}
	}
	if drained == nil {
		return 0, resume
	}
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	left = g.inflight
	g.mu.Unlock()
	return left, resume
}

// cartGater is implemented by the Host for the proxy: a cart-changing
// request goes through the cart gate.
type cartGater interface {
	enterCart(ctx context.Context, methods []string, u *url.URL, hdr http.Header) (release func(), err error)
}

// enterCart lets a cart-changing request through the gate (others pass at
// once, and so do the login tab's own requests); methods are the request's
// method and those its method-override headers name. The wait for a login is
// bounded by the login's budget.
func (h *Host) enterCart(ctx context.Context, methods []string, u *url.URL, hdr http.Header) (func(), error) {
	cart := false
	for _, m := range methods { // the request's method and those its override headers name
		cart = cart || h.profile.IsCartChange(m, u)
	}
	if !cart || h.loginRequest(u, hdr) {
		return func() {}, nil
	}
	// A profile that describes its line changes (CartOps) holds only those:
	// the consent and postal-code answers a page (the login tab's own among
	// them) sends during the login change no cart line.
	if len(h.profile.CartOps) > 0 && h.profile.ReadCartChange(u, "", nil).Kind == "" {
		return func() {}, nil
	}
	wctx, cancel := context.WithTimeout(ctx, h.opts.loginBudget()+time.Minute)
	defer cancel()
	release, err := h.cart.enter(wctx)
	if err != nil {
		return nil, fmt.Errorf("the cart change waited for the store login too long: %w", err)
	}
	return release, nil
}
