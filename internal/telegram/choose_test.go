package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/preferences"
)

// ChoiceResolver and Confirmer as the shopping run and the agent declare them.
type choiceResolver interface {
	Choose(ctx context.Context, q choice.Question) (choice.Answer, error)
}

type confirmer interface {
	Confirm(ctx context.Context, explanation, action string) (bool, error)
}

var (
	_ choiceResolver = (*Bot)(nil)
	_ confirmer      = (*Bot)(nil)
)

func milkQuestion() choice.Question {
	return choice.Question{
		ItemName: "milk",
		Context:  "I found many milk options. Which would you like?",
		Options: []choice.Option{
			{Name: "President's Choice 2L 1% Milk", Price: "$4.99", URL: "https://www.metro.ca/en/p/1", ProductID: "1"},
			{Name: "Natrel 2L 1% Milk", Price: "$5.49", URL: "https://www.metro.ca/en/p/2", ProductID: "2"},
			{Name: "Lactantia 2L 1% Milk", Price: "$5.29", URL: "https://www.metro.ca/en/p/3", ProductID: "3"},
		},
	}
}

const milkText = `🛒 Shopping for: milk

I found many milk options. Which would you like?

1. President's Choice 2L 1% Milk ($4.99)
2. Natrel 2L 1% Milk ($5.49)
3. Lactantia 2L 1% Milk ($5.29)
4. Nothing (skip this item)
5. Something else (reply with text)
6. Skip this week (leave it on the list)

Reply with a number or describe what you want. ⭐ = choose and remember for next time.`

func TestChooseMessageAndKeyboard(t *testing.T) {
	h := newHarness(t)
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	m := h.waitText("Shopping for: milk")
	if m.Text != milkText {
		t.Errorf("question text:\n%s\nwant:\n%s", m.Text, milkText)
	}
	if m.ChatID != testChat {
		t.Errorf("sent to chat %d, want %d", m.ChatID, testChat)
	}
	var labels []string
	for _, row := range m.Keyboard {
		var r []string
		for _, b := range row {
			r = append(r, b.Text)
		}
		labels = append(labels, strings.Join(r, " | "))
	}
	want := []string{
		"1. President's Choice 2L 1% Milk ($4.99) | ⭐ 1",
		"2. Natrel 2L 1% Milk ($5.49) | ⭐ 2",
		"3. Lactantia 2L 1% Milk ($5.29) | ⭐ 3",
		"🚫 Nothing (skip this item)",
		"✏️ Something else",
		"⏭ Skip this week",
	}
	if strings.Join(labels, "\n") != strings.Join(want, "\n") {
		t.Errorf("keyboard:\n%s\nwant:\n%s", strings.Join(labels, "\n"), strings.Join(want, "\n"))
	}
	h.fake.Press(testChat, m.ID, m.Keyboard[0][0].Data)
	if _, err := await(t, res); err != nil {
		t.Fatal(err)
	}
}

func TestChooseAnswers(t *testing.T) {
	tests := []struct {
		name  string
		reply func(h *harness, m faketg.Message)
		want  choice.Answer
		shown string // the line the answered message ends with
	}{
		{
			name:  "button",
			reply: func(h *harness, m faketg.Message) { press(h, m, "2. Natrel") },
			want:  choice.Answer{Kind: choice.KindProduct, Index: 1},
			shown: "✅ You chose 2. Natrel 2L 1% Milk ($5.49)",
		},
		{
			name:  "numbered reply",
			reply: func(h *harness, m faketg.Message) { h.fake.SendText(testChat, " 3 ") },
			want:  choice.Answer{Kind: choice.KindProduct, Index: 2},
			shown: "✅ You chose 3. Lactantia 2L 1% Milk ($5.29)",
		},
		{
			name:  "star remembers",
			reply: func(h *harness, m faketg.Message) { press(h, m, "⭐ 2") },
			want:  choice.Answer{Kind: choice.KindProduct, Index: 1, Remember: true},
			shown: "⭐ You chose 2. Natrel 2L 1% Milk ($5.49), and I'll remember it for next time.",
		},
		{
			name:  "nothing button",
			reply: func(h *harness, m faketg.Message) { press(h, m, "Nothing") },
			want:  choice.Answer{Kind: choice.KindNothing},
			shown: "🚫 Nothing: skipping this item.",
		},
		{
			name:  "nothing by number",
			reply: func(h *harness, m faketg.Message) { h.fake.SendText(testChat, "4") },
			want:  choice.Answer{Kind: choice.KindNothing},
			shown: "🚫 Nothing: skipping this item.",
		},
		{
			name:  "skip this week button",
			reply: func(h *harness, m faketg.Message) { press(h, m, "Skip this week") },
			want:  choice.Answer{Kind: choice.KindSkip},
			shown: choice.SkipLine,
		},
		{
			name:  "skip this week by number",
			reply: func(h *harness, m faketg.Message) { h.fake.SendText(testChat, "6") },
			want:  choice.Answer{Kind: choice.KindSkip},
			shown: choice.SkipLine,
		},
		{
			name:  "skip this week typed",
			reply: func(h *harness, m faketg.Message) { h.fake.SendText(testChat, "skip this week") },
			want:  choice.Answer{Kind: choice.KindSkip},
			shown: choice.SkipLine,
		},
		{
			name:  "free text is custom",
			reply: func(h *harness, m faketg.Message) { h.fake.SendText(testChat, "Greek yogurt 0% plain large tub") },
			want:  choice.Answer{Kind: choice.KindCustom, Text: "Greek yogurt 0% plain large tub"},
			shown: "✏️ You asked for: Greek yogurt 0% plain large tub",
		},
		{
			name: "something else button asks for the text",
			reply: func(h *harness, m faketg.Message) {
				press(h, m, "Something else")
				h.waitText("What would you like instead for “milk”?")
				h.fake.SendText(testChat, "lactose-free 2% milk")
			},
			want:  choice.Answer{Kind: choice.KindCustom, Text: "lactose-free 2% milk"},
			shown: "✏️ You asked for: lactose-free 2% milk",
		},
		{
			name: "something else by number",
			reply: func(h *harness, m faketg.Message) {
				h.fake.SendText(testChat, "5")
				h.waitText("What would you like instead")
				h.fake.SendText(testChat, "oat milk")
			},
			want:  choice.Answer{Kind: choice.KindCustom, Text: "oat milk"},
			shown: "✏️ You asked for: oat milk",
		},
		{
			name: "invalid number re-asks",
			reply: func(h *harness, m faketg.Message) {
				h.fake.SendText(testChat, "9")
				h.waitText("Please choose 1–6, or describe what you want.")
				h.fake.SendText(testChat, "0")
				if _, err := h.fake.WaitMessage(h.ctx(), func(x faketg.Message) bool {
					return strings.HasPrefix(x.Text, "Please choose") && x.ID > m.ID+2
				}); err != nil {
					h.t.Fatal(err)
				}
				if q, _ := h.fake.Message(m.ID); q.Edits != 0 || q.Keyboard == nil {
					h.t.Errorf("question closed after an invalid number: %+v", q)
				}
				h.fake.SendText(testChat, "1")
			},
			want:  choice.Answer{Kind: choice.KindProduct, Index: 0},
			shown: "✅ You chose 1. President's Choice 2L 1% Milk ($4.99)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
			m := h.waitText("Shopping for: milk")
			tt.reply(h, m)
			got, err := await(t, res)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("answer = %+v, want %+v", got, tt.want)
			}
			edited, _ := h.fake.Message(m.ID)
			if edited.Text != milkText+"\n\n"+tt.shown {
				t.Errorf("answered message:\n%s\nwant it to end with %q", edited.Text, tt.shown)
			}
			if edited.Keyboard != nil {
				t.Errorf("keyboard left on the answered message: %v", edited.Keyboard)
			}
		})
	}
}

func press(h *harness, m faketg.Message, label string) {
	h.t.Helper()
	if err := h.fake.PressButton(testChat, m.ID, label); err != nil {
		h.t.Fatal(err)
	}
}

// TestButtonPressesAreAcknowledged: every press gets answerCallbackQuery, so
// the user's client stops its spinner.
func TestButtonPressesAreAcknowledged(t *testing.T) {
	h := newHarness(t)
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	m := h.waitText("Shopping for: milk")
	press(h, m, "Something else")
	h.waitText("What would you like instead")
	press(h, m, "⭐ 1")
	if _, err := await(t, res); err != nil {
		t.Fatal(err)
	}
	cbs, err := h.fake.WaitCallback(h.ctx(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if cbs[0].Text != "Reply with what you want." || cbs[1].Text != "Got it, and I'll remember it." {
		t.Errorf("callback answers = %+v", cbs)
	}
}

// TestStarAnswerFillsPreferences: the ⭐ answer carries what the store needs
// to remember the product, and the next lookup finds it without asking.
func TestStarAnswerFillsPreferences(t *testing.T) {
	h := newHarness(t)
	q := milkQuestion()
	q.ItemName = "2x Milk #404"
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), q) })
	m := h.waitText("Shopping for: 2x Milk #404")
	press(h, m, "⭐ 2")
	a, err := await(t, res)
	if err != nil || !a.Remember || a.Kind != choice.KindProduct {
		t.Fatalf("answer = %+v, %v", a, err)
	}
	// The answer names the product the run pins, under the item's key.
	if o := q.Options[a.Index]; o.ProductID != "2" || o.Name != "Natrel 2L 1% Milk" {
		t.Fatalf("⭐ 2 chose %+v", o)
	}
	if k := preferences.Key(q.ItemName); k != "milk" {
		t.Fatalf("the remembered key of %q is %q, want milk", q.ItemName, k)
	}
}

func TestOtherChatsIgnored(t *testing.T) {
	h := newHarness(t)
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	m := h.waitText("Shopping for: milk")
	// Another chat answers first, by text and by button: both ignored.
	h.fake.SendText(otherChat, "1")
	h.fake.Press(otherChat, m.ID, m.Keyboard[0][0].Data)
	h.fake.SendText(otherChat, "2")
	h.fake.SendText(testChat, "3")
	a, err := await(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if a.Index != 2 {
		t.Errorf("answer = %+v; the other chat's reply was taken", a)
	}
	for _, sent := range h.fake.Messages() {
		if sent.ChatID != testChat {
			t.Errorf("sent a message to chat %d: %q", sent.ChatID, sent.Text)
		}
	}
	if n := strings.Count(h.logs.String(), `"chat_id":9999`); n != 1 {
		t.Errorf("the other chat was logged %d times, want once:\n%s", n, h.logs.String())
	}
	if cbs := h.fake.Callbacks(); len(cbs) != 0 {
		t.Errorf("answered another chat's button press: %+v", cbs)
	}
}

func TestChooseTimeout(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.ResponseTimeout = 300 * time.Millisecond })
	a, err := h.bot.Choose(h.ctx(), milkQuestion())
	if err != nil {
		t.Fatal(err)
	}
	if a != (choice.Answer{Kind: choice.KindNothing, Reason: ReasonTimeout}) {
		t.Errorf("answer = %+v", a)
	}
	m := h.waitText("Shopping for: milk", "No answer within")
	if m.Keyboard != nil {
		t.Errorf("keyboard left on a timed-out question")
	}
}

func TestChooseCancelled(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := async(func() (choice.Answer, error) { return h.bot.Choose(ctx, milkQuestion()) })
	h.waitText("Shopping for: milk")
	cancel()
	if _, err := await(t, res); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	h.waitText("Cancelled")
}

// TestConcurrentQuestionsQueued: two agents ask at once; exactly one question
// is open at a time and each names its item; a reply goes to the open one.
func TestConcurrentQuestionsQueued(t *testing.T) {
	h := newHarness(t)
	qa, qb := milkQuestion(), milkQuestion()
	qa.ItemName, qb.ItemName = "milk", "chocolate milk"
	ra := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), qa) })
	rb := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), qb) })

	first := h.waitText("Shopping for: ")
	// Only one question may be out. The other one is waiting for its turn,
	// so answering proves it: until then no second question exists.
	countQuestions := func() int {
		n := 0
		for _, m := range h.fake.Messages() {
			if strings.HasPrefix(m.Text, "🛒 Shopping for:") {
				n++
			}
		}
		return n
	}
	if n := countQuestions(); n != 1 {
		t.Fatalf("%d questions open at once", n)
	}
	h.fake.SendText(testChat, "1")
	firstItem := strings.TrimPrefix(strings.SplitN(first.Text, "\n", 2)[0], "🛒 Shopping for: ")
	secondItem := map[string]string{"milk": "chocolate milk", "chocolate milk": "milk"}[firstItem]
	second := h.waitText("Shopping for: " + secondItem + "\n")
	answered, _ := h.fake.Message(first.ID)
	if answered.Edits == 0 || second.Seq < answered.Seq {
		t.Errorf("second question (seq %d) sent before the first was answered (seq %d)", second.Seq, answered.Seq)
	}
	h.fake.SendText(testChat, "2")
	a, err := await(t, ra)
	if err != nil {
		t.Fatal(err)
	}
	b, err := await(t, rb)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{qa.ItemName: a.Index, qb.ItemName: b.Index}
	if got[firstItem] != 0 || got[secondItem] != 1 {
		t.Errorf("answers = %v; want %s→0 (first reply), %s→1", got, firstItem, secondItem)
	}
	if n := countQuestions(); n != 2 {
		t.Errorf("%d questions sent, want 2", n)
	}
}

// TestQueuedQuestionGivesUpWithContext: a question waiting for its turn ends
// with its ctx and does not block the ones behind it.
func TestQueuedQuestionGivesUpWithContext(t *testing.T) {
	h := newHarness(t)
	ra := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	h.waitText("Shopping for: milk")
	ctx, cancel := context.WithCancel(context.Background())
	q2 := milkQuestion()
	q2.ItemName = "bread"
	rb := async(func() (choice.Answer, error) { return h.bot.Choose(ctx, q2) })
	q3 := milkQuestion()
	q3.ItemName = "eggs"
	rc := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), q3) })
	cancel()
	if _, err := await(t, rb); !errors.Is(err, context.Canceled) {
		t.Fatalf("queued question: err = %v", err)
	}
	h.fake.SendText(testChat, "1")
	if _, err := await(t, ra); err != nil {
		t.Fatal(err)
	}
	h.waitText("Shopping for: eggs")
	h.fake.SendText(testChat, "2")
	if a, err := await(t, rc); err != nil || a.Index != 1 {
		t.Fatalf("third question: %+v, %v", a, err)
	}
	for _, m := range h.fake.Messages() {
		if strings.Contains(m.Text, "Shopping for: bread") {
			t.Error("the cancelled question was sent")
		}
	}
}

// TestOldRepliesAndButtonsAreNotAnswers: a reply left from before start-up
// and a button of an earlier question never answer the open question.
func TestOldRepliesAndButtonsAreNotAnswers(t *testing.T) {
	fake := faketg.NewServer(testToken)
	defer fake.Close()
	fake.SendText(testChat, "1") // left over from yesterday
	h := newHarness(t, func(o *Options) { o.Endpoint = fake.Endpoint() })
	h.fake = fake
	// (The bot may already have skipped the stale update at start-up: how
	// far it got is timing, so only the outcome below is asserted.)

	first := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	m1 := h.waitText("Shopping for: milk")
	h.fake.SendText(testChat, "2")
	if a, err := await(t, first); err != nil || a.Index != 1 {
		t.Fatalf("first = %+v, %v; the stale reply was taken", a, err)
	}
	q := milkQuestion()
	q.ItemName = "eggs"
	second := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), q) })
	h.waitText("Shopping for: eggs")
	h.fake.Press(testChat, m1.ID, m1.Keyboard[0][0].Data) // the old question's button (keyboard data kept by the client)
	cbs, err := h.fake.WaitCallback(h.ctx(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if cbs[0].Text != "This question is already closed." {
		t.Errorf("stale press answered %q", cbs[0].Text)
	}
	h.fake.SendText(testChat, "3")
	if a, err := await(t, second); err != nil || a.Index != 2 {
		t.Fatalf("second = %+v, %v", a, err)
	}
}

func TestIdleMessagesGetAnAnswer(t *testing.T) {
	h := newHarness(t)
	h.fake.SendText(testChat, "/start")
	h.waitText("I'm the gemini-supply bot", "4242")
	h.fake.SendText(testChat, "2")
	h.waitText("Nothing is waiting for your answer right now.")
}

func TestConfirm(t *testing.T) {
	tests := []struct {
		name    string
		reply   func(h *harness, m faketg.Message)
		timeout time.Duration
		want    bool
		shown   string
	}{
		{"yes button", func(h *harness, m faketg.Message) { press(h, m, "Yes") }, 0, true, "✅ You said Yes."},
		{"no button", func(h *harness, m faketg.Message) { press(h, m, "No") }, 0, false, "❌ You said No."},
		{"yes text after nonsense", func(h *harness, m faketg.Message) {
			h.fake.SendText(testChat, "maybe?")
			h.waitText("Please answer Yes or No.")
			h.fake.SendText(testChat, "Yes")
		}, 0, true, "✅ You said Yes."},
		{"no text", func(h *harness, m faketg.Message) { h.fake.SendText(testChat, "no") }, 0, false, "❌ You said No."},
		{"timeout is no", func(h *harness, m faketg.Message) {}, 300 * time.Millisecond, false, "⏱ No answer within 300ms: treated as No."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) {
				if tt.timeout > 0 {
					o.ResponseTimeout = tt.timeout
				}
			})
			res := async(func() (bool, error) {
				return h.bot.Confirm(h.ctx(), "The site asks to accept cookies before continuing.", "click “Accept all”")
			})
			m := h.waitText("⚠️ Safety check")
			wantText := "⚠️ Safety check\n\nThe shopping agent wants to: click “Accept all”\n\nWhy it asks: The site asks to accept cookies before continuing.\n\nAllow it?"
			if m.Text != wantText {
				t.Errorf("text:\n%s\nwant:\n%s", m.Text, wantText)
			}
			tt.reply(h, m)
			got, err := await(t, res)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Confirm = %v, want %v", got, tt.want)
			}
			edited := h.waitText(tt.shown)
			if edited.ID != m.ID || edited.Keyboard != nil {
				t.Errorf("confirmation not closed: %+v", edited)
			}
		})
	}
}

func TestTelegramDown(t *testing.T) {
	modes := []struct {
		name string
		mode faketg.Mode
	}{
		{"connection dropped", faketg.ModeDown},
		{"500", faketg.Mode500},
	}
	for _, tt := range modes {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.fake.SetFailure(tt.mode)
			// An error, not the timeout's "nothing" answer: Choose gave up
			// at once instead of waiting for the response timeout.
			_, err := h.bot.Choose(h.ctx(), milkQuestion())
			if err == nil {
				t.Fatal("Choose succeeded with Telegram down")
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Choose blocked until the test's deadline with Telegram down: %v", err)
			}
			if !strings.Contains(err.Error(), `ask about "milk"`) {
				t.Errorf("error does not say what failed: %v", err)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("token in error: %v", err)
			}
			if _, err := h.bot.Confirm(h.ctx(), "x", "y"); err == nil {
				t.Error("Confirm succeeded with Telegram down")
			}
			// Telegram back: the bot works again.
			h.fake.SetFailure(faketg.ModeOK)
			res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
			h.waitText("Shopping for: milk")
			h.fake.SendText(testChat, "1")
			if _, err := await(t, res); err != nil {
				t.Fatalf("after recovery: %v", err)
			}
		})
	}
}

// TestBlockedBotBecomesUnavailable: 403 (the user blocked the bot) stops
// further attempts for the session.
func TestBlockedBotBecomesUnavailable(t *testing.T) {
	h := newHarness(t)
	h.fake.SetFailure(faketg.Mode403, "sendMessage")
	if _, err := h.bot.Choose(h.ctx(), milkQuestion()); err == nil {
		t.Fatal("Choose succeeded")
	}
	if h.bot.Available() {
		t.Fatal("bot still available after 403")
	}
	calls := h.fake.Calls("sendMessage")
	_, err := h.bot.Choose(h.ctx(), milkQuestion())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if h.fake.Calls("sendMessage") != calls {
		t.Error("an unavailable bot still calls Telegram")
	}
}

func TestNewDegrades(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(f *faketg.Server) string // returns the endpoint
		wantCalls int
		wantErr   string
	}{
		{"500 retried then degraded", func(f *faketg.Server) string { f.SetFailure(faketg.Mode500); return f.Endpoint() }, 3, "getMe failed 3 times"},
		{"dropped connections retried", func(f *faketg.Server) string { f.SetFailure(faketg.ModeDown); return f.Endpoint() }, 3, "getMe failed 3 times"},
		{"401 not retried", func(f *faketg.Server) string { f.SetFailure(faketg.Mode401); return f.Endpoint() }, 1, "refused the bot token"},
		{"wrong token", func(f *faketg.Server) string {
			return strings.Replace(f.Endpoint(), "%s/%s", "%s-wrong/%s", 1)
		}, 1, "refused the bot token"},
		{"nothing listening", func(f *faketg.Server) string { e := f.Endpoint(); f.Close(); return e }, 0, "getMe failed 3 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := faketg.NewServer(testToken)
			defer fake.Close()
			endpoint := tt.setup(fake)
			logs := &syncbuf.Buffer{}
			start := time.Now()
			bot, err := New(context.Background(), Options{
				Token: "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ", ChatID: testChat, Endpoint: endpoint,
				StartupRetries: 2, StartupBackoff: 10 * time.Millisecond, RequestTimeout: 2 * time.Second,
				Logger: newTestLogger(logs),
			})
			if err != nil {
				t.Fatalf("New failed instead of degrading: %v", err)
			}
			defer bot.Close(context.Background())
			if bot.Available() {
				t.Fatal("bot available")
			}
			if tt.wantCalls > 0 && fake.Calls("getMe") != tt.wantCalls {
				t.Errorf("getMe called %d times, want %d", fake.Calls("getMe"), tt.wantCalls)
			}
			if !errors.Is(bot.Err(), ErrUnavailable) || !strings.Contains(bot.Err().Error(), tt.wantErr) {
				t.Errorf("Err = %v, want %q", bot.Err(), tt.wantErr)
			}
			if !strings.Contains(logs.String(), "the run goes on without it") {
				t.Errorf("no warning logged:\n%s", logs.String())
			}
			_, err = bot.Choose(context.Background(), milkQuestion())
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("Choose on an unavailable bot: %v", err)
			}
			if ok, err := bot.Confirm(context.Background(), "e", "a"); ok || !errors.Is(err, ErrUnavailable) {
				t.Errorf("Confirm on an unavailable bot: %v, %v", ok, err)
			}
			for _, s := range []string{logs.String(), bot.Err().Error(), err.Error()} {
				if strings.Contains(s, testToken) || strings.Contains(s, "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ") {
					t.Errorf("token leaked: %s", s)
				}
			}
			_ = start
		})
	}
}

// TestNewDegradesWhenAnotherProgramPolls: Telegram gives updates to one
// poller only; a second one (test-telegram while the service runs) says so.
func TestNewDegradesWhenAnotherProgramPolls(t *testing.T) {
	fake := faketg.NewServer(testToken)
	defer fake.Close()
	fake.SetFailure(faketg.Mode409, "getUpdates")
	bot, err := New(context.Background(), Options{Token: testToken, ChatID: testChat, Endpoint: fake.Endpoint(), Logger: newTestLogger(&syncbuf.Buffer{})})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close(context.Background())
	if bot.Available() || !strings.Contains(bot.Err().Error(), "another program is reading this bot's updates") {
		t.Fatalf("Err = %v", bot.Err())
	}
}

func TestNewNotConfigured(t *testing.T) {
	for _, o := range []Options{{ChatID: 1}, {Token: "x"}} {
		if _, err := New(context.Background(), o); !errors.Is(err, ErrNotConfigured) {
			t.Errorf("New(%+v) = %v, want ErrNotConfigured", o, err)
		}
	}
	if _, err := New(context.Background(), Options{Token: "x", ChatID: 1, Endpoint: "http://x/%s"}); err == nil {
		t.Error("bad endpoint accepted")
	}
}

func TestNewCancelled(t *testing.T) {
	fake := faketg.NewServer(testToken)
	defer fake.Close()
	fake.SetFailure(faketg.Mode500)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = fake.WaitCalls(context.Background(), "getMe", 1)
		cancel()
	}()
	_, err := New(ctx, Options{Token: testToken, ChatID: 1, Endpoint: fake.Endpoint(), StartupBackoff: time.Hour, Logger: newTestLogger(&syncbuf.Buffer{})})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestCloseStopsEverything: Close ends the long poll at once (not after the
// poll timeout) and an open question returns ErrClosed.
func TestCloseStopsEverything(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.PollTimeout = time.Hour })
	res := async(func() (choice.Answer, error) { return h.bot.Choose(context.Background(), milkQuestion()) })
	h.waitText("Shopping for: milk")
	ctx, cancel := context.WithTimeout(context.Background(), hang) // far below the hour-long poll
	defer cancel()
	if err := h.bot.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := await(t, res); !errors.Is(err, ErrClosed) {
		t.Errorf("open question: err = %v, want ErrClosed", err)
	}
	if _, err := h.bot.Choose(context.Background(), milkQuestion()); !errors.Is(err, ErrClosed) {
		t.Errorf("Choose after Close: %v", err)
	}
	if err := h.bot.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestPing(t *testing.T) {
	h := newHarness(t)
	res := async(func() (PingResult, error) { return h.bot.Ping(h.ctx(), time.Minute) })
	m := h.waitText("Test message from gemini-supply", "1 minute")
	h.fake.SendText(otherChat, "hello from the wrong chat")
	h.fake.SendText(testChat, "hello")
	r, err := await(t, res)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "hello" || r.Button || len(r.IgnoredChats) != 1 || r.IgnoredChats[0] != otherChat {
		t.Errorf("Ping = %+v", r)
	}
	h.waitText("✅ Received")
	if m.Keyboard == nil {
		t.Error("the test message has no button")
	}

	res = async(func() (PingResult, error) { return h.bot.Ping(h.ctx(), time.Minute) })
	second, err := h.fake.WaitMessage(h.ctx(), func(x faketg.Message) bool {
		return x.ID != m.ID && strings.Contains(x.Text, "Test message from gemini-supply")
	})
	if err != nil {
		t.Fatal(err)
	}
	press(h, second, "Got it")
	if r, err := await(t, res); err != nil || !r.Button {
		t.Errorf("Ping by button = %+v, %v", r, err)
	}
}

func TestPingTimeoutNamesOtherChats(t *testing.T) {
	h := newHarness(t)
	// The wait is the scenario (nobody answers); it is long enough for the
	// other chat's message, sent at once, to be seen before it ends.
	res := async(func() (PingResult, error) { return h.bot.Ping(h.ctx(), 5*time.Second) })
	h.waitText("Test message from gemini-supply")
	h.fake.SendText(otherChat, "it's me")
	waitLog(t, h.logs, "ignoring Telegram messages from a chat")
	_, err := await(t, res)
	if !errors.Is(err, ErrNoReply) || !strings.Contains(err.Error(), fmt.Sprint(otherChat)) || !strings.Contains(err.Error(), "telegram_chat_id") {
		t.Fatalf("err = %v; want ErrNoReply naming chat %d", err, otherChat)
	}
}

func TestInterpretChoice(t *testing.T) {
	msg := func(s string) tgbotapi.Update {
		return tgbotapi.Update{Message: &tgbotapi.Message{Text: s, Chat: &tgbotapi.Chat{ID: testChat}}}
	}
	const qmsg = 77 // the question's message
	cbOn := func(msgID int, d string) tgbotapi.Update {
		return tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{ID: "1", Data: d,
			Message: &tgbotapi.Message{MessageID: msgID, Chat: &tgbotapi.Chat{ID: testChat}}}}
	}
	cb := func(d string) tgbotapi.Update { return cbOn(qmsg, d) }
	edited := func(s string) tgbotapi.Update {
		return tgbotapi.Update{EditedMessage: &tgbotapi.Message{Text: s, Chat: &tgbotapi.Chat{ID: testChat}, EditDate: 1}}
	}
	const again = "Please choose 1–6, or describe what you want."

	tests := []struct {
		name     string
		u        tgbotapi.Update
		awaiting bool
		answer   *choice.Answer
		askText  bool
		say      string
	}{
		{"number", msg("2"), false, &choice.Answer{Kind: choice.KindProduct, Index: 1}, false, ""},
		{"hash number", msg("#3."), false, &choice.Answer{Kind: choice.KindProduct, Index: 2}, false, ""},
		{"nothing number", msg("4"), false, &choice.Answer{Kind: choice.KindNothing}, false, ""},
		{"something else number", msg("5"), false, nil, true, ""},
		{"skip this week number", msg("6"), false, &choice.Answer{Kind: choice.KindSkip}, false, ""},
		{"skip this week button", cb("q.1|w"), false, &choice.Answer{Kind: choice.KindSkip}, false, ""},
		{"too big", msg("7"), false, nil, false, again},
		{"zero", msg("0"), false, nil, false, again},
		{"negative", msg("-1"), false, nil, false, again},
		{"skip word", msg("Skip"), false, &choice.Answer{Kind: choice.KindSkip}, false, ""},
		{"nothing word", msg("nothing"), false, &choice.Answer{Kind: choice.KindNothing}, false, ""},
		{"custom", msg("oat milk"), false, &choice.Answer{Kind: choice.KindCustom, Text: "oat milk"}, false, ""},
		{"awaiting: number is text", msg("2"), true, &choice.Answer{Kind: choice.KindCustom, Text: "2"}, false, ""},
		{"empty", msg("  "), false, nil, false, "Please reply with a number or describe what you want."},
		{"button", cb("q.1|p|0"), false, &choice.Answer{Kind: choice.KindProduct, Index: 0}, false, ""},
		{"star", cb("q.1|s|2"), false, &choice.Answer{Kind: choice.KindProduct, Index: 2, Remember: true}, false, ""},
		{"star out of range", cb("q.1|s|3"), false, nil, false, ""},
		{"other question", cb("q.0|p|0"), false, nil, false, ""},
		{"garbage", cb("zzz"), false, nil, false, ""},
		{"nothing", cb("q.1|n"), false, &choice.Answer{Kind: choice.KindNothing}, false, ""},
		{"custom button", cb("q.1|c"), false, nil, true, ""},
		// Every number that is not an option's is asked again, never searched for.
		{"huge", msg("99999999999999999999999"), false, nil, false, again},
		{"decimal", msg("1.5"), false, nil, false, again},
		{"decimal comma", msg("1,5"), false, nil, false, again},
		{"whole decimal", msg("2.0"), false, nil, false, again},
		{"negative two", msg("-2"), false, nil, false, again},
		{"unicode minus", msg("−2"), false, nil, false, again},
		{"plus", msg("+2"), false, &choice.Answer{Kind: choice.KindProduct, Index: 1}, false, ""},
		{"leading zero", msg("02"), false, &choice.Answer{Kind: choice.KindProduct, Index: 1}, false, ""},
		{"exponent", msg("1e3"), false, nil, false, again},
		{"grouped", msg("1 000"), false, nil, false, again},
		{"arabic digit", msg("٣"), false, nil, false, again},
		{"hash decimal", msg("#1.5"), false, nil, false, again},
		{"a quantity is text", msg("2 liters"), false, &choice.Answer{Kind: choice.KindCustom, Text: "2 liters"}, false, ""},
		{"awaiting: a decimal is text", msg("1.5"), true, &choice.Answer{Kind: choice.KindCustom, Text: "1.5"}, false, ""},
		// Buttons count only on the question's own message.
		{"button on another message", cbOn(qmsg+1, "q.1|p|0"), false, nil, false, ""},
		{"button without a message", tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{ID: "1", Data: "q.1|p|0", InlineMessageID: "x"}}, false, nil, false, ""},
		// Edits are never answers.
		{"edited number", edited("2"), false, nil, false, editedHint(messages.Catalog{})},
		{"edited text", edited("oat milk"), true, nil, false, editedHint(messages.Catalog{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := interpretChoice(messages.Catalog{}, "q.1", qmsg, tt.u, 3, tt.awaiting)
			if (r.answer == nil) != (tt.answer == nil) || (r.answer != nil && *r.answer != *tt.answer) {
				t.Errorf("answer = %+v, want %+v", r.answer, tt.answer)
			}
			if r.askText != tt.askText || r.say != tt.say {
				t.Errorf("askText=%v say=%q; want %v %q", r.askText, r.say, tt.askText, tt.say)
			}
		})
	}
}

// TestLongQuestionFits: many long options and a long context still make one
// valid message (the fake enforces Telegram's limits).
func TestLongQuestionFits(t *testing.T) {
	h := newHarness(t)
	q := choice.Question{ItemName: "cheese", Context: strings.Repeat("context ", 400)}
	for i := range 25 {
		q.Options = append(q.Options, choice.Option{Name: fmt.Sprintf("%d %s", i, strings.Repeat("Very Long Cheese Name ", 20)), Price: "$9.99"})
	}
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), q) })
	m := h.waitText("Shopping for: cheese", "(showing 10 of 25 options)", "12. Something else", "13. Skip this week")
	if n := len(m.Buttons()); n != 23 {
		t.Errorf("%d buttons, want 23", n)
	}
	h.fake.SendText(testChat, "10")
	if a, err := await(t, res); err != nil || a.Index != 9 {
		t.Fatalf("%+v, %v", a, err)
	}
}

func TestDiscoverChat(t *testing.T) {
	fake := faketg.NewServer(testToken)
	defer fake.Close()
	fake.SendText(555, "hi bot") // sent before the command started
	o := Options{Token: testToken, Endpoint: fake.Endpoint(), Logger: newTestLogger(&syncbuf.Buffer{})}
	c, err := DiscoverChat(context.Background(), o, hang)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != 555 || c.Name != "User" || c.Text != "hi bot" {
		t.Errorf("chat = %+v", c)
	}
	if len(fake.Messages()) != 0 {
		t.Errorf("discovery sent messages: %+v", fake.Messages())
	}

	quiet := faketg.NewServer(testToken)
	defer quiet.Close()
	o.Endpoint = quiet.Endpoint()
	_, err = DiscoverChat(context.Background(), o, 300*time.Millisecond)
	if !errors.Is(err, ErrNoReply) || !strings.Contains(err.Error(), "@"+quiet.BotUserName()) {
		t.Errorf("no message: %v", err)
	}
	quiet.SetFailure(faketg.Mode401)
	if _, err := DiscoverChat(context.Background(), o, time.Second); !errors.Is(err, ErrUnavailable) {
		t.Errorf("bad token: %v", err)
	}
}
