package config

import (
	"flag"
	"fmt"
	"reflect"
	"time"
)

// Flags binds the common run flags onto a flag.FlagSet. After the set is
// parsed, Apply (or Load with LoadOptions.Flags) copies only the flags given
// on the command line onto a Config, so an unset flag never hides a value
// from the file or the environment.
type Flags struct {
	fs         *flag.FlagSet
	configPath string
	shadow     Config
	fieldOf    map[string]int // flag name → Config field index
}

// flagDef is one common flag.
type flagDef struct {
	name, field, usage string
}

// flagDefs are the flags BindFlags knows, in the order they are listed.
var flagDefs = []flagDef{
	{"shopping-list", "ShoppingList", "shopping list YAML `file` (shopping_list)"},
	{"todo-entity", "TodoEntity", "shop this Home Assistant to-do `entity` (todo_entity; needs home_assistant_url and home_assistant_token)"},
	{"store", "Store", "store `name`: metro or demo (store)"},
	{"model", "GeminiModel", "Gemini `model`, or \"scripted\" with store demo (gemini_model)"},
	{"concurrency", "Concurrency", fmt.Sprintf("items shopped at once, 1 to %d (concurrency)", MaxConcurrency)},
	{"time-budget", "TimeBudget", "time allowed per item, e.g. 300s, 5m, 1h (time_budget)"},
	{"max-turns", "MaxTurns", fmt.Sprintf("model turns allowed per item, 1 to %d (max_turns)", MaxMaxTurns)},
	{"retry-tagged", "RetryTagged", "also shop items tagged #404 or #failed by an earlier run (retry_tagged)"},
	{"headless", "BrowserHeadless", "run the browser without a window (browser_headless)"},
	{"data-dir", "DataDir", "`dir`ectory for journals, the product memory and the browser profile (data_dir)"},
	{"log-level", "LogLevel", "log `level`: debug, info, warn, error (log_level)"},
}

// FlagNames lists the flags BindFlags can bind besides --config.
func FlagNames() []string {
	names := make([]string, len(flagDefs))
	for i, d := range flagDefs {
		names[i] = d.name
	}
	return names
}

// BindFlags defines --config and the named common flags (all of them when
// names is empty) on fs. The defaults shown in -h are the built-in defaults.
// It panics on a name it does not know (a programming error).
func BindFlags(fs *flag.FlagSet, names ...string) *Flags {
	f := &Flags{fs: fs, fieldOf: map[string]int{}}
	f.shadow = defaults("~", false, func(string) string { return "" })
	fs.StringVar(&f.configPath, "config", "", "config `file` (YAML or JSON; default ~/.config/gemini-supply/config.yaml)")

	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	known := map[string]bool{}
	for _, d := range flagDefs {
		known[d.name] = true
		if len(names) > 0 && !want[d.name] {
			continue
		}
		fi, ok := fieldFor(d.field)
		if !ok {
			panic("config: flag " + d.name + " names unknown field " + d.field)
		}
		p := reflect.ValueOf(&f.shadow).Elem().Field(fi.index).Addr().Interface()
		switch p := p.(type) {
		case *string:
			fs.StringVar(p, d.name, *p, d.usage)
		case *int:
			fs.IntVar(p, d.name, *p, d.usage)
		case *bool:
			fs.BoolVar(p, d.name, *p, d.usage)
		case *time.Duration:
			fs.Var((*durationFlag)(p), d.name, d.usage)
		default:
			panic(fmt.Sprintf("config: flag %s: unsupported type %T", d.name, p))
		}
		f.fieldOf[d.name] = fi.index
	}
	for n := range want {
		if !known[n] {
			panic("config: unknown flag name " + n)
		}
	}
	return f
}

// Apply copies the flags set on the command line onto c.
func (f *Flags) Apply(c *Config) {
	dst := reflect.ValueOf(c).Elem()
	src := reflect.ValueOf(&f.shadow).Elem()
	f.fs.Visit(func(fl *flag.Flag) {
		if i, ok := f.fieldOf[fl.Name]; ok {
			dst.Field(i).Set(src.Field(i))
		}
	})
}

// durationFlag is a duration flag read as the config file reads one: a
// bare number ("--time-budget 300") is refused with the unit it needs.
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }

func (d *durationFlag) Set(v string) error {
	p, err := ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q %w", v, err)
	}
	*d = durationFlag(p)
	return nil
}
