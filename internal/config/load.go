package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
	"go.yaml.in/yaml/v3"
)

// EnvPrefix prefixes every environment variable of a config key:
// gemini_model ⇔ GEMINI_SUPPLY_GEMINI_MODEL.
const EnvPrefix = "GEMINI_SUPPLY_"

// EnvConfigFile names a config file, like --config (the flag wins).
const EnvConfigFile = EnvPrefix + "CONFIG"

// Well-known environment names accepted besides the prefixed ones. The
// prefixed name wins when both are set.
const (
	EnvGeminiAPIKey        = "GEMINI_API_KEY"
	EnvTelegramBotToken    = "TELEGRAM_BOT_TOKEN"
	EnvTelegramUserChatID  = "TELEGRAM_USER_CHAT_ID"
	EnvSupervisorToken     = "SUPERVISOR_TOKEN"
	DefaultAddonOptionFile = "/data/options.json"
	// AddonDataDir and AddonProfileDir are the add-on's defaults: /data is
	// the add-on's persistent storage, /config its own config folder
	// (addon_config), which the user can reach to back up the browser profile.
	AddonDataDir    = "/data"
	AddonProfileDir = "/config/browser-profile"
)

// LoadOptions tells Load where to look. The zero value reads the process
// environment, the user's home directory and the real add-on paths.
type LoadOptions struct {
	// ConfigPath is an explicit config file (--config). It must exist.
	ConfigPath string
	// LookupEnv reads one environment variable (default os.LookupEnv).
	LookupEnv func(key string) (string, bool)
	// HomeDir is the user's home directory (default os.UserHomeDir).
	HomeDir string
	// AddonOptionsPath is the add-on's options file (default
	// /data/options.json), read when SUPERVISOR_TOKEN is set.
	AddonOptionsPath string
	// Flags, when set, are applied last: only the flags given on the
	// command line, and its --config when ConfigPath is empty.
	Flags *Flags
	// Environ lists the environment ("NAME=value") for EnvWarnings
	// (default os.Environ when LookupEnv is nil; none otherwise).
	Environ func() []string
	// Need is what the command needs beyond well-formed settings (the
	// credentials: NeedAll for a run): when the file or the environment
	// has problems, a missing credential is reported with them, not on a
	// second attempt after they are fixed.
	Need Requirement
}

// envNotSettings are GEMINI_SUPPLY_ names that are not settings but are
// read elsewhere (the config file's path, setup's cache, tests, make).
var envNotSettings = []string{EnvPrefix + "CONFIG", EnvPrefix + "CACHE", EnvPrefix + "TEST_", EnvPrefix + "STRESS_", EnvPrefix + "PANEL_SCREENSHOTS",
	EnvPrefix + "DEMO_SIGNIN_CHALLENGE"} // the demo store's sign-in challenge (app, docs/panel.md)

// EnvWarnings names the GEMINI_SUPPLY_ variables of the environment that
// are no setting (a misspelling is otherwise silently ignored), each with
// the closest known name: "GEMINI_SUPPLY_POSTALCODE is not a setting and
// is ignored (did you mean GEMINI_SUPPLY_POSTAL_CODE?)".
func EnvWarnings(opts LoadOptions) []string {
	environ := opts.Environ
	if environ == nil {
		if opts.LookupEnv != nil {
			return nil
		}
		environ = os.Environ
	}
	var known []string
	for _, f := range fields {
		if f.env != "" {
			known = append(known, f.env)
		}
	}
	var out []string
	for _, kv := range environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || slices.Contains(known, name) || slices.ContainsFunc(envNotSettings, func(p string) bool {
			return name == p || strings.HasSuffix(p, "_") && strings.HasPrefix(name, p)
		}) {
			continue
		}
		w := name + " is not a setting and is ignored"
		if c := Closest(name, known); c != "" {
			w += " (did you mean " + c + "?)"
		}
		out = append(out, w+"; see docs/configuration.md")
	}
	slices.Sort(out)
	return out
}

// Load builds the Config: defaults < config file < environment < flags. It
// does not validate; call Validate (or ValidateFor).
//
// The config file is, in order: LoadOptions.ConfigPath or --config, else
// $GEMINI_SUPPLY_CONFIG, else /data/options.json when running as a Home
// Assistant add-on (SUPERVISOR_TOKEN set), else
// $XDG_CONFIG_HOME/gemini-supply/config.yaml (default
// ~/.config/gemini-supply/config.yaml) when it exists. YAML and JSON are both
// read (JSON is YAML). Empty and null values leave the default in place; an
// unknown key is an error naming it.
func Load(opts LoadOptions) (Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	getenv := func(k string) string { v, _ := lookup(k); return v }
	addon := getenv(EnvSupervisorToken) != ""

	home := opts.HomeDir
	if home == "" {
		home, _ = os.UserHomeDir() // only needed for defaults; checked below
	}
	cfg := defaults(home, addon, getenv)
	var loadErrs []*Error // the file's and the environment's problems

	// 1. config file
	path, explicit := opts.ConfigPath, opts.ConfigPath != ""
	if path == "" && opts.Flags != nil && opts.Flags.configPath != "" {
		path, explicit = opts.Flags.configPath, true
	}
	if path == "" && getenv(EnvConfigFile) != "" {
		path, explicit = getenv(EnvConfigFile), true
	}
	if path == "" && addon {
		path, explicit = opts.AddonOptionsPath, true
		if path == "" {
			path = DefaultAddonOptionFile
		}
	}
	if path == "" && home != "" {
		path = filepath.Join(configHome(home, getenv), "gemini-supply", "config.yaml")
	}
	if path != "" {
		path = expandHome(path, home)
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := decodeFile(data, path, &cfg); err != nil {
				var e *Error
				if !errors.As(err, &e) {
					return Config{}, err
				}
				// Every key the file got right still applies: the
				// environment, the flags and the values are checked too,
				// so that every problem is said at once.
				loadErrs = append(loadErrs, e)
			}
			cfg.ConfigFile = path
		case errors.Is(err, fs.ErrNotExist) && !explicit:
			// no user config file: fine
		case errors.Is(err, fs.ErrNotExist) && addon && path == orDefault(opts.AddonOptionsPath, DefaultAddonOptionFile):
			return Config{}, fmt.Errorf("running as a Home Assistant add-on (SUPERVISOR_TOKEN is set) but the add-on options %s are missing: %w", path, err)
		default:
			return Config{}, fmt.Errorf("read config file %s: %w", path, err)
		}
	}

	// 2. environment
	if err := applyEnv(&cfg, lookup); err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return Config{}, err
		}
		loadErrs = append(loadErrs, e)
	}

	// 3. flags
	if opts.Flags != nil {
		opts.Flags.Apply(&cfg)
	}

	// Derived defaults and ~ expansion, after every layer.
	if cfg.BrowserProfileDir == "" {
		if addon {
			cfg.BrowserProfileDir = AddonProfileDir
		} else if cfg.DataDir != "" {
			cfg.BrowserProfileDir = filepath.Join(cfg.DataDir, "browser-profile")
		}
	}
	for _, p := range []*string{&cfg.DataDir, &cfg.BrowserProfileDir, &cfg.ShoppingList, &cfg.TraceDir, &cfg.BrowserExecutable} {
		*p = expandHome(*p, home)
	}
	if len(loadErrs) > 0 {
		return cfg, allProblems(cfg, loadErrs, opts.Need)
	}
	return cfg, nil
}

// allProblems is one error with every problem: the file's and the
// environment's (each named by where it is when they are not all from one
// place), then the values' (Validate) of the keys they did not already
// name — a file with four mistakes reports four, not one per attempt.
func allProblems(cfg Config, loadErrs []*Error, need Requirement) *Error {
	var vprobs []Problem
	named := map[string]bool{}
	for _, e := range loadErrs {
		for _, p := range e.Problems {
			named[p.Field] = true
		}
	}
	var v *Error
	if errors.As(cfg.ValidateFor(need), &v) {
		for _, p := range v.Problems {
			if !named[p.Field] {
				vprobs = append(vprobs, p)
			}
		}
	}
	if len(loadErrs) == 1 && len(vprobs) == 0 {
		return loadErrs[0]
	}
	out := &Error{}
	for _, e := range loadErrs {
		for _, p := range e.Problems {
			if e.Source != "" && e.Source != "environment" {
				p.Message = "in " + e.Source + ", " + p.Message
			}
			out.Problems = append(out.Problems, p)
		}
	}
	out.Problems = append(out.Problems, vprobs...)
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// defaults is the bottom layer.
func defaults(home string, addon bool, getenv func(string) string) Config {
	c := Config{
		GeminiModel:              DefaultModel,
		GeminiInputPricePerMTok:  DefaultInputPricePerMTok,
		GeminiOutputPricePerMTok: DefaultOutputPricePerMTok,
		MediaResolution:          DefaultMediaResolution,
		ReplayMaxPriceChange:     DefaultReplayMaxPriceChange,
		ProductMemoryDays:        DefaultProductMemoryDays,
		ReviewPriceChange:        DefaultReviewPriceChange,
		PromptInjectionDetection: true,
		Store:                    DefaultStore,
		BrowserHeadless:          true,
		ViewportWidth:            DefaultViewportWidth,
		ViewportHeight:           DefaultViewportHeight,
		Concurrency:              DefaultConcurrency,
		TimeBudget:               DefaultTimeBudget,
		MaxTurns:                 DefaultMaxTurns,
		TraceKeepRuns:            DefaultTraceKeepRuns,
		TelegramResponseTimeout:  DefaultTelegramTimeout,
		TakeoverWait:             DefaultTakeoverWait,
		TodoEntity:               DefaultTodoEntity,
		SupervisorURL:            DefaultSupervisorURL,
		MQTTDiscoveryPrefix:      DefaultDiscoveryPrefix,
		LogLevel:                 DefaultLogLevel,
		Language:                 DefaultLanguage,
	}
	switch {
	case addon:
		c.DataDir = AddonDataDir
	case getenv("XDG_DATA_HOME") != "" && filepath.IsAbs(getenv("XDG_DATA_HOME")):
		c.DataDir = filepath.Join(getenv("XDG_DATA_HOME"), "gemini-supply")
	case home != "":
		c.DataDir = filepath.Join(home, ".local", "share", "gemini-supply")
	}
	return c
}

func configHome(home string, getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return x
	}
	return filepath.Join(home, ".config")
}

// expandHome turns "~" and "~/x" into paths under home.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// ---- fields ----

// fieldInfo describes one Config field for the file, env and String.
type fieldInfo struct {
	index  int
	goName string
	key    string // the file key; for fields the file cannot set, a derived name
	env    string // the full environment name, "" when the env cannot set it
	inFile bool
	typ    reflect.Type
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	secretType   = reflect.TypeFor[Secret]()
	fields       = buildFields()
	fieldByKey   = func() map[string]fieldInfo {
		m := map[string]fieldInfo{}
		for _, f := range fields {
			if f.inFile {
				m[f.key] = f
			}
		}
		return m
	}()
)

func buildFields() []fieldInfo {
	t := reflect.TypeFor[Config]()
	var out []fieldInfo
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		f := fieldInfo{index: i, goName: sf.Name, typ: sf.Type}
		y := strings.Split(sf.Tag.Get("yaml"), ",")[0]
		e := strings.Split(sf.Tag.Get("env"), ",")[0]
		if y != "" && y != "-" {
			f.key, f.inFile = y, true
		}
		if e != "" && e != "-" {
			f.env = EnvPrefix + e
			if f.key == "" {
				f.key = strings.ToLower(e)
			}
		}
		if f.key == "" {
			f.key = snake(sf.Name)
		}
		out = append(out, f)
	}
	return out
}

var snakeRE = regexp.MustCompile(`([a-z0-9])([A-Z])`)

func snake(s string) string { return strings.ToLower(snakeRE.ReplaceAllString(s, "${1}_${2}")) }

// fieldFor returns the field of the Go field name.
func fieldFor(goName string) (fieldInfo, bool) {
	for _, f := range fields {
		if f.goName == goName {
			return f, true
		}
	}
	return fieldInfo{}, false
}

// ---- file ----

// decodeFile applies a YAML or JSON config file onto cfg, reporting every
// problem (unknown keys, wrong types) at once with its line.
func decodeFile(data []byte, path string, cfg *Config) error {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty file
		}
		return &Error{Source: path, Problems: []Problem{{Message: strings.TrimPrefix(err.Error(), "yaml: ")}}}
	}
	if len(doc.Content) == 0 {
		return nil
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
		return nil
	}
	if top.Kind != yaml.MappingNode {
		return &Error{Source: path, Problems: []Problem{{Message: fmt.Sprintf("line %d: the file must be a mapping of keys (gemini_model: …), found %s", top.Line, kind(top))}}}
	}
	var probs []Problem
	seen := map[string]int{}
	v := reflect.ValueOf(cfg).Elem()
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, val := top.Content[i], top.Content[i+1]
		if prev, ok := seen[k.Value]; ok {
			probs = append(probs, Problem{Field: k.Value, Message: fmt.Sprintf("line %d: set twice (first on line %d)", k.Line, prev)})
			continue
		}
		seen[k.Value] = k.Line
		f, ok := fieldByKey[k.Value]
		if !ok {
			msg := fmt.Sprintf("line %d: unknown key", k.Line)
			if s := suggest(k.Value); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			probs = append(probs, Problem{Field: k.Value, Message: msg})
			continue
		}
		if err := setFromNode(v.Field(f.index), f, val); err != nil {
			probs = append(probs, Problem{Field: f.key, Message: fmt.Sprintf("line %d: %v", val.Line, err)})
		}
	}
	if len(probs) > 0 {
		return &Error{Source: path, Problems: probs}
	}
	return nil
}

func kind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a single value"
}

// setFromNode sets one field from its YAML value. Error texts never contain
// the value of a Secret field.
func setFromNode(dst reflect.Value, f fieldInfo, n *yaml.Node) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if f.typ.Kind() == reflect.Slice && f.typ.Elem().Kind() == reflect.String {
		return setListFromNode(dst, n)
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("must be a single value, found %s", kind(n))
	}
	if n.ShortTag() == "!!null" || n.Value == "" {
		return nil // not set: the default stays
	}
	show := fmt.Sprintf("%q", n.Value)
	if f.typ == secretType {
		show = "the value"
	}
	switch {
	case f.typ == durationType:
		if n.ShortTag() == "!!int" || n.ShortTag() == "!!float" {
			return fmt.Errorf("%s %w", show, needsUnit(n.Value))
		}
		d, err := ParseDuration(n.Value)
		if err != nil {
			return fmt.Errorf("%s %w", show, err)
		}
		dst.SetInt(int64(d))
	case f.typ.Kind() == reflect.String:
		dst.SetString(n.Value)
	case f.typ.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return fmt.Errorf("%s is not true or false", show)
		}
		dst.SetBool(b)
	case f.typ.Kind() == reflect.Int || f.typ.Kind() == reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is out of range", show)
		}
		if err != nil {
			return fmt.Errorf("%s is not a whole number", show)
		}
		dst.SetInt(i)
	case f.typ.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(n.Value, 64)
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is out of range", show)
		}
		if err != nil {
			return fmt.Errorf("%s is not a number", show)
		}
		dst.SetFloat(x)
	default:
		return fmt.Errorf("unsupported type %s", f.typ)
	}
	return nil
}

// setListFromNode sets a list of strings from a YAML list of single values,
// or from one value with the items separated by commas (as in the
// environment).
func setListFromNode(dst reflect.Value, n *yaml.Node) error {
	var items []string
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("must be a list of single values, found %s in it", kind(c))
			}
			if v := strings.TrimSpace(c.Value); v != "" {
				items = append(items, v)
			}
		}
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return nil
		}
		for v := range strings.SplitSeq(n.Value, ",") {
			if v = strings.TrimSpace(v); v != "" {
				items = append(items, v)
			}
		}
	default:
		return fmt.Errorf("must be a list, found %s", kind(n))
	}
	dst.Set(reflect.ValueOf(items))
	return nil
}

// suggest returns the known key closest to a misspelt one, if close enough.
func suggest(key string) string {
	keys := make([]string, 0, len(fieldByKey))
	for k := range fieldByKey {
		keys = append(keys, k)
	}
	return Closest(key, keys)
}

// Closest is the candidate nearest to name (Levenshtein distance under 4
// and at most a third of name's length plus one; ties: the first in
// sorted order), or "" when none is near: the "did you mean" of unknown
// keys, flags and environment variables.
func Closest(name string, candidates []string) string {
	best, bestD := "", 4
	for _, k := range candidates {
		if d := distance(name, k); d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if bestD > len(name)/3+1 {
		return ""
	}
	return best
}

// distance is the Levenshtein distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ---- environment ----

// applyEnv applies the well-known names, then the GEMINI_SUPPLY_ ones.
func applyEnv(cfg *Config, lookup func(string) (string, bool)) error {
	var probs []Problem
	get := func(k string) string { v, _ := lookup(k); return v }
	if v := get(EnvGeminiAPIKey); v != "" {
		cfg.GeminiAPIKey = Secret(v)
	}
	if v := get(EnvTelegramBotToken); v != "" {
		cfg.TelegramBotToken = Secret(v)
	}
	if v := get(EnvTelegramUserChatID); v != "" {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			probs = append(probs, Problem{Field: EnvTelegramUserChatID, Message: fmt.Sprintf("%q is not a chat id (a whole number)", v)})
		} else {
			cfg.TelegramChatID = id
		}
	}
	if v := get(EnvSupervisorToken); v != "" {
		cfg.SupervisorToken = Secret(v)
	}

	environ := map[string]string{}
	for _, f := range fields {
		if f.env == "" {
			continue
		}
		if v, ok := lookup(f.env); ok && v != "" {
			environ[f.env] = v
		}
	}
	if err := env.ParseWithOptions(cfg, env.Options{Environment: environ, Prefix: EnvPrefix}); err != nil {
		probs = append(probs, envProblems(err, environ)...)
	}
	if len(probs) > 0 {
		return &Error{Source: "environment", Problems: probs}
	}
	return nil
}

// envProblems turns caarlos0/env errors into problems named by variable.
func envProblems(err error, environ map[string]string) []Problem {
	var agg env.AggregateError
	errs := []error{err}
	if errors.As(err, &agg) {
		errs = agg.Errors
	}
	var probs []Problem
	for _, e := range errs {
		var pe env.ParseError
		if errors.As(e, &pe) {
			f, _ := fieldFor(pe.Name)
			msg := "cannot be read as " + typeWords(f.typ)
			if f.typ != secretType {
				var ne *strconv.NumError
				if errors.As(pe.Err, &ne) {
					msg = fmt.Sprintf("%q cannot be read as %s", ne.Num, typeWords(f.typ))
				} else if f.typ == durationType {
					msg = "is not a duration (write 300s, 5m, 1h30m)"
					if raw, ok := environ[f.env]; ok {
						if _, err := ParseDuration(raw); err != nil {
							msg = fmt.Sprintf("%q %v", raw, err)
						}
					}
				}
			}
			probs = append(probs, Problem{Field: f.env, Message: msg})
			continue
		}
		probs = append(probs, Problem{Message: e.Error()})
	}
	return probs
}

// ParseDuration reads a duration as the file, the environment and the
// flags take it; a bare number is refused with the unit it needs: "needs
// a unit: write "300s" for seconds, or "5m", "1h"".
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if _, err := strconv.ParseFloat(v, 64); err == nil && v != "0" {
		return 0, needsUnit(v)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("is not a duration (write 300s, 5m, 1h30m)")
	}
	return d, nil
}

func needsUnit(v string) error {
	return fmt.Errorf("needs a unit: write \"%ss\" for seconds, or \"5m\", \"1h\"", v)
}

func typeWords(t reflect.Type) string {
	switch {
	case t == durationType:
		return "a duration (300s, 5m, 1h)"
	case t == nil:
		return "its type"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		return "a whole number"
	case t.Kind() == reflect.Float64:
		return "a number"
	}
	return "text"
}
