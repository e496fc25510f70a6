package app

import (
	"context"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	fakeha "github.com/gemini-supply/gemini-supply/internal/fake/homeassistant"
	"github.com/gemini-supply/gemini-supply/internal/homeassistant"
)

// The language is the option's, or for auto Home Assistant's as get_config
// reports it, English for a language the catalogue lacks or without Home
// Assistant.
func TestLanguage(t *testing.T) {
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
	for _, tc := range []struct {
		option, ha string
		client     bool
		want       string
	}{
		{"auto", "fr", true, "fr"},
		{"auto", "fr-CA", true, "fr"},
		{"auto", "en-GB", true, "en"},
		{"auto", "de", true, "en"},
		{"auto", "", true, "en"},
		{"en", "fr", true, "en"},
		{"fr", "en", true, "fr"},
		{"fr", "", false, "fr"},
		{"auto", "fr", false, "en"},
	} {
		f.SetLanguage(tc.ha)
		cl := c
		if !tc.client {
			cl = nil
		}
		if got := Language(ctx, config.Config{Language: tc.option}, cl, nil); got != tc.want {
			t.Errorf("language %q, Home Assistant %q (connected %t): %q, want %q", tc.option, tc.ha, tc.client, got, tc.want)
		}
	}
}
