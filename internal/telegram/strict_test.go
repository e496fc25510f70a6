package telegram

import (
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/choice"
	faketg "github.com/gemini-supply/gemini-supply/internal/fake/telegram"
)

// waitNth waits until n sent messages contain sub (messages are never
// removed, so the set of matches only grows).
func (h *harness) waitNth(sub string, n int) {
	h.t.Helper()
	seen := map[int]bool{}
	if _, err := h.fake.WaitMessage(h.ctx(), func(m faketg.Message) bool {
		if strings.Contains(m.Text, sub) {
			seen[m.ID] = true
		}
		return len(seen) >= n
	}); err != nil {
		h.t.Fatalf("waiting for %d messages with %q: %v\nsent: %+v", n, sub, err, h.fake.Messages())
	}
}

// A reply that is a number but not an option's number is asked again — it
// never becomes a free-text search for "99999999999999999999999".
func TestNumbersThatAreNotOptionsAreAskedAgain(t *testing.T) {
	h := newHarness(t)
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	h.waitText("Shopping for: milk")
	for i, reply := range []string{"99999999999999999999999", "1.5", "-2", "0", "7", "2.0", "1e3", "#1,5"} {
		h.fake.SendText(testChat, reply)
		h.waitNth("Please choose 1–6", i+1)
	}
	h.fake.SendText(testChat, "2")
	a, err := await(t, res)
	if err != nil || a != (choice.Answer{Kind: choice.KindProduct, Index: 1}) {
		t.Fatalf("answer = %+v, %v; want option 2 after the invalid numbers", a, err)
	}
}

// Edited messages are attributed to their own chat (never "chat 0"), and
// are never answers: an old message edited while a question is open gets a
// hint, and the question stays open.
func TestEditedMessagesAreNeverAnswers(t *testing.T) {
	h := newHarness(t)
	// Written while nothing was asked; edited later, during questions.
	_, old := h.fake.Write(testChat, "no")
	h.waitText("Nothing is waiting for your answer right now.")
	_, foreign := h.fake.Write(otherChat, "1")

	res := async(func() (bool, error) { return h.bot.Confirm(h.ctx(), "Checkout.", "click “Place order”") })
	m := h.waitText("⚠️ Safety check")
	if _, err := h.fake.EditText(otherChat, foreign, "yes"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.EditText(testChat, old, "yes"); err != nil {
		t.Fatal(err)
	}
	h.waitText("I only read new messages, not edits")
	press(h, m, "No")
	if yes, err := await(t, res); err != nil || yes {
		t.Fatalf("Confirm = %v, %v; an edit answered the confirmation", yes, err)
	}

	choose := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	h.waitText("Shopping for: milk")
	if _, err := h.fake.EditText(testChat, old, "2"); err != nil {
		t.Fatal(err)
	}
	h.waitNth("I only read new messages, not edits", 2)
	h.fake.SendText(testChat, "3")
	if a, err := await(t, choose); err != nil || a.Index != 2 {
		t.Fatalf("answer = %+v, %v; want 3 (the new message), not the edit", a, err)
	}

	logs := h.logs.String()
	if strings.Contains(logs, `"chat_id":0`) {
		t.Errorf("an update was attributed to chat 0:\n%s", logs)
	}
	if n := strings.Count(logs, `"chat_id":9999`); n != 1 {
		t.Errorf("the other chat was logged %d times, want once:\n%s", n, logs)
	}
	for _, sent := range h.fake.Messages() {
		if sent.ChatID != testChat {
			t.Errorf("sent a message to chat %d: %q", sent.ChatID, sent.Text)
		}
	}
}

// A button press counts only on the question's own message: the valid data
// of the open question, replayed on another message, is not an answer.
func TestButtonsCountOnlyOnTheirOwnMessage(t *testing.T) {
	t.Run("choose", func(t *testing.T) {
		h := newHarness(t)
		h.fake.SendText(testChat, "hi")
		other := h.waitText("Nothing is waiting for your answer right now.")
		res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
		m := h.waitText("Shopping for: milk")
		h.fake.Press(testChat, other.ID, m.Keyboard[0][0].Data) // option 1's data, on another message
		h.fake.Press(testChat, m.ID+1000, m.Keyboard[1][0].Data)
		cbs, err := h.fake.WaitCallback(h.ctx(), 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, cb := range cbs {
			if cb.Text != "This question is already closed." {
				t.Errorf("a press on another message was answered %q", cb.Text)
			}
		}
		press(h, m, "3. Lactantia")
		if a, err := await(t, res); err != nil || a.Index != 2 {
			t.Fatalf("answer = %+v, %v; want the press on the question itself", a, err)
		}
	})
	t.Run("confirm", func(t *testing.T) {
		h := newHarness(t)
		h.fake.SendText(testChat, "hi")
		other := h.waitText("Nothing is waiting for your answer right now.")
		res := async(func() (bool, error) { return h.bot.Confirm(h.ctx(), "Checkout.", "click “Place order”") })
		m := h.waitText("⚠️ Safety check")
		var yesData string
		for _, b := range m.Buttons() {
			if strings.Contains(b.Text, "Yes") {
				yesData = b.Data
			}
		}
		h.fake.Press(testChat, other.ID, yesData)
		if _, err := h.fake.WaitCallback(h.ctx(), 1); err != nil {
			t.Fatal(err)
		}
		h.fake.SendText(testChat, "no")
		if yes, err := await(t, res); err != nil || yes {
			t.Fatalf("Confirm = %v, %v; the replayed Yes was taken", yes, err)
		}
	})
	t.Run("ping", func(t *testing.T) {
		h := newHarness(t)
		h.fake.SendText(testChat, "hi")
		other := h.waitText("Nothing is waiting for your answer right now.")
		res := async(func() (PingResult, error) { return h.bot.Ping(h.ctx(), testWait) })
		m := h.waitText("Test message from gemini-supply")
		h.fake.Press(testChat, other.ID, m.Keyboard[0][0].Data)
		if cbs, err := h.fake.WaitCallback(h.ctx(), 1); err != nil || cbs[0].Text != "This question is already closed." {
			t.Fatalf("callbacks = %+v, %v", cbs, err)
		}
		h.fake.SendText(testChat, "here")
		if r, err := await(t, res); err != nil || r.Button || r.Text != "here" {
			t.Fatalf("Ping = %+v, %v; want the text reply, not the replayed button", r, err)
		}
	})
}

// Typed replies over Telegram are read as strictly as on every channel
// (issue 24): an invisible character alone is asked again (never a search
// for "\u200b"), an invisible character cannot hide a number, and a reply
// over the length limit is asked again instead of being cut.
func TestInvisibleAndOverlongRepliesAreAskedAgain(t *testing.T) {
	h := newHarness(t)
	res := async(func() (choice.Answer, error) { return h.bot.Choose(h.ctx(), milkQuestion()) })
	h.waitText("Shopping for: milk")
	h.fake.SendText(testChat, "\u200b")
	h.waitNth("Please reply with a number or describe what you want", 1)
	h.fake.SendText(testChat, "\x00\u2060")
	h.waitNth("Please reply with a number or describe what you want", 2)
	h.fake.SendText(testChat, strings.Repeat("greek yogurt ", 20)) // 260 characters
	h.waitNth("That is too long", 1)
	h.fake.SendText(testChat, "\u200b2")
	a, err := await(t, res)
	if err != nil || a != (choice.Answer{Kind: choice.KindProduct, Index: 1}) {
		t.Fatalf("answer = %+v, %v; want option 2 (\"\\u200b2\")", a, err)
	}
}
