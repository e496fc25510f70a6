package addon

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/panel"
)

// repoRoot is the repository's top directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return b
}

// decodeYAML decodes rel into v, failing the test with the file name on error.
func decodeYAML(t *testing.T, rel string, v any) {
	t.Helper()
	if err := yaml.Unmarshal(readFile(t, rel), v); err != nil {
		t.Fatalf("%s is not valid YAML: %v", rel, err)
	}
}

type manifest struct {
	Name             string         `yaml:"name"`
	Version          string         `yaml:"version"`
	Slug             string         `yaml:"slug"`
	Description      string         `yaml:"description"`
	URL              string         `yaml:"url"`
	Arch             []string       `yaml:"arch"`
	Init             *bool          `yaml:"init"`
	Startup          string         `yaml:"startup"`
	Boot             string         `yaml:"boot"`
	HomeassistantAPI bool           `yaml:"homeassistant_api"`
	HassioAPI        bool           `yaml:"hassio_api"`
	Stdin            bool           `yaml:"stdin"`
	Ingress          bool           `yaml:"ingress"`
	IngressPort      int            `yaml:"ingress_port"`
	PanelIcon        string         `yaml:"panel_icon"`
	PanelTitle       string         `yaml:"panel_title"`
	Ports            map[string]any `yaml:"ports"`
	Services         []string       `yaml:"services"`
	Map              []string       `yaml:"map"`
	Options          map[string]any `yaml:"options"`
	Schema           map[string]any `yaml:"schema"`
}

func loadManifest(t *testing.T) manifest {
	t.Helper()
	var m manifest
	decodeYAML(t, "config.yaml", &m)
	return m
}

func TestManifest(t *testing.T) {
	m := loadManifest(t)
	checks := []struct {
		what string
		ok   bool
	}{
		{"name set", m.Name != ""},
		{"slug gemini_supply", m.Slug == "gemini_supply"},
		{"description set", m.Description != ""},
		{"url set", strings.HasPrefix(m.URL, "https://")},
		{"arch aarch64+amd64", slices.Equal(m.Arch, []string{"aarch64", "amd64"})},
		{"init: false (s6-overlay v3 is PID 1)", m.Init != nil && !*m.Init},
		{"startup application", m.Startup == "application"},
		{"boot auto", m.Boot == "auto"},
		{"homeassistant_api", m.HomeassistantAPI},
		{"hassio_api", m.HassioAPI},
		{"stdin (hassio.addon_stdin trigger)", m.Stdin},
		{"services mqtt:want", slices.Contains(m.Services, "mqtt:want")},
		{"map addon_config:rw", slices.Contains(m.Map, "addon_config:rw")},
		{"version is semver", regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(m.Version)},
		// The panel (internal/panel) through Home Assistant's ingress, and
		// no port of it published on the host.
		{"ingress: true", m.Ingress},
		{"ingress_port is the panel's", m.IngressPort == panel.IngressPort},
		{"panel_icon is an mdi icon", regexp.MustCompile(`^mdi:[a-z0-9-]+$`).MatchString(m.PanelIcon)},
		{"panel_title set", m.PanelTitle != ""},
		{"the panel's port not published", m.Ports[fmt.Sprintf("%d/tcp", panel.IngressPort)] == nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("config.yaml: %s", c.what)
		}
	}
}

// The version in config.yaml is the newest released version in CHANGELOG.md.
func TestVersionMatchesChangelog(t *testing.T) {
	m := loadManifest(t)
	re := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`)
	match := re.FindSubmatch(readFile(t, "CHANGELOG.md"))
	if match == nil {
		t.Fatal("CHANGELOG.md has no released version heading (## [x.y.z] - date)")
	}
	if got := string(match[1]); got != m.Version {
		t.Errorf("config.yaml version %q, CHANGELOG.md newest release %q: bump both together", m.Version, got)
	}
}

// schemaTypes are the add-on schema types this manifest may use.
var schemaType = regexp.MustCompile(`^(str|bool|email|url|password|port|int(\(\d*,\d*\))?|float(\([0-9.]*,[0-9.]*\))?|list\([^)]+\)|match\(.+\))\??$`)

// notOptions are Config keys that are deliberately not add-on options, with why.
var notOptions = map[string]string{
	"gemini_base_url":              "developer setting: points the client at a fake or proxy",
	"gemini_input_price_per_mtok":  "cost estimate tuning; sensible defaults",
	"gemini_output_price_per_mtok": "cost estimate tuning; sensible defaults",
	"browser_executable":           "fixed in the image (GEMINI_SUPPLY_BROWSER_EXECUTABLE)",
	"browser_headless":             "the add-on has no display",
	"browser_profile_dir":          "fixed under /config (addon_config map)",
	"browser_remote_url":           "advanced: remote Chromium; env GEMINI_SUPPLY_BROWSER_REMOTE_URL",
	"viewport_width":               "the planner and prompts are tuned for the default",
	"viewport_height":              "the planner and prompts are tuned for the default",
	"data_dir":                     "fixed: /data in the add-on",
	"shopping_list":                "the add-on shops the Home Assistant to-do list (todo_entity)",
	"telegram_api_endpoint":        "developer setting: points the bot at a fake",
	"home_assistant_url":           "the add-on reaches Home Assistant through the Supervisor",
	"home_assistant_token":         "the add-on uses SUPERVISOR_TOKEN",
	"mqtt_discovery_prefix":        "Home Assistant's default (homeassistant) is assumed",
}

// configKeys lists the yaml keys of config.Config.
func configKeys(t *testing.T) []string {
	t.Helper()
	var keys []string
	ty := reflect.TypeOf(config.Config{})
	for i := range ty.NumField() {
		tag := strings.Split(ty.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		keys = append(keys, tag)
	}
	return keys
}

// translationFiles are the add-on's translations: English, French and any
// other translations/*.yaml.
func translationFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "translations", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, "translations/"+filepath.Base(f))
	}
	for _, want := range []string{"translations/en.yaml", "translations/fr.yaml"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is missing", want)
		}
	}
	return names
}

type translation struct {
	Configuration map[string]struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	} `yaml:"configuration"`
}

func TestOptionsSchemaTranslationsAndConfigAgree(t *testing.T) {
	m := loadManifest(t)
	trs := map[string]translation{}
	for _, f := range translationFiles(t) {
		var tr translation
		decodeYAML(t, f, &tr)
		trs[f] = tr
	}
	cfgKeys := configKeys(t)

	for key := range m.Options {
		if _, ok := m.Schema[key]; !ok {
			t.Errorf("option %q has no schema entry", key)
		}
		for f, tr := range trs {
			if e, ok := tr.Configuration[key]; !ok || e.Name == "" || e.Description == "" {
				t.Errorf("option %q has no name/description in %s", key, f)
			}
		}
		// A list option's translations name every choice ("auto, en or fr").
		if s, ok := m.Schema[key].(string); ok {
			if g := regexp.MustCompile(`^list\((.+)\)\??$`).FindStringSubmatch(s); g != nil {
				for f, tr := range trs {
					for _, v := range strings.Split(g[1], "|") {
						if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(tr.Configuration[key].Description) {
							t.Errorf("%s: option %q does not name its choice %q", f, key, v)
						}
					}
				}
			}
		}
		if !slices.Contains(cfgKeys, key) {
			t.Errorf("option %q is not read by internal/config (no Config field with yaml:%q)", key, key)
		}
		if why, ok := notOptions[key]; ok {
			t.Errorf("option %q is listed as not-an-option (%s)", key, why)
		}
	}
	for key, typ := range m.Schema {
		if _, ok := m.Options[key]; !ok {
			t.Errorf("schema entry %q has no option", key)
		}
		s, _ := typ.(string)
		if list, ok := typ.([]any); ok && len(list) == 1 { // a list option: [type]
			s, _ = list[0].(string)
		}
		if !schemaType.MatchString(s) {
			t.Errorf("schema entry %q: %q is not an add-on schema type", key, typ)
		}
		if strings.Contains(key, "password") || strings.Contains(key, "token") || strings.HasSuffix(key, "api_key") {
			if !strings.HasPrefix(s, "password") {
				t.Errorf("schema entry %q holds a secret and must use type password, not %q", key, s)
			}
		}
	}
	for f, tr := range trs {
		for key := range tr.Configuration {
			if _, ok := m.Options[key]; !ok {
				t.Errorf("%s: translation %q names no option", f, key)
			}
		}
	}
	for _, key := range cfgKeys {
		_, isOption := m.Options[key]
		_, excluded := notOptions[key]
		if !isOption && !excluded {
			t.Errorf("config key %q is neither an add-on option nor listed in notOptions with a reason", key)
		}
	}
	for key := range notOptions {
		if !slices.Contains(cfgKeys, key) {
			t.Errorf("notOptions names %q, which internal/config does not have", key)
		}
	}
}

// playwright-go v0.XXYY.Z requires Playwright driver 1.XX.YY; the setup
// script and the image must install exactly that.
func TestDriverVersionAgrees(t *testing.T) {
	gomod := string(readFile(t, "go.mod"))
	m := regexp.MustCompile(`github.com/playwright-community/playwright-go v0\.(\d+)(\d\d)\.\d+`).FindStringSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod does not require playwright-go v0.XXYY.Z")
	}
	want := "1." + m[1] + "." + strings.TrimPrefix(m[2], "0")
	if m[2] == "00" {
		want = "1." + m[1] + ".0"
	}
	setup := regexp.MustCompile(`PLAYWRIGHT_DRIVER_VERSION=([0-9.]+)`).FindSubmatch(readFile(t, "scripts/driver-version"))
	docker := regexp.MustCompile(`ARG PLAYWRIGHT_DRIVER_VERSION=([0-9.]+)`).FindSubmatch(readFile(t, "Dockerfile"))
	if setup == nil || string(setup[1]) != want {
		t.Errorf("scripts/driver-version: want PLAYWRIGHT_DRIVER_VERSION=%s (from go.mod), got %q", want, setup)
	}
	if docker == nil || string(docker[1]) != want {
		t.Errorf("Dockerfile: want ARG PLAYWRIGHT_DRIVER_VERSION=%s (from go.mod), got %q", want, docker)
	}
}

func TestDockerfileMatchesSetupLayout(t *testing.T) {
	d := string(readFile(t, "Dockerfile"))
	for _, want := range []string{
		"-trimpath",
		`-ldflags "-s -w -X main.version=`,
		"chromium",
		"nodejs",
		"PLAYWRIGHT_DRIVER_PATH=/opt/playwright-driver",
		"PLAYWRIGHT_NODEJS_PATH=",
		"GEMINI_SUPPLY_BROWSER_EXECUTABLE=",
		"COPY rootfs /",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	// The setup script exports the same variable names the image sets.
	setup := string(readFile(t, "scripts/setup.sh"))
	for _, name := range []string{"PLAYWRIGHT_DRIVER_PATH", "PLAYWRIGHT_NODEJS_PATH", "GEMINI_SUPPLY_BROWSER_EXECUTABLE"} {
		if !strings.Contains(setup, "export "+name+"=") {
			t.Errorf("scripts/setup.sh does not export %s", name)
		}
	}
}

func TestS6Service(t *testing.T) {
	dir := "rootfs/etc/s6-overlay/s6-rc.d/gemini-supply"
	if got := strings.TrimSpace(string(readFile(t, dir+"/type"))); got != "longrun" {
		t.Errorf("%s/type = %q, want longrun", dir, got)
	}
	for _, script := range []string{"run", "finish"} {
		p := filepath.Join(repoRoot(t), dir, script)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		if fi.Mode()&0o111 == 0 {
			t.Errorf("%s/%s is not executable", dir, script)
		}
		if !strings.HasPrefix(string(readFile(t, dir+"/"+script)), "#!") {
			t.Errorf("%s/%s has no #! line", dir, script)
		}
	}
	run := string(readFile(t, dir+"/run"))
	if !regexp.MustCompile(`(?m)^exec gemini-supply serve\b`).MatchString(run) {
		t.Errorf("%s/run must exec gemini-supply serve", dir)
	}
	if !strings.Contains(run, "/proc/1/fd/0") {
		t.Errorf("%s/run must attach the container's stdin (/proc/1/fd/0) for hassio.addon_stdin", dir)
	}
	if _, err := os.Stat(filepath.Join(repoRoot(t), "rootfs/etc/s6-overlay/s6-rc.d/user/contents.d/gemini-supply")); err != nil {
		t.Errorf("service not enabled in user bundle: %v", err)
	}
}

func TestIconAndLogo(t *testing.T) {
	for _, f := range []string{"icon.png", "logo.png"} {
		b := readFile(t, f)
		if len(b) < 24 || string(b[1:4]) != "PNG" {
			t.Errorf("%s is not a PNG", f)
		}
	}
	icon := readFile(t, "icon.png")
	w := int(icon[16])<<24 | int(icon[17])<<16 | int(icon[18])<<8 | int(icon[19])
	h := int(icon[20])<<24 | int(icon[21])<<16 | int(icon[22])<<8 | int(icon[23])
	if w != 128 || h != 128 {
		t.Errorf("icon.png is %dx%d, want 128x128", w, h)
	}
}

// The Supervisor only accepts a git repository as an add-on repository when
// it has repository.yaml (or .json) with a name at its root.
func TestRepositoryFile(t *testing.T) {
	var r struct {
		Name string `yaml:"name"`
		URL  string `yaml:"url"`
	}
	decodeYAML(t, "repository.yaml", &r)
	if r.Name == "" {
		t.Error("repository.yaml needs a name")
	}
	if m := loadManifest(t); r.URL != m.URL {
		t.Errorf("repository.yaml url %q differs from config.yaml url %q", r.URL, m.URL)
	}
}

// DOCS.md (the add-on's Documentation tab) has a table row for every option.
func TestDocsListEveryOption(t *testing.T) {
	docs := string(readFile(t, "DOCS.md"))
	for key := range loadManifest(t).Options {
		if !strings.Contains(docs, "| `"+key+"` |") {
			t.Errorf("DOCS.md has no table row for option %q", key)
		}
	}
}

// The images of DOCS.md are absolute (Home Assistant's Documentation tab
// has no repository to resolve a relative path against), point into this
// repository, and exist: the panel's screenshots (make panel-screenshots).
func TestDocsImagesExist(t *testing.T) {
	docs := string(readFile(t, "DOCS.md"))
	prefix := strings.Replace(loadManifest(t).URL, "https://github.com/", "https://raw.githubusercontent.com/", 1) + "/main/"
	images := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`).FindAllStringSubmatch(docs, -1)
	if len(images) < 3 {
		t.Fatalf("DOCS.md shows %d images, want the panel's three screenshots", len(images))
	}
	for _, m := range images {
		rel, ok := strings.CutPrefix(m[1], prefix)
		if !ok {
			t.Errorf("DOCS.md image %q is not under %s", m[1], prefix)
			continue
		}
		if b := readFile(t, rel); len(b) < 24 || string(b[1:4]) != "PNG" {
			t.Errorf("DOCS.md image %s is not a PNG", rel)
		}
	}
}
