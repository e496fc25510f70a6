package browser

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// TestLoginOnABusyMachine: the login's short bounds are how long to look
// for something, never a verdict a slow page can force. With the cookie
// banner's and the session check's bounds cut to a millisecond (a starved
// renderer answers later than that), the banner on the loaded page is
// still clicked — left up, it covers the "Sign in" button of the next step
// — and a signed-in session is still recognised rather than sent through
// the login form, which a signed-in page does not show.
func TestLoginOnABusyMachine(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	s, err := demostore.Start(context.Background(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := store.Demo()
	for i := range p.LoginSteps {
		switch p.LoginSteps[i].Kind {
		case store.StepDoneIfAuthenticated:
			p.LoginSteps[i].Timeout = time.Millisecond
		case store.StepClick:
			if p.LoginSteps[i].Optional {
				p.LoginSteps[i].Timeout = time.Millisecond
			}
		}
	}
	logs := &logBuffer{}
	o := baseOptions(t, p, t.TempDir(), s.HostResolverRules(), logs)
	user, pass := s.Credentials()
	o.Username, o.Password = user, config.Secret(pass)
	o.LoginStepTimeout = 20 * time.Second // a covered button would wait this long, then fail
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)

	if err := h.Login(ctx); err != nil {
		t.Fatalf("first login: %v\n%s", err, logs.String())
	}
	if !s.State().ConsentAccepted {
		t.Error("the cookie banner was not accepted")
	}
	if err := h.Login(ctx); err != nil {
		t.Fatalf("second login, on a valid session: %v\n%s", err, logs.String())
	}
	if n := strings.Count(logs.String(), "the store session is still valid; no login needed"); n != 1 {
		t.Errorf("the second login did not end at the session check (%d)\n%s", n, logs.String())
	}
}

// TestLoginErrorsSayWhatHappened: a step whose element never shows says
// which step and that the page did not answer in time (not to check the
// password); a refused password says to check the credentials.
func TestLoginErrorsSayWhatHappened(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	s, err := demostore.Start(context.Background(), demostore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	user, pass := s.Credentials()
	t.Run("a step times out", func(t *testing.T) {
		p := store.Demo()
		for i := range p.LoginSteps {
			if p.LoginSteps[i].What == "open the login panel" {
				p.LoginSteps[i].Selector, p.LoginSteps[i].Timeout = "#no-such-button", 2*time.Second
			}
		}
		o := baseOptions(t, p, t.TempDir(), s.HostResolverRules(), nil)
		o.Username, o.Password = user, config.Secret(pass)
		h := launch(t, o)
		defer closeHost(t, h)
		err := h.Login(testCtx(t))
		var se *LoginStepError
		if !errors.As(err, &se) || !se.TimedOut || se.N != 4 {
			t.Fatalf("err = %v, want login step 4 timed out", err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "login step 4 (open the login panel) timed out: the page did not answer in time") ||
			strings.Contains(msg, "password") || errors.Is(err, ErrLoginRefused) {
			t.Errorf("err = %q", msg)
		}
	})
	t.Run("the password is refused", func(t *testing.T) {
		p := store.Demo()
		for i := range p.LoginSteps {
			if p.LoginSteps[i].Kind == store.StepWaitForHost && p.LoginSteps[i].Host == "www.metro.ca" {
				p.LoginSteps[i].Timeout = 5 * time.Second // the identity site keeps the form: no need to wait a minute
			}
		}
		o := baseOptions(t, p, t.TempDir(), s.HostResolverRules(), nil)
		o.Username, o.Password = user, config.Secret(pass+"-wrong")
		h := launch(t, o)
		defer closeHost(t, h)
		err := h.Login(testCtx(t))
		if !errors.Is(err, ErrLoginRefused) || !strings.Contains(err.Error(), "wrong username or password") {
			t.Fatalf("err = %v, want ErrLoginRefused", err)
		}
		if strings.Contains(err.Error(), pass) || strings.Contains(err.Error(), user) {
			t.Errorf("the error quotes a credential: %v", err)
		}
	})
	t.Run("the identity site does not answer in time", func(t *testing.T) {
		// The right password, but the identity site holds its answer
		// longer than the wait to return to the store: the page is still
		// on the identity site with the submitted form — slow, not
		// refused, so nothing tells the user to check the credentials.
		slow, err := demostore.Start(context.Background(), demostore.Options{SignInDelay: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		user, pass := slow.Credentials()
		p := store.Demo()
		n := 0
		for i := range p.LoginSteps {
			if p.LoginSteps[i].Kind == store.StepWaitForHost && p.LoginSteps[i].Host == "www.metro.ca" {
				p.LoginSteps[i].Timeout, n = 3*time.Second, i+1
			}
		}
		o := baseOptions(t, p, t.TempDir(), slow.HostResolverRules(), nil)
		o.Username, o.Password = user, config.Secret(pass)
		h := launch(t, o)
		defer closeHost(t, h)
		err = h.Login(testCtx(t))
		var se *LoginStepError
		if !errors.As(err, &se) || !se.TimedOut || se.N != n || errors.Is(err, ErrLoginRefused) {
			t.Fatalf("err = %v, want login step %d timed out (not refused)", err, n)
		}
		if msg := err.Error(); !strings.Contains(msg, "(return to the store) timed out: the page did not answer in time") ||
			strings.Contains(msg, "password") || strings.Contains(msg, "credential") {
			t.Errorf("err = %q", msg)
		}
	})
}
