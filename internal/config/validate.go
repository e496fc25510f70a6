package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Problem is one thing wrong with the configuration.
type Problem struct {
	// Field is the config key (gemini_model) or environment variable the
	// problem is about; empty for problems of a whole file.
	Field   string
	Message string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// Error lists every problem found at once. Its text never contains a secret.
type Error struct {
	// Source is where the problems are: a file path, "environment", or ""
	// for validation of the merged config.
	Source   string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration")
	if e.Source != "" {
		b.WriteString(" in " + e.Source)
	}
	if len(e.Problems) == 1 {
		b.WriteString(": " + e.Problems[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, " (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  - " + p.String())
	}
	return b.String()
}

// Requirement names what a command needs beyond well-formed settings, and
// what it accepts that others do not.
type Requirement uint

const (
	// NeedStoreLogin: the store's credentials (metro_username and
	// metro_password for store metro).
	NeedStoreLogin Requirement = 1 << iota
	// NeedModel: a Gemini API key, unless the model is the scripted one.
	NeedModel
	// AllowTelegramChatLater accepts a Telegram bot token without
	// telegram_chat_id: serve finds the chat id (an add-on user cannot run
	// test-telegram) and runs without Telegram meanwhile.
	AllowTelegramChatLater
	// NeedAll is what a shopping run needs.
	NeedAll = NeedStoreLogin | NeedModel
)

// Validate checks everything a shopping run needs: ValidateFor(NeedAll).
func (c Config) Validate() error { return c.ValidateFor(NeedAll) }

// ValidateFor checks that every setting is well-formed and that what need
// names is present. It returns an *Error listing every problem, each naming
// its key, or nil.
func (c Config) ValidateFor(need Requirement) error {
	var probs []Problem
	add := func(field, format string, args ...any) {
		probs = append(probs, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}

	// Gemini
	switch {
	case strings.TrimSpace(c.GeminiModel) == "":
		add("gemini_model", "is required (default %s)", DefaultModel)
	case c.GeminiModel == ScriptedModel && c.Store != "demo":
		add("gemini_model", "%q works with store demo only (store is %q)", ScriptedModel, c.Store)
	}
	if need&NeedModel != 0 && c.GeminiModel != ScriptedModel && !c.GeminiAPIKey.IsSet() {
		add("gemini_api_key", "is required (set GEMINI_API_KEY; get a key at https://aistudio.google.com/apikey)")
	}
	checkURL(add, "gemini_base_url", c.GeminiBaseURL, "http", "https")
	if c.ReviewModel == ScriptedModel && c.GeminiModel != ScriptedModel {
		add("review_model", "%q works only with gemini_model %q", ScriptedModel, ScriptedModel)
	}
	oneOf := func(field, v string, allowed ...string) {
		if v != "" && !slices.Contains(allowed, v) {
			add(field, "%q is not one of %s (or empty for the model's default)", v, strings.Join(allowed, ", "))
		}
	}
	oneOf("thinking_level", c.ThinkingLevel, "low", "medium", "high")
	oneOf("media_resolution", c.MediaResolution, "low", "medium", "high")
	if c.Replay != "" && !slices.Contains([]string{"direct", "agent", "off"}, c.Replay) {
		add("replay", "%q is not one of direct, agent, off (or empty for the store's default)", c.Replay)
	}

	if !slices.Contains([]string{"auto", "en", "fr"}, c.Language) {
		add("language", "%q is not one of auto, en, fr", c.Language)
	}

	// Store
	switch c.Store {
	case "metro", "demo":
	default:
		add("store", "%q is not a known store: use metro or demo", c.Store)
	}
	if need&NeedStoreLogin != 0 && c.Store == "metro" {
		if strings.TrimSpace(c.MetroUsername) == "" {
			add("metro_username", "is required for store metro (the e-mail of your metro.ca account)")
		}
		if !c.MetroPassword.IsSet() {
			add("metro_password", "is required for store metro")
		}
	}
	if c.PostalCode != "" && !postalCodeRE.MatchString(strings.TrimSpace(c.PostalCode)) {
		add("postal_code", "%q is not a Canadian postal code like H2X 1Y4", c.PostalCode)
	}

	// Browser
	checkURL(add, "browser_remote_url", c.BrowserRemoteURL, "ws", "wss", "http", "https")
	if strings.TrimSpace(c.BrowserProfileDir) == "" && c.BrowserRemoteURL == "" {
		add("browser_profile_dir", "is required")
	}
	if strings.TrimSpace(c.DataDir) == "" {
		add("data_dir", "is required")
	}

	// Every numeric option's range (limits.go), non-finite numbers included.
	c.checkLimits(add)

	// Telegram
	switch {
	case c.TelegramBotToken.IsSet() && c.TelegramChatID == 0 && need&AllowTelegramChatLater == 0:
		add("telegram_chat_id", "is required with telegram_bot_token (your chat id; TELEGRAM_USER_CHAT_ID)")
	case !c.TelegramBotToken.IsSet() && c.TelegramChatID != 0:
		add("telegram_bot_token", "is required with telegram_chat_id (TELEGRAM_BOT_TOKEN)")
	}
	if c.TelegramAPIEndpoint != "" {
		if strings.Count(c.TelegramAPIEndpoint, "%s") != 2 {
			add("telegram_api_endpoint", "must hold two %%s (token, then method), like https://api.telegram.org/bot%%s/%%s")
		} else {
			checkURL(add, "telegram_api_endpoint", strings.ReplaceAll(c.TelegramAPIEndpoint, "%s", "x"), "http", "https")
		}
	}

	// Home Assistant
	checkURL(add, "home_assistant_url", c.HomeAssistantURL, "http", "https", "ws", "wss")
	if c.HomeAssistantURL != "" && !c.HomeAssistantToken.IsSet() && !c.SupervisorToken.IsSet() {
		add("home_assistant_token", "is required with home_assistant_url (a long-lived access token from your HA profile)")
	}
	for _, svc := range c.HANotify {
		if !haNotifyRE.MatchString(svc) {
			add("ha_notify", "%q is not a companion app notify service like notify.mobile_app_my_phone", svc)
		}
	}
	if len(c.HANotify) > 0 && c.HomeAssistantURL == "" && !c.SupervisorToken.IsSet() {
		add("ha_notify", "needs Home Assistant: set home_assistant_url and home_assistant_token, or run as the add-on")
	}
	if c.TodoEntity != "" && !todoEntityRE.MatchString(c.TodoEntity) {
		add("todo_entity", "%q is not a todo entity id like todo.shopping_list", c.TodoEntity)
	}
	checkURL(add, "supervisor_url", c.SupervisorURL, "http", "https")

	// MQTT
	if b := strings.TrimSpace(c.MQTTBroker); b != "" {
		if !strings.Contains(b, "://") {
			b = "tcp://" + b // "core-mosquitto:1883" is accepted as tcp
		}
		checkURL(add, "mqtt_broker", b, "tcp", "mqtt", "ssl", "tls", "mqtts", "tcps")
	}
	if c.MQTTPassword.IsSet() && c.MQTTUsername == "" {
		add("mqtt_username", "is required with mqtt_password")
	}
	if p := c.MQTTDiscoveryPrefix; p == "" || strings.ContainsAny(p, "#+ ") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		add("mqtt_discovery_prefix", "%q is not a topic prefix like homeassistant", p)
	}

	// Logging
	if _, ok := parseLevel(c.LogLevel); !ok {
		add("log_level", "%q is not debug, info, warn or error", c.LogLevel)
	}

	if len(probs) == 0 {
		return nil
	}
	return &Error{Problems: probs}
}

var (
	postalCodeRE = regexp.MustCompile(`^[A-Za-z]\d[A-Za-z] ?\d[A-Za-z]\d$`)
	todoEntityRE = regexp.MustCompile(`^todo\.[a-z0-9_]+$`)
	// haNotifyRE is a companion app notify service, with or without "notify.".
	haNotifyRE = regexp.MustCompile(`^(notify\.)?mobile_app_[a-z0-9_]+$`)
)

func checkURL(add func(string, string, ...any), field, raw string, schemes ...string) {
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		// The text is not shown: a mistyped URL may hold a password.
		add(field, "is not a URL like %s://host:port", schemes[0])
		return
	}
	for _, s := range schemes {
		if u.Scheme == s {
			return
		}
	}
	add(field, "%q: scheme %q is not one of %s", u.Redacted(), u.Scheme, strings.Join(schemes, ", "))
}

func parseLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, true
	case "info", "":
		return slog.LevelInfo, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return slog.LevelInfo, false
}

// SlogLevel is LogLevel as a slog.Level (info when unknown).
func (c Config) SlogLevel() slog.Level {
	l, _ := parseLevel(c.LogLevel)
	return l
}

// AddOn reports whether the process runs as a Home Assistant add-on (the
// Supervisor gave it a token).
func (c Config) AddOn() bool { return c.SupervisorToken.IsSet() }
