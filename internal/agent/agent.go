package agent

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/genai"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxTurns        = 40
	DefaultTimeBudget      = 5 * time.Minute
	DefaultCallTimeout     = 90 * time.Second
	DefaultKeepScreenshots = 3
	DefaultLoopThreshold   = 4
)

// DefaultBackoff is the wait before each retry of a model call: five tries in all.
var DefaultBackoff = []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// Tool is a custom function the model may call besides the predefined
// Computer Use actions.
type Tool struct {
	Name, Description string
	// Parameters is the JSON schema of the arguments.
	Parameters *genai.Schema
	// Handler runs the call. A returned error is sent to the model as an error
	// response (it may correct itself); it does not end the run.
	Handler func(ctx context.Context, args map[string]any) (ToolOutput, error)
	// Terminal: the first successful call of this tool ends the run
	// successfully, with its name, arguments and payload in the Result.
	Terminal bool
	// WaitsForUser: time spent inside the handler (waiting for a person) does
	// not count against the time budget, which restarts in full after the
	// handler returns. The handler's context carries no budget deadline.
	WaitsForUser bool
}

// ToolOutput is a custom tool's result.
type ToolOutput struct {
	// Response is sent to the model as the function response (nil → {}).
	Response map[string]any
	// End ends the run now, successfully, as if the tool were terminal.
	End bool
	// Payload is returned in Result.Payload when the call ends the run.
	Payload any
}

// Confirmer asks a person to confirm an action the model's safety system
// flagged. It returns false (or an error) when the person refused or could
// not be asked in time.
type Confirmer interface {
	Confirm(ctx context.Context, explanation, action string) (bool, error)
}

// Limiter bounds model calls across agents; *Quota (requests per minute,
// requests in flight, pauses after a 429) and *semaphore.Weighted satisfy it.
// Each model call attempt holds one unit. A Limiter that also has a method
// Pause(time.Duration) is told to pause every caller when the server answers
// 429, for the wait the server advised (google.rpc.RetryInfo) or the backoff.
type Limiter interface {
	Acquire(ctx context.Context, n int64) error
	Release(n int64)
}

// pauser is a Limiter that can pause every caller after a 429.
type pauser interface{ Pause(d time.Duration) }

// Thinking levels (Config.ThinkingLevel) and media resolutions
// (Config.MediaResolution) as the options spell them.
var (
	ThinkingLevels   = []string{"low", "medium", "high"}
	MediaResolutions = []string{"low", "medium", "high"}
)

// Config configures one Run. The zero value of every limit means its default.
type Config struct {
	// Client is the process-wide Gemini client (shared by concurrent runs). Required.
	Client *genai.Client
	// Model defaults to DefaultModel.
	Model             string
	SystemInstruction string
	// ExcludedFunctions are predefined Computer Use functions the model must
	// not use (sent to the API and refused locally).
	ExcludedFunctions []string

	MaxTurns   int           // default 40 model turns
	TimeBudget time.Duration // default 5m; paused while a WaitsForUser tool or the Confirmer runs
	// CallTimeout bounds one model call attempt (default 90s); a timeout is retried.
	CallTimeout time.Duration
	// KeepScreenshots is how many of the most recent screenshots stay in the
	// history (default 3); older turns keep their URL and lose the image.
	KeepScreenshots int
	// LoopThreshold: the same turn (same calls, same arguments) on an
	// unchanged screenshot this many times in a row adds a nudge to the
	// response; twice as many ends the run as stuck (default 4).
	LoopThreshold int

	// ThinkingLevel is "low", "medium" or "high"; "" leaves the model's
	// default. It is sent only to models whose table entry lists the level.
	ThinkingLevel string
	// MediaResolution is the screenshots' resolution ("low", "medium",
	// "high"); "" leaves the model's default (high for Gemini 3).
	MediaResolution string
	// PromptInjectionDetection turns the Computer Use tool's prompt injection
	// check on (nil: on for the models whose table entry documents it).
	PromptInjectionDetection *bool

	// Price overrides the model table's price for Usage.CostUSD (USD per
	// million tokens, output including thinking). nil: the table's price
	// for today; a model without one leaves the cost unknown
	// (Usage.CostUnknown). &Price{} is free.
	Price *Price
	// PriceDay is the day whose table price the run is costed with: the
	// shopping run's start, so that every item and the review of one run
	// cost the same price (zero: the day this agent run ends).
	PriceDay time.Time

	// Confirmer answers safety confirmations; nil denies them all.
	Confirmer Confirmer
	// Limiter, when set, is held around every model call attempt.
	Limiter Limiter
	// TraceDir, when set, receives a JSON file and a screenshot per turn and a
	// result.json at the end. Give each run its own directory.
	TraceDir string
	// Observe, when set, sees the run as it happens: the first screen, then
	// every turn's actions and the screen after them (the panel's live view).
	Observe Observer
	// DescribePage sends the page's accessibility tree (PageDescriber) as
	// text with every screenshot, the latest one only: for a model that
	// cannot read pixels (the offline planner, internal/scripted). A real
	// Gemini model reads the screenshot and does not get it.
	DescribePage bool
	// HomeURL is where open_web_browser (on a blank tab) and search go.
	HomeURL string
	Logger  *slog.Logger
	// Backoff is the wait before each retry; its length + 1 is the number of
	// tries (default 1, 2, 4, 8 s: five tries).
	Backoff []time.Duration
}

func (c Config) withDefaults() Config {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultMaxTurns
	}
	if c.TimeBudget <= 0 {
		c.TimeBudget = DefaultTimeBudget
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.KeepScreenshots <= 0 {
		c.KeepScreenshots = DefaultKeepScreenshots
	}
	if c.LoopThreshold <= 0 {
		c.LoopThreshold = DefaultLoopThreshold
	}
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Reason says why a run failed; "" means it succeeded.
type Reason string

// Failure reasons.
const (
	ReasonMaxTurns     Reason = "max_turns_exceeded"
	ReasonTimeBudget   Reason = "time_budget_exceeded"
	ReasonNoReport     Reason = "completed_without_reporting"
	ReasonModelError   Reason = "model_error"
	ReasonSafetyDenied Reason = "safety_denied"
	ReasonBrowserError Reason = "browser_error"
	ReasonStuck        Reason = "stuck"
	ReasonCancelled    Reason = "cancelled"
	reasonNone         Reason = ""
)

// Usage is the model's token use over a run, with a cost estimate.
type Usage struct {
	// OutputTokens include ThoughtTokens (billed as output).
	PromptTokens, OutputTokens, TotalTokens, ThoughtTokens int64
	CostUSD                                                float64
	// CostUnknown: no price is known for the model; CostUSD is 0 and must
	// not be shown as a cost.
	CostUnknown bool
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:  u.PromptTokens + o.PromptTokens,
		OutputTokens:  u.OutputTokens + o.OutputTokens,
		TotalTokens:   u.TotalTokens + o.TotalTokens,
		ThoughtTokens: u.ThoughtTokens + o.ThoughtTokens,
		CostUSD:       u.CostUSD + o.CostUSD,
		CostUnknown:   u.CostUnknown || o.CostUnknown,
	}
}

// Cost prices a usage for model on day now: at price when given, else at
// the model table's price; unknown (CostUnknown, CostUSD 0) when neither
// exists. OutputTokens include thinking, billed as output.
func Cost(u Usage, model string, price *Price, now time.Time) Usage {
	if price == nil {
		m, _ := LookupModel(model)
		p, ok := m.PriceAt(now)
		if !ok {
			u.CostUSD, u.CostUnknown = 0, true
			return u
		}
		price = &p
	}
	u.CostUSD = float64(u.PromptTokens)*price.Input/1e6 + float64(u.OutputTokens)*price.Output/1e6
	u.CostUnknown = false
	return u
}

// Result is the typed outcome of a run.
type Result struct {
	// Tool is the name of the tool that ended the run, "" on failure.
	Tool string
	// Args are that call's arguments as the model sent them.
	Args map[string]any
	// Payload is the ending call's ToolOutput.Payload.
	Payload any
	// Reason is "" on success.
	Reason Reason
	// Err wraps the cause of a failure (errors.Is/As work on it).
	Err error
	// Turns is the number of model turns received.
	Turns    int
	Usage    Usage
	Duration time.Duration
}

// OK reports whether the run ended through a terminal tool.
func (r Result) OK() bool { return r.Reason == reasonNone }

// FailureText is "reason: cause" ("model_error: …"), or "" on success.
func (r Result) FailureText() string {
	switch {
	case r.Reason == reasonNone:
		return ""
	case r.Err == nil:
		return string(r.Reason)
	default:
		return fmt.Sprintf("%s: %v", r.Reason, r.Err)
	}
}
