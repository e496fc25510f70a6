package panel

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// The page's texts and the catalogue's panel area are the same set of
// keys: every text the page (index.html, app.js) or the panel's Go code
// asks for exists (in every language: package messages checks that), every
// catalogue text is used, and every value a text is chosen by (states,
// outcomes, confidences, warnings, rules) has one.
func TestThePageSaysOnlyCatalogueTexts(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	js, html := read("static/app.js"), read("static/index.html")
	var goSrc strings.Builder
	for _, name := range []string{"panel.go", "ask.go", "live.go", "history.go", "usual.go"} {
		goSrc.WriteString(read(name))
	}
	have := messages.For("en").Area("panel")
	asked := map[string]string{}
	for _, c := range []struct {
		where, src string
		re         *regexp.Regexp
	}{
		{"app.js", js, regexp.MustCompile(`\bt\('([a-z_]+)'`)},
		{"app.js", js, regexp.MustCompile(`\bt\([^()]*\? '([a-z_]+)' : '([a-z_]+)'`)},
		// tn('key', n): the key's plural forms.
		{"app.js", regexp.MustCompile(`\btn\('([a-z_]+)'`).ReplaceAllString(js, "t('${1}_one' t('${1}_other'"), regexp.MustCompile(`\bt\('([a-z_]+)'`)},
		{"index.html", html, regexp.MustCompile(`\{\{t "([a-z_]+)"\}\}`)},
		{"the panel's Go code", goSrc.String(), regexp.MustCompile(`"panel\.([a-z_]+)"`)},
	} {
		for _, m := range c.re.FindAllStringSubmatch(c.src, -1) {
			for _, k := range m[1:] {
				asked[k] = c.where
			}
		}
	}
	// Texts chosen by a value: t(`state_${s.state}`) and the like.
	families := map[string][]string{
		"state_":      {string(runstatus.StateIdle), string(runstatus.StateInitializing), string(runstatus.StateAuthenticating), string(runstatus.StateShopping), string(runstatus.StateReviewing), string(runstatus.StateReviewReady), string(runstatus.StateCancelled), string(runstatus.StateFailed)},
		"outcome_":    {string(report.OutcomeAdded), string(report.OutcomeNotFound), string(report.OutcomeFailed), string(report.OutcomeDuplicate), string(report.OutcomeSkipped), string(report.OutcomeNotShopped), "in_progress"},
		"confidence_": {string(reviewpack.Replayed), string(reviewpack.AgentOneMatch), string(reviewpack.AgentChose), string(reviewpack.Agent), string(reviewpack.Substitute), string(reviewpack.Household)},
		"warn_":       warnKinds(),
		"policy_":     {"no_substitute", "always_ask", "any_brand"},
		// needs_person's reasons (browser.ReasonSignInChallenge, shop.ReasonItem…).
		"needs_reason_": {"sign_in_challenge", "item_gave_up", "item_requested", "item_agent_asked"},
	}
	for prefix, values := range families {
		if !strings.Contains(js, "t(`"+prefix+"${") {
			t.Errorf("app.js no longer chooses %s… texts by value: update this test", prefix)
		}
		for _, v := range values {
			asked[prefix+v] = "app.js (" + prefix + "…)"
		}
	}
	for k, where := range asked {
		if _, ok := have[k]; !ok {
			t.Errorf("%s asks for panel.%s, which the catalogue does not have", where, k)
		}
	}
	for k := range have {
		if _, ok := asked[k]; !ok && !strings.Contains(js, "'"+k+"'") {
			t.Errorf("panel.%s is in the catalogue but the page never says it", k)
		}
	}
	// No English left in the page's own code: every text a person reads
	// is t(…); what remains in quotes is keys, names, classes and ids.
	for _, lit := range regexp.MustCompile(`textContent: '([^']+)'`).FindAllStringSubmatch(js, -1) {
		t.Errorf("app.js shows a literal text %q: take it from the catalogue", lit[1])
	}
	text := regexp.MustCompile(`>([^<>{}]*[A-Za-z]{3,}[^<>{}]*)<`)
	for _, m := range text.FindAllStringSubmatch(html, -1) {
		t.Errorf("index.html shows a literal text %q: take it from the catalogue", strings.TrimSpace(m[1]))
	}
	if !slices.Contains(messages.Languages, "fr") {
		t.Fatal("the catalogue speaks no French")
	}
	// A French text the same as the English is a text left untranslated,
	// but for these.
	same := []string{"questions_title", "seconds"}
	fr := messages.For("fr").Area("panel")
	for k, v := range have {
		if fr[k] == v && !slices.Contains(same, k) {
			t.Errorf("panel.%s is %q in French too: translate it (or add it to the same words here)", k, v)
		}
	}
}

// warnKinds are the kinds an item's warning in the review pack may have.
func warnKinds() []string {
	var kinds []string
	for _, k := range reviewpack.ItemWarningKinds {
		kinds = append(kinds, string(k))
	}
	return kinds
}

// An attempt's count of model calls is said in a household's words, with
// the language's plural (issue 34): "1 model call", "3 model calls", "3
// appels au modèle" — not "3 turns".
func TestThePageCountsModelCallsNotTurns(t *testing.T) {
	js, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "t('turns'") {
		t.Error("app.js says t('turns', …): a count needs tn('turns', n)")
	}
	for _, c := range []struct{ lang, key, want string }{
		{"en", "turns_one", "1 model call"},
		{"en", "turns_other", "3 model calls"},
		{"fr", "turns_one", "1 appel au modèle"},
		{"fr", "turns_other", "3 appels au modèle"},
	} {
		n := 3
		if strings.HasSuffix(c.key, "_one") {
			n = 1
		}
		if got := messages.For(c.lang).T("panel."+c.key, "n", n); got != c.want {
			t.Errorf("%s panel.%s with n=%d = %q, want %q", c.lang, c.key, n, got, c.want)
		}
	}
}
