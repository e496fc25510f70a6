package addon

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/config"
)

// rangeText finds "1–8", "10s–24h", "0–1000", "1.5–2" in prose.
var rangeText = regexp.MustCompile(`\b(\d+(?:\.\d+)?[smh]?)–(\d+(?:\.\d+)?[smh]?)\b`)

// schemaRange reads int(1,8) / float(0,1000) (optionally ending in ?).
var schemaRange = regexp.MustCompile(`^(int|float)(?:\((-?[0-9.]*),(-?[0-9.]*)\))?\??$`)

// tableRow returns the row of a Markdown table whose first cell is `key`,
// or "" when there is none.
func tableRow(doc, key string) string {
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "| `"+key+"` |") {
			return line
		}
	}
	return ""
}

// The Go validation (config.Limits) is the one source of truth for option
// ranges: the add-on schema, its translations, DOCS.md and
// docs/configuration.md say the same, and say no other range.
func TestOptionRangesAgreeWithGo(t *testing.T) {
	m := loadManifest(t)
	trs := map[string]translation{}
	for _, f := range translationFiles(t) {
		var tr translation
		decodeYAML(t, f, &tr)
		trs[f] = tr
	}
	configuration := string(readFile(t, "docs/configuration.md"))
	addonDocs := string(readFile(t, "DOCS.md"))

	for _, l := range config.Limits() {
		// docs/configuration.md documents every option.
		row := tableRow(configuration, l.Key)
		if row == "" {
			t.Errorf("docs/configuration.md has no row for %s", l.Key)
		} else if !strings.Contains(row, l.Text()) {
			t.Errorf("docs/configuration.md row %s does not say its range %s:\n%s", l.Key, l.Text(), row)
		}

		typ, isOption := m.Schema[l.Key]
		if !isOption {
			continue
		}
		s, _ := typ.(string)
		switch {
		case l.IsDuration():
			// The schema cannot bound a duration; it must accept the
			// range's ends and the default, and Go refuses the rest.
			re := regexp.MustCompile(`^match\((.+)\)\??$`).FindStringSubmatch(s)
			if re == nil {
				t.Errorf("schema %s: %q, want a match(…) for durations", l.Key, s)
				break
			}
			pat := regexp.MustCompile(re[1])
			for _, v := range []string{l.Format(l.Min), l.Format(l.Max), fmt.Sprint(m.Options[l.Key])} {
				if !pat.MatchString(v) {
					t.Errorf("schema %s: %q refuses %q, which Go accepts", l.Key, s, v)
				}
			}
		default:
			g := schemaRange.FindStringSubmatch(s)
			want := "float"
			if l.IsInt() {
				want = "int"
			}
			if g == nil || g[1] != want || g[2] == "" || g[3] == "" {
				t.Errorf("schema %s: %q, want %s(%s,%s)", l.Key, s, want, l.Format(l.Min), l.Format(l.Max))
				break
			}
			lo, _ := strconv.ParseFloat(g[2], 64)
			hi, _ := strconv.ParseFloat(g[3], 64)
			if lo != l.Min || hi != l.Max {
				t.Errorf("schema %s: %q, but Go validates %s", l.Key, s, l.Text())
			}
		}
		// The add-on's default is inside the range.
		if d, ok := m.Options[l.Key].(int); ok && (float64(d) < l.Min || float64(d) > l.Max) {
			t.Errorf("option %s default %d is outside %s", l.Key, d, l.Text())
		}
		// DOCS.md (the add-on's Documentation tab) says the range.
		if row := tableRow(addonDocs, l.Key); !strings.Contains(row, l.Text()) {
			t.Errorf("DOCS.md row %s does not say its range %s:\n%s", l.Key, l.Text(), row)
		}
	}

	// No schema entry has a range Go does not have.
	for key, typ := range m.Schema {
		s, _ := typ.(string)
		g := schemaRange.FindStringSubmatch(s)
		if g == nil {
			continue
		}
		if _, ok := config.LimitOf(key); ok {
			continue
		}
		if _, ok := config.UnlimitedNumber(key); ok && g[2] == "" && g[3] == "" {
			continue
		}
		t.Errorf("schema %s is numeric (%q) but internal/config has no range for it", key, s)
	}

	// Every range written anywhere belongs to a limited option and is its
	// range: a stale "1–200" cannot survive.
	check := func(where, key, text string) {
		for _, r := range rangeText.FindAllString(text, -1) {
			l, ok := config.LimitOf(key)
			if !ok {
				t.Errorf("%s %s mentions the range %s, but Go has no range for %s", where, key, r, key)
				continue
			}
			if r != l.Text() {
				t.Errorf("%s %s says %s, Go validates %s", where, key, r, l.Text())
			}
		}
	}
	for _, doc := range []struct{ name, text string }{{"docs/configuration.md", configuration}, {"DOCS.md", addonDocs}} {
		for _, line := range strings.Split(doc.text, "\n") {
			if g := regexp.MustCompile("^\\| `([a-z0-9_]+)` \\|").FindStringSubmatch(line); g != nil {
				check(doc.name+" row", g[1], line)
			}
		}
	}
	for f, tr := range trs {
		for key, e := range tr.Configuration {
			check(f, key, e.Description)
		}
	}
}

// exitCodeRow reads the exit-code table of docs/configuration.md.
var exitCodeRow = regexp.MustCompile("(?m)^\\| `(\\d)` \\| (.+) \\|$")

// The exit codes docs/configuration.md documents are the ones the binary
// returns: 0 for -h, help and version; 1 when a command cannot do its work;
// 2 for a bad command line or configuration, for every command that loads
// one (serve included). And no doc says otherwise.
func TestDocumentedExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	doc := string(readFile(t, "docs/configuration.md"))
	_, section, ok := strings.Cut(doc, "\n## Exit codes\n")
	if !ok {
		t.Fatal("docs/configuration.md has no ## Exit codes section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[int]string{}
	for _, g := range exitCodeRow.FindAllStringSubmatch(section, -1) {
		code, _ := strconv.Atoi(g[1])
		documented[code] = g[2]
	}
	if len(documented) != 3 || documented[0] == "" || documented[1] == "" || documented[2] == "" {
		t.Fatalf("exit-code table = %v, want rows for 0, 1 and 2", documented)
	}
	// No other doc contradicts the table.
	contradiction := regexp.MustCompile(`(?i)exits? (with )?(code )?1 (on|for|when)[^.|]*(bad|invalid|wrong) config`)
	for _, f := range []string{"README.md", "DOCS.md", "docs/configuration.md", "docs/shopping-run.md", "docs/homeassistant.md", "docs/telegram.md"} {
		if loc := contradiction.FindString(string(readFile(t, f))); loc != "" {
			t.Errorf("%s says %q; a bad configuration exits 2", f, loc)
		}
	}

	bin := buildBinary(t)
	home := t.TempDir()
	badFile := filepath.Join(home, "bad.yaml")
	if err := os.WriteFile(badFile, []byte("concurency: 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, env []string, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(home, "xdg"), "XDG_DATA_HOME=" + filepath.Join(home, "data")}, env...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0, string(out)
		case errors.As(err, &ee):
			return ee.ExitCode(), string(out)
		}
		t.Fatalf("%v: %v", args, err)
		return -1, ""
	}

	// The commands, as the binary lists them.
	_, help := run(t, nil, "help")
	_, list, _ := strings.Cut(help, "Commands:\n")
	var commands []string
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			break
		}
		if f[0] != "help" {
			commands = append(commands, f[0])
		}
	}
	if len(commands) < 5 {
		t.Fatalf("commands from help: %q", commands)
	}
	// Commands that validate the whole configuration (the table says which).
	validating := []string{"shop", "serve", "demo", "login"}
	for _, c := range validating {
		if !strings.Contains(documented[2], "`"+c+"`") {
			t.Errorf("exit code 2 row does not name %s, which checks the whole configuration: %s", c, documented[2])
		}
	}
	creds := []string{"GEMINI_API_KEY=k", "GEMINI_SUPPLY_METRO_USERNAME=me@example.com", "GEMINI_SUPPLY_METRO_PASSWORD=p"}

	type probe struct {
		name string
		env  []string
		args []string
		want int
	}
	var probes []probe
	for _, c := range commands {
		probes = append(probes,
			probe{c + " -h", nil, []string{c, "-h"}, 0},
			probe{c + " unknown flag", nil, []string{c, "--no-such-flag"}, 2},
		)
		if c != "version" && c != "demo" {
			probes = append(probes, probe{c + " unknown config key", nil, []string{c, "--config", badFile}, 2})
		}
	}
	for _, c := range validating {
		args := []string{c}
		probes = append(probes,
			probe{c + " NaN price", append(creds, "GEMINI_SUPPLY_GEMINI_INPUT_PRICE_PER_MTOK=NaN"), args, 2},
			probe{c + " viewport out of range", append(creds, "GEMINI_SUPPLY_VIEWPORT_WIDTH=100000"), args, 2},
		)
	}
	probes = append(probes,
		probe{"help", nil, []string{"help"}, 0},
		probe{"version", nil, []string{"version"}, 0},
		probe{"unknown command", nil, []string{"shpo"}, 2},
		probe{"shop a missing list", nil, []string{"shop", "--dry-run", "--shopping-list", filepath.Join(home, "missing.yaml")}, 1},
		probe{"serve out-of-range concurrency", creds, []string{"serve", "--concurrency", "20"}, 2},
	)
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			code, out := run(t, p.env, p.args...)
			if code != p.want {
				t.Errorf("%v exited %d, want %d (documented: %s)\n%s", p.args, code, p.want, documented[p.want], out)
			}
		})
	}
}
