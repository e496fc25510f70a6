// Package config holds the one Config of gemini-supply and loads it from, in
// rising precedence: defaults < YAML config file (or the add-on's
// /data/options.json) < environment < command-line flags.
//
// The file keys, the add-on option names and the env names are the same words:
// key `gemini_model` ⇔ env `GEMINI_SUPPLY_GEMINI_MODEL`. A few well-known names
// are accepted as well: GEMINI_API_KEY, TELEGRAM_BOT_TOKEN,
// TELEGRAM_USER_CHAT_ID, SUPERVISOR_TOKEN.
package config

import "time"

// Config is the whole configuration. Fields of type Secret never print.
type Config struct {
	// Gemini
	GeminiAPIKey  Secret `yaml:"gemini_api_key" env:"GEMINI_API_KEY"`
	GeminiModel   string `yaml:"gemini_model" env:"GEMINI_MODEL"` // "scripted" = the offline scripted planner (demo store only)
	GeminiBaseURL string `yaml:"gemini_base_url" env:"GEMINI_BASE_URL"`
	// Prices per million tokens (USD) for the cost estimate; 0 = the model
	// table's price (internal/agent), unknown for a model not in it.
	GeminiInputPricePerMTok  float64 `yaml:"gemini_input_price_per_mtok" env:"GEMINI_INPUT_PRICE_PER_MTOK"`
	GeminiOutputPricePerMTok float64 `yaml:"gemini_output_price_per_mtok" env:"GEMINI_OUTPUT_PRICE_PER_MTOK"`
	// ReviewModel reads the cart for the review ("" = the agent's model).
	ReviewModel string `yaml:"review_model" env:"REVIEW_MODEL"`
	// Cost controls: "" leaves the model's default.
	ThinkingLevel   string `yaml:"thinking_level" env:"THINKING_LEVEL"`     // low | medium | high
	MediaResolution string `yaml:"media_resolution" env:"MEDIA_RESOLUTION"` // low | medium | high (screenshots)
	// PromptInjectionDetection asks the Computer Use tool to check pages for
	// prompt injections (models that support it).
	PromptInjectionDetection bool `yaml:"prompt_injection_detection" env:"PROMPT_INJECTION_DETECTION"`
	// Quota guard shared by every tab: requests per minute (0 = no limit
	// but the server's 429s) and requests in flight (0 = concurrency).
	ModelRPM         int `yaml:"model_rpm" env:"MODEL_RPM"`
	ModelConcurrency int `yaml:"model_concurrency" env:"MODEL_CONCURRENCY"`

	// Store
	Store         string `yaml:"store" env:"STORE"` // "metro" | "demo"
	MetroUsername string `yaml:"metro_username" env:"METRO_USERNAME"`
	MetroPassword Secret `yaml:"metro_password" env:"METRO_PASSWORD"`
	PostalCode    string `yaml:"postal_code" env:"POSTAL_CODE"`
	// Replay says how a remembered product is bought again: "direct"
	// (code adds it, no model), "agent" (the agent starts on its page) or
	// "off"; empty: direct for the demo store, agent for metro.
	Replay string `yaml:"replay" env:"REPLAY"`
	// ReplayMaxPriceChange is the largest price change, in percent, a
	// direct replay accepts before it hands the item to the agent.
	ReplayMaxPriceChange float64 `yaml:"replay_max_price_change" env:"REPLAY_MAX_PRICE_CHANGE"`
	// ProductMemoryDays: a remembered product not bought for this many
	// days expires and the agent shops the item again (a ⭐ pin stays);
	// 0 keeps products for ever.
	ProductMemoryDays int `yaml:"product_memory_days" env:"PRODUCT_MEMORY_DAYS"`
	// ReviewPriceChange is the price change, in percent, from which the
	// review pack warns about a product bought before.
	ReviewPriceChange float64 `yaml:"review_price_change" env:"REVIEW_PRICE_CHANGE"`

	// Browser
	BrowserExecutable string `yaml:"browser_executable" env:"BROWSER_EXECUTABLE"`
	BrowserHeadless   bool   `yaml:"browser_headless" env:"BROWSER_HEADLESS"`
	BrowserProfileDir string `yaml:"browser_profile_dir" env:"BROWSER_PROFILE_DIR"`
	BrowserRemoteURL  string `yaml:"browser_remote_url" env:"BROWSER_REMOTE_URL"` // ws:// or http:// endpoint of a remote Chromium
	ViewportWidth     int    `yaml:"viewport_width" env:"VIEWPORT_WIDTH"`
	ViewportHeight    int    `yaml:"viewport_height" env:"VIEWPORT_HEIGHT"`

	// Where journals, preferences and the default browser profile live
	// (traces go to TraceDir).
	DataDir string `yaml:"data_dir" env:"DATA_DIR"`

	// Shopping list: a YAML file, or a Home Assistant todo entity.
	ShoppingList string `yaml:"shopping_list" env:"SHOPPING_LIST"`

	// Run limits
	Concurrency int           `yaml:"concurrency" env:"CONCURRENCY"`
	TimeBudget  time.Duration `yaml:"time_budget" env:"TIME_BUDGET"`
	MaxTurns    int           `yaml:"max_turns" env:"MAX_TURNS"`
	RetryTagged bool          `yaml:"retry_tagged" env:"RETRY_TAGGED"`
	TraceDir    string        `yaml:"trace_dir" env:"TRACE_DIR"` // empty: no traces
	// TraceKeepRuns: the traces of the newest this many runs are kept,
	// older runs' are removed when a run starts; 0 keeps every trace.
	TraceKeepRuns int `yaml:"trace_keep_runs" env:"TRACE_KEEP_RUNS"`

	// Telegram
	TelegramBotToken        Secret        `yaml:"telegram_bot_token" env:"TELEGRAM_BOT_TOKEN"`
	TelegramChatID          int64         `yaml:"telegram_chat_id" env:"TELEGRAM_CHAT_ID"`
	TelegramResponseTimeout time.Duration `yaml:"telegram_response_timeout" env:"TELEGRAM_RESPONSE_TIMEOUT"`
	TelegramAPIEndpoint     string        `yaml:"telegram_api_endpoint" env:"TELEGRAM_API_ENDPOINT"` // tgbotapi format, "%s" token then method

	// TakeoverWait is how long an item's tab waits for a person in the
	// panel when its agent gives up (take over; 0: it is closed at once).
	TakeoverWait time.Duration `yaml:"takeover_wait" env:"TAKEOVER_WAIT"`

	// Home Assistant
	HomeAssistantURL   string `yaml:"home_assistant_url" env:"HOME_ASSISTANT_URL"`
	HomeAssistantToken Secret `yaml:"home_assistant_token" env:"HOME_ASSISTANT_TOKEN"`
	TodoEntity         string `yaml:"todo_entity" env:"TODO_ENTITY"`
	// SlotScoutInterval reads the store's delivery slots this often
	// besides after every run (0: only after runs; at least 5m).
	SlotScoutInterval time.Duration `yaml:"slot_scout_interval" env:"SLOT_SCOUT_INTERVAL"`
	// SlotWatch is a delivery window to be told of when it opens
	// ("saturday", "before 12:00", "saturday before 10:00"; empty: none).
	SlotWatch string `yaml:"slot_watch" env:"SLOT_WATCH"`
	// HANotify are companion app notify services (notify.mobile_app_*) that
	// get questions and safety confirmations as actionable notifications.
	HANotify []string `yaml:"ha_notify" env:"HA_NOTIFY"`
	// SupervisorToken is set by the Supervisor when running as an add-on.
	SupervisorToken Secret `yaml:"-" env:"-"`
	SupervisorURL   string `yaml:"-" env:"SUPERVISOR_URL"` // default http://supervisor

	// MQTT
	MQTTBroker          string `yaml:"mqtt_broker" env:"MQTT_BROKER"` // tcp://host:1883, ssl://host:8883; empty = Supervisor service (add-on) or off
	MQTTUsername        string `yaml:"mqtt_username" env:"MQTT_USERNAME"`
	MQTTPassword        Secret `yaml:"mqtt_password" env:"MQTT_PASSWORD"`
	MQTTDiscoveryPrefix string `yaml:"mqtt_discovery_prefix" env:"MQTT_DISCOVERY_PREFIX"`
	MQTTCleanup         bool   `yaml:"mqtt_cleanup" env:"MQTT_CLEANUP"` // delete the discovery entities and stop using MQTT

	LogLevel string `yaml:"log_level" env:"LOG_LEVEL"` // debug | info | warn | error

	// Language is what the household is told in (notifications, Telegram,
	// the phone, summaries, the panel): "auto" (Home Assistant's language
	// when connected, else English), "en" or "fr".
	Language string `yaml:"language" env:"LANGUAGE"`

	// ConfigFile is the config file Load read ("" when none); set by Load.
	ConfigFile string `yaml:"-" env:"-"`
}

// Default values.
const (
	// DefaultModel is agent.DefaultModel (a test keeps them equal): the
	// newest GA Computer Use model.
	DefaultModel           = "gemini-3.8-flash"
	DefaultStore           = "metro"
	DefaultConcurrency     = 1
	DefaultTimeBudget      = 5 * time.Minute
	DefaultMaxTurns        = 40
	DefaultTraceKeepRuns   = 20
	DefaultViewportWidth   = 1440
	DefaultViewportHeight  = 900
	DefaultTodoEntity      = "todo.shopping_list"
	DefaultDiscoveryPrefix = "homeassistant"
	DefaultTelegramTimeout = 10 * time.Minute
	DefaultTakeoverWait    = 5 * time.Minute
	DefaultSupervisorURL   = "http://supervisor"
	DefaultLogLevel        = "info"
	DefaultLanguage        = "auto"
	// Prices default to 0: the model table's dated price for the model.
	DefaultInputPricePerMTok  = 0
	DefaultOutputPricePerMTok = 0
	// DefaultMediaResolution is the screenshots' resolution (docs/agent.md,
	// "Cost controls", says why).
	DefaultMediaResolution = "medium"
	// DefaultReplayMaxPriceChange is replay_max_price_change's default.
	DefaultReplayMaxPriceChange = 20.0
	// DefaultProductMemoryDays is product_memory_days' default.
	DefaultProductMemoryDays = 180
	// DefaultReviewPriceChange is review_price_change's default.
	DefaultReviewPriceChange = 10.0
	// ScriptedModel selects the offline scripted planner (works with the demo store only).
	ScriptedModel = "scripted"
)

// ProductExpiry is how long a remembered product may go unused before it
// expires (product_memory_days; 0: never).
func (c Config) ProductExpiry() time.Duration {
	return time.Duration(c.ProductMemoryDays) * 24 * time.Hour
}
