package addon

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Home Assistant retired its builder (and build.yaml) in April 2026: the
// Dockerfile alone must build the right image for every architecture the
// manifest lists, with the labels the builder used to add. There is no Docker
// engine here, so the test resolves the Dockerfile the way BuildKit does for a
// target platform: global ARGs (TARGETARCH set by BuildKit), FROM … AS stages,
// and the final stage's base followed through the stages it names.

// buildkitArch is BuildKit's TARGETARCH for each Home Assistant architecture.
var buildkitArch = map[string]string{"amd64": "amd64", "aarch64": "arm64"}

type dockerStage struct {
	name   string
	from   string // expanded
	labels map[string]string
}

// resolveDockerfile returns the final stage's base image (through named
// stages) and the labels it carries, for a build with the given build args.
func resolveDockerfile(t *testing.T, text string, buildArgs map[string]string) (string, map[string]string) {
	t.Helper()
	text = strings.ReplaceAll(text, "\\\n", " ")
	global := map[string]string{}
	var stages []*dockerStage
	expand := func(s string, vars map[string]string) string {
		return os.Expand(s, func(k string) string { return vars[k] })
	}
	stageVars := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kw, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(kw) {
		case "ARG":
			name, def, hasDef := strings.Cut(strings.TrimSpace(rest), "=")
			v, given := buildArgs[name]
			if len(stages) == 0 {
				if !given && hasDef {
					v = expand(strings.Trim(def, `"`), global)
				}
				global[name] = v
				continue
			}
			// Inside a stage: a global ARG redeclared, or a new one.
			if gv, ok := global[name]; ok && !hasDef {
				v = gv
			} else if !given && hasDef {
				v = expand(strings.Trim(def, `"`), stageVars)
			}
			stageVars[name] = v
		case "FROM":
			fields := strings.Fields(rest)
			var image, name string
			for i := 0; i < len(fields); i++ {
				f := fields[i]
				switch {
				case strings.HasPrefix(f, "--"):
				case strings.EqualFold(f, "AS") && i+1 < len(fields):
					name = fields[i+1]
					i++
				case image == "":
					image = expand(f, global)
				}
			}
			stages = append(stages, &dockerStage{name: name, from: image, labels: map[string]string{}})
			stageVars = map[string]string{}
		case "LABEL":
			if len(stages) == 0 {
				t.Fatal("Dockerfile: LABEL before the first FROM")
			}
			for _, m := range regexp.MustCompile(`([A-Za-z0-9._-]+)=("[^"]*"|\S+)`).FindAllStringSubmatch(rest, -1) {
				stages[len(stages)-1].labels[m[1]] = expand(strings.Trim(m[2], `"`), stageVars)
			}
		}
	}
	if len(stages) == 0 {
		t.Fatal("Dockerfile has no FROM")
	}
	labels := map[string]string{}
	image := ""
	for st := stages[len(stages)-1]; st != nil; {
		for k, v := range st.labels {
			if _, set := labels[k]; !set { // a later stage's label wins
				labels[k] = v
			}
		}
		image = st.from
		var next *dockerStage
		for _, s := range stages {
			if s.name != "" && s.name == st.from {
				next = s
			}
		}
		st = next
	}
	return image, labels
}

func TestDockerfileBaseForEachArch(t *testing.T) {
	m := loadManifest(t)
	dockerfile := string(readFile(t, "Dockerfile"))
	for _, arch := range m.Arch {
		t.Run(arch, func(t *testing.T) {
			target, ok := buildkitArch[arch]
			if !ok {
				t.Fatalf("no BuildKit TARGETARCH known for %s", arch)
			}
			image, labels := resolveDockerfile(t, dockerfile, map[string]string{
				"TARGETARCH":     target,
				"TARGETPLATFORM": "linux/" + target,
				"BUILD_VERSION":  m.Version,
			})
			if !strings.HasPrefix(image, "ghcr.io/home-assistant/") {
				t.Fatalf("runtime base for %s = %q, want a Home Assistant base image", arch, image)
			}
			// A per-architecture base names its architecture; a base naming
			// another one is the wrong image (a multi-arch base names none).
			for other := range buildkitArch {
				if other != arch && strings.Contains(image, "/"+other+"-") {
					t.Errorf("runtime base for %s is %q, an %s image", arch, image, other)
				}
			}
			if got := labels["io.hass.arch"]; got != arch {
				t.Errorf("label io.hass.arch = %q for a %s build", got, arch)
			}
			for k, want := range map[string]string{
				"io.hass.type":                         "addon",
				"io.hass.name":                         m.Name,
				"io.hass.description":                  m.Description,
				"io.hass.url":                          m.URL,
				"io.hass.version":                      m.Version,
				"org.opencontainers.image.title":       m.Name,
				"org.opencontainers.image.description": m.Description,
				"org.opencontainers.image.source":      m.URL,
				"org.opencontainers.image.version":     m.Version,
			} {
				if labels[k] != want {
					t.Errorf("label %s = %q, want %q", k, labels[k], want)
				}
			}
		})
	}
}

// build.yaml is no longer read by Home Assistant; a stale one would only
// mislead (and the Supervisor warns that it is deprecated).
func TestNoBuildYAML(t *testing.T) {
	if _, err := os.Stat(filepath.Join(repoRoot(t), "build.yaml")); err == nil {
		t.Error("build.yaml is present; the Dockerfile is the single source of truth since Home Assistant retired its builder")
	}
}
