package demostore

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

var challengeAction = regexp.MustCompile(`<form id="challenge-form" method="post" action="([^"]+)">\s*<input type="hidden" name="challenge" value="([^"]+)">`)

// With the challenge on, the right password alone does not sign in: the
// shopper must tick the box and type the code the demo inbox shows; a wrong
// code or an unticked box keeps the challenge page.
func TestSignInChallenge(t *testing.T) {
	s := startStore(t, Options{SignInChallenge: true})
	c := s.Client()
	user, pass := s.Credentials()
	r := login(t, s, c, "/en", user, pass)
	if r.url.Host != HostAuth || !strings.Contains(r.body, `id="challenge-code"`) || s.State().LoggedIn {
		t.Fatalf("after the password: at %s, signed in %v; want the challenge page", r.url, s.State().LoggedIn)
	}
	m := challengeAction.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatal("no challenge form")
	}
	action := "https://" + HostAuth + strings.ReplaceAll(m[1], "&amp;", "&")
	code := s.ChallengeCode()
	inbox := get(t, c, s.BaseURL()+InboxPath)
	if len(code) != 6 || !strings.Contains(inbox.body, `<strong id="inbox-code">`+code+`</strong>`) {
		t.Fatalf("the inbox does not show the code %q", code)
	}
	post := func(v url.Values) resp {
		return do(t, c, http.MethodPost, action, strings.NewReader(v.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	}
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"box not ticked", url.Values{"challenge": {m[2]}, "code": {code}}},
		{"wrong code", url.Values{"challenge": {m[2]}, "notRobot": {"1"}, "code": {"x" + code[1:]}}},
	} {
		if r := post(tc.form); r.url.Host != HostAuth || !strings.Contains(r.body, `id="error-message"`) || s.State().LoggedIn {
			t.Fatalf("%s: at %s, signed in %v", tc.name, r.url, s.State().LoggedIn)
		}
	}
	r = post(url.Values{"challenge": {m[2]}, "notRobot": {"1"}, "code": {code}})
	if r.url.Host != HostStore || !s.State().LoggedIn {
		t.Fatalf("right code: at %s, signed in %v", r.url, s.State().LoggedIn)
	}
}

// A second submit of a challenge already passed (a double tap) shows no
// form that can never succeed: it says the check expired and links back to
// the password.
func TestSignInChallengeResubmitted(t *testing.T) {
	s := startStore(t, Options{SignInChallenge: true})
	c := s.Client()
	user, pass := s.Credentials()
	r := login(t, s, c, "/en", user, pass)
	m := challengeAction.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatal("no challenge form")
	}
	action := "https://" + HostAuth + strings.ReplaceAll(m[1], "&amp;", "&")
	form := url.Values{"challenge": {m[2]}, "notRobot": {"1"}, "code": {s.ChallengeCode()}}
	post := func() resp {
		return do(t, c, http.MethodPost, action, strings.NewReader(form.Encode()), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	}
	if r := post(); r.url.Host != HostStore {
		t.Fatalf("first submit: at %s", r.url)
	}
	r = post()
	if r.url.Host != HostAuth || strings.Contains(r.body, `id="challenge-form"`) || !strings.Contains(r.body, `id="challenge-restart"`) || strings.Contains(r.body, "challenge=") {
		t.Fatalf("second submit: at %s\n%s", r.url, r.body)
	}
}
