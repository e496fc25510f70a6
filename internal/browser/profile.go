package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
)

// profileStores are the files of a Chromium profile that hold what a
// person typed into forms: "Web Data" keeps autocomplete entries (the
// store username typed at login), addresses and cards (and the search
// engine list, which Chromium recreates with its defaults); "Login Data"
// keeps saved passwords. None of it is needed to shop, so it is deleted
// before every launch rather than edited (editing would need a SQLite
// library); the session's cookies live elsewhere ("Cookies") and survive.
var profileStores = []string{
	"Web Data", "Web Data-journal", "Web Data-wal", "Web Data-shm",
	"Login Data", "Login Data-journal", "Login Data-wal", "Login Data-shm",
	"Login Data For Account", "Login Data For Account-journal", "Login Data For Account-wal", "Login Data For Account-shm",
}

// profilePrefs are the Chromium preferences written into the profile
// before every launch: no autocomplete or autofill (addresses, cards), no
// password saving or auto sign-in, no preloading of pages (prefetch
// and prerender, "net.network_prediction_options": 2 = never), and WebRTC
// only through the proxy ("webrtc.ip_handling_policy", the same as the
// --webrtc-ip-handling-policy switch in LaunchArgs: either alone stops a
// page's STUN/TURN packets, TestNoSideDoors).
var profilePrefs = map[string]map[string]any{
	"webrtc":   {"ip_handling_policy": "disable_non_proxied_udp"},
	"autofill": {"enabled": false, "profile_enabled": false, "credit_card_enabled": false},
	"profile":  {"password_manager_enabled": false},
	"net":      {"network_prediction_options": 2},
}

// profileTopPrefs are the top-level keys of the same preferences.
var profileTopPrefs = map[string]any{
	"credentials_enable_service":    false,
	"credentials_enable_autosignin": false,
}

// scrubProfile removes the stored form data of the profile in dir and
// writes the preferences that keep new data from being stored.
func scrubProfile(dir string) error {
	def := filepath.Join(dir, "Default")
	for _, name := range profileStores {
		if err := os.Remove(filepath.Join(def, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing saved form data from the browser profile (%s): %w", name, err)
		}
	}
	if err := os.MkdirAll(def, 0o700); err != nil {
		return fmt.Errorf("creating the browser profile: %w", err)
	}
	prefsPath := filepath.Join(def, "Preferences")
	prefs := map[string]any{}
	if b, err := os.ReadFile(prefsPath); err == nil {
		if err := json.Unmarshal(b, &prefs); err != nil {
			// Chromium would reset an unreadable file anyway.
			prefs = map[string]any{}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading the browser profile's preferences: %w", err)
	}
	for group, kv := range profilePrefs {
		m, _ := prefs[group].(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		for k, v := range kv {
			m[k] = v
		}
		prefs[group] = m
	}
	for k, v := range profileTopPrefs {
		prefs[k] = v
	}
	b, err := json.Marshal(prefs)
	if err != nil {
		return fmt.Errorf("encoding the browser profile's preferences: %w", err)
	}
	if err := atomicfile.Write(prefsPath, b, 0o600); err != nil {
		return fmt.Errorf("writing the browser profile's preferences: %w", err)
	}
	return nil
}
