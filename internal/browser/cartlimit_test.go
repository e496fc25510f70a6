package browser

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/screen"
	"github.com/gemini-supply/gemini-supply/internal/store"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestCartLimitRefusesASecondAdd: an item's tab for quantity 1 clicks the
// product page's Add button twice. The first add reaches the store; the
// second is refused by the tab's cart limit before it does (the page sees a
// failed request). The store's cart holds exactly one more unit, and the
// tab's ledger records the second add as refused. The limit is told what
// the page shows of the product each add names (its name and size: how it
// is sold, for a count of pieces).
func TestCartLimitRefusesASecondAdd(t *testing.T) {
	f := sharedDemo(t)
	ctx := testCtx(t)
	mustDo(t, "login", f.host.Login(ctx))
	tab := newTab(t, f.host)
	const id = "carrots-2lb"
	qty := func() int {
		for _, l := range f.store.Cart() {
			if l.ProductID == id {
				return l.Quantity
			}
		}
		return 0
	}
	var mu sync.Mutex
	var asked []int
	var texts []string
	mustDo(t, "set the cart limit", tab.LimitCart(func(add store.CartChange, tabUnits int) error {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, tabUnits)
		texts = append(texts, add.ProductText)
		if tabUnits+max(add.Quantity, 1) > 1 {
			return errors.New("the item asks for 1")
		}
		return nil
	}))
	mustDo(t, "open a product page", tab.Navigate(ctx, demostore.ProductURL(id)))
	call := `async ([path, body]) => (await fetch(path, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)})).status`
	if st := eval(t, tab, call, []any{"/api/postal-code", map[string]any{"postalCode": "H2X 1Y4"}}); st != http.StatusOK {
		t.Fatalf("postal code: %v, want 200 (not an add: never limited)", st)
	}
	q0 := qty()
	defer func() { // the shared store's cart as it was
		eval(t, tab, call, []any{"/api/cart/update", map[string]any{"productId": id, "quantity": q0}})
	}()
	box, _ := eval(t, tab, `() => { const r = document.getElementById('product-add').getBoundingClientRect(); return [Math.round(r.x + r.width/2), Math.round(r.y + r.height/2)]; }`).([]any)
	if len(box) != 2 {
		t.Fatalf("the Add button's place: %v", box)
	}
	x, xok := box[0].(int)
	y, yok := box[1].(int)
	if !xok || !yok {
		t.Fatalf("the Add button's place: %v", box)
	}
	at := norm(x, y)
	adds := func() (done, refused int) {
		for _, c := range tab.CartRequests() {
			if c.Kind == store.CartAdd && c.ProductID == id {
				if c.Done() {
					done++
				}
				if c.Refused {
					refused++
				}
			}
		}
		return done, refused
	}
	mustDo(t, "click Add", tab.Click(ctx, at, screen.ButtonLeft, 1))
	testwait.Until(t, "the first add answered", patience, func() bool { d, _ := adds(); return d == 1 })
	mustDo(t, "click Add again", tab.Click(ctx, at, screen.ButtonLeft, 1))
	testwait.Until(t, "the second add refused", patience, func() bool { _, r := adds(); return r == 1 })
	if got := qty(); got != q0+1 {
		t.Errorf("the store's cart holds %d of %s, want %d (one click's worth)", got, id, q0+1)
	}
	if d, r := adds(); d != 1 || r != 1 {
		t.Errorf("the tab's ledger: %d done, %d refused; want 1 and 1", d, r)
	}
	mu.Lock()
	if len(asked) != 2 || asked[0] != 0 || asked[1] != 1 {
		t.Errorf("the limit was asked with tab units %v, want [0 1]", asked)
	}
	for _, text := range texts {
		if !strings.Contains(text, "Carrots") || !strings.Contains(text, "2 lb bag") {
			t.Errorf("the limit was told the product shows %q, want its name and size (Carrots, 2 lb bag)", text)
		}
	}
	mu.Unlock()
	// A quantity change is not an add: it passes with the limit reached.
	if st := eval(t, tab, call, []any{"/api/cart/update", map[string]any{"productId": id, "quantity": q0 + 1}}); st != http.StatusOK {
		t.Errorf("a quantity change under the limit: %v, want 200", st)
	}
	mustDo(t, "lift the limit", tab.LimitCart(nil))
}
