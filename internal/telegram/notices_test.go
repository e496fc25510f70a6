package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"
	"github.com/gemini-supply/gemini-supply/internal/testwait"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

func testSummary() *report.Summary {
	return &report.Summary{
		RunID: "r1",
		Items: []report.ItemResult{
			{ItemName: "milk", Quantity: 1, Outcome: report.OutcomeAdded, ProductName: "Natrel 2L <1%> Milk", URL: "https://www.metro.ca/en/p/2",
				Price: money.Price{Text: "$5.49", UnitCents: 549, Known: true}},
			{ItemName: "saffron_threads", Quantity: 1, Outcome: report.OutcomeNotFound, Explanation: "Not sold at this store."},
		},
		CartURL: "https://www.metro.ca/en/cart",
	}
}

func TestFollowSendsSessionNotices(t *testing.T) {
	h := newHarness(t)
	bus := &runstatus.Bus{}
	h.bot.Follow(h.ctx(), bus)

	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, Progress: runstatus.Progress{Total: 3}})
	h.waitText("🛒 Shopping run started: 3 items.")
	bus.Publish(runstatus.Event{Kind: runstatus.KindItemStarted, Item: &report.ItemResult{ItemName: "milk"}})
	bus.Publish(runstatus.Event{Kind: runstatus.KindWaitingForUser, Item: &report.ItemResult{ItemName: "milk"}})
	h.waitText("⏳ Waiting for your input about: milk")
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, Summary: testSummary()})
	m := h.waitText("Shopping run", "Natrel")
	if m.ParseMode != "HTML" {
		t.Errorf("summary parse mode %q, want HTML", m.ParseMode)
	}
	for _, want := range []string{
		"<b>Shopping run</b>",
		`<a href="https://www.metro.ca/en/p/2">Natrel 2L &lt;1%&gt; Milk</a>`,
		"saffron_threads", // escaped in markdown, plain in HTML
		`<a href="https://www.metro.ca/en/cart">your cart</a>`,
	} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("summary lacks %q:\n%s", want, m.Text)
		}
	}
	if strings.Contains(m.Text, `\_`) {
		t.Errorf("markdown escapes left in the summary:\n%s", m.Text)
	}
	// Item events other than waiting send nothing: 3 messages in all.
	if n := len(h.fake.Messages()); n != 3 {
		t.Errorf("%d messages sent, want 3: %+v", n, h.fake.Messages())
	}
}

func TestFollowRunFailed(t *testing.T) {
	h := newHarness(t)
	bus := &runstatus.Bus{}
	h.bot.Follow(h.ctx(), bus)
	bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, State: runstatus.StateShopping})
	bus.Publish(runstatus.Event{Kind: runstatus.KindStateChanged, State: runstatus.StateFailed, Message: "login failed: wrong password"})
	h.waitText("❌ Shopping run failed: login failed: wrong password")
}

// TestCloseFlushesNotices: the summary published just before Close is sent.
func TestCloseFlushesNotices(t *testing.T) {
	h := newHarness(t)
	bus := &runstatus.Bus{}
	h.bot.Follow(context.Background(), bus)
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, Progress: runstatus.Progress{Total: 1}})
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, Summary: testSummary()})
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := h.bot.Close(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := h.fake.Messages()
	if len(msgs) != 2 || !strings.Contains(msgs[1].Text, "Natrel") {
		t.Fatalf("messages after Close: %+v", msgs)
	}
}

// TestNoticeFailureDoesNotStopFollowing: a failed notice is logged and the
// next one still goes out.
func TestNoticeFailureDoesNotStopFollowing(t *testing.T) {
	h := newHarness(t)
	bus := &runstatus.Bus{}
	h.bot.Follow(h.ctx(), bus)
	h.fake.SetFailure(faketg.Mode500, "sendMessage")
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted, Progress: runstatus.Progress{Total: 1}})
	if err := h.fake.WaitCalls(h.ctx(), "sendMessage", 2); err != nil { // first try + one retry
		t.Fatal(err)
	}
	waitLog(t, h.logs, "could not send a session notice")
	h.fake.SetFailure(faketg.ModeOK)
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunFinished, Progress: runstatus.Progress{Total: 1, Added: 1}})
	h.waitText("🧾 Shopping run finished: 1 added, 0 not found, 0 failed (of 1).")
}

func TestFollowOnUnavailableBot(t *testing.T) {
	bot, err := New(context.Background(), Options{Token: testToken, ChatID: 1, Endpoint: "http://127.0.0.1:1/bot%s/%s", StartupRetries: -1, Logger: newTestLogger(&syncbuf.Buffer{})})
	if err != nil {
		t.Fatal(err)
	}
	bus := &runstatus.Bus{}
	bot.Follow(context.Background(), bus) // must not block or panic
	bus.Publish(runstatus.Event{Kind: runstatus.KindRunStarted})
	if err := bot.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits (bounded only against a hang) for a log line containing s.
func waitLog(t *testing.T, logs *syncbuf.Buffer, s string) {
	t.Helper()
	testwait.Until(t, fmt.Sprintf("a log line with %q", s), hang, func() bool { return strings.Contains(logs.String(), s) }, logs.String)
}

// TestTokenNeverLeaks drives every path that reports a transport error —
// start-up, sending, polling, the library's own logger — and checks that the
// token appears in no log line and no error.
func TestTokenNeverLeaks(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.PollTimeout = time.Second })
	var errs []error
	h.fake.SetFailure(faketg.ModeDown)
	_, err := h.bot.Choose(h.ctx(), milkQuestion())
	errs = append(errs, err)
	_, err = h.bot.Confirm(h.ctx(), "e", "a")
	errs = append(errs, err)
	errs = append(errs, h.bot.Notify(h.ctx(), "hello"))
	waitLog(t, h.logs, "getUpdates failed")
	lib.Printf("library says %s", "Post https://api.telegram.org/bot"+testToken+"/getUpdates: EOF")
	waitLog(t, h.logs, "library says")

	for _, err := range errs {
		if err == nil {
			t.Fatal("expected an error with Telegram down")
		}
		if strings.Contains(err.Error(), testToken) {
			t.Errorf("token in error: %v", err)
		}
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("error lost the redacted URL (what failed): %v", err)
		}
	}
	logs := h.logs.String()
	if strings.Contains(logs, testToken) || strings.Contains(logs, "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ") {
		t.Errorf("token in logs:\n%s", logs)
	}
	if !strings.Contains(logs, "/bot[redacted]/getUpdates") {
		t.Errorf("the poll error was not logged with a redacted URL:\n%s", logs)
	}
}

func TestRedactorKeepsErrorIdentity(t *testing.T) {
	r := redactor{token: "secret-token"}
	ue := &url.Error{Op: "Post", URL: "http://x/botsecret-token/getMe", Err: context.DeadlineExceeded}
	got := r.Err(ue)
	if strings.Contains(got.Error(), "secret-token") || !errors.Is(got, context.DeadlineExceeded) {
		t.Errorf("url.Error: %v (Is deadline: %v)", got, errors.Is(got, context.DeadlineExceeded))
	}
	apiErr := &tgbotapi.Error{Code: 400, Message: "Bad Request: token secret-token"}
	got = r.Err(fmt.Errorf("wrapped: %w", apiErr))
	var back *tgbotapi.Error
	if strings.Contains(got.Error(), "secret-token") || !errors.As(got, &back) || back.Code != 400 {
		t.Errorf("api error: %v", got)
	}
	plain := errors.New("nothing secret")
	if r.Err(plain) != plain {
		t.Error("an error without the token was replaced")
	}
	if s := (redactor{}).String("see 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ here"); strings.Contains(s, "AAHdq") {
		t.Errorf("token-shaped text kept: %s", s)
	}
}

func TestMarkdownToHTML(t *testing.T) {
	tests := []struct{ in, want string }{
		{"# Shopping run", "<b>Shopping run</b>"},
		{"## Added (2)", "<b>Added (2)</b>"},
		{"**3 added.**", "<b>3 added.</b>"},
		{"- **milk** → [Natrel](https://x.ca/p?a=1&b=2) — $5.49", `• <b>milk</b> → <a href="https://x.ca/p?a=1&amp;b=2">Natrel</a> — $5.49`},
		{`a \*literal\* \_x\_ <tag> & more`, "a *literal* _x_ &lt;tag&gt; &amp; more"},
		{"Run `r<1>`.", "Run <code>r&lt;1&gt;</code>."},
		{"**unclosed", "<b>unclosed</b>"},
		{"[not a link](javascript:alert(1))", "[not a link](javascript:alert(1))"},
		{"[text] alone", "[text] alone"},
		{"#hashtag", "#hashtag"},
		{"[a \\] b](https://x)", `<a href="https://x">a ] b</a>`},
	}
	for _, tt := range tests {
		if got := markdownToHTML(tt.in); got != tt.want {
			t.Errorf("markdownToHTML(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitText(t *testing.T) {
	long := strings.Repeat("line of text\n", 1000)
	parts := splitText(long, 100)
	if strings.Join(parts, "\n") != strings.TrimRight(long, "\n") {
		t.Error("splitting lost text")
	}
	for _, p := range parts {
		if n := len([]rune(p)); n > 100 {
			t.Errorf("part of %d runes", n)
		}
	}
	if got := splitText(strings.Repeat("é", 250), 100); len(got) != 3 || len([]rune(got[0])) != 100 {
		t.Errorf("no-newline split = %d parts", len(got))
	}
}

func BenchmarkMarkdownToHTML(b *testing.B) {
	md := testSummary().Markdown()
	for b.Loop() {
		markdownToHTML(md)
	}
}

// BenchmarkChooseRoundTrip: one question asked, answered by a numbered
// reply and closed, through the library and the fake Bot API.
func BenchmarkChooseRoundTrip(b *testing.B) {
	fake := faketg.NewServer(testToken)
	defer fake.Close()
	bot, err := New(context.Background(), Options{Token: testToken, ChatID: testChat, Endpoint: fake.Endpoint(), Logger: newTestLogger(&syncbuf.Buffer{})})
	if err != nil {
		b.Fatal(err)
	}
	defer bot.Close(context.Background())
	q := milkQuestion()
	for b.Loop() {
		res := make(chan error, 1)
		go func() { _, err := bot.Choose(context.Background(), q); res <- err }()
		n := len(fake.Messages())
		if _, err := fake.WaitMessage(context.Background(), func(m faketg.Message) bool { return m.ID > n && m.Keyboard != nil }); err != nil {
			b.Fatal(err)
		}
		fake.SendText(testChat, "2")
		if err := <-res; err != nil {
			b.Fatal(err)
		}
	}
}
