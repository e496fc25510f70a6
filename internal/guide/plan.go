package guide

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

func readElements(ctx context.Context, tab Tab) ([]element, error) {
	v, err := tab.Evaluate(ctx, readScript, nil)
	if err != nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("unexpected answer %T", v)
	}
	var els []element
	if err := json.Unmarshal([]byte(s), &els); err != nil {
		return nil, err
	}
	return els, nil
}

var knownCode = regexp.MustCompile(`\binbox is (\d{6})\b`)

func find(els []element, ok func(e *element) bool) *element {
	for i := range els {
		if ok(&els[i]) {
			return &els[i]
		}
	}
	return nil
}

func labelHas(e *element, words ...string) bool {
	l := strings.ToLower(e.Label)
	for _, w := range words {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// plan is the scripted planner for signing in: it reads the elements the
// page shows and the running description, and returns one task and the
// element to ground it on. The description carries what the person learnt
// on the way (the code from the inbox).
func plan(st *State, els []element) (Step, *element) {
	code := ""
	if m := knownCode.FindStringSubmatch(st.TaskDescription); m != nil {
		code = m[1]
	}
	if c := find(els, func(e *element) bool { return e.Kind == "code" }); c != nil {
		code = c.Label
	}
	desc := func(s string) string {
		if code != "" {
			return s + " The code from your inbox is " + code + "."
		}
		return s
	}
	if find(els, func(e *element) bool { return e.Kind == "signedin" }) != nil {
		return Step{Task: "You are signed in. Press Done to hand the tab back.", Description: "Signed in to the store.", Done: true}, nil
	}
	otp := find(els, func(e *element) bool {
		return e.Kind == "input" && (e.Auto == "one-time-code" || labelHas(e, "code"))
	})
	// The inbox: the code is shown; go back to the sign-in.
	if otp == nil && find(els, func(e *element) bool { return e.Kind == "code" }) != nil {
		if back := find(els, func(e *element) bool { return e.Kind == "link" && labelHas(e, "back", "sign-in", "sign in") }); back != nil {
			return Step{Task: "Go back to the sign-in page: click \"" + back.Label + "\".", Description: desc("You read the code in your inbox; now enter it on the sign-in page.")}, back
		}
	}
	// The "not a robot" tick is asked for once the code is known: a trip
	// to the inbox reloads the page and clears it.
	robot := find(els, func(e *element) bool { return e.Kind == "checkbox" && !e.Checked && labelHas(e, "robot") })
	if otp != nil && !otp.Filled {
		if code == "" {
			if inbox := find(els, func(e *element) bool {
				return (e.Kind == "link" || e.Kind == "button") && labelHas(e, "inbox", "email", "e-mail")
			}); inbox != nil {
				return Step{Task: "Open your inbox to read the code: click \"" + inbox.Label + "\".", Description: "The store sent a 6-digit code; read it, then come back."}, inbox
			}
			return Step{Task: "Click the code field and type the code the store sent you.", Description: "The store sent a code by e-mail or SMS."}, otp
		}
		if robot != nil {
			return Step{Task: "Tick \"" + robot.Label + "\".", Description: desc("The store asks you to prove you are a person.")}, robot
		}
		return Step{Task: "Click the code field and type " + code + ".", Description: desc("The code goes in the field \"" + otp.Label + "\".")}, otp
	}
	submit := func(words ...string) *element {
		return find(els, func(e *element) bool { return e.Kind == "button" && labelHas(e, words...) })
	}
	if otp != nil {
		if robot != nil {
			return Step{Task: "Tick \"" + robot.Label + "\".", Description: desc("The store asks you to prove you are a person.")}, robot
		}
		if b := submit("verify", "continue", "submit", "next", "confirm"); b != nil {
			return Step{Task: "Click \"" + b.Label + "\".", Description: desc("The code is entered; confirm it.")}, b
		}
	}
	for _, f := range []struct {
		match func(e *element) bool
		what  string
	}{
		{func(e *element) bool {
			return e.Kind == "input" && !e.Filled && (e.Auto == "username" || e.Type == "email")
		}, "your e-mail address"},
		{func(e *element) bool { return e.Kind == "input" && !e.Filled && e.Type == "password" }, "your password"},
	} {
		if in := find(els, f.match); in != nil {
			return Step{Task: "Click the field \"" + in.Label + "\" and type " + f.what + ".", Description: "The store's sign-in form."}, in
		}
	}
	if b := submit("sign in", "log in", "connexion", "se connecter"); b != nil {
		return Step{Task: "Click \"" + b.Label + "\".", Description: "Start the store's sign-in."}, b
	}
	if l := find(els, func(e *element) bool { return e.Kind == "link" && labelHas(e, "sign in", "log in", "se connecter") }); l != nil {
		return Step{Task: "Click \"" + l.Label + "\".", Description: "Start the store's sign-in."}, l
	}
	return Step{Task: "Nothing on this screen matches \"" + st.Goal + "\"; go to the store's home page.", Description: "The guide does not see the next step here."}, nil
}
