package browser

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/store"
)

// takeoverClickOn clicks the centre of the held tab's element sel through
// the take-over API (0–999 coordinates), as a person tapping the screen.
func takeoverClickOn(t *testing.T, h *Host, sel string) {
	t.Helper()
	ht, err := h.heldTab(SignInTab)
	if err != nil {
		t.Fatal(err)
	}
	loc := ht.page.Locator(sel).First()
	if err := loc.WaitFor(); err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	b, err := loc.BoundingBox()
	if err != nil || b == nil {
		t.Fatalf("%s has no box: %v", sel, err)
	}
	vs := ht.page.ViewportSize()
	x, y := int((b.X+b.Width/2)*1000/float64(vs.Width)), int((b.Y+b.Height/2)*1000/float64(vs.Height))
	mustDo(t, "click "+sel, h.TakeoverClick(testCtx(t), SignInTab, x, y))
}

// TestSignInChallengeTakeOver: the demo's sign-in challenge stops the
// scripted login with ErrNeedsPerson (not a failure) and keeps its tab; a
// person ticks the box, reads the code in the demo inbox and types it, all
// through the take-over; a take-over cannot open the checkout; the typed
// code is never logged; TakeoverDone hands back a signed-in session and
// AwaitSignIn returns.
func TestSignInChallengeTakeOver(t *testing.T) {
	requireBrowser(t)
	s, err := demostore.Start(context.Background(), demostore.Options{SignInChallenge: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	logs := &logBuffer{}
	o := baseOptions(t, store.Demo(), t.TempDir(), s.HostResolverRules(), logs)
	user, pass := s.Credentials()
	o.Username, o.Password = user, config.Secret(pass)
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)

	err = h.Login(ctx)
	var np *NeedsPersonError
	if !errors.As(err, &np) || !errors.Is(err, ErrNeedsPerson) || np.Tab != SignInTab || np.Reason != ReasonSignInChallenge {
		t.Fatalf("Login = %v, want a NeedsPersonError for the sign-in tab\n%s", err, logs.String())
	}
	if got := h.NeedsPersons(); len(got) != 1 || got[0].Tab != SignInTab {
		t.Fatalf("NeedsPersons = %+v", got)
	}
	if err := h.Login(ctx); !errors.Is(err, ErrNeedsPerson) {
		t.Fatalf("a second Login while a person has the tab = %v", err)
	}
	awaited := make(chan error, 1)
	go func() { awaited <- h.AwaitSignIn(ctx) }()

	if shot, err := h.TakeoverScreenshot(ctx, SignInTab); err != nil || len(shot) < 100 {
		t.Fatalf("screenshot: %d bytes, %v", len(shot), err)
	}
	// A take-over stays under the policy: the checkout is never reached.
	ht, _ := h.heldTab(SignInTab)
	challengeURL := ht.page.URL()
	_, _ = ht.page.Evaluate(`() => { location.href = 'https://www.metro.ca/en/online-grocery/checkout' }`)
	_ = ht.page.WaitForLoadState()
	if n := s.CheckoutHits(); n != 0 {
		t.Fatalf("the take-over reached the checkout %d times", n)
	}
	if _, err := ht.page.Goto(challengeURL); err != nil {
		t.Fatalf("back to the challenge: %v", err)
	}
	takeoverClickOn(t, h, "#inbox-link")
	takeoverClickOn(t, h, "#inbox-back")
	code := s.ChallengeCode()
	takeoverClickOn(t, h, "#not-robot")
	takeoverClickOn(t, h, "#challenge-code")
	mustDo(t, "type the code", h.TakeoverType(ctx, SignInTab, code))
	mustDo(t, "press Enter", h.TakeoverKey(ctx, SignInTab, "Enter"))
	ok, err := h.TakeoverDone(ctx, SignInTab)
	if err != nil || !ok {
		t.Fatalf("TakeoverDone = %v, %v\n%s", ok, err, logs.String())
	}
	if err := <-awaited; err != nil {
		t.Fatalf("AwaitSignIn = %v", err)
	}
	if !s.State().LoggedIn || len(h.NeedsPersons()) != 0 {
		t.Fatalf("after the take-over: signed in %v, needs %+v", s.State().LoggedIn, h.NeedsPersons())
	}
	if strings.Contains(logs.String(), code) || strings.Contains(logs.String(), pass) {
		t.Fatalf("the typed code or the password is in the logs\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "take-over: type") {
		t.Fatalf("the typing is not journaled (as its length)\n%s", logs.String())
	}
}
