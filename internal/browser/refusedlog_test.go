package browser

import (
	"bytes"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestBlockedPathIsNoAlarm: the policy stopping a page's checkout request
// (the demo's hostile widget posts to /api/checkout/place-order on every
// product page) is the policy working: not an INFO line in a run's
// redirected output, and said as what it is at debug level; it is counted.
func TestBlockedPathIsNoAlarm(t *testing.T) {
	var info, debug bytes.Buffer
	u, _ := url.Parse("https://www.metro.ca/api/checkout/place-order")
	for _, c := range []struct {
		buf   *bytes.Buffer
		level slog.Level
	}{{&info, slog.LevelInfo}, {&debug, slog.LevelDebug}} {
		h := &Host{log: slog.New(slog.NewTextHandler(c.buf, &slog.HandlerOptions{Level: c.level})), refused: map[store.Rule]int{}, refusedSeen: map[string]bool{}}
		h.noteRefused("POST", u, store.RequestVerdict{Rule: store.RuleOrder, Match: "/checkout"}, "proxy")
		if h.Refused()[store.RuleOrder] != 1 {
			t.Errorf("the refusal was not counted: %v", h.Refused())
		}
	}
	if info.Len() != 0 {
		t.Errorf("at info level: %s", info.String())
	}
	if s := debug.String(); !strings.Contains(s, "as it should") || !strings.Contains(s, "place-order") {
		t.Errorf("at debug level: %q", s)
	}
}
