package telegram_test

// End-to-end paths of a shopping run with Telegram: the real shopping run
// (shop.Run), the real agent loop (agent.Run) talking to the fake Gemini API
// through the real genai client, and the real Telegram bot talking to the
// fake Bot API through go-telegram-bot-api. Only the browser tab and the
// shopping list are small in-memory doubles.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/config"
	fakegemini "github.com/gemini-supply/gemini-supply/internal/fake/gemini"
	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
	"github.com/gemini-supply/gemini-supply/internal/products"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/shop"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
)

const (
	itToken = "987654321:AAFakeIntegrationTokenValue0123456789xyz"
	itChat  = int64(777)
)

// --- small doubles -------------------------------------------------------

var blankPNG = func() []byte {
	var b bytes.Buffer
	_ = png.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8)))
	return b.Bytes()
}()

type tab struct{}

func (tab) Screenshot(context.Context) ([]byte, error)                        { return blankPNG, nil }
func (tab) URL() string                                                       { return "https://shop.test/" }
func (tab) Click(context.Context, agent.Point, agent.Button, int) error       { return nil }
func (tab) Move(context.Context, agent.Point) error                           { return nil }
func (tab) MouseDown(context.Context, agent.Button) error                     { return nil }
func (tab) MouseUp(context.Context, agent.Button) error                       { return nil }
func (tab) TypeAt(context.Context, agent.Point, string, bool, bool) error     { return nil }
func (tab) Type(context.Context, string, bool) error                          { return nil }
func (tab) PressKeys(context.Context, string) error                           { return nil }
func (tab) KeyDown(context.Context, string) error                             { return nil }
func (tab) KeyUp(context.Context, string) error                               { return nil }
func (tab) ScrollDocument(context.Context, agent.Direction) error             { return nil }
func (tab) ScrollAt(context.Context, agent.Point, agent.Direction, int) error { return nil }
func (tab) DragAndDrop(context.Context, agent.Point, agent.Point) error       { return nil }
func (tab) Navigate(context.Context, string) error                            { return nil }
func (tab) GoBack(context.Context) error                                      { return nil }
func (tab) GoForward(context.Context) error                                   { return nil }
func (tab) Wait(context.Context, time.Duration) error                         { return nil }
func (tab) TakeNotices() []string                                             { return nil }
func (tab) SetItem(context.Context, string) error                             { return nil }
func (tab) Close() error                                                      { return nil }

type host struct{}

func (host) NewTab(context.Context) (shop.Tab, error)                { return tab{}, nil }
func (host) IsAuthenticated(context.Context, shop.Tab) (bool, error) { return true, nil }
func (host) Login(context.Context) error                             { return nil }
func (host) Relaunches() int                                         { return 0 }
func (host) Close(context.Context) error                             { return nil }

var (
	_ shop.Tab  = tab{}
	_ shop.Host = host{}
)

// list is an in-memory shopping list.
type list struct {
	mu       sync.Mutex
	items    []shoppinglist.Item
	done     map[string]shoppinglist.Added
	notFound map[string]string
	failed   map[string]string
}

var _ shoppinglist.Provider = (*list)(nil)

func newList(names ...string) *list {
	l := &list{done: map[string]shoppinglist.Added{}, notFound: map[string]string{}, failed: map[string]string{}}
	for i, n := range names {
		it := shoppinglist.Item{ID: fmt.Sprint("id", i+1), Status: shoppinglist.StatusNeedsAction}
		it.SetName(n)
		l.items = append(l.items, it)
	}
	return l
}

func (l *list) Item(ctx context.Context, id string) (shoppinglist.Item, error) {
	items, err := l.Items(ctx)
	if err != nil {
		return shoppinglist.Item{}, err
	}
	return shoppinglist.Find(items, id)
}

func (l *list) Items(context.Context) ([]shoppinglist.Item, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]shoppinglist.Item(nil), l.items...), nil
}

func (l *list) MarkCompleted(_ context.Context, id string, a shoppinglist.Added) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done[id] = a
	return nil
}

func (l *list) MarkNotFound(_ context.Context, id, e string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notFound[id] = e
	return nil
}

func (l *list) MarkFailed(_ context.Context, id, r string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed[id] = r
	return nil
}

func (l *list) SendSummary(context.Context, report.Summary) error { return nil }

// prefs adapts the product memory to the run's Preferences interface (its
// pinned part, as the command wiring does).
type prefs struct{ m *products.Memory }

var _ shop.Preferences = prefs{}

func (p prefs) Lookup(item string) (shop.PreferredProduct, bool) {
	e, ok := p.m.Pinned(item)
	return shop.PreferredProduct{Name: e.Name, URL: e.URL, ProductID: e.ProductID, Price: e.Price}, ok
}

func (p prefs) Remember(item string, pp shop.PreferredProduct) error {
	return p.m.Pin(item, products.Product{Name: pp.Name, URL: pp.URL, ProductID: pp.ProductID, Price: pp.Price})
}

// --- the scripted model ----------------------------------------------------

var (
	itemRE      = regexp.MustCompile(`(?m)^Item: (.+)$`)
	preferredRE = regexp.MustCompile(`chose this product for this item before: ([^(\n]+?) \(`)
)

func call(name string, args map[string]any) fakegemini.Reply {
	return fakegemini.Reply{Calls: []*genai.FunctionCall{{Name: name, Args: args}}}
}

func added(name, price string) fakegemini.Reply {
	return call(shop.ToolReportAdded, map[string]any{
		"item_name": name, "price_text": price, "url": "https://shop.test/p/" + url.PathEscape(name), "quantity": 1,
	})
}

// model behaves like a careful shopper: it buys a remembered product, buys
// what the user asked for by name, buys "oat milk" when asked for it, and
// otherwise presents three options and follows the answer.
func model(req *fakegemini.Request) fakegemini.Reply {
	goal := req.Goal()
	for _, fr := range req.FunctionResponses() {
		if fr.Name == shop.ToolPresentOptions && fr.Response["answer"] == "product" {
			return added(fmt.Sprint(fr.Response["name"]), fmt.Sprint(fr.Response["price"]))
		}
		if fr.Name == shop.ToolPresentOptions {
			return call(shop.ToolReportNotFound, map[string]any{"item_name": "?", "explanation": "unexpected answer"})
		}
	}
	if m := preferredRE.FindStringSubmatch(goal); m != nil {
		return added(m[1], "$5.49")
	}
	item := "?"
	if m := itemRE.FindStringSubmatch(goal); m != nil {
		item = m[1]
	}
	if item == "oat milk" {
		return added("Oatly Oat Milk 1.75 L", "$6.49")
	}
	return call(shop.ToolPresentOptions, map[string]any{
		"item_name": item,
		"context":   "Several " + item + " products match equally well.",
		"options": []any{
			map[string]any{"name": "PC " + item, "price": "$4.99", "url": "https://shop.test/p/pc", "product_id": "pc1"},
			map[string]any{"name": "Natrel " + item, "price": "$5.49", "url": "https://shop.test/p/natrel", "product_id": "nat2"},
			map[string]any{"name": "Lactantia " + item, "price": "$5.29", "url": "https://shop.test/p/lac", "product_id": "lac3"},
		},
	})
}

// --- harness ---------------------------------------------------------------

type world struct {
	t      *testing.T
	gemini *fakegemini.Server
	client *genai.Client
	tg     *faketg.Server
	bot    *telegram.Bot
	store  *products.Memory
}

func newWorld(t *testing.T) *world {
	t.Helper()
	g := fakegemini.New(fakegemini.Config{APIKey: "test-key", Script: model})
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	client, err := g.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tg := faketg.NewServer(itToken)
	t.Cleanup(tg.Close)
	store, err := products.Open(t.TempDir(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, gemini: g, client: client, tg: tg, store: store}
	w.bot = w.newBot()
	return w
}

func (w *world) newBot() *telegram.Bot {
	w.t.Helper()
	bot, err := telegram.New(context.Background(), telegram.Options{
		Token: config.Secret(itToken), ChatID: itChat, Endpoint: w.tg.Endpoint(),
		ResponseTimeout: time.Minute, StartupRetries: -1, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = bot.Close(context.Background()) })
	return bot
}

func (w *world) config(l *list, budget time.Duration, concurrency int) shop.Config {
	return shop.Config{
		Provider:   l,
		LaunchHost: func(context.Context) (shop.Host, error) { return host{}, nil },
		Store: shop.Store{
			Name: "test", DisplayName: "shop.test", HomeURL: "https://shop.test/",
			SearchURL: func(q string) string { return "https://shop.test/search?q=" + url.QueryEscape(q) },
		},
		Agent: agent.Config{
			Client: w.client, Model: "gemini-test", TimeBudget: budget, MaxTurns: 10,
			Backoff: []time.Duration{10 * time.Millisecond}, Logger: slog.New(slog.DiscardHandler),
		},
		Concurrency: concurrency,
		Stagger:     -1,
		Resolver:    w.bot,
		Preferences: prefs{w.store},
		Logger:      slog.New(slog.DiscardHandler),
	}
}

func (w *world) run(cfg shop.Config) <-chan shop.Result {
	ch := make(chan shop.Result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		res, err := shop.Run(ctx, cfg)
		if err != nil {
			w.t.Errorf("shop.Run: %v", err)
		}
		ch <- res
	}()
	return ch
}

func (w *world) wait(ch <-chan shop.Result) shop.Result {
	w.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(150 * time.Second):
		w.t.Fatal("the run did not finish")
		return shop.Result{}
	}
}

func (w *world) question(item string) faketg.Message {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m, err := w.tg.WaitMessage(ctx, func(m faketg.Message) bool {
		return strings.HasPrefix(m.Text, "🛒 Shopping for: "+item+"\n") && m.Keyboard != nil
	})
	if err != nil {
		w.t.Fatalf("no open question about %q: %v\nsent: %+v", item, err, w.tg.Messages())
	}
	return m
}

func (w *world) questions() int {
	n := 0
	for _, m := range w.tg.Messages() {
		if strings.HasPrefix(m.Text, "🛒 Shopping for:") {
			n++
		}
	}
	return n
}

func (w *world) goals() []string {
	var out []string
	for _, r := range w.gemini.Requests() {
		if r.Turn() == 1 {
			out = append(out, r.Goal())
		}
	}
	return out
}

// --- the paths -------------------------------------------------------------

// TestStarRemembersAndNextRunSkipsTheQuestion: ⭐ stores the product; the
// next run puts it into the prompt and buys it without asking.
func TestStarRemembersAndNextRunSkipsTheQuestion(t *testing.T) {
	w := newWorld(t)
	l := newList("2x Milk")
	done := w.run(w.config(l, time.Minute, 1))
	q := w.question("2x Milk")
	if err := w.tg.PressButton(itChat, q.ID, "⭐ 2"); err != nil {
		t.Fatal(err)
	}
	w.wait(done)
	if a := l.done["id1"]; a.ProductName != "Natrel Milk" {
		t.Fatalf("run 1: list = done %v, not found %v, failed %v", l.done, l.notFound, l.failed)
	}
	p, ok := w.store.Lookup("milk")
	if !ok || p.Name != "Natrel Milk" || p.ProductID != "nat2" || p.URL != "https://shop.test/p/natrel" {
		t.Fatalf("remembered = %+v, %v", p, ok)
	}

	// Next run, with a new bot as after a restart: no question, same product.
	// The old bot stops first, as in a restart: two bots polling one token
	// would race for the replies.
	if err := w.bot.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.bot = w.newBot()
	asked := w.questions()
	l2 := newList("milk")
	w.wait(w.run(w.config(l2, time.Minute, 1)))
	if a := l2.done["id1"]; a.ProductName != "Natrel Milk" {
		t.Fatalf("run 2: list = done %v, not found %v, failed %v", l2.done, l2.notFound, l2.failed)
	}
	if w.questions() != asked {
		t.Error("run 2 asked again although the product was remembered")
	}
	goals := w.goals()
	if last := goals[len(goals)-1]; !strings.Contains(last, "chose this product for this item before: Natrel Milk ($5.49) — https://shop.test/p/natrel") {
		t.Errorf("run 2 prompt lacks the remembered product:\n%s", last)
	}

	// A list entry with a qualifier is a different item: it is asked about.
	l3 := newList("organic milk")
	done = w.run(w.config(l3, time.Minute, 1))
	w.question("organic milk")
	w.tg.SendText(itChat, "1")
	w.wait(done)
	if a := l3.done["id1"]; a.ProductName != "PC organic milk" {
		t.Fatalf("run 3: done %v", l3.done)
	}
}

// TestCustomTextRestartsTheSearch: free text becomes the new search query.
func TestCustomTextRestartsTheSearch(t *testing.T) {
	w := newWorld(t)
	l := newList("milk")
	done := w.run(w.config(l, time.Minute, 1))
	w.question("milk")
	w.tg.SendText(itChat, "oat milk")
	w.wait(done)
	if a := l.done["id1"]; a.ProductName != "Oatly Oat Milk 1.75 L" {
		t.Fatalf("list = done %v, not found %v, failed %v", l.done, l.notFound, l.failed)
	}
	goals := w.goals()
	if len(goals) != 2 || !strings.Contains(goals[1], "Item: oat milk") || !strings.Contains(goals[1], `the user asked to search for "oat milk" instead`) {
		t.Errorf("restart goals:\n%s", strings.Join(goals, "\n----\n"))
	}
}

// TestTelegramDownRunCompletes: Telegram fails while asking; the run goes
// on and the item is reported not found.
func TestTelegramDownRunCompletes(t *testing.T) {
	w := newWorld(t)
	w.tg.SetFailure(faketg.ModeDown)
	l := newList("milk")
	res := w.wait(w.run(w.config(l, time.Minute, 1)))
	expl, ok := l.notFound["id1"]
	if !ok || !strings.Contains(expl, "could not be asked") {
		t.Fatalf("list = done %v, not found %v, failed %v", l.done, l.notFound, l.failed)
	}
	if strings.Contains(expl, itToken) {
		t.Errorf("token in the item's explanation: %s", expl)
	}
	if res.Summary.Counts().NotFound != 1 {
		t.Errorf("summary = %+v", res.Summary)
	}
}

// TestUnavailableBotRunCompletes: Telegram down at start-up; the degraded bot
// answers at once and the run completes.
func TestUnavailableBotRunCompletes(t *testing.T) {
	w := newWorld(t)
	w.tg.SetFailure(faketg.Mode500)
	w.bot = w.newBot()
	if w.bot.Available() {
		t.Fatal("bot available with Telegram down")
	}
	l := newList("milk")
	w.wait(w.run(w.config(l, time.Minute, 1)))
	if _, ok := l.notFound["id1"]; !ok {
		t.Fatalf("list = done %v, not found %v, failed %v", l.done, l.notFound, l.failed)
	}
}

// TestTimeBudgetPausedWhileWaiting: an item with a 3 s budget survives a
// 5 s wait for the user's answer.
func TestTimeBudgetPausedWhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 5 s on purpose")
	}
	w := newWorld(t)
	l := newList("milk")
	done := w.run(w.config(l, 3*time.Second, 1))
	q := w.question("milk")
	// The user takes 5 seconds to answer: this wait is the scenario itself.
	<-time.After(5 * time.Second)
	if err := w.tg.PressButton(itChat, q.ID, "1. PC milk"); err != nil {
		t.Fatal(err)
	}
	w.wait(done)
	if a, ok := l.done["id1"]; !ok || a.ProductName != "PC milk" {
		t.Fatalf("list = done %v, not found %v, failed %v", l.done, l.notFound, l.failed)
	}
}

// TestConcurrentAgentsQueueQuestions: two agents ask at once; the user sees
// one question at a time and each answer reaches its own item.
func TestConcurrentAgentsQueueQuestions(t *testing.T) {
	w := newWorld(t)
	l := newList("milk", "cream")
	done := w.run(w.config(l, time.Minute, 2))
	first, err := w.tg.WaitMessage(contextWithTimeout(t), func(m faketg.Message) bool {
		return strings.HasPrefix(m.Text, "🛒 Shopping for:") && m.Keyboard != nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := w.questions(); n != 1 {
		t.Fatalf("%d questions out at once", n)
	}
	firstItem, secondItem := "milk", "cream"
	if strings.HasPrefix(first.Text, "🛒 Shopping for: cream\n") {
		firstItem, secondItem = "cream", "milk"
	}
	w.tg.SendText(itChat, "1")
	w.question(secondItem)
	w.tg.SendText(itChat, "3")
	w.wait(done)
	byItem := map[string]string{}
	for _, it := range l.items {
		byItem[it.Name] = l.done[it.ID].ProductName
	}
	if byItem[firstItem] != "PC "+firstItem || byItem[secondItem] != "Lactantia "+secondItem {
		t.Errorf("added = %v", byItem)
	}
}

// TestSafetyConfirmationThroughTelegram: the model's safety decision reaches
// the user; Yes lets the action happen with an acknowledgement, No stops the run.
func TestSafetyConfirmationThroughTelegram(t *testing.T) {
	for _, tt := range []struct {
		button string
		ok     bool
	}{{"Yes", true}, {"No", false}} {
		t.Run(tt.button, func(t *testing.T) {
			w := newWorld(t)
			var mu sync.Mutex
			var acknowledged bool
			g := fakegemini.New(fakegemini.Config{APIKey: "k", Script: func(req *fakegemini.Request) fakegemini.Reply {
				for _, fr := range req.FunctionResponses() {
					if fr.Name == "click_at" {
						mu.Lock()
						acknowledged = fr.Response["safety_acknowledgement"] == "true"
						mu.Unlock()
						return call("finish", map[string]any{})
					}
				}
				return call("click_at", map[string]any{"x": 500, "y": 500, "safety_decision": map[string]any{
					"decision": "require_confirmation", "explanation": "This button accepts the store's terms.",
				}})
			}})
			if err := g.Start(); err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			client, err := g.NewClient(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			finish := agent.Tool{Name: "finish", Description: "done", Terminal: true, Parameters: &genai.Schema{Type: genai.TypeObject},
				Handler: func(context.Context, map[string]any) (agent.ToolOutput, error) { return agent.ToolOutput{}, nil }}
			res := make(chan agent.Result, 1)
			go func() {
				res <- agent.Run(context.Background(), agent.Config{Client: client, Model: "m", Confirmer: w.bot, TimeBudget: time.Minute,
					Logger: slog.New(slog.DiscardHandler)}, "accept the terms", tab{}, []agent.Tool{finish})
			}()
			m, err := w.tg.WaitMessage(contextWithTimeout(t), func(m faketg.Message) bool {
				return strings.Contains(m.Text, "This button accepts the store's terms.") && m.Keyboard != nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.tg.PressButton(itChat, m.ID, tt.button); err != nil {
				t.Fatal(err)
			}
			r := <-res
			mu.Lock()
			defer mu.Unlock()
			if tt.ok && (!r.OK() || !acknowledged) {
				t.Errorf("Yes: result %+v, acknowledged %v", r, acknowledged)
			}
			if !tt.ok && (r.Reason != agent.ReasonSafetyDenied || acknowledged) {
				t.Errorf("No: result %+v, acknowledged %v", r, acknowledged)
			}
		})
	}
}

func contextWithTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}
