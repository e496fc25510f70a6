package browser

import (
	"net/http"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestLoginTabScriptsGetNoLoginPermissions: while the scripted login runs
// and its tab still shows a store page, that page's scripts (fetch, a
// beacon, an image) and its HTML form posts (documents, into a frame) get
// the plain policy — only the login tab's document navigations, the
// identity site's post back and requests to the login hosts carry the
// login's token. The login itself then completes.
func TestLoginTabScriptsGetNoLoginPermissions(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	s, err := demostore.Start(t.Context(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prof := store.Demo()
	// Hold the login on the store's page, before it leaves for the
	// identity site.
	prof.LoginSteps = holdLoginAfter(prof.LoginSteps, func(st store.LoginStep) bool { return st.Kind == store.StepGoto })
	o := baseOptions(t, prof, t.TempDir(), s.HostResolverRules(), nil)
	user, pass := s.Credentials()
	o.Username, o.Password = user, config.Secret(pass)
	o.UpstreamRoots = s.CertPool()
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)

	loginDone := make(chan error, 1)
	go func() { loginDone <- h.Login(ctx) }()
	var loginPage playwright.Page
	waitFor(t, "the login tab on the store", 3*patience, func() bool {
		h.mu.Lock()
		loginPage = h.loginPage
		h.mu.Unlock()
		return loginPage != nil && strings.HasPrefix(loginPage.URL(), "https://"+demostore.HostStore+"/")
	})
	got, err := loginPage.Evaluate(`async () => {
  const r = {};
  const status = async (name, p) => { try { r[name] = (await p).status; } catch (e) { r[name] = 'error'; } };
  await status('account path', fetch('/en/account/settings/probe-login-tab'));
  await status('login path', fetch('/en/login/probe-login-tab'));
  await status('state change', fetch('/en/probe-login-tab-post', {method: 'POST', body: 'x'}));
  navigator.sendBeacon('/en/account/edit/probe-login-tab-beacon', 'x');
  r.image = await new Promise((res) => { const i = new Image(); i.onload = () => res('load'); i.onerror = () => res('error'); i.src = '/en/account/settings/probe-login-tab.png'; });
  // A form POST is a document request: into a frame, to a blocked account
  // path and to a path outside the cart operations.
  const post = (action) => new Promise((res) => {
    const name = 'f' + Math.random(); const f = document.createElement('iframe'); f.name = name; document.body.append(f);
    f.addEventListener('load', () => res(), {once: true}); setTimeout(res, 15000); // bounds a frame left blank
    const form = document.createElement('form'); form.method = 'post'; form.action = action; form.target = name;
    const i = document.createElement('input'); i.name = 'x'; i.value = '1'; form.append(i); document.body.append(form); form.submit();
  });
  await post('/en/account/settings/probe-login-tab-form');
  await post('/en/probe-login-tab-form-post');
  return r;
}`)
	mustDo(t, "run the login tab's scripts", err)
	t.Logf("the login tab's scripts: %v", got)
	if m, _ := got.(map[string]any); m != nil {
		for _, name := range []string{"account path", "login path", "state change"} {
			if code, _ := m[name].(int); code != http.StatusForbidden {
				t.Errorf("%s from the login tab's script: %v, want the proxy's 403", name, m[name])
			}
		}
	}
	// The beacon has no answer: wait until all seven were refused.
	waitFor(t, "the script requests and form posts to be refused", patience, func() bool {
		r := h.Refused()
		return r[store.RuleBlockedPath]+r[store.RuleStateChange] >= 7
	})
	_, err = loginPage.Evaluate(`() => document.body.insertAdjacentHTML('beforeend', '<div id="hold-released">go on</div>')`)
	mustDo(t, "release the login", err)
	select {
	case err := <-loginDone:
		mustDo(t, "the login (its documents still carry the token)", err)
	case <-ctx.Done():
		t.Fatal("the login did not finish")
	}
	if !s.State().LoggedIn {
		t.Fatal("the login finished but the store has no session")
	}
	for k, n := range s.Requests() {
		if strings.Contains(k, "probe-login-tab") {
			t.Errorf("a script of the login tab got the login's permissions: %s ×%d", k, n)
		}
	}
}

// TestLoginTagOnlyOnLoginDocuments: which paused requests of the login tab
// get the login's token (loginTagged), for metro's profile.
func TestLoginTagOnlyOnLoginDocuments(t *testing.T) {
	h := &Host{profile: store.Metro()}
	const main = "MAIN"
	for _, tc := range []struct {
		name, rtype, method, target, frame, top string
		want                                    bool
	}{
		{"navigation to the store", "Document", "GET", "https://www.metro.ca/en", main, "about:blank", true},
		{"frame navigation", "Document", "GET", "https://www.metro.ca/en/login", "SUB", "https://www.metro.ca/en", true},
		{"sign-in form post to the identity site", "Document", "POST", "https://auth.moiid.ca/b2c/SelfAsserted", main, "https://auth.moiid.ca/b2c/authorize", true},
		{"identity site's script", "XHR", "POST", "https://auth.moiid.ca/b2c/SelfAsserted", main, "https://auth.moiid.ca/b2c/authorize", true},
		{"identity site's form post back to the store", "Document", "POST", "https://www.metro.ca/signin-oidc", main, "https://auth.moiid.ca/b2c/confirmed", true},
		{"store page's form post to an account path", "Document", "POST", "https://www.metro.ca/en/account/settings/x", main, "https://www.metro.ca/en", false},
		{"store page's form post into a frame", "Document", "POST", "https://www.metro.ca/en/account/settings/x", "SUB", "https://www.metro.ca/en", false},
		{"form post into a frame under the identity page", "Document", "POST", "https://www.metro.ca/en/account/edit", "SUB", "https://auth.moiid.ca/b2c/confirmed", false},
		{"store page's fetch", "Fetch", "POST", "https://www.metro.ca/en/account/settings/x", main, "https://www.metro.ca/en", false},
		{"store page's GET fetch", "Fetch", "GET", "https://www.metro.ca/en/login", main, "https://www.metro.ca/en", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := map[string]any{"resourceType": tc.rtype, "frameId": tc.frame, "request": map[string]any{"url": tc.target, "method": tc.method}}
			if got := h.loginTagged(ev, main, func() string { return tc.top }); got != tc.want {
				t.Fatalf("loginTagged = %v, want %v", got, tc.want)
			}
		})
	}
	ev := map[string]any{"resourceType": "Document", "frameId": main, "request": map[string]any{"url": "https://www.metro.ca/signin-oidc", "method": "POST"}}
	if h.loginTagged(ev, "", func() string { return "https://auth.moiid.ca/x" }) {
		t.Fatal("a document POST was tagged although the main frame is unknown")
	}
}
