package runstatus

// NeedsPerson is a browser tab waiting for a person (take over): the
// sign-in tab when the store asks for more than the password, for now.
type NeedsPerson struct {
	Tab    string `json:"tab"`
	Reason string `json:"reason"`
	Item   string `json:"item"`
}

// ReasonSignInChallenge is the reason of a sign-in the store asks more
// than the password for (a "not a robot" check, a code).
const ReasonSignInChallenge = "sign_in_challenge"
