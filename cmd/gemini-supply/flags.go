package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/gemini-supply/gemini-supply/internal/app"
	"github.com/gemini-supply/gemini-supply/internal/config"
)

// usageError is a command line the command cannot use: exit code 2.
type usageError struct {
	cmd string
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// exitCode maps an error to the process exit code: 0 for none and for -h,
// 2 for usage errors (bad flags, bad configuration), 1 otherwise.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// newFlagSet makes a subcommand's flag set. synopsis is the usage line after
// "gemini-supply NAME"; about, when not empty, is printed below it.
func newFlagSet(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: gemini-supply %s %s\n", name, synopsis)
		if about != "" {
			fmt.Fprintf(w, "\n%s\n", strings.TrimRight(about, "\n"))
		}
		fmt.Fprintln(w, "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs. On -h it prints the command's usage to
// stderr and returns flag.ErrHelp; on a bad command line it prints the
// problem and a one-line hint ("run 'gemini-supply shop -h'") and returns a
// *usageError. Positional arguments are a usage error unless allowArgs.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer, allowArgs bool) error {
	fs.SetOutput(io.Discard) // the flag package would print the whole usage on every error
	err := parseInterspersed(fs, args)
	fs.SetOutput(stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return flag.ErrHelp
	case err != nil:
		return usageFailure(fs.Name(), stderr, withSuggestion(fs, err))
	case !allowArgs && fs.NArg() > 0:
		return usageFailure(fs.Name(), stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	return nil
}

// parseInterspersed parses flags wherever they stand among the arguments
// ("products forget bread --store demo"), as people type them; "--" ends
// the flags. Afterwards fs.Args() holds the arguments in order.
func parseInterspersed(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...) // after "--": all arguments
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// withSuggestion adds the closest known flag to an unknown flag's error:
// "flag provided but not defined: -concurency (did you mean --concurrency?)".
func withSuggestion(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return err
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if best := config.Closest(name, names); best != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, best)
	}
	return err
}

// usageFailure reports a usage error with the hint and returns it.
func usageFailure(cmd string, stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "gemini-supply %s: %v\nrun 'gemini-supply %s -h' for usage\n", cmd, err, cmd)
	return &usageError{cmd: cmd, err: err}
}

// configFailure reports a configuration error (every problem, one a line),
// points to the documentation and returns it as a usage error (exit 2).
func configFailure(cmd string, stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "gemini-supply %s: %v\nsee docs/configuration.md for every option\n", cmd, err)
	return &usageError{cmd: cmd, err: err}
}

// loadOptions are the config sources of every command: the zero value reads
// the process environment and home directory. Tests replace it.
var loadOptions config.LoadOptions

// shopOptions is what `shop` was asked to do: the merged, validated config
// and the options that only make sense for one run.
type shopOptions struct {
	cfg config.Config
	// dryRun lists what would be shopped and stops.
	dryRun bool
	// json prints the result (the dry-run plan, the run summary) as JSON.
	json bool
	// ui is where the panel is served during the run ("": nowhere).
	ui string
}

const shopAbout = `Shops every open item of the shopping list: one browser tab and one Gemini
agent per item, at most --concurrency at once. Items tagged #404 or #failed
by an earlier run are skipped unless --retry-tagged; duplicates are shopped
once. Nothing is ever ordered: review the cart and check out yourself.

Settings come from, lowest first: built-in defaults, the config file, the
environment (GEMINI_SUPPLY_*, GEMINI_API_KEY, TELEGRAM_BOT_TOKEN, ...) and
these flags. See docs/configuration.md.`

// parseShopFlags parses `shop`'s command line, loads the config (defaults <
// file < env < flags) and validates it: for a dry run only that settings are
// well-formed, for a real run also that the credentials it needs are there.
// Errors were already printed to stderr; exitCode maps them.
func parseShopFlags(args []string, stderr io.Writer) (shopOptions, error) {
	var o shopOptions
	fs := newFlagSet("shop", "[flags]", shopAbout)
	flags := config.BindFlags(fs)
	fs.BoolVar(&o.dryRun, "dry-run", false, "list the items that would be shopped, then exit")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON on stdout")
	fs.StringVar(&o.ui, "ui", "", "serve the web panel on `ADDR` while the run lasts (a port alone binds 127.0.0.1)")
	if err := parseFlags(fs, args, stderr, false); err != nil {
		return o, err
	}

	need := config.NeedAll
	if o.dryRun {
		need = 0
	}
	load := loadOptions
	load.Flags = flags
	load.Need = need // a missing credential is said with the file's problems
	cfg, err := loadConfig(load, stderr)
	if err != nil {
		return o, configFailure("shop", stderr, err)
	}
	if err := cfg.ValidateFor(need); err != nil {
		return o, configFailure("shop", stderr, err)
	}
	if err := useTodoEntity(fs, &cfg, "shop", stderr); err != nil {
		return o, err
	}
	o.cfg = cfg
	return o, nil
}

// useTodoEntity: with --todo-entity the command works on the Home
// Assistant list, even when a YAML list is configured.
func useTodoEntity(fs *flag.FlagSet, cfg *config.Config, cmd string, stderr io.Writer) error {
	if !flagSet(fs, "todo-entity") {
		return nil
	}
	if !app.HomeAssistantConfigured(*cfg) {
		return configFailure(cmd, stderr, errors.New("--todo-entity needs Home Assistant: set home_assistant_url and home_assistant_token"))
	}
	cfg.ShoppingList = ""
	return nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// loadConfig loads the configuration (config.Load) and warns on stderr of
// GEMINI_SUPPLY_ variables that are no setting (a misspelt one would
// otherwise be silently ignored), naming the closest known one.
func loadConfig(load config.LoadOptions, stderr io.Writer) (config.Config, error) {
	for _, w := range config.EnvWarnings(load) {
		fmt.Fprintf(stderr, "gemini-supply: warning: %s\n", w)
	}
	return config.Load(load)
}
