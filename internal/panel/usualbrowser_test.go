package panel

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/testwait"
)

// TestStartFromTheUsualInChromium: "Start from the usual" shows the
// proposal with tick boxes, the item probably still at home unticked; the
// household unticks one and ticks the one at home (add anyway); Start puts
// exactly the ticked items on the list, then starts the run.
func TestStartFromTheUsualInChromium(t *testing.T) {
	c := &control{}
	var mu sync.Mutex
	var added []string
	var startsAtAdd int
	p, err := New(Options{Start: c.start, Stop: c.stop,
		Usual: func(context.Context) (UsualProposal, error) {
			return UsualProposal{Items: []UsualItem{
				{Name: "Ground Coffee", Source: "order", Reason: "every 14 days, last bought 10 days ago"},
				{Name: "Greek Yogurt", Source: "favourite", Reason: "a favourite, never bought here yet"},
				{Name: "2% Milk", Source: "order", Reason: "every 7 days, last bought 3 days ago — probably still at home", ProbablyAtHome: true},
			}}, nil
		},
		AddUsual: func(_ context.Context, names []string) error {
			mu.Lock()
			defer mu.Unlock()
			added = append(added, names...)
			c.mu.Lock()
			startsAtAdd = len(c.starts)
			c.mu.Unlock()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	page, text := openPanel(t, p, &runstatus.Bus{}, playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 1280, Height: 800}})
	testwait.Until(t, "the page to load", 60*time.Second, func() bool { return text("#state") != "" })
	if err := page.Locator("#usual-open").Click(); err != nil {
		t.Fatal(err)
	}
	box := func(name string) playwright.Locator {
		return page.Locator(`#usual-list li[data-item="` + name + `"] input[type=checkbox]`)
	}
	testwait.Until(t, "the proposal", 60*time.Second, func() bool { n, _ := page.Locator("#usual-list li").Count(); return n == 3 })
	for name, want := range map[string]bool{"Ground Coffee": true, "Greek Yogurt": true, "2% Milk": false} {
		if got, err := box(name).IsChecked(); err != nil || got != want {
			t.Errorf("%s ticked %v (%v), want %v", name, got, err, want)
		}
	}
	if !strings.Contains(text(`#usual-list li[data-item="2% Milk"]`), "probably still at home") {
		t.Errorf("the item at home does not say why: %q", text(`#usual-list li[data-item="2% Milk"]`))
	}
	if err := box("Greek Yogurt").Uncheck(); err != nil {
		t.Fatal(err)
	}
	if err := box("2% Milk").Check(); err != nil {
		t.Fatal(err)
	}
	if err := page.Locator("#usual-start").Click(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the run to start", 60*time.Second, func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.starts) == 1 })
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(added, []string{"Ground Coffee", "2% Milk"}) || startsAtAdd != 0 {
		t.Errorf("added %v (runs started before: %d), want the ticked ones before the run", added, startsAtAdd)
	}
	if c.starts[0].Source != "panel" {
		t.Errorf("start %+v", c.starts[0])
	}
	testwait.Until(t, "the proposal to close", 60*time.Second, func() bool { v, _ := page.Locator("#usual").IsVisible(); return !v })
}

// TestATapWhileTheTextsLoadIsNotLost: the panel's controls answer from the
// moment the page is there, before its texts (api/messages) have come — a
// tap on "Start from the usual" on a slow phone or a busy add-on opened
// nothing when the buttons were wired only after the texts had loaded
// (TestStartFromTheUsualInChromium failed that way under load).
func TestATapWhileTheTextsLoadIsNotLost(t *testing.T) {
	c := &control{}
	p, err := New(Options{Start: c.start, Stop: c.stop,
		Usual: func(context.Context) (UsualProposal, error) {
			return UsualProposal{Items: []UsualItem{{Name: "Ground Coffee", Source: "order", Reason: "every 14 days"}}}, nil
		},
		AddUsual: func(context.Context, []string) error { return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var heldOnce, once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	page, _ := openPanelWith(t, p, &runstatus.Bus{}, playwright.BrowserNewPageOptions{}, func(page playwright.Page) {
		if err := page.Route("**/api/messages", func(r playwright.Route) {
			heldOnce.Do(func() { close(held) })
			<-release
			_ = r.Continue()
		}); err != nil {
			t.Fatal(err)
		}
	})
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("the page never asked for its texts")
	}
	if err := page.Locator("#usual-open").Click(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the proposal, opened while the texts were still loading", 60*time.Second, func() bool {
		n, _ := page.Locator("#usual-list li").Count()
		return n == 1
	})
	once.Do(func() { close(release) })
}
