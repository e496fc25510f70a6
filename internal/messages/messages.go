// Package messages is the one catalogue of what gemini-supply says to the
// household — in the panel, notifications, Telegram, the phone, summaries
// and voice answers — in every language it speaks (English and French).
//
// Texts live in catalog/<area>.<lang>.yaml, flat maps of key to text; a
// text names its values in braces ("{item} was added"). Keys are
// "<area>.<name>" and unique across files. The tests check that every
// language has every key with the same placeholders, so a new text is
// added to each language at once.
package messages

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Languages the catalogue holds; the first is the fallback.
var Languages = []string{"en", "fr"}

//go:embed catalog/*.yaml
var files embed.FS

// texts is every language's catalogue, read once.
var texts = mustLoad(files)

// Catalog is the texts of one language. The zero value speaks English.
type Catalog struct {
	lang string
}

// For returns the catalogue of a language tag ("fr", "fr-CA", "fr_CA",
// "FR"); English for an unknown or empty tag.
func For(tag string) Catalog {
	base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(strings.ReplaceAll(tag, "_", "-"))), "-")
	if slices.Contains(Languages, base) {
		return Catalog{lang: base}
	}
	return Catalog{lang: Languages[0]}
}

// Lang is the catalogue's language ("en", "fr").
func (c Catalog) Lang() string {
	if c.lang == "" {
		return Languages[0]
	}
	return c.lang
}

// T is the text under key with its placeholders filled from args, given as
// name, value pairs: T("run.added", "item", "milk"). A key the language
// lacks falls back to English, then to the key itself (the tests keep
// both from happening).
func (c Catalog) T(key string, args ...any) string {
	s, ok := texts[c.Lang()][key]
	if !ok {
		if s, ok = texts[Languages[0]][key]; !ok {
			return key
		}
	}
	if len(args) == 0 || !strings.Contains(s, "{") {
		return s
	}
	pairs := make([]string, 0, len(args))
	for i := 0; i+1 < len(args); i += 2 {
		pairs = append(pairs, "{"+fmt.Sprint(args[i])+"}", fmt.Sprint(args[i+1]))
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// Area is every text whose key starts with area+"." (the panel's strings
// for its page, say), keyed without that prefix.
func (c Catalog) Area(area string) map[string]string {
	out := map[string]string{}
	for _, lang := range []string{Languages[0], c.Lang()} {
		for k, v := range texts[lang] {
			if name, ok := strings.CutPrefix(k, area+"."); ok {
				out[name] = v
			}
		}
	}
	return out
}

var placeholder = regexp.MustCompile(`\{([a-z_][a-z0-9_]*)\}`)

// Placeholders is the sorted names a text fills in.
func Placeholders(text string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// load reads every catalog/<area>.<lang>.yaml of fsys.
func load(fsys fs.FS) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, l := range Languages {
		out[l] = map[string]string{}
	}
	names, err := fs.Glob(fsys, "catalog/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("messages: listing the catalogue: %w", err)
	}
	for _, name := range names {
		base := strings.TrimSuffix(path.Base(name), ".yaml")
		area, lang, ok := strings.Cut(base, ".")
		if !ok || !slices.Contains(Languages, lang) {
			return nil, fmt.Errorf("messages: %s: want catalog/<area>.<%s>.yaml", name, strings.Join(Languages, "|"))
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("messages: %w", err)
		}
		var m map[string]string
		if err := yaml.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("messages: %s: %w", name, err)
		}
		for k, v := range m {
			if !strings.HasPrefix(k, area+".") {
				return nil, fmt.Errorf("messages: %s: key %q does not start with %q", name, k, area+".")
			}
			out[lang][k] = v
		}
	}
	return out, nil
}

func mustLoad(fsys fs.FS) map[string]map[string]string {
	t, err := load(fsys)
	if err != nil {
		panic(err)
	}
	return t
}

// Keys is every key of the fallback language, sorted.
func Keys() []string {
	return slices.Sorted(maps.Keys(texts[Languages[0]]))
}

// Foreign is the fixed parts of the fallback language's (English) texts
// that text holds although c's language says them otherwise: what a page,
// message or notification rendered in c's language left untranslated.
// A text's parts between placeholders count when they have a word of at
// least four letters and c's text of the same key does not hold them too
// ("Telegram" is Telegram in French as well). Empty for English.
func (c Catalog) Foreign(text string) []string {
	if c.Lang() == Languages[0] {
		return nil
	}
	var out []string
	for _, key := range Keys() {
		en, own := texts[Languages[0]][key], texts[c.Lang()][key]
		if strings.Contains(key, ".words_") {
			continue // typed replies, never shown
		}
		for _, part := range placeholder.Split(en, -1) {
			part = strings.TrimSpace(part)
			if !longWord.MatchString(part) || strings.Contains(own, part) {
				continue
			}
			if strings.Contains(text, part) && !slices.Contains(out, part) {
				out = append(out, part)
			}
		}
	}
	return out
}

var longWord = regexp.MustCompile(`\p{L}{4,}`)

// Text is a sentence kept as data — its catalogue key and the values of its
// placeholders — so that it is said in the language of whoever reads it
// (a warning made during a run, shown later in the panel, on the phone or
// in the summary). The zero Text has no key: say the English text kept
// beside it instead (journals written before keys).
type Text struct {
	Key  string            `json:"key,omitempty"`
	Args map[string]string `json:"args,omitempty"`
	// About is what the text is about (an item's name), said before it as
	// written: "<about>: <text>".
	About string `json:"about,omitempty"`
}

// Say is the Text of key with its values as name, value pairs (as T takes
// them). A value "@<key>" is the catalogue's text of that key, said in the
// reader's language too (an outcome's word).
func Say(key string, args ...any) Text {
	t := Text{Key: key}
	for i := 0; i+1 < len(args); i += 2 {
		if t.Args == nil {
			t.Args = map[string]string{}
		}
		t.Args[fmt.Sprint(args[i])] = fmt.Sprint(args[i+1])
	}
	return t
}

// Say is t in c's language; fallback when t has no key or c's catalogue
// (and English) lack it.
func (c Catalog) Say(t Text, fallback string) string {
	if t.Key == "" {
		return fallback
	}
	if _, ok := texts[Languages[0]][t.Key]; !ok {
		return fallback
	}
	args := make([]any, 0, 2*len(t.Args))
	for _, k := range slices.Sorted(maps.Keys(t.Args)) {
		v := t.Args[k]
		if ref, ok := strings.CutPrefix(v, "@"); ok {
			if _, known := texts[Languages[0]][ref]; known {
				v = c.T(ref) // a word of the catalogue ("@warning.outcome_failed")
			}
		}
		args = append(args, k, v)
	}
	s := c.T(t.Key)
	if len(args) > 0 {
		s = c.T(t.Key, args...)
	}
	if t.About != "" {
		s = t.About + ": " + s
	}
	return s
}

// English is t in English (what is kept as the text beside it).
func (t Text) English() string { return For(Languages[0]).Say(t, t.Key) }
