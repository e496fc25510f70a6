package demostore

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strings"
)

// The optional sign-in challenge (Options.SignInChallenge): after the right
// password the identity host asks for a "not a robot" tick and a 6-digit
// code, as a real store's second factor does. The code is "sent" to a demo
// inbox on the store's own host (InboxPath), so the whole flow runs
// offline; the scripted login types only the password and cannot pass it.

// InboxPath is the demo inbox page on the store host that shows the
// pending sign-in code.
const InboxPath = "/en/demo-inbox"

// challenge is one pending second factor.
type challenge struct {
	code     string // 6 digits
	returnTo string // the store path to come back to
	redirect string // the callback to send the one-time auth code to
	url      string // the challenge page's address, for the inbox's link back
}

// ChallengeCode returns the code of the most recent pending challenge, and
// whether there is one (tests).
func (s *Server) ChallengeCode() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastChallenge == "" {
		return "", false
	}
	c, ok := s.challenges[s.lastChallenge]
	return c.code, ok
}

func sixDigits() string {
	n, _ := rand.Int(rand.Reader, big.NewInt(1_000_000)) // crypto/rand never fails
	return fmt.Sprintf("%06d", n.Int64())
}

// startChallenge records a challenge for a signed-in-by-password form and
// redirects to its page on the identity host.
func (s *Server) startChallenge(w http.ResponseWriter, r *http.Request, returnTo, redirect string) {
	id := randomToken()
	q := r.URL.Query()
	q.Set("challenge", id)
	u := &url.URL{Scheme: "https", Host: HostAuth, Path: authorizePath, RawQuery: q.Encode()}
	s.mu.Lock()
	s.challenges[id] = challenge{code: sixDigits(), returnTo: returnTo, redirect: redirect, url: u.String()}
	s.lastChallenge = id
	s.mu.Unlock()
	s.log.Info("sign-in challenge sent to the demo inbox")
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
}

// serveChallenge answers the challenge page (GET) and its form (POST).
func (s *Server) serveChallenge(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	c, ok := s.challenges[id]
	s.mu.Unlock()
	if !ok {
		writeHTML(w, http.StatusBadRequest, `<!doctype html><html><head><meta charset="utf-8"><title>MOI iD</title></head><body><h1 id="auth-error">This check expired</h1><p><a href="https://`+HostStore+`/en">Back to the store</a></p></body></html>`)
		return
	}
	if r.Method != http.MethodPost {
		writeHTML(w, http.StatusOK, challengePage(r.URL.RequestURI(), ""))
		return
	}
	if err := r.ParseForm(); err != nil {
		writeHTML(w, http.StatusBadRequest, challengePage(r.URL.RequestURI(), "The form could not be read."))
		return
	}
	switch {
	case r.PostForm.Get("not_a_robot") != "on":
		writeHTML(w, http.StatusOK, challengePage(r.URL.RequestURI(), `Tick "I'm not a robot" first.`))
		return
	case strings.TrimSpace(r.PostForm.Get("code")) != c.code:
		s.log.Info("sign-in challenge rejected: wrong code")
		writeHTML(w, http.StatusOK, challengePage(r.URL.RequestURI(), "That code is not right. Check your inbox."))
		return
	}
	code := randomToken()
	s.mu.Lock()
	delete(s.challenges, id)
	if s.lastChallenge == id {
		s.lastChallenge = ""
	}
	s.codes[code] = c.returnTo
	s.mu.Unlock()
	http.Redirect(w, r, c.redirect+"?"+url.Values{"code": {code}}.Encode(), http.StatusFound)
}

// challengePage renders the second factor: a "not a robot" box, the code
// field (autocomplete=one-time-code, as real sites mark it) and a link to
// the demo inbox.
func challengePage(action, errMsg string) string {
	errHTML := ""
	if errMsg != "" {
		errHTML = `<div id="error-message" class="error pageLevel" role="alert">` + esc(errMsg) + `</div>`
	}
	return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Verify it's you – MOI iD</title><link rel="icon" href="data:,">
<style>*{box-sizing:border-box;margin:0;padding:0}body{font-family:Arial,Helvetica,sans-serif;font-size:14px;background:#f3f3f3}
#panel{position:absolute;left:470px;top:120px;width:500px;height:520px;background:#fff;border-radius:12px}
h1{position:absolute;left:40px;top:32px;font-size:24px}
#error-message{position:absolute;left:40px;top:76px;width:420px;color:#b00020}
#robot{position:absolute;left:40px;top:112px;width:420px;height:64px;border:1px solid #888;border-radius:8px;font-size:16px;line-height:64px;padding-left:64px}
#not-a-robot{position:absolute;left:20px;top:20px;width:24px;height:24px}
#sent{position:absolute;left:40px;top:196px;width:420px}
#open-inbox{position:absolute;left:40px;top:236px;font-size:16px;color:#0b4ea2}
label[for=code]{position:absolute;left:40px;top:280px;font-weight:bold}
#code{position:absolute;left:40px;top:304px;width:420px;height:44px;border:1px solid #888;border-radius:8px;padding:0 12px;font-size:20px;letter-spacing:4px}
#verify{position:absolute;left:40px;top:380px;width:420px;height:48px;border:0;border-radius:24px;background:#d5102a;color:#fff;font-size:16px;font-weight:bold}
</style></head><body><div id="panel" data-challenge="sign-in"><h1>Verify it's you</h1>` + errHTML + `
<form id="challengeForm" method="post" action="` + esc(action) + `">
<label id="robot"><input id="not-a-robot" name="not_a_robot" type="checkbox" aria-label="I'm not a robot">I'm not a robot</label>
<p id="sent">We sent a 6-digit code to your inbox.</p>
<a id="open-inbox" href="https://` + HostStore + InboxPath + `">Open your inbox</a>
<label for="code">6-digit code</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6">
<button id="verify" type="submit">Verify</button></form></div></body></html>`
}

// inboxPage is the demo inbox on the store host: the latest code and a
// link back to the challenge.
func (s *Server) inboxPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, ok := s.challenges[s.lastChallenge]
	s.mu.Unlock()
	body := `<p id="inbox-empty">No new messages.</p>`
	if ok {
		body = `<div id="message" style="position:absolute;left:320px;top:140px;width:800px;height:260px;border:1px solid #bbb;border-radius:8px;padding:24px;background:#fff">
<h2>Your MOI iD sign-in code</h2><p>Your code is <strong id="inbox-code" style="font-size:28px;letter-spacing:4px">` + esc(c.code) + `</strong></p>
<p>Enter it on the sign-in page to finish signing in.</p>
<a id="back-to-sign-in" href="` + esc(c.url) + `" style="position:absolute;left:24px;top:190px;font-size:18px;color:#0b4ea2">Back to sign-in</a></div>`
	}
	writeHTML(w, http.StatusOK, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Demo inbox</title><link rel="icon" href="data:,"></head>
<body style="font-family:Arial,Helvetica,sans-serif;background:#f3f3f3;margin:0"><h1 style="position:absolute;left:320px;top:60px;margin:0">Demo inbox</h1>`+body+`</body></html>`)
}
