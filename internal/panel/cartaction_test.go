package panel

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// fakeCart plays app.CartActions: run r1 has milk (item 1, added) and
// butter (item 2, not found); a run is going while busy is set.
type fakeCart struct {
	mu   sync.Mutex
	busy bool
	got  []reviewpack.Request
}

func (f *fakeCart) act(_ context.Context, req reviewpack.Request) (reviewpack.Action, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, req)
	if err := req.Check(); err != nil { // app checks again
		return reviewpack.Action{}, fmt.Errorf("%w: %w", reviewpack.ErrInvalid, err)
	}
	switch {
	case f.busy:
		return reviewpack.Action{}, fmt.Errorf("a run is going: %w", runstatus.ErrBusy)
	case req.RunID != "r1" || (req.ItemID != "1" && req.ItemID != "2"):
		return reviewpack.Action{}, fmt.Errorf("no such item: %w", ErrNotFound)
	case req.ItemID == "2":
		return reviewpack.Action{}, fmt.Errorf("butter put nothing in the cart: %w", reviewpack.ErrNotInCart)
	}
	return reviewpack.Action{Kind: req.Kind, ItemID: "1", ItemName: "milk", Before: 1, After: req.Quantity, Source: req.Source}, nil
}

// TestCartActionEndpoint: POST /api/cart/action keeps the panel's guards,
// refuses hostile input with a clear status before anything is done, and
// answers the action as journaled.
func TestCartActionEndpoint(t *testing.T) {
	f := &fakeCart{}
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, CartAction: f.act})
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/cart/action", strings.NewReader(body))
		r.Host = "localhost:8099"
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, r)
		return w
	}
	ok := map[string]string{ActionHeader: "1"}
	remove := `{"run_id":"r1","item_id":"1","action":"remove"}`
	for _, tc := range []struct {
		name, body string
		hdr        map[string]string
		busy       bool
		code       int
		reached    bool // the request reached the action
	}{
		{"a form of another site", remove, nil, false, http.StatusForbidden, false},
		{"a script of another site", remove, map[string]string{ActionHeader: "1", "Sec-Fetch-Site": "cross-site"}, false, http.StatusForbidden, false},
		{"another origin", remove, map[string]string{ActionHeader: "1", "Origin": "http://evil.example"}, false, http.StatusForbidden, false},
		{"not JSON", `action=remove`, ok, false, http.StatusBadRequest, false},
		{"an unknown field", `{"run_id":"r1","item_id":"1","action":"remove","checkout":true}`, ok, false, http.StatusBadRequest, false},
		{"a quantity that is not a number", `{"run_id":"r1","item_id":"1","action":"quantity","quantity":"lots"}`, ok, false, http.StatusBadRequest, false},
		{"a negative quantity", `{"run_id":"r1","item_id":"1","action":"quantity","quantity":-1}`, ok, false, http.StatusBadRequest, false},
		{"a huge quantity", `{"run_id":"r1","item_id":"1","action":"quantity","quantity":1000000}`, ok, false, http.StatusBadRequest, false},
		{"an unknown action", `{"run_id":"r1","item_id":"1","action":"checkout"}`, ok, false, http.StatusBadRequest, false},
		{"no item", `{"run_id":"r1","action":"remove"}`, ok, false, http.StatusBadRequest, false},
		{"an unknown item", `{"run_id":"r1","item_id":"9","action":"remove"}`, ok, false, http.StatusNotFound, true},
		{"an item that added nothing", `{"run_id":"r1","item_id":"2","action":"remove"}`, ok, false, http.StatusConflict, true},
		{"while a run is going", remove, ok, true, http.StatusConflict, true},
		{"the page", `{"run_id":"r1","item_id":"1","action":"quantity","quantity":3}`, ok, false, http.StatusOK, true},
	} {
		f.mu.Lock()
		f.busy, f.got = tc.busy, nil
		f.mu.Unlock()
		w := post(tc.body, tc.hdr)
		if w.Code != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, w.Code, w.Body.String(), tc.code)
		}
		f.mu.Lock()
		reached := len(f.got) > 0
		f.mu.Unlock()
		if reached != tc.reached {
			t.Errorf("%s: reached the action = %v, want %v", tc.name, reached, tc.reached)
		}
		if tc.code == http.StatusOK {
			var a reviewpack.Action
			if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || a.After != 3 || a.Source != "panel" {
				t.Errorf("%s: answer %q (%v)", tc.name, w.Body.String(), err)
			}
		}
	}

	// Without actions (shop --ui) there is no endpoint, and the snapshot
	// says so.
	p2, err := New(Options{Start: c.start, Stop: c.stop})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/api/cart/action", strings.NewReader(remove))
	r.Host, r.Header = "localhost:8099", http.Header{ActionHeader: {"1"}}
	w := httptest.NewRecorder()
	p2.ServeHTTP(w, r)
	if w.Code != http.StatusNotFound {
		t.Errorf("no actions: %d", w.Code)
	}
}

// TestSnapshotCarriesThePack: the run's review pack reaches the page with
// the run's end, an action on its cart is added to it, and an action on
// an older run's cart leaves the page's run alone.
func TestSnapshotCarriesThePack(t *testing.T) {
	f := &fakeCart{}
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop, CartAction: f.act})
	if err != nil {
		t.Fatal(err)
	}
	pack := &reviewpack.Pack{RunID: "r2", Items: []reviewpack.Item{{ItemID: "1", ItemName: "milk"}},
		Cart: &reviewpack.Cart{Lines: []reviewpack.Line{{Name: "Milk", ProductID: "m", Quantity: 2}}}}
	p.apply(runstatus.Event{Kind: runstatus.KindRunStarted, RunID: "r2", State: runstatus.StateShopping})
	p.apply(runstatus.Event{Kind: runstatus.KindRunFinished, RunID: "r2", State: runstatus.StateReviewReady, Pack: pack})
	p.apply(runstatus.Event{Kind: runstatus.KindCartChanged, RunID: "r1", Cart: &reviewpack.Cart{},
		Action: &reviewpack.Action{Kind: reviewpack.ActRemove, ItemName: "bread"}})
	p.apply(runstatus.Event{Kind: runstatus.KindCartChanged, RunID: "r2", Cart: &reviewpack.Cart{Lines: []reviewpack.Line{{Name: "Milk", ProductID: "m", Quantity: 1}}},
		Action: &reviewpack.Action{Kind: reviewpack.ActQuantity, ItemName: "milk", Before: 2, After: 1}})
	w := do(p, "GET", "/api/state", "", nil)
	var s Snapshot
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.RunID != "r2" || !s.Actions || s.Pack == nil || len(s.Pack.Actions) != 1 || s.Pack.Actions[0].ItemName != "milk" ||
		s.Pack.Cart == nil || s.Pack.Cart.Units() != 1 {
		t.Fatalf("snapshot: run %s actions %v pack %+v", s.RunID, s.Actions, s.Pack)
	}
	if len(pack.Actions) != 0 {
		t.Error("the event's pack was changed in place")
	}
}

// TestAReshopStaysOnItsReview: a Wrong product's re-shop is shown on the
// review it belongs to because its run says so (run_started's reshop_of),
// however long after the action it starts (it may wait behind another
// action's browser); a run that says nothing of the kind — a Retry, the
// next week — replaces the review, however soon after the action.
func TestAReshopStaysOnItsReview(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	pack := &reviewpack.Pack{RunID: "week", Items: []reviewpack.Item{{ItemID: "1", ItemName: "milk"}, {ItemID: "2", ItemName: "eggs"}}}
	wrong := runstatus.Event{Time: at, Kind: runstatus.KindCartChanged, RunID: "week", Cart: &reviewpack.Cart{},
		Action: &reviewpack.Action{Kind: reviewpack.ActWrongProduct, ItemID: "1", ItemName: "milk", Reshop: "milk"}}
	for _, tc := range []struct {
		name     string
		started  runstatus.Event
		onReview bool
	}{
		{"a re-shop, five minutes later", runstatus.Event{Time: at.Add(5 * time.Minute), Kind: runstatus.KindRunStarted, RunID: "again",
			State: runstatus.StateShopping, RunKind: runstatus.RunReshop, ReshopOf: "week"}, true},
		{"a retry, at once", runstatus.Event{Time: at.Add(time.Second), Kind: runstatus.KindRunStarted, RunID: "retry",
			State: runstatus.StateShopping, RunKind: runstatus.RunRetry}, false},
		{"a re-shop of another review", runstatus.Event{Time: at.Add(time.Second), Kind: runstatus.KindRunStarted, RunID: "other",
			State: runstatus.StateShopping, RunKind: runstatus.RunReshop, ReshopOf: "last-week"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &control{}
			p, err := New(Options{Start: c.start, Stop: c.stop})
			if err != nil {
				t.Fatal(err)
			}
			p.apply(runstatus.Event{Time: at.Add(-time.Hour), Kind: runstatus.KindRunStarted, RunID: "week", State: runstatus.StateShopping})
			p.apply(runstatus.Event{Time: at.Add(-time.Minute), Kind: runstatus.KindRunFinished, RunID: "week", State: runstatus.StateReviewReady, Pack: pack})
			p.apply(wrong)
			// A run's first event is its state (initializing), then run_started.
			first := tc.started
			first.Kind, first.State = runstatus.KindStateChanged, runstatus.StateInitializing
			p.apply(first)
			p.apply(tc.started)
			p.mu.Lock()
			s := p.snapshotLocked()
			p.mu.Unlock()
			if got := s.RunID == "week" && s.Reshop != nil && s.Reshop.RunID == tc.started.RunID; got != tc.onReview {
				t.Fatalf("on the week's review: %v, want %v (run %q, reshop %+v)", got, tc.onReview, s.RunID, s.Reshop)
			}
			if tc.onReview && s.Reshop.Item != "milk" {
				t.Errorf("the re-shop's item: %q", s.Reshop.Item)
			}
		})
	}
}
