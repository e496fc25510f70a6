package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// argError is a bad argument in a model's function call: reported to the
// model so it can correct itself.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func badArg(format string, a ...any) error { return &argError{msg: fmt.Sprintf(format, a...)} }

// action performs one predefined Computer Use function.
type action func(ctx context.Context, c Computer, env actionEnv, args map[string]any) error

// actionEnv is what actions need beyond the Computer and the arguments.
type actionEnv struct {
	homeURL string
}

// Older vocabulary (gemini-2.5-computer-use-preview-10-2025, gemini-3-flash-preview).
var olderActions = map[string]action{
	"open_web_browser": func(ctx context.Context, c Computer, env actionEnv, _ map[string]any) error {
		if u := c.URL(); env.homeURL != "" && (u == "" || u == "about:blank") {
			return c.Navigate(ctx, env.homeURL)
		}
		return nil
	},
	"click_at": clickAction(ButtonLeft, 1),
	"hover_at": atPoint(Computer.Move),
	"type_text_at": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		p, err := point(a, "x", "y")
		if err != nil {
			return err
		}
		text, err := str(a, "text", maxTextLen)
		if err != nil {
			return err
		}
		enter, err := optBool(a, "press_enter", false)
		if err != nil {
			return err
		}
		clear, err := optBool(a, "clear_before_typing", true)
		if err != nil {
			return err
		}
		return c.TypeAt(ctx, p, text, enter, clear)
	},
	"key_combination": withKeys(Computer.PressKeys),
	"scroll_document": withDirection(Computer.ScrollDocument),
	"scroll_at": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		p, err := point(a, "x", "y")
		if err != nil {
			return err
		}
		d, err := direction(a)
		if err != nil {
			return err
		}
		m, err := magnitude(a)
		if err != nil {
			return err
		}
		return c.ScrollAt(ctx, p, d, m)
	},
	"wait_5_seconds": func(ctx context.Context, c Computer, _ actionEnv, _ map[string]any) error {
		return c.Wait(ctx, 5*time.Second)
	},
	"go_back":    noArgs(Computer.GoBack),
	"go_forward": noArgs(Computer.GoForward),
	"search": func(ctx context.Context, c Computer, env actionEnv, _ map[string]any) error {
		if env.homeURL == "" {
			return badArg("search is not available here: use navigate with a URL instead")
		}
		return c.Navigate(ctx, env.homeURL)
	},
	"navigate": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		u, err := str(a, "url", maxURLLen)
		if err != nil {
			return err
		}
		if strings.TrimSpace(u) == "" {
			return badArg("url must not be empty")
		}
		return c.Navigate(ctx, u)
	},
	"drag_and_drop": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		from, err := point(a, "x", "y")
		if err != nil {
			return err
		}
		to, err := point(a, "destination_x", "destination_y")
		if err != nil {
			return err
		}
		return c.DragAndDrop(ctx, from, to)
	},
}

// Newer vocabulary (gemini-3.5-flash and later); go_back, go_forward,
// navigate and drag_and_drop are shared with the older one.
var newerActions = map[string]action{
	"click":        clickAction(ButtonLeft, 1),
	"double_click": clickAction(ButtonLeft, 2),
	"triple_click": clickAction(ButtonLeft, 3),
	"middle_click": clickAction(ButtonMiddle, 1),
	"right_click":  clickAction(ButtonRight, 1),
	"mouse_down": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		b, err := moveThenButton(ctx, c, a)
		if err != nil {
			return err
		}
		return c.MouseDown(ctx, b)
	},
	"mouse_up": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		b, err := moveThenButton(ctx, c, a)
		if err != nil {
			return err
		}
		return c.MouseUp(ctx, b)
	},
	"move": atPoint(Computer.Move),
	"type": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		text, err := str(a, "text", maxTextLen)
		if err != nil {
			return err
		}
		enter, err := optBool(a, "press_enter", false)
		if err != nil {
			return err
		}
		if has(a, "x") || has(a, "y") {
			p, err := point(a, "x", "y")
			if err != nil {
				return err
			}
			clear, err := optBool(a, "clear_before_typing", false)
			if err != nil {
				return err
			}
			return c.TypeAt(ctx, p, text, enter, clear)
		}
		return c.Type(ctx, text, enter)
	},
	"scroll": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		d, err := direction(a)
		if err != nil {
			return err
		}
		if !has(a, "x") && !has(a, "y") && !has(a, "magnitude") {
			return c.ScrollDocument(ctx, d)
		}
		p := Point{X: 500, Y: 500}
		if has(a, "x") || has(a, "y") {
			if p, err = point(a, "x", "y"); err != nil {
				return err
			}
		}
		m, err := magnitude(a)
		if err != nil {
			return err
		}
		return c.ScrollAt(ctx, p, d, m)
	},
	"wait": func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		secs := 5.0
		if has(a, "seconds") {
			v, err := number(a, "seconds")
			if err != nil {
				return err
			}
			if v < 0 || v > 60 {
				return badArg("seconds must be between 0 and 60, got %v", v)
			}
			secs = v
		}
		return c.Wait(ctx, time.Duration(secs*float64(time.Second)))
	},
	"press_key": withKey(Computer.PressKeys),
	"key_down":  withKey(Computer.KeyDown),
	"key_up":    withKey(Computer.KeyUp),
	"hotkey":    withKeys(Computer.PressKeys),
	"take_screenshot": func(context.Context, Computer, actionEnv, map[string]any) error {
		return nil // every action's response carries a fresh screenshot
	},
}

// predefined maps every predefined function name of both vocabularies.
var predefined = func() map[string]action {
	m := map[string]action{}
	for k, v := range olderActions {
		m[k] = v
	}
	for k, v := range newerActions {
		m[k] = v
	}
	return m
}()

func clickAction(b Button, count int) action {
	return atPoint(func(c Computer, ctx context.Context, p Point) error { return c.Click(ctx, p, b, count) })
}

// The constructors below turn a Computer method (as a method expression,
// e.g. Computer.Move) into an action that reads its one argument.

// atPoint: the method takes the point at args x, y.
func atPoint(f func(Computer, context.Context, Point) error) action {
	return func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		p, err := point(a, "x", "y")
		if err != nil {
			return err
		}
		return f(c, ctx, p)
	}
}

// withKey: the method takes the key in args key (or keys).
func withKey(f func(Computer, context.Context, string) error) action {
	return func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		k, err := keyArg(a)
		if err != nil {
			return err
		}
		return f(c, ctx, k)
	}
}

// withKeys: the method takes the combination in args keys.
func withKeys(f func(Computer, context.Context, string) error) action {
	return func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		keys, err := keysArg(a, "keys")
		if err != nil {
			return err
		}
		return f(c, ctx, keys)
	}
}

// withDirection: the method takes the direction in args direction.
func withDirection(f func(Computer, context.Context, Direction) error) action {
	return func(ctx context.Context, c Computer, _ actionEnv, a map[string]any) error {
		d, err := direction(a)
		if err != nil {
			return err
		}
		return f(c, ctx, d)
	}
}

// noArgs: the method takes no argument.
func noArgs(f func(Computer, context.Context) error) action {
	return func(ctx context.Context, c Computer, _ actionEnv, _ map[string]any) error { return f(c, ctx) }
}

func moveThenButton(ctx context.Context, c Computer, a map[string]any) (Button, error) {
	b, err := button(a)
	if err != nil {
		return "", err
	}
	if has(a, "x") || has(a, "y") {
		p, err := point(a, "x", "y")
		if err != nil {
			return "", err
		}
		if err := c.Move(ctx, p); err != nil {
			return "", err
		}
	}
	return b, nil
}

func has(a map[string]any, k string) bool {
	v, ok := a[k]
	return ok && v != nil
}

// number reads a numeric argument; numeric strings are accepted.
func number(a map[string]any, k string) (float64, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return 0, badArg("missing argument %q", k)
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int32:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		x, err := n.Float64()
		if err != nil {
			return 0, badArg("argument %q must be a number, got %q", k, truncate(n.String(), 40))
		}
		f = x
	case string:
		x, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			return 0, badArg("argument %q must be a number, got %q", k, truncate(n, 40))
		}
		f = x
	default:
		return 0, badArg("argument %q must be a number, got %T", k, v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, badArg("argument %q must be a finite number", k)
	}
	return f, nil
}

// coord reads a normalised coordinate and clamps it to 0–999. The clamp is
// done on the float, before any conversion, so a huge value (1e19) becomes
// 999 rather than overflowing.
func coord(a map[string]any, k string) (int, error) {
	f, err := number(a, k)
	if err != nil {
		return 0, err
	}
	return int(math.Round(min(max(f, 0), 999))), nil
}

func point(a map[string]any, kx, ky string) (Point, error) {
	x, err := coord(a, kx)
	if err != nil {
		return Point{}, err
	}
	y, err := coord(a, ky)
	if err != nil {
		return Point{}, err
	}
	return Point{X: x, Y: y}, nil
}

// Length caps on string arguments, in characters: longer is refused with an
// error the model can read, so one action never types or sends without bound.
const (
	maxTextLen = 1000 // text to type: a search, a quantity, a short note
	maxURLLen  = 2048 // a URL to navigate to
	maxKeysLen = 100  // a key name or combination ("Control+Shift+ArrowDown")
	maxWordLen = 32   // short enumerated words (direction, button)
)

// str reads a string argument of at most maxLen characters.
func str(a map[string]any, k string, maxLen int) (string, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return "", badArg("missing argument %q", k)
	}
	s, ok := v.(string)
	if !ok {
		return "", badArg("argument %q must be a string, got %T", k, v)
	}
	if n := utf8.RuneCountInString(s); n > maxLen {
		return "", badArg("argument %q is %d characters long; at most %d are allowed in one action", k, n, maxLen)
	}
	return s, nil
}

func optBool(a map[string]any, k string, def bool) (bool, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return def, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		x, err := strconv.ParseBool(strings.TrimSpace(b))
		if err != nil {
			return false, badArg("argument %q must be true or false, got %q", k, truncate(b, 40))
		}
		return x, nil
	default:
		return false, badArg("argument %q must be true or false, got %T", k, v)
	}
}

func direction(a map[string]any) (Direction, error) {
	s, err := str(a, "direction", maxWordLen)
	if err != nil {
		return "", err
	}
	switch d := Direction(strings.ToLower(strings.TrimSpace(s))); d {
	case DirectionUp, DirectionDown, DirectionLeft, DirectionRight:
		return d, nil
	default:
		return "", badArg("direction must be up, down, left or right, got %q", s)
	}
}

func magnitude(a map[string]any) (int, error) {
	if !has(a, "magnitude") {
		return 800, nil
	}
	f, err := number(a, "magnitude")
	if err != nil {
		return 0, err
	}
	if f <= 0 {
		return 0, badArg("magnitude must be positive, got %v", f)
	}
	return int(math.Round(min(max(f, 1), 999))), nil
}

func button(a map[string]any) (Button, error) {
	if !has(a, "button") {
		return ButtonLeft, nil
	}
	s, err := str(a, "button", maxWordLen)
	if err != nil {
		return "", err
	}
	switch b := Button(strings.ToLower(strings.TrimSpace(s))); b {
	case ButtonLeft, ButtonRight, ButtonMiddle:
		return b, nil
	default:
		return "", badArg("button must be left, right or middle, got %q", s)
	}
}

// keysArg reads a key combination given as "Control+a" or ["Control", "a"],
// at most maxKeysLen characters once joined.
func keysArg(a map[string]any, k string) (string, error) {
	v, ok := a[k]
	if !ok || v == nil {
		return "", badArg("missing argument %q", k)
	}
	var keys string
	switch ks := v.(type) {
	case string:
		keys = ks
	case []any:
		if len(ks) > maxKeysLen {
			return "", badArg("argument %q has %d keys; at most %d characters of keys are allowed in one action", k, len(ks), maxKeysLen)
		}
		parts := make([]string, 0, len(ks))
		for _, x := range ks {
			s, ok := x.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return "", badArg("argument %q must be a list of key names", k)
			}
			parts = append(parts, s)
		}
		keys = strings.Join(parts, "+")
	default:
		return "", badArg("argument %q must be a key combination such as \"Control+a\", got %T", k, v)
	}
	if strings.TrimSpace(keys) == "" {
		return "", badArg("argument %q must not be empty", k)
	}
	if n := utf8.RuneCountInString(keys); n > maxKeysLen {
		return "", badArg("argument %q is %d characters long; at most %d are allowed in one action", k, n, maxKeysLen)
	}
	return keys, nil
}

func keyArg(a map[string]any) (string, error) {
	if has(a, "key") {
		return keysArg(a, "key")
	}
	if has(a, "keys") {
		return keysArg(a, "keys")
	}
	return "", badArg("missing argument %q", "key")
}

// isArgError reports whether err is a bad-argument error.
func isArgError(err error) bool {
	var ae *argError
	return errors.As(err, &ae)
}

// isRejected reports whether the Computer refused the action by policy.
func isRejected(err error) bool {
	var r interface{ Rejected() bool }
	return errors.As(err, &r) && r.Rejected()
}
