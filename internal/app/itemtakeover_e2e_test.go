package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	"github.com/gemini-supply/gemini-supply/internal/panel"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/scripted"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// itemDesk is a run with a panel attached: its Desk tells the test each
// tab offered to a person (the phone push's hook: an event, not a poll),
// and the panel's API is served for the test to drive.
type itemDesk struct {
	t       *testing.T
	e       *e2e
	srv     *httptest.Server
	offered chan runstatus.NeedsPerson
	done    chan itemRunEnd
}

type itemRunEnd struct {
	res shop.Result
	err error
}

func newItemDesk(t *testing.T, e *e2e) *itemDesk {
	t.Helper()
	d := &itemDesk{t: t, e: e, offered: make(chan runstatus.NeedsPerson, 8), done: make(chan itemRunEnd, 1)}
	desk := NewDesk(e.deps.Logger)
	desk.OnNeedsPerson(func(_ context.Context, np runstatus.NeedsPerson) error { d.offered <- np; return nil })
	e.deps.Desk = desk
	// The panel is open (an item that gives up is offered only then): the
	// test asks for the waiting tabs as the page does, every few seconds.
	stop, polled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(polled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for desk.NeedsPersons(); ; {
			select {
			case <-stop:
				return
			case <-tick.C:
				desk.NeedsPersons()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-polled })
	// A bound only: the test hands every tab back at once.
	e.cfg.TakeoverWait = 10 * time.Minute
	p, err := panel.New(panel.Options{Logger: e.deps.Logger, Takeover: PanelTakeover(desk),
		Start: func(context.Context, runstatus.Request) error { return nil }, Stop: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	d.srv = httptest.NewServer(p)
	t.Cleanup(d.srv.Close)
	return d
}

// run starts the run in the background.
func (d *itemDesk) run() {
	d.e.start()
	go func() {
		res, err := d.e.shop(context.Background())
		d.done <- itemRunEnd{res, err}
	}()
}

// next waits for the next tab offered to a person.
func (d *itemDesk) next() runstatus.NeedsPerson {
	d.t.Helper()
	select {
	case np := <-d.offered:
		return np
	case o := <-d.done:
		d.t.Fatalf("the run ended before a tab was offered: %v\n%s", o.err, o.res.Summary.Markdown())
	case <-time.After(runBound): // bounds a hang only
		d.t.Fatal("no tab was offered to a person")
	}
	return runstatus.NeedsPerson{}
}

// end waits for the run's end.
func (d *itemDesk) end() shop.Result {
	d.t.Helper()
	o := <-d.done
	if o.err != nil {
		d.t.Fatalf("the run: %v", o.err)
	}
	return o.res
}

// post sends one of the panel's own requests and returns its status and
// answer.
func (d *itemDesk) post(path string, body any) (int, map[string]any, string) {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(http.MethodPost, d.srv.URL+path, rd)
	req.Header.Set(panel.ActionHeader, "1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, string(raw)
}

// tap clicks the demo store's pixel x, y in the tab (the panel's 0–999
// screen coordinates), as a person tapping its screen.
func (d *itemDesk) tap(tab string, at func() (x, y int)) (int, string) {
	x, y := at()
	d.t.Helper()
	c, _, raw := d.post("/api/takeover/"+tab+"/click", map[string]int{
		"x": x * 1000 / demostore.ViewportWidth, "y": y * 1000 / demostore.ViewportHeight})
	return c, raw
}

// itemIDs are the YAML list's item ids by name.
func (e *e2e) itemIDs() map[string]string {
	e.t.Helper()
	ids := map[string]string{}
	for _, it := range e.listItems() {
		ids[it.Name] = it.ID
	}
	return ids
}

// TestTakeOverItemAdds: an item whose agent gives up (the scripted model
// stops without a report) keeps its tab, offered in the panel as
// needs_person; the household taps "Add to cart" on the search results
// through the take-over API, and Done makes the item added with the
// store's cart line (product, price, units), the list item completed and
// the product remembered as the household's pick. A tap on the cart's
// checkout link is refused with the policy's reason, and the store never
// sees a checkout request.
func TestTakeOverItemAdds(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "bananas")
	e.deps.Scripted.Misbehave = map[string]scripted.Misbehaviour{"bananas": scripted.NoReport}
	d := newItemDesk(t, e)
	d.run()

	np := d.next()
	want := runstatus.NeedsPerson{Tab: shop.ItemTab(e.itemIDs()["bananas"]), Reason: shop.ReasonItemGaveUp, Item: "bananas"}
	if np != want {
		t.Fatalf("offered %+v, want %+v", np, want)
	}
	// The panel's state lists it, and its screen is live.
	resp, err := http.Get(d.srv.URL + "/api/state")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		NeedsPerson []runstatus.NeedsPerson `json:"needs_person"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if len(st.NeedsPerson) != 1 || st.NeedsPerson[0] != want {
		t.Fatalf("/api/state needs_person = %+v", st.NeedsPerson)
	}
	if resp, err := http.Get(d.srv.URL + "/api/takeover/" + np.Tab + "/screen"); err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") {
		t.Fatalf("screen: %v %v", resp, err)
	}
	// The tab is still on the item's search results: the first tile's
	// "Add to cart". The session has no postal code yet (the agent never
	// added), so the store asks for one first: the person types it in the
	// dialog and confirms, and the page adds the product.
	srv := e.runner.DemoStore()
	if pc := srv.State().PostalCode; pc != "" {
		t.Fatalf("the session already has a postal code %q: the test expects the store's dialog", pc)
	}
	if c, raw := d.tap(np.Tab, func() (int, int) { return demostore.TileAddButton(0) }); c != 200 {
		t.Fatalf("tap Add to cart: %d %s", c, raw)
	}
	if c, raw := d.tap(np.Tab, demostore.PostalCodeInput); c != 200 {
		t.Fatalf("tap the postal code: %d %s", c, raw)
	}
	if c, _, raw := d.post("/api/takeover/"+np.Tab+"/type", map[string]string{"text": "H2X 1Y4"}); c != 200 {
		t.Fatalf("type the postal code: %d %s", c, raw)
	}
	if c, raw := d.tap(np.Tab, demostore.PostalCodeSubmit); c != 200 {
		t.Fatalf("confirm the postal code: %d %s", c, raw)
	}
	// The cart page opens; its checkout link does not.
	if c, raw := d.tap(np.Tab, demostore.CartCounter); c != 200 {
		t.Fatalf("tap the cart: %d %s", c, raw)
	}
	if c, raw := d.tap(np.Tab, demostore.CheckoutLink); c != http.StatusForbidden || !strings.Contains(raw, `"refused":`) {
		t.Errorf("a tap on checkout: %d %q, want it refused (403) with the policy's reason", c, raw)
	}
	if n := srv.CheckoutHits(); n != 0 {
		t.Errorf("the take-over reached the checkout %d times", n)
	}
	c, m, raw := d.post("/api/takeover/"+np.Tab+"/done", nil)
	if c != 200 || m["outcome"] != string(report.OutcomeAdded) || m["product"] == "" {
		t.Fatalf("done: %d %s", c, raw)
	}
	res := d.end()

	cart := srv.Cart()
	if len(cart) != 1 || cart[0].Quantity != 1 {
		t.Fatalf("demo cart = %+v, want one unit of one product", cart)
	}
	line := cart[0]
	if len(res.Summary.Items) != 1 {
		t.Fatalf("%s", res.Summary.Markdown())
	}
	it := res.Summary.Items[0]
	// Named as the store's cart page shows the line ("Bananas, bunch of
	// 6, …"), its product page's address from the page.
	if it.Outcome != report.OutcomeAdded || !strings.HasPrefix(it.ProductName, line.Name) || it.Quantity != 1 || int64(it.Price.UnitCents) != line.UnitCents ||
		store.ProductID(it.URL) != line.ProductID ||
		it.ChosenBy != report.ChosenByHousehold || !strings.Contains(it.Explanation, "household") || len(it.Warnings) != 0 {
		t.Errorf("bananas = %+v, want added as the cart's %+v, chosen by the household, without warnings", it, line)
	}
	if m["product"] != it.ProductName {
		t.Errorf("done said product %v, the cart holds %q", m["product"], line.Name)
	}
	if got := e.list()["bananas"]; got != "completed" {
		t.Errorf("list: bananas %s, want completed", got)
	}
	if rem, ok := e.runner.productRecall().Recall("bananas"); !ok || rem.Name != it.ProductName || rem.URL != it.URL {
		t.Errorf("product memory: %+v %v, want the household's pick %q at %s", rem, ok, it.ProductName, it.URL)
	}
	if n := srv.CheckoutHits(); n != 0 {
		t.Errorf("checkout hits %d", n)
	}
}

// TestTakeOverItemDecisions: an item whose agent gives up is handed back
// as "not found" (the list tags it #404, the summary says the household
// decided); a running item's tab asked for in the panel (/request) stops
// its agent — in the middle of a model call — and is offered, and handed
// back as "skip" (left on the list). The first item's offer gave its agent
// slot to the second (concurrency 1): both wait at once.
func TestTakeOverItemDecisions(t *testing.T) {
	t.Parallel() // its own runner, store, browser and files: see docs/testing.md
	e := newE2E(t, "bananas", "2x eggs")
	e.deps.Scripted.Misbehave = map[string]scripted.Misbehaviour{"bananas": scripted.NoReport}
	// The eggs' agent waits in its first model call until the test ends:
	// it is running when the household asks for its tab.
	eggsCalling := make(chan struct{}, 1)
	release := make(chan struct{})
	e.deps.Scripted.Wrap = func(next gemini.Script) gemini.Script {
		return func(req *gemini.Request) gemini.Reply {
			if strings.Contains(req.Goal(), "Item: eggs") {
				select {
				case eggsCalling <- struct{}{}:
				default:
				}
				<-release
				return gemini.Reply{Status: 500, Message: "the test is over"}
			}
			return next(req)
		}
	}
	d := newItemDesk(t, e)
	d.run()
	t.Cleanup(func() { close(release) }) // before the runner's Close (cleanups run last first)

	bananas := d.next()
	if bananas.Reason != shop.ReasonItemGaveUp || bananas.Item != "bananas" {
		t.Fatalf("offered %+v", bananas)
	}
	select {
	case <-eggsCalling:
	case o := <-d.done:
		t.Fatalf("the run ended: %v", o.err)
	}
	eggsTab := shop.ItemTab(e.itemIDs()["2x eggs"]) // the run gave the list its ids when it started
	if c, _, raw := d.post("/api/takeover/"+eggsTab+"/request", nil); c != 200 {
		t.Fatalf("request the eggs' tab: %d %s", c, raw)
	}
	if eggs := d.next(); eggs != (runstatus.NeedsPerson{Tab: eggsTab, Reason: shop.ReasonItemRequested, Item: "2x eggs"}) {
		t.Fatalf("offered %+v", eggs)
	}
	if c, _, raw := d.post("/api/takeover/"+bananas.Tab+"/done", map[string]string{"outcome": "maybe"}); c != http.StatusBadRequest {
		t.Errorf("an unknown decision: %d %s", c, raw)
	}
	if c, m, raw := d.post("/api/takeover/"+bananas.Tab+"/done", map[string]string{"outcome": shop.DecisionNotFound}); c != 200 || m["outcome"] != string(report.OutcomeNotFound) {
		t.Errorf("bananas not found: %d %s", c, raw)
	}
	if c, m, raw := d.post("/api/takeover/"+eggsTab+"/done", map[string]string{"outcome": shop.DecisionSkip}); c != 200 || m["outcome"] != string(report.OutcomeSkipped) {
		t.Errorf("eggs skipped: %d %s", c, raw)
	}
	res := d.end()
	got := map[string]string{}
	for _, it := range res.Summary.Items {
		got[it.ItemName] = fmt.Sprintf("%s: %s", it.Outcome, it.Explanation)
	}
	if !strings.HasPrefix(got["bananas"], "not_found: ") || !strings.Contains(got["bananas"], "household") ||
		!strings.HasPrefix(got["2x eggs"], "skipped: ") || !strings.Contains(got["2x eggs"], "household") {
		t.Errorf("outcomes %v\n%s", got, res.Summary.Markdown())
	}
	if l := e.list(); l["bananas"] != "#404" || l["2x eggs"] != "open" {
		t.Errorf("list %v, want bananas #404 and eggs left open", l)
	}
	if cart := e.runner.DemoStore().Cart(); len(cart) != 0 {
		t.Errorf("demo cart %+v, want empty", cart)
	}
}
