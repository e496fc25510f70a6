package runstatus

// NeedsPerson is a browser tab waiting for a person (take over): the
// sign-in tab when the store asks for more than the password, for now.
type NeedsPerson struct {
	Tab    string `json:"tab"`
	Reason string `json:"reason"`
	Item   string `json:"item"`
}
