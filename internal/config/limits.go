package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Limit is the inclusive range of one numeric option. ValidateFor enforces
// every Limit; the add-on schema (config.yaml), DOCS.md and
// docs/configuration.md are checked against them (internal/addon), so the Go
// table below is the one source of truth for option ranges.
type Limit struct {
	Key string // the config key
	// Min and Max in the option's own unit: the number for int and float
	// options, a time.Duration for durations.
	Min, Max float64
}

// Limits checked by Validate.
const (
	MaxConcurrency  = 8
	MaxMaxTurns     = 1000
	MinTimeBudget   = 10 * time.Second
	MaxTimeBudget   = 24 * time.Hour
	MinTelegramWait = 10 * time.Second
	MaxTelegramWait = 24 * time.Hour
	// MaxTakeoverWait bounds how long an item's tab waits for a person
	// (the run's end waits for it).
	MaxTakeoverWait = time.Hour
	// MaxPricePerMTok bounds the prices of the cost estimate: a thousand
	// dollars per million tokens is far above any Gemini price, so a larger
	// value is a typo (or a unit mix-up), not a price.
	MaxPricePerMTok                      = 1000
	MinViewportWidth, MaxViewportWidth   = 640, 3840
	MinViewportHeight, MaxViewportHeight = 480, 2160
	// MaxModelRPM and MaxModelConcurrency bound the quota guard's settings
	// (0 = no limit / one per tab).
	MaxModelRPM         = 100000
	MaxModelConcurrency = 64
	// MaxReplayPriceChange bounds replay_max_price_change (percent).
	MaxReplayPriceChange = 1000
	// MaxProductMemoryDays bounds product_memory_days (0 = never expire).
	MaxProductMemoryDays = 36500
	// MaxTraceKeepRuns bounds trace_keep_runs (0 = keep every trace).
	MaxTraceKeepRuns = 10000
)

// limits is every numeric option's range. TestEveryNumericOptionHasALimit
// keeps it complete.
var limits = []Limit{
	{"gemini_input_price_per_mtok", 0, MaxPricePerMTok},
	{"gemini_output_price_per_mtok", 0, MaxPricePerMTok},
	{"viewport_width", MinViewportWidth, MaxViewportWidth},
	{"viewport_height", MinViewportHeight, MaxViewportHeight},
	{"concurrency", 1, MaxConcurrency},
	{"time_budget", float64(MinTimeBudget), float64(MaxTimeBudget)},
	{"max_turns", 1, MaxMaxTurns},
	{"telegram_response_timeout", float64(MinTelegramWait), float64(MaxTelegramWait)},
	{"takeover_wait", 0, float64(MaxTakeoverWait)},
	{"model_rpm", 0, MaxModelRPM},
	{"model_concurrency", 0, MaxModelConcurrency},
	{"replay_max_price_change", 0, MaxReplayPriceChange},
	{"product_memory_days", 0, MaxProductMemoryDays},
	{"review_price_change", 0, MaxReplayPriceChange},
	{"trace_keep_runs", 0, MaxTraceKeepRuns},
	{"slot_scout_interval", 0, float64(24 * time.Hour)},
}

// unlimitedNumbers are numeric options that are identifiers, not
// quantities: any value is allowed (ValidateFor checks them otherwise).
var unlimitedNumbers = map[string]string{
	"telegram_chat_id": "a chat id: any non-zero number Telegram gave",
}

// Limits returns the range of every numeric option, in Config order.
func Limits() []Limit { return append([]Limit(nil), limits...) }

// LimitOf returns the range of key, if it has one.
func LimitOf(key string) (Limit, bool) {
	for _, l := range limits {
		if l.Key == key {
			return l, true
		}
	}
	return Limit{}, false
}

// UnlimitedNumber reports whether key is a numeric option without a range,
// and why.
func UnlimitedNumber(key string) (why string, ok bool) {
	why, ok = unlimitedNumbers[key]
	return why, ok
}

// IsDuration reports whether the option is a duration.
func (l Limit) IsDuration() bool {
	f, ok := fieldByKey[l.Key]
	return ok && f.typ == durationType
}

// IsInt reports whether the option is a whole number (not a duration).
func (l Limit) IsInt() bool {
	f, ok := fieldByKey[l.Key]
	return ok && f.typ != durationType && (f.typ.Kind() == reflect.Int || f.typ.Kind() == reflect.Int64)
}

// Format renders one value of the option as the docs write it: 8, 1.5,
// 10s, 24h, 1h30m.
func (l Limit) Format(v float64) string {
	switch {
	case l.IsDuration():
		return shortDuration(time.Duration(v))
	case l.IsInt():
		return strconv.FormatInt(int64(v), 10)
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

// Text is the range as the docs write it: "1–8", "10s–24h".
func (l Limit) Text() string { return l.Format(l.Min) + "–" + l.Format(l.Max) }

// shortDuration is d.String() without zero units: 24h, 1h30m, 10s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// checkLimits adds a problem for every numeric option outside its range,
// non-finite numbers included.
func (c Config) checkLimits(add func(field, format string, args ...any)) {
	v := reflect.ValueOf(c)
	for _, l := range limits {
		f, ok := fieldByKey[l.Key]
		if !ok {
			add(l.Key, "has a range but is not an option (a bug)")
			continue
		}
		fv := v.Field(f.index)
		var x float64
		var shown string
		switch {
		case f.typ == durationType:
			x, shown = float64(fv.Int()), shortDuration(time.Duration(fv.Int()))
		case fv.CanInt():
			x, shown = float64(fv.Int()), strconv.FormatInt(fv.Int(), 10)
		case fv.CanFloat():
			x, shown = fv.Float(), strconv.FormatFloat(fv.Float(), 'g', -1, 64)
		}
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			add(l.Key, "%s is not a finite number: use a number between %s and %s", shown, l.Format(l.Min), l.Format(l.Max))
		case x < l.Min || x > l.Max:
			msg := fmt.Sprintf("%s is not between %s and %s", shown, l.Format(l.Min), l.Format(l.Max))
			if l.Min == 0 && x < 0 {
				msg = fmt.Sprintf("%s must not be negative (%s–%s)", shown, l.Format(l.Min), l.Format(l.Max))
			}
			add(l.Key, "%s", msg)
		}
	}
}
