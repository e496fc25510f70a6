package browser

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/demostore"
	"github.com/gemini-supply/gemini-supply/internal/guide"
	"github.com/gemini-supply/gemini-supply/internal/store"
	"github.com/gemini-supply/gemini-supply/internal/takeover"
)

func challengeStore(t *testing.T) (*demostore.Server, Options, *logBuffer) {
	t.Helper()
	requireBrowser(t)
	s, err := demostore.Start(context.Background(), demostore.Options{SignInChallenge: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	logs := &logBuffer{}
	o := baseOptions(t, store.Demo(), t.TempDir(), s.HostResolverRules(), logs)
	user, pass := s.Credentials()
	o.Username, o.Password = user, config.Secret(pass)
	return s, o, logs
}

// TestSignInChallengeNeedsPerson: a challenge the scripted login cannot
// pass stops the login with ErrNeedsPerson (not a wrong-password error)
// when no one is offered the tab.
func TestSignInChallengeNeedsPerson(t *testing.T) {
	s, o, logs := challengeStore(t)
	h := launch(t, o)
	defer closeHost(t, h)
	err := h.Login(testCtx(t))
	if !errors.Is(err, ErrNeedsPerson) || errors.Is(err, ErrLoginRefused) {
		t.Fatalf("Login = %v; want ErrNeedsPerson\n%s", err, logs.String())
	}
	if s.State().LoggedIn {
		t.Fatal("signed in without the code")
	}
}

// TestSignInChallengeTakeOverWithGuide is the household's way through: the
// login tab is offered, the person follows "Show me" for "sign in" —
// clicking the centre of each box and typing what it says — and hands the
// tab back; the login then succeeds. Typed text is never logged or
// journaled (only its length), and a take-over click cannot reach the
// store's checkout.
func TestSignInChallengeTakeOverWithGuide(t *testing.T) {
	s, o, logs := challengeStore(t)
	reg := takeover.New(o.Logger)
	var (
		mu     sync.Mutex
		events []takeover.Event
	)
	reg.OnEvent = func(e takeover.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	offers := make(chan takeover.Need, 1)
	reg.OnOffer = func(n takeover.Need) { offers <- n }
	o.NeedsPerson = func(ctx context.Context, t *Handoff) error {
		return reg.Offer(ctx, t, takeover.ReasonSignIn, "")
	}
	h := launch(t, o)
	defer closeHost(t, h)
	ctx := testCtx(t)

	person := make(chan error, 1)
	var code string
	go func() {
		person <- func() error {
			var n takeover.Need
			select {
			case n = <-offers:
			case <-ctx.Done():
				return ctx.Err()
			}
			if n.Reason != takeover.ReasonSignIn {
				return errors.New("offered for " + n.Reason)
			}
			tab, err := reg.Tab(n.Tab)
			if err != nil {
				return err
			}
			g := guide.New()
			typeWhat := regexp.MustCompile(`type (\d{6})\.`)
			for i := 0; i < 20; i++ {
				st, err := g.Next(ctx, n.Tab, tab, "sign in")
				if err != nil {
					return err
				}
				if st.Done {
					// Before handing back: a take-over click on a checkout
					// link is refused by the request policy.
					if _, err := tab.Evaluate(ctx, `() => { const a = document.createElement('a'); a.id = 'x-checkout'; a.href = '/en/checkout'; a.textContent = 'Checkout'; a.style.cssText = 'position:fixed;left:0;top:0;width:400px;height:400px;z-index:99999;background:#ff0'; document.body.appendChild(a); }`, nil); err != nil {
						return err
					}
					if err := reg.Click(ctx, n.Tab, 100, 100); err != nil {
						return err
					}
					return reg.Done(n.Tab)
				}
				t.Logf("step %d: %q box %v", i, st.Task, st.Box)
				if len(st.Box) != 4 {
					return errors.New("step without a box: " + st.Task)
				}
				if err := reg.Click(ctx, n.Tab, (st.Box[0]+st.Box[2])/2, (st.Box[1]+st.Box[3])/2); err != nil {
					return err
				}
				if m := typeWhat.FindStringSubmatch(st.Task); m != nil {
					code = m[1]
					if err := reg.Type(ctx, n.Tab, code); err != nil {
						return err
					}
				}
				// The click may navigate: wait for the page to settle
				// before reading it again.
				if _, err := tab.Evaluate(ctx, `() => new Promise(r => document.readyState === 'complete' ? r(true) : addEventListener('load', () => r(true)))`, nil); err != nil && !strings.Contains(err.Error(), "context was destroyed") {
					return err
				}
			}
			return errors.New("the guide did not finish in 20 steps")
		}()
	}()

	if err := h.Login(ctx); err != nil {
		t.Fatalf("Login with a person: %v\n%s", err, logs.String())
	}
	if err := <-person; err != nil {
		t.Fatalf("the person: %v\n%s", err, logs.String())
	}
	if !s.State().LoggedIn {
		t.Fatal("the store has no signed-in session")
	}
	if s.CheckoutHits() != 0 {
		t.Fatalf("a take-over click reached the checkout %d times", s.CheckoutHits())
	}
	if code == "" {
		t.Fatal("the guide never said what to type")
	}
	if strings.Contains(logs.String(), code) {
		t.Fatal("the typed code is in the logs")
	}
	mu.Lock()
	defer mu.Unlock()
	var typed, done bool
	for _, e := range events {
		if e.Kind == "type" {
			typed = e.Length == 6
		}
		done = done || e.Kind == "done"
		if strings.Contains(e.Key+e.Err, code) {
			t.Fatalf("journaled event carries the code: %+v", e)
		}
	}
	if !typed || !done {
		t.Fatalf("events %+v: want a type of length 6 and a done", events)
	}
}
