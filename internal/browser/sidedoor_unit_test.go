package browser

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSideDoorSwitchesAndPrefs: the Chromium switches and profile
// preferences that keep WebRTC, QUIC and DNS prediction from going around
// the policy proxy are each kept on purpose, although either of the WebRTC
// pair alone stops a page's STUN/TURN packets (TestNoSideDoors stays green
// without one of them). Removing any must fail a test: this one, without a
// browser. The preferences are checked as scrubProfile writes them, over a
// profile whose own preferences say otherwise.
func TestSideDoorSwitchesAndPrefs(t *testing.T) {
	// The full browser knows only the first WebRTC spelling, the headless
	// shell (browserExecutable) only the second: a page's STUN packets
	// reached a UDP listener under the shell without it (TestNoSideDoors).
	for _, want := range []string{
		"--webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--disable-quic",
	} {
		if !slices.Contains(LaunchArgs, want) {
			t.Errorf("LaunchArgs lack %s", want)
		}
	}
	var features []string
	for _, a := range LaunchArgs {
		if f, ok := strings.CutPrefix(a, "--disable-features="); ok {
			features = strings.Split(f, ",") // Chromium keeps only the last one
		}
	}
	for _, want := range []string{"Prerender2", "SpeculationRulesPrefetchFuture"} {
		if !slices.Contains(features, want) {
			t.Errorf("--disable-features lacks %s: %v", want, features)
		}
	}

	dir := t.TempDir()
	def := filepath.Join(dir, "Default")
	if err := os.MkdirAll(def, 0o700); err != nil {
		t.Fatal(err)
	}
	own := `{"webrtc":{"ip_handling_policy":"default","multiple_routes_enabled":true},"net":{"network_prediction_options":0},"keep":1}`
	if err := os.WriteFile(filepath.Join(def, "Preferences"), []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := scrubProfile(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(def, "Preferences"))
	if err != nil {
		t.Fatal(err)
	}
	var prefs struct {
		WebRTC struct {
			IPHandlingPolicy string `json:"ip_handling_policy"`
		} `json:"webrtc"`
		Net struct {
			NetworkPredictionOptions *int `json:"network_prediction_options"`
		} `json:"net"`
		Keep int `json:"keep"`
	}
	if err := json.Unmarshal(b, &prefs); err != nil {
		t.Fatalf("Preferences: %v", err)
	}
	if prefs.WebRTC.IPHandlingPolicy != "disable_non_proxied_udp" {
		t.Errorf("webrtc.ip_handling_policy = %q, want disable_non_proxied_udp", prefs.WebRTC.IPHandlingPolicy)
	}
	if p := prefs.Net.NetworkPredictionOptions; p == nil || *p != 2 {
		t.Errorf("net.network_prediction_options is not 2 (never): %s", b)
	}
	if prefs.Keep != 1 {
		t.Errorf("the profile's other preferences were lost: %s", b)
	}
}
