package demostore

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSignInChallenge: with the challenge on, the right password is not
// enough; the "not a robot" tick and the inbox's code sign the shopper in
// and bring them back where they were.
func TestSignInChallenge(t *testing.T) {
	s := startStore(t, Options{SignInChallenge: true})
	c := s.Client()
	u, p := s.Credentials()
	page := login(t, s, c, "/en/online-grocery/search?filter=milk", u, p)
	if page.url.Host != HostAuth || !strings.Contains(page.body, `data-challenge="sign-in"`) || s.State().LoggedIn {
		t.Fatalf("after the password: at %s, logged in %v; want the challenge page", page.url, s.State().LoggedIn)
	}
	for _, id := range []string{`id="not-a-robot"`, `id="code"`, `id="verify"`, `autocomplete="one-time-code"`, `id="open-inbox"`} {
		if !strings.Contains(page.body, id) {
			t.Fatalf("challenge page lacks %s", id)
		}
	}
	code, ok := s.ChallengeCode()
	if !ok || len(code) != 6 {
		t.Fatalf("ChallengeCode() = %q, %v", code, ok)
	}
	inbox := get(t, c, s.BaseURL()+InboxPath)
	if !strings.Contains(inbox.body, `id="inbox-code"`) || !strings.Contains(inbox.body, code) || !strings.Contains(inbox.body, esc(page.url.String())) {
		t.Fatalf("inbox does not show the code and a link back: %s", inbox.body)
	}
	post := func(form url.Values) resp {
		return do(t, c, http.MethodPost, page.url.String(), strings.NewReader(form.Encode()),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	}
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"no tick", url.Values{"code": {code}}, "not a robot"},
		{"wrong code", url.Values{"not_a_robot": {"on"}, "code": {wrong}}, "not right"},
	} {
		if r := post(tc.form); r.url.Host != HostAuth || !strings.Contains(r.body, tc.want) || s.State().LoggedIn {
			t.Fatalf("%s: at %s, logged in %v", tc.name, r.url, s.State().LoggedIn)
		}
	}
	done := post(url.Values{"not_a_robot": {"on"}, "code": {code}})
	if done.url.String() != "https://www.metro.ca/en/online-grocery/search?filter=milk" || !s.State().LoggedIn {
		t.Fatalf("after the code: at %s, logged in %v", done.url, s.State().LoggedIn)
	}
	if _, ok := s.ChallengeCode(); ok {
		t.Fatal("the used challenge is still pending")
	}
}
