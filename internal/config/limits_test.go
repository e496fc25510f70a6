package config

import (
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Every numeric option has a range (or is named an identifier), so no
// number reaches a run unchecked, and every range names a real option.
func TestEveryNumericOptionHasALimit(t *testing.T) {
	for _, f := range fields {
		if !f.inFile && f.env == "" {
			continue
		}
		switch f.typ.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
		default:
			continue
		}
		_, limited := LimitOf(f.key)
		_, unlimited := UnlimitedNumber(f.key)
		if limited == unlimited {
			t.Errorf("numeric option %s: give it a Limit in limits.go (or, for an identifier, an unlimitedNumbers entry) — has limit %t, unlimited %t", f.key, limited, unlimited)
		}
	}
	for _, l := range Limits() {
		if _, ok := fieldByKey[l.Key]; !ok {
			t.Errorf("limit for %q, which is not an option", l.Key)
		}
		if !(l.Min <= l.Max) {
			t.Errorf("limit %s: min %v above max %v", l.Key, l.Min, l.Max)
		}
	}
	// The defaults are inside their ranges.
	if err := valid().ValidateFor(0); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

func TestLimitText(t *testing.T) {
	for key, want := range map[string]string{
		"concurrency":                 "1–8",
		"max_turns":                   "1–1000",
		"time_budget":                 "10s–24h",
		"telegram_response_timeout":   "10s–24h",
		"viewport_width":              "640–3840",
		"gemini_input_price_per_mtok": "0–1000",
	} {
		l, ok := LimitOf(key)
		if !ok || l.Text() != want {
			t.Errorf("LimitOf(%q) = %+v %t, text %q; want %q", key, l, ok, l.Text(), want)
		}
	}
	if got := shortDuration(90 * time.Minute); got != "1h30m" {
		t.Errorf("shortDuration(90m) = %q", got)
	}
}

// Non-finite and absurd numbers are refused by every layer that can give
// them — file, add-on options, environment, flags — with a message naming
// the key, and all of them are reported at once.
func TestNonFiniteAndAbsurdNumbersAreRefused(t *testing.T) {
	cases := []struct {
		name string
		file string            // YAML (or JSON) config file
		env  map[string]string // environment
		args []string          // flags
		// wantLoad: the problem is found while reading (it is not a number
		// at all); else by Validate.
		wantLoad bool
		want     []string // problems, "key: text" substrings, in order
	}{
		{name: "NaN price in the file", file: "gemini_input_price_per_mtok: NaN\n",
			want: []string{"gemini_input_price_per_mtok: NaN is not a finite number"}},
		{name: "Inf price in the environment", env: map[string]string{"GEMINI_SUPPLY_GEMINI_OUTPUT_PRICE_PER_MTOK": "Inf"},
			want: []string{"gemini_output_price_per_mtok: +Inf is not a finite number"}},
		{name: "-Infinity price in the environment", env: map[string]string{"GEMINI_SUPPLY_GEMINI_INPUT_PRICE_PER_MTOK": "-Infinity"},
			want: []string{"gemini_input_price_per_mtok: -Inf is not a finite number"}},
		{name: "NaN as a JSON string in the add-on options", file: `{"gemini_input_price_per_mtok": "nan"}`,
			want: []string{"gemini_input_price_per_mtok: NaN is not a finite number"}},
		{name: "negative price", file: "gemini_output_price_per_mtok: -0.5\n",
			want: []string{"gemini_output_price_per_mtok: -0.5 must not be negative"}},
		{name: "absurd price", env: map[string]string{"GEMINI_SUPPLY_GEMINI_INPUT_PRICE_PER_MTOK": "1e300"},
			want: []string{"gemini_input_price_per_mtok: 1e+300 is not between 0 and 1000"}},
		{name: "overflowing price", file: "gemini_input_price_per_mtok: 1e999\n", wantLoad: true,
			want: []string{`gemini_input_price_per_mtok: line 1: "1e999" is out of range`}},
		{name: "YAML .nan is not a number", file: "gemini_input_price_per_mtok: .nan\n", wantLoad: true,
			want: []string{`gemini_input_price_per_mtok: line 1: ".nan" is not a number`}},
		{name: "viewport beyond limits", file: "viewport_width: 100000\nviewport_height: -1\n",
			want: []string{"viewport_width: 100000 is not between 640 and 3840", "viewport_height: -1 is not between 480 and 2160"}},
		{name: "large max_turns", env: map[string]string{"GEMINI_SUPPLY_MAX_TURNS": "2000000000"},
			want: []string{"max_turns: 2000000000 is not between 1 and 1000"}},
		{name: "overflowing max_turns", env: map[string]string{"GEMINI_SUPPLY_MAX_TURNS": "99999999999999999999999"}, wantLoad: true,
			want: []string{`GEMINI_SUPPLY_MAX_TURNS: "99999999999999999999999" cannot be read as a whole number`}},
		{name: "overflowing concurrency", file: "concurrency: 99999999999999999999999\n", wantLoad: true,
			want: []string{`concurrency: line 1: "99999999999999999999999" is out of range`}},
		{name: "negative concurrency flag", args: []string{"--concurrency", "-3"},
			want: []string{"concurrency: -3 is not between 1 and 8"}},
		{name: "negative time budget", args: []string{"--time-budget", "-5m"},
			want: []string{"time_budget: -5m is not between 10s and 24h"}},
		{name: "long telegram wait", file: "telegram_response_timeout: 1000h\n",
			want: []string{"telegram_response_timeout: 1000h is not between 10s and 24h"}},
		{name: "all at once",
			file: "gemini_input_price_per_mtok: NaN\nviewport_width: 1\nmax_turns: 0\n",
			env:  map[string]string{"GEMINI_SUPPLY_GEMINI_OUTPUT_PRICE_PER_MTOK": "-1", "GEMINI_SUPPLY_TELEGRAM_RESPONSE_TIMEOUT": "1s"},
			args: []string{"--concurrency", "100", "--time-budget", "25h"},
			want: []string{
				"gemini_input_price_per_mtok: NaN",
				"gemini_output_price_per_mtok: -1 must not be negative",
				"viewport_width: 1 is not between",
				"concurrency: 100",
				"time_budget: 25h",
				"max_turns: 0",
				"telegram_response_timeout: 1s",
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			env := fakeEnv{}
			for k, v := range tc.env {
				env[k] = v
			}
			opts := LoadOptions{HomeDir: home, LookupEnv: env.lookup}
			if tc.file != "" {
				p := filepath.Join(home, "config.yaml")
				if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
				opts.ConfigPath = p
			}
			if tc.args != nil {
				fs := flag.NewFlagSet("test", flag.ContinueOnError)
				opts.Flags = BindFlags(fs)
				if err := fs.Parse(tc.args); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := Load(opts)
			if tc.wantLoad {
				checkProblems(t, err, tc.want)
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			cfg.GeminiAPIKey, cfg.MetroUsername, cfg.MetroPassword = "k", "me@example.com", "p"
			checkProblems(t, cfg.Validate(), tc.want)
		})
	}
}

func checkProblems(t *testing.T, err error, want []string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T), want *config.Error with %q", err, err, want)
	}
	var got []string
	for _, p := range ce.Problems {
		got = append(got, p.String())
	}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want %d: %q", got, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
		}
	}
}

// What checkLimits guards: every value a float option may hold that is not
// a real price is refused, at its boundaries too.
func TestPriceBoundaries(t *testing.T) {
	for _, tc := range []struct {
		price float64
		ok    bool
	}{
		{0, true}, {1.5, true}, {MaxPricePerMTok, true},
		{math.Nextafter(0, -1), false}, {math.Nextafter(MaxPricePerMTok, 2000), false},
		{math.NaN(), false}, {math.Inf(1), false}, {math.Inf(-1), false}, {math.MaxFloat64, false},
	} {
		c := valid()
		c.GeminiInputPricePerMTok = tc.price
		err := c.ValidateFor(0)
		if (err == nil) != tc.ok {
			t.Errorf("price %v: err %v, want ok %t", tc.price, err, tc.ok)
		}
	}
	if !slices.ContainsFunc(Limits(), func(l Limit) bool { return l.Key == "gemini_output_price_per_mtok" }) {
		t.Error("the output price has no limit")
	}
}
