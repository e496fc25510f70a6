package agent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The Computer Use safety system may attach a "safety_decision" argument to a
// function call: {"decision": "require_confirmation", "explanation": "…"}
// means a person must confirm the action before it runs, and an action it
// considers regular carries no decision at all (see docs/agent.md).
//
// The agent fails closed: only an absent decision or a well-formed proceed
// ({"decision": "proceed"} with at most a string explanation) lets the action
// run unasked. Anything else — "REQUIRE_CONFIRMATION", an unknown decision, a
// plain string, null, a decision of the wrong type, an object with missing or
// extra fields, a second key spelled like safety_decision — needs the person.

// Decision values the agent knows.
const (
	decisionProceed = "proceed"
	decisionConfirm = "require_confirmation"
)

type safetyDecision struct {
	required    bool
	explanation string
}

// splitSafety returns the arguments without any safety decision, and the
// decision: required unless every decision present is a well-formed proceed.
func splitSafety(args map[string]any) (map[string]any, safetyDecision) {
	var raws []any
	var clean map[string]any
	for k, v := range args {
		if isSafetyKey(k) {
			raws = append(raws, v)
			continue
		}
		if clean == nil {
			clean = make(map[string]any, len(args))
		}
		clean[k] = v
	}
	if clean == nil {
		clean = map[string]any{}
	}
	if len(raws) == 0 {
		return clean, safetyDecision{}
	}
	var sd safetyDecision
	var why []string
	for _, raw := range raws {
		proceed, explanation := readDecision(raw)
		if proceed {
			continue
		}
		sd.required = true
		why = append(why, explanation)
	}
	sd.explanation = strings.Join(why, " ")
	return clean, sd
}

// isSafetyKey: any argument whose name, read as letters only, speaks of
// safety — "safety_decision" however it is cased, separated or bent
// ("Safety_Decision", "safetyDecision", "safety.decision",
// "safety_decisions", "safety\u200bdecision"). No action argument names
// safety, so a near-miss spelling is read as a decision (and confirmed)
// rather than left for the action to ignore.
func isSafetyKey(k string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if r >= 'a' && r <= 'z' {
			b.WriteRune(r)
		}
	}
	return strings.Contains(b.String(), "safety")
}

// readDecision reports whether raw is a well-formed proceed and, when it is
// not, the explanation to show the person.
func readDecision(raw any) (proceed bool, explanation string) {
	m, ok := raw.(map[string]any)
	if !ok {
		return false, fmt.Sprintf("The model's safety decision is malformed (%s); confirm the action yourself.", describe(raw))
	}
	d, dOK := m["decision"].(string)
	e, eOK := m["explanation"].(string)
	_, hasE := m["explanation"]
	extra := false
	for k := range m {
		if k != "decision" && k != "explanation" {
			extra = true
		}
	}
	switch {
	case dOK && d == decisionProceed && (!hasE || eOK) && !extra:
		return true, ""
	case dOK && d == decisionConfirm && eOK && strings.TrimSpace(e) != "" && !extra:
		return false, e
	case eOK && strings.TrimSpace(e) != "":
		return false, fmt.Sprintf("%s (the safety decision is malformed: %s)", e, describe(raw))
	default:
		return false, fmt.Sprintf("The model's safety decision is malformed (%s); confirm the action yourself.", describe(raw))
	}
}

// describe renders a raw decision for the person, bounded in length.
func describe(raw any) string {
	b, err := json.Marshal(raw)
	if err != nil {
		return fmt.Sprintf("%T", raw)
	}
	return truncate(string(b), 200)
}
