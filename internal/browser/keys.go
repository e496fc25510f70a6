package browser

import (
	"fmt"
	"strings"
)

// keyAliases maps lower-cased key names, as models write them, to the
// names Playwright's keyboard knows.
var keyAliases = map[string]string{
	"control": "Control", "ctrl": "Control", "ctl": "Control",
	"meta": "Meta", "cmd": "Meta", "command": "Meta", "super": "Meta", "win": "Meta", "windows": "Meta", "os": "Meta",
	"alt": "Alt", "option": "Alt", "opt": "Alt", "altgr": "AltGraph", "altgraph": "AltGraph",
	"shift":         "Shift",
	"controlormeta": "ControlOrMeta",
	"enter":         "Enter", "return": "Enter",
	"escape": "Escape", "esc": "Escape",
	"tab":   "Tab",
	"space": "Space", "spacebar": "Space",
	"backspace": "Backspace", "bksp": "Backspace",
	"delete": "Delete", "del": "Delete",
	"insert": "Insert", "ins": "Insert",
	"home": "Home", "end": "End",
	"pageup": "PageUp", "pgup": "PageUp",
	"pagedown": "PageDown", "pgdn": "PageDown", "pgdown": "PageDown",
	"arrowup": "ArrowUp", "up": "ArrowUp", "uparrow": "ArrowUp",
	"arrowdown": "ArrowDown", "down": "ArrowDown", "downarrow": "ArrowDown",
	"arrowleft": "ArrowLeft", "left": "ArrowLeft", "leftarrow": "ArrowLeft",
	"arrowright": "ArrowRight", "right": "ArrowRight", "rightarrow": "ArrowRight",
	"capslock": "CapsLock", "numlock": "NumLock", "scrolllock": "ScrollLock",
	"pause": "Pause", "printscreen": "PrintScreen", "contextmenu": "ContextMenu", "menu": "ContextMenu",
	"plus": "+", "minus": "-", "equal": "=", "equals": "=", "comma": ",", "period": ".", "dot": ".",
	"slash": "/", "backslash": `\`, "semicolon": ";", "quote": "'", "apostrophe": "'", "backquote": "`",
	"bracketleft": "[", "bracketright": "]",
}

var modifierKeys = map[string]bool{"Control": true, "Meta": true, "Alt": true, "Shift": true, "ControlOrMeta": true, "AltGraph": true}

func init() {
	for i := 1; i <= 12; i++ {
		keyAliases[fmt.Sprintf("f%d", i)] = fmt.Sprintf("F%d", i)
	}
	for d := '0'; d <= '9'; d++ {
		keyAliases["numpad"+string(d)] = "Numpad" + string(d)
	}
}

// canonicalKey returns Playwright's name for one key as a model wrote it:
// names are case-insensitive and "_", "-" and spaces inside multi-letter
// names are ignored ("page_down", "Arrow-Up"). Single printable characters
// stand for themselves.
func canonicalKey(name string) (string, error) {
	if name == " " {
		return "Space", nil
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return "", &InputError{Input: name, Reason: "empty key name"}
	}
	if r := []rune(name); len(r) == 1 {
		if r[0] > 0x20 && r[0] < 0x7f {
			return name, nil
		}
		return "", &InputError{Input: name, Reason: "only keys of a US keyboard can be pressed; type other characters as text"}
	}
	folded := strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(name))
	if k, ok := keyAliases[folded]; ok {
		return k, nil
	}
	return "", &InputError{Input: name, Reason: "unknown key name (use names such as Enter, Escape, Tab, Backspace, ArrowDown, PageDown, Control, Shift, Alt, Meta, F5, or a single character)"}
}

// parseCombo splits a key combination such as "Control+Shift+t" into
// modifiers and the final key, each in Playwright's names. "Control++"
// presses Control and "+". In a combination with Control, Alt or Meta a
// letter is lower-cased ("Control+A" selects all rather than typing "A").
func parseCombo(combo string) (mods []string, key string, err error) {
	s := strings.TrimSpace(combo)
	if s == "" {
		return nil, "", &InputError{Input: combo, Reason: "no key given"}
	}
	var parts []string
	switch {
	case s == "+":
		parts = []string{"+"}
	case strings.HasSuffix(s, "++"):
		parts = append(strings.Split(s[:len(s)-2], "+"), "+")
	default:
		parts = strings.Split(s, "+")
	}
	names := make([]string, 0, len(parts))
	for _, p := range parts {
		k, err := canonicalKey(p)
		if err != nil {
			return nil, "", &InputError{Input: combo, Reason: err.(*InputError).Reason + fmt.Sprintf(" (key %q)", strings.TrimSpace(p))}
		}
		names = append(names, k)
	}
	mods, key = names[:len(names)-1], names[len(names)-1]
	for _, m := range mods {
		if !modifierKeys[m] {
			return nil, "", &InputError{Input: combo, Reason: fmt.Sprintf("%q is not a modifier; only the last key of a combination may be a normal key", m)}
		}
	}
	if len(mods) > 0 && len(key) == 1 && key[0] >= 'A' && key[0] <= 'Z' {
		for _, m := range mods {
			if m != "Shift" {
				key = strings.ToLower(key)
				break
			}
		}
	}
	return mods, key, nil
}

// keyStroke is one step of typing text: a key to press, or text to insert
// for characters no key produces.
type keyStroke struct {
	key    string // Playwright key name, or ""
	insert string // text to insert when key is ""
}

// strokes turns text into key presses (printable ASCII, Enter for a line
// break, Tab) and insertions (everything else, e.g. "é", "€", emoji), so
// that pages see keydown/keypress/input/keyup for ordinary typing.
func strokes(text string) []keyStroke {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	out := make([]keyStroke, 0, len(text))
	for _, r := range text {
		switch {
		case r == '\n' || r == '\r':
			out = append(out, keyStroke{key: "Enter"})
		case r == '\t':
			out = append(out, keyStroke{key: "Tab"})
		case r >= 0x20 && r < 0x7f:
			out = append(out, keyStroke{key: string(r)})
		default:
			if n := len(out); n > 0 && out[n-1].key == "" {
				out[n-1].insert += string(r)
				continue
			}
			out = append(out, keyStroke{insert: string(r)})
		}
	}
	return out
}
