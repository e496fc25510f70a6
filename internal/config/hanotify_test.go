package config

import (
	"slices"
	"strings"
	"testing"
)

// ha_notify is a list: a YAML list, one comma-separated value (file or
// environment), each a companion app notify service, and it needs Home
// Assistant.
func TestHANotify(t *testing.T) {
	const ha = "home_assistant_url: http://ha:8123\nhome_assistant_token: t\n"
	tests := []struct {
		name    string
		s       setup
		want    []string
		wantErr string // a substring of the validation error
	}{
		{"yaml list", setup{userFile: ha + "ha_notify:\n  - notify.mobile_app_pixel_8\n  - mobile_app_ipad\n"}, []string{"notify.mobile_app_pixel_8", "mobile_app_ipad"}, ""},
		{"comma-separated value", setup{userFile: ha + "ha_notify: notify.mobile_app_a, notify.mobile_app_b\n"}, []string{"notify.mobile_app_a", "notify.mobile_app_b"}, ""},
		{"environment", setup{userFile: ha, env: fakeEnv{"GEMINI_SUPPLY_HA_NOTIFY": "notify.mobile_app_a,notify.mobile_app_b"}}, []string{"notify.mobile_app_a", "notify.mobile_app_b"}, ""},
		{"empty list", setup{userFile: ha + "ha_notify: []\n"}, nil, ""},
		{"not a companion app", setup{userFile: ha + "ha_notify: [notify.telegram]\n"}, nil, `"notify.telegram" is not a companion app notify service`},
		{"without Home Assistant", setup{userFile: "ha_notify: [notify.mobile_app_a]\n"}, nil, "ha_notify: needs Home Assistant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := tt.s.load(t)
			if err != nil {
				t.Fatal(err)
			}
			verr := cfg.ValidateFor(0)
			if tt.wantErr != "" {
				if verr == nil || !strings.Contains(verr.Error(), tt.wantErr) {
					t.Fatalf("validation error %v, want one with %q", verr, tt.wantErr)
				}
				return
			}
			if verr != nil {
				t.Fatal(verr)
			}
			if !slices.Equal(cfg.HANotify, tt.want) {
				t.Errorf("ha_notify = %q, want %q", cfg.HANotify, tt.want)
			}
		})
	}
}
