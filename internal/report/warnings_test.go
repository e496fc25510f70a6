package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/messages"
)

// TestSummaryWarningsInFrench: the summary's warnings made by the
// catalogue (the cart review's, an item's, Stop's) are said in French in
// the French summary — no English sentence left — and in English as they
// were; a warning appended as a plain string (an old journal) is said as
// written, at its own place.
func TestSummaryWarningsInFrench(t *testing.T) {
	fr := messages.For("fr")
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s := Summary{RunID: "r1", StartedAt: start, FinishedAt: start.Add(time.Minute), Items: []ItemResult{}}
	s.Warnings = append(s.Warnings, "Plain old text.")
	s.Warn(messages.Say("warning.missing", "item", "lait", "product", "Lait 2 %, 5,49 $"))
	s.Warn(messages.Say("warning.cart_gained", "n", 2, "product", "Beurre"))
	about := messages.Say("warning.tab_added_ended", "n", 1, "id", "beurre-454g", "outcome", "@warning.outcome_not_found")
	about.About = "beurre"
	s.Warn(about)
	notAsked := messages.Say(NotAskedKey)
	notAsked.About = "œufs"
	s.Warn(notAsked)
	s.Warn(messages.Say("warning.run_stopped"))
	s.Warn(messages.Say("warning.cart_unchecked", "why", "délai dépassé"))

	// Kept through JSON (the journal, the panel) and the bounds.
	b, err := json.Marshal(s.Bounded())
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.WarningTexts) != len(back.Warnings) {
		t.Fatalf("%d warnings, %d texts", len(back.Warnings), len(back.WarningTexts))
	}
	said := back.WarningsIn(fr)
	if said[0] != "Plain old text." {
		t.Errorf("the plain warning said %q", said[0])
	}
	for i, w := range said[1:] {
		if left := fr.Foreign(w); len(left) > 0 || w == back.Warnings[i+1] {
			t.Errorf("warning %q in French: %q (English left: %q)", back.Warnings[i+1], w, left)
		}
	}
	if !strings.HasPrefix(said[3], "beurre: ") || !strings.Contains(said[3], "introuvable") || !strings.HasPrefix(said[4], "œufs: ") {
		t.Errorf("the item warnings said %q, %q", said[3], said[4])
	}
	md := back.MarkdownIn(fr)
	if left := fr.Foreign(md); len(left) > 0 {
		t.Errorf("English left in the French summary: %q\n%s", left, md)
	}
	// In English the warnings read as they always did.
	for i, w := range back.WarningsIn(messages.For("en")) {
		if w != back.Warnings[i] {
			t.Errorf("English warning said %q, kept %q", w, back.Warnings[i])
		}
	}
	if !strings.Contains(back.Markdown(), "beurre: This item's tab added 1 × product beurre-454g to the cart although the item ended not found") {
		t.Errorf("the English summary:\n%s", back.Markdown())
	}
}
