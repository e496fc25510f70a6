package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/takeover"
)

// TestNeedsYouNotice: a sign-in tab offered to a person raises Home
// Assistant's "Needs you: sign in" notification, in the household's
// language, pointing to the panel.
func TestNeedsYouNotice(t *testing.T) {
	f, err := fakeha.Start(fakeha.Options{Token: "ha-token"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := homeassistant.Dial(ctx, homeassistant.Options{URL: f.URL(), Token: config.Secret("ha-token")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for _, tc := range []struct{ lang, title, body string }{
		{"en", "Needs you: sign in", "panel"},
		{"fr", "On a besoin de vous : connexion", "panneau"},
	} {
		NeedsYouNotice(config.Config{Language: tc.lang}, c, testLogger(t))(takeover.Need{Tab: "t1", Reason: takeover.ReasonSignIn})
		n, ok := f.Notifications()[needsYouID]
		if !ok || n.Title != tc.title || !strings.Contains(n.Message, tc.body) {
			t.Fatalf("%s: notification %+v (%v)", tc.lang, n, ok)
		}
	}
}
