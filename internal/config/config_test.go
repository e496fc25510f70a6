package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// fakeEnv is a fake environment for LoadOptions.LookupEnv.
type fakeEnv map[string]string

func (e fakeEnv) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// setup is one Load: an optional user config file, environment and flags.
type setup struct {
	userFile string // written to <home>/.config/gemini-supply/config.yaml when set
	env      fakeEnv
	args     []string
}

func (s setup) load(t *testing.T) (Config, string, error) {
	t.Helper()
	home := t.TempDir()
	if s.userFile != "" {
		dir := filepath.Join(home, ".config", "gemini-supply")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(s.userFile), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags := BindFlags(fs)
	if err := fs.Parse(s.args); err != nil {
		t.Fatalf("flags %v: %v", s.args, err)
	}
	if s.env == nil {
		s.env = fakeEnv{}
	}
	emptyOptions := filepath.Join(home, "options.json") // the add-on's options file, for SUPERVISOR_TOKEN cases
	if err := os.WriteFile(emptyOptions, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{
		LookupEnv:        s.env.lookup,
		HomeDir:          home,
		AddonOptionsPath: emptyOptions,
		Flags:            flags,
	})
	return cfg, home, err
}

func TestDefaults(t *testing.T) {
	cfg, home, err := setup{}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(home, ".local", "share", "gemini-supply")
	want := Config{
		GeminiModel:              DefaultModel,
		GeminiInputPricePerMTok:  DefaultInputPricePerMTok,
		GeminiOutputPricePerMTok: DefaultOutputPricePerMTok,
		MediaResolution:          DefaultMediaResolution,
		ReplayMaxPriceChange:     DefaultReplayMaxPriceChange,
		ProductMemoryDays:        DefaultProductMemoryDays,
		ReviewPriceChange:        DefaultReviewPriceChange,
		PromptInjectionDetection: true,
		Store:                    "metro",
		BrowserHeadless:          true,
		BrowserProfileDir:        filepath.Join(data, "browser-profile"),
		ViewportWidth:            1440,
		ViewportHeight:           900,
		DataDir:                  data,
		Concurrency:              1,
		TimeBudget:               5 * time.Minute,
		MaxTurns:                 40,
		TraceKeepRuns:            20,
		TelegramResponseTimeout:  10 * time.Minute,
		TakeoverWait:             5 * time.Minute,
		TodoEntity:               "todo.shopping_list",
		SupervisorURL:            "http://supervisor",
		MQTTDiscoveryPrefix:      "homeassistant",
		LogLevel:                 "info",
		Language:                 "auto",
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("defaults =\n%s\nwant\n%s", cfg, want)
	}
	if err := cfg.ValidateFor(0); err != nil {
		t.Errorf("defaults are not well-formed: %v", err)
	}
	// A real run needs credentials the defaults cannot have.
	err = cfg.Validate()
	for _, key := range []string{"gemini_api_key", "metro_username", "metro_password"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate() = %v, want a problem naming %s", err, key)
		}
	}
	if cfg.AddOn() {
		t.Error("AddOn() without SUPERVISOR_TOKEN")
	}
}

func TestPrecedence(t *testing.T) {
	const file = "gemini_model: from-file\nconcurrency: 2\ntime_budget: 2m\nbrowser_headless: false\nshopping_list: ~/file.yaml\n"
	fullEnv := fakeEnv{
		"GEMINI_SUPPLY_GEMINI_MODEL":     "from-env",
		"GEMINI_SUPPLY_CONCURRENCY":      "3",
		"GEMINI_SUPPLY_TIME_BUDGET":      "300s",
		"GEMINI_SUPPLY_BROWSER_HEADLESS": "true",
		"GEMINI_SUPPLY_SHOPPING_LIST":    "/env.yaml",
	}
	fullFlags := []string{"--model", "from-flag", "--concurrency", "4", "--time-budget", "1h", "--headless=false", "--shopping-list", "/flag.yaml"}

	type want struct {
		model    string
		conc     int
		budget   time.Duration
		headless bool
		list     string // "~" stands for the home directory
	}
	tests := []struct {
		name string
		s    setup
		want want
	}{
		{"defaults", setup{}, want{DefaultModel, 1, 5 * time.Minute, true, ""}},
		{"file over defaults", setup{userFile: file}, want{"from-file", 2, 2 * time.Minute, false, "~/file.yaml"}},
		{"env over file", setup{userFile: file, env: fullEnv}, want{"from-env", 3, 5 * time.Minute, true, "/env.yaml"}},
		{"flags over env", setup{userFile: file, env: fullEnv, args: fullFlags}, want{"from-flag", 4, time.Hour, false, "/flag.yaml"}},
		{"env over defaults", setup{env: fullEnv}, want{"from-env", 3, 5 * time.Minute, true, "/env.yaml"}},
		{"flags over defaults", setup{args: fullFlags}, want{"from-flag", 4, time.Hour, false, "/flag.yaml"}},
		{"flags over file", setup{userFile: file, args: fullFlags}, want{"from-flag", 4, time.Hour, false, "/flag.yaml"}},
		{"layers mix per key", setup{
			userFile: file,
			env:      fakeEnv{"GEMINI_SUPPLY_CONCURRENCY": "3"},
			args:     []string{"--time-budget", "45s"},
		}, want{"from-file", 3, 45 * time.Second, false, "~/file.yaml"}},
		{"unset flags keep the file value", setup{userFile: file, args: []string{"--dry-run-is-not-ours"}[:0]}, want{"from-file", 2, 2 * time.Minute, false, "~/file.yaml"}},
		{"flag equal to the default still wins", setup{userFile: file, args: []string{"--concurrency", "1", "--headless"}}, want{"from-file", 1, 2 * time.Minute, true, "~/file.yaml"}},
		{"empty env values are unset", setup{userFile: file, env: fakeEnv{"GEMINI_SUPPLY_GEMINI_MODEL": "", "GEMINI_SUPPLY_CONCURRENCY": ""}}, want{"from-file", 2, 2 * time.Minute, false, "~/file.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, home, err := tt.s.load(t)
			if err != nil {
				t.Fatal(err)
			}
			wantList := strings.Replace(tt.want.list, "~", home, 1)
			got := want{cfg.GeminiModel, cfg.Concurrency, cfg.TimeBudget, cfg.BrowserHeadless, cfg.ShoppingList}
			w := tt.want
			w.list = wantList
			if got != w {
				t.Errorf("got %+v\nwant %+v", got, w)
			}
		})
	}
}

func TestConfigFileLocations(t *testing.T) {
	home := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	user := write(".config/gemini-supply/config.yaml", "gemini_model: user\n")
	explicit := write("explicit.yaml", "gemini_model: explicit\n")
	byEnv := write("env.yaml", "gemini_model: by-env\n")
	xdg := write("xdg/gemini-supply/config.yaml", "gemini_model: xdg\n")
	options := write("options.json", `{"gemini_model": "addon", "store": "demo", "concurrency": 3, "time_budget": "90s", "data_dir": ""}`)

	tests := []struct {
		name     string
		opts     LoadOptions
		env      fakeEnv
		want     string
		wantFile string
	}{
		{"user file", LoadOptions{}, nil, "user", user},
		{"explicit path", LoadOptions{ConfigPath: explicit}, nil, "explicit", explicit},
		{"explicit path with ~", LoadOptions{ConfigPath: "~/explicit.yaml"}, nil, "explicit", explicit},
		{"GEMINI_SUPPLY_CONFIG", LoadOptions{}, fakeEnv{"GEMINI_SUPPLY_CONFIG": byEnv}, "by-env", byEnv},
		{"explicit beats GEMINI_SUPPLY_CONFIG", LoadOptions{ConfigPath: explicit}, fakeEnv{"GEMINI_SUPPLY_CONFIG": byEnv}, "explicit", explicit},
		{"XDG_CONFIG_HOME", LoadOptions{}, fakeEnv{"XDG_CONFIG_HOME": filepath.Join(home, "xdg")}, "xdg", xdg},
		{"add-on options.json", LoadOptions{AddonOptionsPath: options}, fakeEnv{"SUPERVISOR_TOKEN": "sup"}, "addon", options},
		{"explicit beats add-on", LoadOptions{AddonOptionsPath: options, ConfigPath: explicit}, fakeEnv{"SUPERVISOR_TOKEN": "sup"}, "explicit", explicit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.HomeDir = home
			if tt.env == nil {
				tt.env = fakeEnv{}
			}
			o.LookupEnv = tt.env.lookup
			cfg, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.GeminiModel != tt.want || cfg.ConfigFile != tt.wantFile {
				t.Errorf("model %q from %q, want %q from %q", cfg.GeminiModel, cfg.ConfigFile, tt.want, tt.wantFile)
			}
		})
	}

	t.Run("add-on defaults", func(t *testing.T) {
		cfg, err := Load(LoadOptions{HomeDir: home, AddonOptionsPath: options, LookupEnv: fakeEnv{"SUPERVISOR_TOKEN": "sup"}.lookup})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DataDir != "/data" || cfg.BrowserProfileDir != "/config/browser-profile" || !cfg.AddOn() ||
			cfg.SupervisorToken.Reveal() != "sup" || cfg.Concurrency != 3 || cfg.TimeBudget != 90*time.Second || cfg.Store != "demo" {
			t.Errorf("add-on config = %s", cfg)
		}
	})
	t.Run("missing add-on options", func(t *testing.T) {
		_, err := Load(LoadOptions{HomeDir: home, AddonOptionsPath: filepath.Join(home, "none.json"), LookupEnv: fakeEnv{"SUPERVISOR_TOKEN": "sup"}.lookup})
		if err == nil || !strings.Contains(err.Error(), "add-on options") {
			t.Errorf("err = %v, want the missing add-on options named", err)
		}
	})
	t.Run("missing explicit file", func(t *testing.T) {
		_, err := Load(LoadOptions{HomeDir: home, ConfigPath: filepath.Join(home, "typo.yaml"), LookupEnv: fakeEnv{}.lookup})
		if err == nil || !strings.Contains(err.Error(), "typo.yaml") {
			t.Errorf("err = %v, want the missing file named", err)
		}
	})
	t.Run("no user file is fine", func(t *testing.T) {
		cfg, err := Load(LoadOptions{HomeDir: t.TempDir(), LookupEnv: fakeEnv{}.lookup})
		if err != nil || cfg.ConfigFile != "" {
			t.Errorf("Load = %v, file %q", err, cfg.ConfigFile)
		}
	})
	t.Run("XDG_DATA_HOME", func(t *testing.T) {
		cfg, err := Load(LoadOptions{HomeDir: home, LookupEnv: fakeEnv{"XDG_DATA_HOME": "/xdg-data"}.lookup})
		if err != nil || cfg.DataDir != "/xdg-data/gemini-supply" || cfg.BrowserProfileDir != "/xdg-data/gemini-supply/browser-profile" {
			t.Errorf("data %q profile %q err %v", cfg.DataDir, cfg.BrowserProfileDir, err)
		}
	})
	t.Run("profile follows a data_dir set in any layer", func(t *testing.T) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		f := BindFlags(fs)
		if err := fs.Parse([]string{"--data-dir", "~/d"}); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadOptions{HomeDir: home, LookupEnv: fakeEnv{}.lookup, Flags: f})
		if err != nil || cfg.DataDir != filepath.Join(home, "d") || cfg.BrowserProfileDir != filepath.Join(home, "d", "browser-profile") {
			t.Errorf("data %q profile %q err %v", cfg.DataDir, cfg.BrowserProfileDir, err)
		}
	})
	t.Run("--config flag", func(t *testing.T) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		f := BindFlags(fs, "store")
		if err := fs.Parse([]string{"--config", explicit}); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadOptions{HomeDir: home, LookupEnv: fakeEnv{}.lookup, Flags: f})
		if err != nil || cfg.GeminiModel != "explicit" {
			t.Errorf("model %q err %v", cfg.GeminiModel, err)
		}
	})
}

func TestYAMLAndJSONAgree(t *testing.T) {
	yamlText := `
gemini_model: m
concurrency: 4
time_budget: 1h
browser_headless: false
telegram_chat_id: 123456789
gemini_input_price_per_mtok: 0.5
metro_password: "p w"
`
	jsonText := `{"gemini_model":"m","concurrency":4,"time_budget":"1h","browser_headless":false,
"telegram_chat_id":123456789,"gemini_input_price_per_mtok":0.5,"metro_password":"p w"}`
	var got []Config
	for _, text := range []string{yamlText, jsonText} {
		cfg, _, err := setup{userFile: text}.load(t)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ConfigFile, cfg.DataDir, cfg.BrowserProfileDir = "", "", ""
		got = append(got, cfg)
	}
	if !reflect.DeepEqual(got[0], got[1]) {
		t.Errorf("YAML and JSON differ:\n%s\n---\n%s", got[0], got[1])
	}
	c := got[0]
	if c.Concurrency != 4 || c.TimeBudget != time.Hour || c.BrowserHeadless || c.TelegramChatID != 123456789 ||
		c.GeminiInputPricePerMTok != 0.5 || c.MetroPassword.Reveal() != "p w" {
		t.Errorf("decoded = %s", c)
	}
}

func TestFileProblems(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // every one must appear in the error
	}{
		{"unknown key with suggestion", "gemini_modle: x\n", []string{"gemini_modle", "line 1", "unknown key", `did you mean "gemini_model"`}},
		{"unknown key, nothing close", "\n\nfavourite_colour: blue\n", []string{"favourite_colour", "line 3", "unknown key"}},
		{"every problem at once", "concurency: 2\nmax_turns: many\ntime_budget: 300\nbrowser_headless: maybe\nviewport_width: [1]\n", []string{
			"5 problems", `concurency: line 1: unknown key (did you mean "concurrency"?)`,
			`max_turns: line 2: "many" is not a whole number`,
			`time_budget: line 3: "300" needs a unit`,
			`browser_headless: line 4: "maybe" is not true or false`,
			"viewport_width: line 5: must be a single value, found a list",
		}},
		{"bad duration", "time_budget: five minutes\n", []string{"time_budget", "not a duration"}},
		{"key twice", "store: demo\nstore: metro\n", []string{"store", "line 2", "set twice (first on line 1)"}},
		{"not a mapping", "- a\n- b\n", []string{"line 1", "must be a mapping"}},
		{"syntax", "store: demo\n  concurrency: 2\n", []string{"line 2", "mapping values are not allowed"}},
		{"file path named", "x: 1\n", []string{"config.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := setup{userFile: tt.file}.load(t)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
	t.Run("null and empty keep defaults", func(t *testing.T) {
		cfg, _, err := setup{userFile: "gemini_model:\nconcurrency: null\nstore: \"\"\n"}.load(t)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.GeminiModel != DefaultModel || cfg.Concurrency != 1 || cfg.Store != "metro" {
			t.Errorf("defaults lost: %s", cfg)
		}
	})
	t.Run("empty file", func(t *testing.T) {
		if _, _, err := (setup{userFile: "# nothing yet\n"}).load(t); err != nil {
			t.Error(err)
		}
	})
}

func TestEnvironment(t *testing.T) {
	tests := []struct {
		name  string
		env   fakeEnv
		check func(Config) bool
	}{
		{"GEMINI_API_KEY alias", fakeEnv{"GEMINI_API_KEY": "k1"}, func(c Config) bool { return c.GeminiAPIKey.Reveal() == "k1" }},
		{"prefixed beats alias", fakeEnv{"GEMINI_API_KEY": "k1", "GEMINI_SUPPLY_GEMINI_API_KEY": "k2"}, func(c Config) bool { return c.GeminiAPIKey.Reveal() == "k2" }},
		{"TELEGRAM_BOT_TOKEN alias", fakeEnv{"TELEGRAM_BOT_TOKEN": "t"}, func(c Config) bool { return c.TelegramBotToken.Reveal() == "t" }},
		{"TELEGRAM_USER_CHAT_ID alias", fakeEnv{"TELEGRAM_USER_CHAT_ID": "-100123"}, func(c Config) bool { return c.TelegramChatID == -100123 }},
		{"SUPERVISOR_TOKEN", fakeEnv{"SUPERVISOR_TOKEN": "s", "GEMINI_SUPPLY_SUPERVISOR_URL": "http://sup:80"}, func(c Config) bool {
			return c.SupervisorToken.Reveal() == "s" && c.SupervisorURL == "http://sup:80" && c.DataDir == "/data"
		}},
		{"durations", fakeEnv{"GEMINI_SUPPLY_TIME_BUDGET": "1h", "GEMINI_SUPPLY_TELEGRAM_RESPONSE_TIMEOUT": "300s"}, func(c Config) bool {
			return c.TimeBudget == time.Hour && c.TelegramResponseTimeout == 5*time.Minute
		}},
		{"every prefixed key", func() fakeEnv {
			e := fakeEnv{}
			for _, f := range fields {
				if f.env == "" {
					continue
				}
				switch {
				case f.typ == durationType:
					e[f.env] = "42s"
				case f.typ.Kind() == reflect.Bool:
					e[f.env] = "true"
				case f.typ.Kind() == reflect.Int, f.typ.Kind() == reflect.Int64, f.typ.Kind() == reflect.Float64:
					e[f.env] = "42"
				default:
					e[f.env] = "v-" + f.key
				}
			}
			return e
		}(), func(c Config) bool {
			v := reflect.ValueOf(c)
			for _, f := range fields {
				if f.env == "" {
					continue
				}
				x := v.Field(f.index)
				var ok bool
				switch {
				case f.typ == durationType:
					ok = x.Int() == int64(42*time.Second)
				case f.typ.Kind() == reflect.Bool:
					ok = x.Bool()
				case f.typ.Kind() == reflect.Float64:
					ok = x.Float() == 42
				case f.typ.Kind() == reflect.Int, f.typ.Kind() == reflect.Int64:
					ok = x.Int() == 42
				case f.typ.Kind() == reflect.Slice: // a comma-separated list of one
					ok = x.Len() == 1 && x.Index(0).String() == "v-"+f.key
				default:
					ok = strings.HasSuffix(x.String(), "v-"+f.key) // paths may gain no prefix; secrets compare raw
				}
				if !ok {
					fmt.Printf("env %s did not set %s (%v)\n", f.env, f.key, x)
					return false
				}
			}
			return true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := setup{env: tt.env}.load(t)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Errorf("unexpected config:\n%s", cfg)
			}
		})
	}

	t.Run("errors name the variable", func(t *testing.T) {
		_, _, err := setup{env: fakeEnv{
			"GEMINI_SUPPLY_CONCURRENCY":      "two",
			"GEMINI_SUPPLY_TIME_BUDGET":      "5 minutes",
			"GEMINI_SUPPLY_BROWSER_HEADLESS": "perhaps",
			"TELEGRAM_USER_CHAT_ID":          "@me",
		}}.load(t)
		if err == nil {
			t.Fatal("Load succeeded")
		}
		for _, w := range []string{"GEMINI_SUPPLY_CONCURRENCY", `"two"`, "GEMINI_SUPPLY_TIME_BUDGET", "GEMINI_SUPPLY_BROWSER_HEADLESS", "TELEGRAM_USER_CHAT_ID"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error does not name %s:\n%v", w, err)
			}
		}
	})
}

func TestFlags(t *testing.T) {
	t.Run("subset", func(t *testing.T) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		BindFlags(fs, "store", "headless")
		if fs.Lookup("config") == nil || fs.Lookup("store") == nil || fs.Lookup("headless") == nil {
			t.Error("missing flags")
		}
		if fs.Lookup("concurrency") != nil {
			t.Error("concurrency bound though not asked for")
		}
	})
	t.Run("all, with the built-in defaults shown", func(t *testing.T) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		BindFlags(fs)
		for _, n := range FlagNames() {
			if fs.Lookup(n) == nil {
				t.Errorf("flag %s not bound", n)
			}
		}
		if fs.Lookup("concurrency").DefValue != "1" || fs.Lookup("time-budget").DefValue != "5m0s" || fs.Lookup("max-turns").DefValue != "40" {
			t.Error("defaults not shown")
		}
	})
	t.Run("bad value is a parse error", func(t *testing.T) {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		BindFlags(fs)
		if err := fs.Parse([]string{"--time-budget", "soon"}); err == nil {
			t.Error("--time-budget soon parsed")
		}
	})
	t.Run("unknown name panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("no panic")
			}
		}()
		BindFlags(flag.NewFlagSet("x", flag.ContinueOnError), "nope")
	})
}

// valid is a config that passes Validate.
func valid() Config {
	c := defaults("/home/u", false, func(string) string { return "" })
	c.BrowserProfileDir = "/home/u/profile"
	c.GeminiAPIKey = "key"
	c.MetroUsername = "me@example.com"
	c.MetroPassword = "pw"
	return c
}

func TestValidate(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	tests := []struct {
		name   string
		change func(*Config)
		need   Requirement
		fields []string // the problems' fields, in order; nil = valid
	}{
		{"store", func(c *Config) { c.Store = "costco" }, NeedAll, []string{"store"}},
		{"metro needs credentials", func(c *Config) { c.MetroUsername, c.MetroPassword = "", "" }, NeedAll, []string{"metro_username", "metro_password"}},
		{"demo needs no credentials", func(c *Config) { c.Store, c.MetroUsername, c.MetroPassword = "demo", "", "" }, NeedAll, nil},
		{"credentials not needed for a preview", func(c *Config) { c.MetroUsername, c.MetroPassword, c.GeminiAPIKey = "", "", "" }, 0, nil},
		{"api key", func(c *Config) { c.GeminiAPIKey = "" }, NeedModel, []string{"gemini_api_key"}},
		{"scripted needs no key, but store demo", func(c *Config) { c.GeminiAPIKey, c.GeminiModel = "", ScriptedModel }, NeedModel, []string{"gemini_model"}},
		{"scripted with demo", func(c *Config) { c.GeminiAPIKey, c.GeminiModel, c.Store = "", ScriptedModel, "demo" }, NeedAll, nil},
		{"empty model", func(c *Config) { c.GeminiModel = " " }, 0, []string{"gemini_model"}},
		{"concurrency 0", func(c *Config) { c.Concurrency = 0 }, 0, []string{"concurrency"}},
		{"concurrency 9", func(c *Config) { c.Concurrency = 9 }, 0, []string{"concurrency"}},
		{"concurrency 8", func(c *Config) { c.Concurrency = 8 }, 0, nil},
		{"max turns", func(c *Config) { c.MaxTurns = 0 }, 0, []string{"max_turns"}},
		{"time budget short", func(c *Config) { c.TimeBudget = 9 * time.Second }, 0, []string{"time_budget"}},
		{"time budget 10s", func(c *Config) { c.TimeBudget = 10 * time.Second }, 0, nil},
		{"viewport", func(c *Config) { c.ViewportWidth, c.ViewportHeight = 100, 100000 }, 0, []string{"viewport_width", "viewport_height"}},
		{"telegram token without chat", func(c *Config) { c.TelegramBotToken = "t" }, 0, []string{"telegram_chat_id"}},
		{"telegram chat without token", func(c *Config) { c.TelegramChatID = 5 }, 0, []string{"telegram_bot_token"}},
		{"telegram both", func(c *Config) { c.TelegramBotToken, c.TelegramChatID = "t", 5 }, 0, nil},
		{"telegram timeout", func(c *Config) { c.TelegramResponseTimeout = time.Second }, 0, []string{"telegram_response_timeout"}},
		{"telegram endpoint", func(c *Config) { c.TelegramAPIEndpoint = "http://127.0.0.1:9/bot%s" }, 0, []string{"telegram_api_endpoint"}},
		{"telegram endpoint ok", func(c *Config) { c.TelegramAPIEndpoint = "http://127.0.0.1:9/bot%s/%s" }, 0, nil},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, 0, []string{"log_level"}},
		{"log level case", func(c *Config) { c.LogLevel = "WARNING" }, 0, nil},
		{"urls", func(c *Config) {
			c.GeminiBaseURL, c.BrowserRemoteURL, c.HomeAssistantURL, c.MQTTBroker, c.SupervisorURL = "ftp://x", "nope", "http://ha:8123", "http://broker", "supervisor"
		}, 0, []string{"gemini_base_url", "browser_remote_url", "home_assistant_url", "home_assistant_token", "supervisor_url", "mqtt_broker"}[:0]},
		{"mqtt", func(c *Config) { c.MQTTPassword, c.MQTTDiscoveryPrefix = "p", "home/" }, 0, []string{"mqtt_username", "mqtt_discovery_prefix"}},
		{"mqtt broker without scheme", func(c *Config) { c.MQTTBroker = "core-mosquitto:1883" }, 0, nil},
		{"mqtt broker websocket", func(c *Config) { c.MQTTBroker = "ws://broker:9001" }, 0, []string{"mqtt_broker"}},
		{"todo entity", func(c *Config) { c.TodoEntity = "shopping_list" }, 0, []string{"todo_entity"}},
		{"postal code", func(c *Config) { c.PostalCode = "90210" }, 0, []string{"postal_code"}},
		{"postal code ok", func(c *Config) { c.PostalCode = "h2x 1y4" }, 0, nil},
		{"ha url with supervisor token", func(c *Config) { c.HomeAssistantURL, c.SupervisorToken = "ws://supervisor/core/websocket", "s" }, 0, nil},
		{"prices", func(c *Config) { c.GeminiInputPricePerMTok = -1 }, 0, []string{"gemini_input_price_per_mtok"}},
		{"dirs", func(c *Config) { c.DataDir, c.BrowserProfileDir = "", "" }, 0, []string{"browser_profile_dir", "data_dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.change(&c)
			err := c.ValidateFor(tt.need)
			if tt.name == "urls" {
				tt.fields = []string{"gemini_base_url", "browser_remote_url", "home_assistant_token", "supervisor_url", "mqtt_broker"}
			}
			var got []string
			if err != nil {
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("error %T is not *config.Error", err)
				}
				for _, p := range ce.Problems {
					got = append(got, p.Field)
					if !strings.Contains(err.Error(), p.Field+": ") {
						t.Errorf("error text does not name %s: %v", p.Field, err)
					}
				}
			}
			if !reflect.DeepEqual(got, tt.fields) {
				t.Errorf("problems %v, want %v (%v)", got, tt.fields, err)
			}
		})
	}

	t.Run("every problem at once", func(t *testing.T) {
		c := valid()
		c.Store, c.Concurrency, c.MaxTurns, c.TimeBudget, c.LogLevel = "x", 0, 0, 0, "x"
		err := c.Validate()
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 5 || !strings.Contains(err.Error(), "5 problems") {
			t.Errorf("Validate() = %v, want 5 problems", err)
		}
	})
}

func TestSlogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "warn": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError, "": slog.LevelInfo} {
		if got := (Config{LogLevel: in}).SlogLevel(); got != want {
			t.Errorf("SlogLevel(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestSecretsNeverShown sets every secret to a recognisable value and looks
// for it in every way a config can be printed, logged, encoded or reported.
func TestSecretsNeverShown(t *testing.T) {
	secrets := map[string]string{
		"GEMINI_API_KEY":                     "AIzaSECRET-gemini-0001",
		"GEMINI_SUPPLY_METRO_PASSWORD":       "SECRET-metro-0002",
		"TELEGRAM_BOT_TOKEN":                 "123:SECRET-telegram-0003",
		"GEMINI_SUPPLY_HOME_ASSISTANT_TOKEN": "SECRET-ha-0004",
		"GEMINI_SUPPLY_MQTT_PASSWORD":        "SECRET-mqtt-0005",
		"SUPERVISOR_TOKEN":                   "SECRET-supervisor-0006",
	}
	const urlPassword = "SECRET-urlpass-0007"
	e := fakeEnv{"GEMINI_SUPPLY_MQTT_BROKER": "tcp://user:" + urlPassword + "@broker:1883", "GEMINI_SUPPLY_MQTT_USERNAME": "user"}
	for k, v := range secrets {
		e[k] = v
	}
	all := []string{urlPassword}
	for _, v := range secrets {
		all = append(all, v)
	}
	check := func(t *testing.T, what, text string) {
		t.Helper()
		for _, s := range all {
			if strings.Contains(text, s) {
				t.Errorf("%s shows secret %q:\n%s", what, s, text)
			}
		}
	}

	cfg, _, err := setup{env: e}.load(t)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GeminiAPIKey.Reveal() != secrets["GEMINI_API_KEY"] || cfg.SupervisorToken.Reveal() != secrets["SUPERVISOR_TOKEN"] {
		t.Fatal("secrets not loaded")
	}

	check(t, "String()", cfg.String())
	if !strings.Contains(cfg.String(), "gemini_api_key: [redacted]") || !strings.Contains(cfg.String(), "supervisor_token: [redacted]") {
		t.Errorf("String() should show set secrets as [redacted]:\n%s", cfg)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%T %v"} {
		check(t, verb, fmt.Sprintf(verb, cfg))
		check(t, verb+" of pointer", fmt.Sprintf(verb, &cfg))
		check(t, verb+" of a struct holding it", fmt.Sprintf(verb, struct{ C Config }{cfg}))
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d"} {
		check(t, verb+" of a secret field", fmt.Sprintf(verb, cfg.MetroPassword))
	}
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "JSON", string(j))
	y, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "YAML", string(y))

	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		l := slog.New(h)
		l.Info("config", "cfg", cfg, "ptr", &cfg, "key", cfg.GeminiAPIKey)
		l.Info("config", slog.Any("cfg", cfg), slog.Group("g", "pw", cfg.MetroPassword))
		l.With("cfg", cfg).Info("with")
	}
	check(t, "slog", logs.String())
	if !strings.Contains(logs.String(), "gemini_model") {
		t.Errorf("slog output does not show the config at all:\n%s", logs.String())
	}

	// Errors: validation with secrets set, a file with secrets in bad places,
	// env problems next to secrets.
	bad := cfg
	bad.Concurrency = 0
	bad.MQTTBroker = "tcp//user:" + urlPassword + "@broker" // not a URL
	bad.HomeAssistantURL = "gopher://u:" + urlPassword + "@ha"
	check(t, "validation error", bad.Validate().Error())

	file := "gemini_api_kye: " + secrets["GEMINI_API_KEY"] + "\nmetro_password: [" + secrets["GEMINI_SUPPLY_METRO_PASSWORD"] + "]\n" +
		"telegram_bot_token: {t: " + secrets["TELEGRAM_BOT_TOKEN"] + "}\nmqtt_password: " + secrets["GEMINI_SUPPLY_MQTT_PASSWORD"] + "\nconcurrency: lots\n"
	_, _, err = setup{userFile: file}.load(t)
	if err == nil {
		t.Fatal("bad file loaded")
	}
	check(t, "file error", err.Error())
	_, _, err = setup{env: fakeEnv{"GEMINI_API_KEY": secrets["GEMINI_API_KEY"], "GEMINI_SUPPLY_CONCURRENCY": "x"}}.load(t)
	if err == nil {
		t.Fatal("bad env loaded")
	}
	check(t, "env error", err.Error())
}

func BenchmarkLoad(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(p, []byte("gemini_model: m\nconcurrency: 2\ntime_budget: 2m\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	e := fakeEnv{"GEMINI_API_KEY": "k", "GEMINI_SUPPLY_MAX_TURNS": "30"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(LoadOptions{ConfigPath: p, HomeDir: dir, LookupEnv: e.lookup}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDocsListEveryOption keeps docs/configuration.md true: every key and
// every environment name must appear in it.
func TestDocsListEveryOption(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, f := range fields {
		if f.inFile && !strings.Contains(doc, "`"+f.key+"`") {
			t.Errorf("docs/configuration.md does not list key %s", f.key)
		}
		if f.env != "" && !strings.Contains(doc, "`"+f.env+"`") {
			t.Errorf("docs/configuration.md does not list env %s", f.env)
		}
	}
	for _, e := range []string{EnvGeminiAPIKey, EnvTelegramBotToken, EnvTelegramUserChatID, EnvSupervisorToken, EnvConfigFile} {
		if !strings.Contains(doc, "`"+e) {
			t.Errorf("docs/configuration.md does not mention %s", e)
		}
	}
	for _, n := range FlagNames() {
		if !strings.Contains(doc, "`--"+n+"`") {
			t.Errorf("docs/configuration.md does not mention flag --%s", n)
		}
	}
}

// TestAddonOptionsThroughConfigFlag loads the add-on's own default options
// (config.yaml at the repository root), written as the Supervisor writes
// /data/options.json, through --config outside the add-on: every add-on
// option must be a key the loader knows, with a value it can read.
func TestAddonOptionsThroughConfigFlag(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var addon struct {
		Options map[string]any `yaml:"options"`
	}
	if err := yaml.Unmarshal(b, &addon); err != nil {
		t.Fatal(err)
	}
	if len(addon.Options) == 0 {
		t.Fatal("config.yaml has no options")
	}
	addon.Options["store"] = "demo"
	addon.Options["telegram_chat_id"] = 123456789012
	addon.Options["metro_password"] = "pw-never-shown"
	js, err := json.Marshal(addon.Options)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	path := filepath.Join(home, "options.json")
	if err := os.WriteFile(path, js, 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	f := BindFlags(fs)
	if err := fs.Parse([]string{"--config", path, "--concurrency", "2"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{HomeDir: home, LookupEnv: fakeEnv{}.lookup, Flags: f})
	if err != nil {
		t.Fatalf("Load(--config options.json): %v", err)
	}
	if cfg.ConfigFile != path || cfg.Store != "demo" || cfg.TelegramChatID != 123456789012 || cfg.Concurrency != 2 ||
		cfg.MetroPassword.Reveal() != "pw-never-shown" || cfg.TimeBudget != DefaultTimeBudget || cfg.AddOn() {
		t.Errorf("config from options.json = %s", cfg)
	}
}
