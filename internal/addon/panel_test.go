package addon

import "testing"

// The panel is for the household, not only for administrators: members
// answer the run's questions there (panel_admin defaults to true, which
// hides the panel from every other user).
func TestPanelIsEveryUsers(t *testing.T) {
	var m struct {
		PanelAdmin *bool `yaml:"panel_admin"`
	}
	decodeYAML(t, "config.yaml", &m)
	if m.PanelAdmin == nil || *m.PanelAdmin {
		t.Fatal("config.yaml must set panel_admin: false, or the household's members never see the panel")
	}
}
