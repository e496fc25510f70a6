package demostore

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
)

// The demo sign-in challenge (Options.SignInChallenge): after a right
// password the identity host asks for more, as a real one may — a "not a
// robot" box to tick and a 6-digit code "sent" to the shopper's inbox, which
// the demo shows on its inbox page on the store's host (InboxPath). The
// scripted login cannot pass it: a person does, from the panel's take-over.

// InboxPath is the demo inbox page on the store's host: it shows the
// latest sign-in code and a link back to the sign-in.
const InboxPath = "/demo/inbox"

// challenge is one pending sign-in challenge.
type challenge struct {
	code     string // the 6-digit code "sent" to the inbox
	returnTo string // store path to come back to
	redirect string // the callback the identity host redirects to
	back     string // the challenge page's URL (for the inbox's link)
}

// ChallengeCode returns the code of the latest sign-in challenge ("" before
// any): what the demo inbox page shows.
func (s *Server) ChallengeCode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastChallenge == "" {
		return ""
	}
	return s.challenges[s.lastChallenge].code
}

// startChallenge records a challenge for a right password and redirects the
// browser to its page (the authorize URL with challenge=<id>).
func (s *Server) startChallenge(w http.ResponseWriter, r *http.Request, returnTo, redirect string) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		http.Error(w, "no randomness", http.StatusInternalServerError)
		return
	}
	id := randomToken()
	q := r.URL.Query()
	q.Set("challenge", id)
	back := "https://" + HostAuth + authorizePath + "?" + q.Encode()
	s.mu.Lock()
	if s.challenges == nil {
		s.challenges = map[string]challenge{}
	}
	s.challenges[id] = challenge{code: fmt.Sprintf("%06d", n.Int64()), returnTo: returnTo, redirect: redirect, back: back}
	s.lastChallenge = id
	s.mu.Unlock()
	s.log.Info("sign-in challenge shown (code sent to the demo inbox)")
	http.Redirect(w, r, back, http.StatusFound)
}

// serveChallenge answers the challenge page (GET) and its form (POST with
// field challenge). It reports false when the request is not about a
// challenge.
func (s *Server) serveChallenge(w http.ResponseWriter, r *http.Request) bool {
	id := r.URL.Query().Get("challenge")
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err == nil && r.PostForm.Get("challenge") != "" {
			id = r.PostForm.Get("challenge")
		} else if id == "" {
			return false
		}
	}
	if id == "" {
		return false
	}
	s.mu.Lock()
	c, ok := s.challenges[id]
	s.mu.Unlock()
	if !ok {
		// Passed (a second submit of the same form) or unknown: the form
		// cannot succeed any more, so it is not shown again — only the
		// way back to the password, as an identity site does.
		q := r.URL.Query()
		q.Del("challenge")
		writeHTML(w, http.StatusOK, expiredChallengePage("https://"+HostAuth+authorizePath+"?"+q.Encode()))
		return true
	}
	if r.Method != http.MethodPost {
		writeHTML(w, http.StatusOK, challengePage(r.URL.RequestURI(), id, ""))
		return true
	}
	if !s.holdSignIn(r) {
		return true
	}
	if r.PostForm.Get("notRobot") == "" {
		writeHTML(w, http.StatusOK, challengePage(r.URL.RequestURI(), id, "Tick the box to show you are not a robot."))
		return true
	}
	if strings.TrimSpace(r.PostForm.Get("code")) != c.code {
		s.log.Info("sign-in challenge rejected: wrong code")
		writeHTML(w, http.StatusOK, challengePage(r.URL.RequestURI(), id, "That code is not the one we sent."))
		return true
	}
	code := randomToken()
	s.mu.Lock()
	delete(s.challenges, id)
	s.codes[code] = c.returnTo
	s.mu.Unlock()
	s.log.Info("sign-in challenge passed")
	http.Redirect(w, r, c.redirect+"?"+url.Values{"code": {code}}.Encode(), http.StatusFound)
	return true
}

// inboxPage serves InboxPath: the latest code and the way back.
func (s *Server) inboxPage(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	c, ok := s.challenges[s.lastChallenge]
	s.mu.Unlock()
	body := `<p id="inbox-empty">No new message.</p>`
	if ok {
		body = `<div id="inbox-message"><h2>Your MOI iD sign-in code</h2><p>Your code is <strong id="inbox-code">` + esc(c.code) + `</strong>.</p>` +
			`<p><a id="inbox-back" href="` + esc(c.back) + `">Back to sign-in</a></p></div>`
	}
	writeHTML(w, http.StatusOK, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Demo inbox</title><link rel="icon" href="data:,">
<style>body{font-family:Arial,Helvetica,sans-serif;font-size:16px;margin:40px}#inbox-back{display:inline-block;padding:12px 24px;background:#d5102a;color:#fff;border-radius:24px;text-decoration:none}</style></head>
<body><h1>Demo inbox</h1>`+body+`</body></html>`)
}

// expiredChallengePage is the answer to a challenge that was passed or
// never shown: a link back to the sign-in, no form.
func expiredChallengePage(signIn string) string {
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Verify – MOI iD</title><link rel="icon" href="data:,"></head>
<body><h1>Verify it's you</h1><div id="error-message" class="error pageLevel" role="alert">This check has expired.</div>
<p><a id="challenge-restart" href="` + esc(signIn) + `">Sign in again</a></p></body></html>`
}

// challengePage renders the identity host's extra check (ids: #not-robot,
// #challenge-code, #challenge-submit, #inbox-link).
func challengePage(action, id, errMsg string) string {
	errHTML := ""
	if errMsg != "" {
		errHTML = `<div id="error-message" class="error pageLevel" role="alert">` + esc(errMsg) + `</div>`
	}
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Verify – MOI iD</title><link rel="icon" href="data:,">
<style>*{box-sizing:border-box;margin:0;padding:0}body{font-family:Arial,Helvetica,sans-serif;font-size:14px;background:#f3f3f3}
#panel{position:absolute;left:470px;top:120px;width:500px;height:520px;background:#fff;border-radius:12px}
h1{position:absolute;left:40px;top:32px;font-size:24px}
#error-message{position:absolute;left:40px;top:76px;width:420px;color:#b00020}
#robot{position:absolute;left:40px;top:120px;width:420px;height:64px;border:1px solid #888;border-radius:8px;padding:20px 16px;font-size:16px}
#not-robot{width:22px;height:22px;vertical-align:middle;margin-right:10px}
#sent{position:absolute;left:40px;top:204px;width:420px}
#inbox-link{color:#d5102a}
label[for=challenge-code]{position:absolute;left:40px;top:256px;font-weight:bold}
#challenge-code{position:absolute;left:40px;top:280px;width:420px;height:44px;border:1px solid #888;border-radius:8px;padding:0 12px;font-size:16px}
#challenge-submit{position:absolute;left:40px;top:360px;width:420px;height:48px;border:0;border-radius:24px;background:#d5102a;color:#fff;font-size:16px;font-weight:bold}
</style></head><body><div id="panel"><h1>Verify it's you</h1>` + errHTML + `
<form id="challenge-form" method="post" action="` + esc(action) + `">
<input type="hidden" name="challenge" value="` + esc(id) + `">
<div id="robot"><label><input id="not-robot" name="notRobot" type="checkbox" value="1">I'm not a robot</label></div>
<p id="sent">We sent a 6-digit code to your email. <a id="inbox-link" href="https://` + HostStore + InboxPath + `">Open your inbox</a></p>
<label for="challenge-code">Code</label><input id="challenge-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6">
<button id="challenge-submit" type="submit">Verify</button></form></div></body></html>`
}
