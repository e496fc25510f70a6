package guide

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Scripted is the offline planner: it reads the page's elements and text
// and the running description (which carries what it learnt, such as a
// code read on another page), and picks the next element itself. It knows
// sign-in pages: a "not a robot" box, a one-time code read in an inbox,
// the e-mail and password fields, the submit button.
type Scripted struct{}

var (
	codeInDescription = regexp.MustCompile(`the code is (\d{6})`)
	codeInText        = regexp.MustCompile(`\b(\d{6})\b`)
)

// Plan implements Planner.
func (Scripted) Plan(_ context.Context, st State, p Page) (Plan, error) {
	desc := st.TaskDescription
	if desc == "" {
		desc = fmt.Sprintf("The person wants to %s.", st.Goal)
	}
	code := ""
	if m := codeInDescription.FindStringSubmatch(desc); m != nil {
		code = m[1]
	}
	step := func(task string, e Element, note string) (Plan, error) {
		b := e.Box
		d := desc
		if note != "" {
			d += " " + note
		}
		return Plan{Task: task, Description: d + " Next: " + task, Box: &b}, nil
	}
	if p.SignedIn {
		return Plan{Task: "You are signed in: press Done.", Description: desc + " The store shows the shopper signed in.", Done: true}, nil
	}
	codeField, hasCodeField := find(p, func(e Element) bool {
		return e.Autocomplete == "one-time-code" || strings.Contains(strings.ToLower(e.Label), "code") && e.Tag == "input"
	})
	// An inbox that shows a code: note it and go back.
	if !hasCodeField {
		if m := codeInText.FindStringSubmatch(p.Text); m != nil && strings.Contains(strings.ToLower(p.Text), "code") {
			if back, ok := find(p, func(e Element) bool { return e.Tag == "a" && labelHas(e, "back", "sign", "retour", "connex") }); ok {
				return step(fmt.Sprintf("Tap “%s”.", back.Label), back, fmt.Sprintf("The inbox shows the code: the code is %s.", m[1]))
			}
		}
	}
	if hasCodeField && !codeField.Filled && code == "" {
		if inbox, ok := find(p, func(e Element) bool {
			return e.Tag == "a" && labelHas(e, "inbox", "email", "e-mail", "courriel", "boîte")
		}); ok {
			return step(fmt.Sprintf("Tap “%s” to read the code you were sent.", inbox.Label), inbox, "The store asks for a code sent by e-mail.")
		}
		return step("Tap the code field and type the code you were sent.", codeField, "The store asks for a code.")
	}
	if box, ok := find(p, func(e Element) bool { return e.Type == "checkbox" && !e.Checked }); ok {
		return step(fmt.Sprintf("Tick “%s”.", box.Label), box, "")
	}
	if hasCodeField && !codeField.Filled {
		return step(fmt.Sprintf("Tap the “%s” field and type %s.", codeField.Label, code), codeField, "")
	}
	for _, f := range []struct {
		match func(Element) bool
		task  string
	}{
		{func(e Element) bool { return e.Tag == "input" && (e.Autocomplete == "username" || e.Type == "email") }, "Tap the “%s” field and type your e-mail address."},
		{func(e Element) bool { return e.Tag == "input" && e.Type == "password" }, "Tap the “%s” field and type your password."},
	} {
		if e, ok := find(p, f.match); ok && !e.Filled {
			return step(fmt.Sprintf(f.task, e.Label), e, "")
		}
	}
	if b, ok := find(p, func(e Element) bool { return e.Tag == "button" && (e.Type == "submit" || e.Type == "") }); ok {
		return step(fmt.Sprintf("Tap “%s”.", b.Label), b, "")
	}
	if b, ok := find(p, func(e Element) bool {
		return e.Tag == "a" && labelHas(e, "sign in", "log in", "connexion", "se connecter")
	}); ok {
		return step(fmt.Sprintf("Tap “%s”.", b.Label), b, "")
	}
	return Plan{}, fmt.Errorf("no next step found on %s", p.URL)
}

func find(p Page, ok func(Element) bool) (Element, bool) {
	for _, e := range p.Elements {
		if ok(e) {
			return e, true
		}
	}
	return Element{}, false
}

func labelHas(e Element, words ...string) bool {
	l := strings.ToLower(e.Label)
	for _, w := range words {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}
