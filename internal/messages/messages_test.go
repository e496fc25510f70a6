package messages

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// Every language has every key, with the same placeholders: a text added
// in one language only, or a translation that drops {item}, fails here.
func TestEveryLanguageHasEveryText(t *testing.T) {
	en := texts[Languages[0]]
	if len(en) == 0 {
		t.Fatal("the English catalogue is empty")
	}
	for _, lang := range Languages[1:] {
		other := texts[lang]
		for k, v := range en {
			tr, ok := other[k]
			switch {
			case !ok:
				t.Errorf("%s: %q has no translation", lang, k)
			case strings.TrimSpace(tr) == "":
				t.Errorf("%s: %q is empty", lang, k)
			case !slices.Equal(Placeholders(v), Placeholders(tr)):
				t.Errorf("%s: %q fills %v, English fills %v", lang, k, Placeholders(tr), Placeholders(v))
			}
		}
		for k := range other {
			if _, ok := en[k]; !ok {
				t.Errorf("%s: %q is not in the English catalogue", lang, k)
			}
		}
	}
}

func TestFor(t *testing.T) {
	for _, c := range []struct{ tag, want string }{
		{"fr", "fr"}, {"fr-CA", "fr"}, {"fr_CA", "fr"}, {"FR", "fr"},
		{"en", "en"}, {"en-US", "en"}, {"", "en"}, {"de", "en"}, {" fr ", "fr"},
	} {
		if got := For(c.tag).Lang(); got != c.want {
			t.Errorf("For(%q) = %s, want %s", c.tag, got, c.want)
		}
	}
	if (Catalog{}).Lang() != "en" {
		t.Error("the zero Catalog does not speak English")
	}
}

func TestT(t *testing.T) {
	saved := texts
	t.Cleanup(func() { texts = saved })
	texts = map[string]map[string]string{
		"en": {"a.added": "{item} was added ({n} × {item})", "a.only_en": "English only"},
		"fr": {"a.added": "{item} a été ajouté ({n} × {item})"},
	}
	fr := For("fr")
	for _, c := range []struct {
		cat  Catalog
		key  string
		args []any
		want string
	}{
		{fr, "a.added", []any{"item", "lait", "n", 2}, "lait a été ajouté (2 × lait)"},
		{For("en"), "a.added", []any{"item", "milk", "n", 1}, "milk was added (1 × milk)"},
		{fr, "a.only_en", nil, "English only"},
		{fr, "a.missing", nil, "a.missing"},
		{fr, "a.added", []any{"item", "{n}", "n", 3}, "{n} a été ajouté (3 × {n})"},
	} {
		if got := c.cat.T(c.key, c.args...); got != c.want {
			t.Errorf("%s T(%q, %v) = %q, want %q", c.cat.Lang(), c.key, c.args, got, c.want)
		}
	}
	if got := fr.Area("a"); got["added"] != "{item} a été ajouté ({n} × {item})" || got["only_en"] != "English only" {
		t.Errorf("Area(a) = %v", got)
	}
}

func TestLoadRefusesBadFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		fs   fstest.MapFS
		want string
	}{
		{"unknown language", fstest.MapFS{"catalog/panel.de.yaml": {Data: []byte("panel.x: y\n")}}, "want catalog"},
		{"key of another area", fstest.MapFS{"catalog/panel.en.yaml": {Data: []byte("notify.x: y\n")}}, "does not start"},
		{"key twice", fstest.MapFS{"catalog/panel.en.yaml": {Data: []byte("panel.x: y\npanel.x: z\n")}}, "already defined"},
		{"not a map", fstest.MapFS{"catalog/panel.en.yaml": {Data: []byte("- a\n")}}, "panel.en.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := load(c.fs); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("load: %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestForeign(t *testing.T) {
	saved := texts
	t.Cleanup(func() { texts = saved })
	texts = map[string]map[string]string{
		"en": {"a.added": "{item} was added to the cart", "a.name": "Telegram", "a.ok": "OK", "a.words_yes": "yes|sure"},
		"fr": {"a.added": "{item} a été ajouté au panier", "a.name": "Telegram", "a.ok": "D'accord", "a.words_yes": "oui"},
	}
	fr := For("fr")
	for _, c := range []struct {
		text string
		want []string
	}{
		{"lait a été ajouté au panier (Telegram)", nil},
		{"lait was added to the cart", []string{"was added to the cart"}},
		{"OK sure", nil}, // too short to tell, and replies are not shown
	} {
		if got := fr.Foreign(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Foreign(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	if got := For("en").Foreign("lait was added to the cart"); got != nil {
		t.Errorf("English Foreign = %q, want none", got)
	}
}
