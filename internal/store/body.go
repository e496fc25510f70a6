package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"
)

// MaxBody is the most of a state-changing request's body to a store host
// the policy reads (CheckBody). A longer body is refused: what is not read
// cannot be shown to name no order (a cart operation's body is a few
// hundred bytes).
const MaxBody = 256 << 10

// MethodOverrideHeaders are the headers some servers read as the request's
// real method. The policy proxy checks a request carrying one as the
// method it names too.
var MethodOverrideHeaders = []string{"X-HTTP-Method-Override", "X-Method-Override", "X-HTTP-Method"}

// methodOverrideVerdict refuses a "_method" parameter (Rails, Laravel,
// Spring's HiddenHttpMethodFilter read it as the method): a store page of
// the agent's never needs one.
var methodOverrideVerdict = RequestVerdict{Rule: RuleStateChange, Match: "_method", Reason: "requests that override their method (a _method parameter) may not be sent to the store by the agent"}

// formHasMethodOverride reports whether a form-encoded text has a
// "_method" parameter (its name decoded on its own).
func formHasMethodOverride(form string) bool {
	for _, kv := range strings.FieldsFunc(form, func(r rune) bool { return r == '&' || r == ';' || r == '\n' || r == '\r' }) {
		name, _, _ := strings.Cut(kv, "=")
		if strings.EqualFold(strings.TrimSpace(decodeFormPart(name)), "_method") {
			return true
		}
	}
	return false
}

// BodyChecked reports whether CheckBody reads the body of a request:
// a state-changing one to a store host.
func (p Profile) BodyChecked(method string, u *url.URL) bool {
	return StateChanging(method) && p.storeHost(u.Hostname())
}

// errBodyShape is a body the policy cannot read as its type says.
var errBodyShape = errors.New("unreadable body")

// CheckBody is the policy for the body of a request CheckRequest allowed:
// a state-changing request to a store host is refused (rule order) when its
// body names an order word — in a form field's name or value (each decoded
// on its own), in a JSON key or string, in a multipart part's name, file
// name or content, or anywhere in any other text — or a "_method"
// parameter; and when its body is longer than MaxBody (complete false) or
// not readable as its Content-Type says. Other requests pass.
func (p Profile) CheckBody(method string, u *url.URL, contentType string, body []byte, complete bool) RequestVerdict {
	if !p.BodyChecked(method, u) || (len(body) == 0 && complete) {
		return RequestVerdict{Allowed: true}
	}
	if !complete {
		return RequestVerdict{Rule: RuleOrder, Match: "(body too long)", Reason: fmt.Sprintf("%s requests to the store with a body over %d KiB may not be sent by the agent", strings.ToUpper(method), MaxBody>>10)}
	}
	w, override, err := bodyOrderWord(contentType, body, 0)
	switch {
	case err != nil:
		return RequestVerdict{Rule: RuleOrder, Match: "(unreadable body)", Reason: fmt.Sprintf("%s requests to the store whose body does not match its type may not be sent by the agent", strings.ToUpper(method))}
	case override:
		return methodOverrideVerdict
	case w != "":
		return RequestVerdict{Rule: RuleOrder, Match: w, Reason: fmt.Sprintf("%s requests whose body names %q may not be sent by the agent (the agent never orders)", strings.ToUpper(method), w)}
	}
	return RequestVerdict{Allowed: true}
}

// bodyOrderWord reads body as contentType says (depth bounds nested
// multipart bodies) and returns the order word it names, whether it has a
// "_method" parameter, or an error when it is not what its type says.
func bodyOrderWord(contentType string, body []byte, depth int) (string, bool, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = ""
	}
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		if depth > 2 || params["boundary"] == "" {
			return "", false, errBodyShape
		}
		return multipartOrderWord(params["boundary"], body, depth)
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return "", false, errBodyShape
		}
		w, override := jsonOrderWord(v)
		return w, override, nil
	}
	// A form, text or anything else: servers differ in what they parse, so
	// the text is read as a form (every name and value decoded on its own)
	// and, if it is JSON, as JSON.
	text := string(body)
	if w, ok := formOrderWord(text); ok {
		return w, false, nil
	}
	if formHasMethodOverride(text) {
		return "", true, nil
	}
	var v any
	if json.Unmarshal(body, &v) == nil {
		w, override := jsonOrderWord(v)
		return w, override, nil
	}
	return "", false, nil
}

// multipartOrderWord reads each part: its field name, file name and
// content (as its own Content-Type says).
func multipartOrderWord(boundary string, body []byte, depth int) (string, bool, error) {
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for n := 0; ; n++ {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) && n == 0 && len(bytes.TrimSpace(body)) > 0 {
			return "", false, errBodyShape // a body, but no part a parser finds
		}
		if errors.Is(err, io.EOF) {
			return "", false, nil
		}
		if err != nil {
			return "", false, errBodyShape
		}
		for _, name := range []string{part.FormName(), part.FileName()} {
			if w, ok := orderWordIn(name); ok {
				return w, false, nil
			}
		}
		if strings.EqualFold(part.FormName(), "_method") {
			return "", true, nil
		}
		content, err := io.ReadAll(part)
		if err != nil {
			return "", false, errBodyShape
		}
		ct := part.Header.Get("Content-Type")
		if ct == "" {
			// A plain field: its value as it is.
			if w, ok := orderWordIn(string(content)); ok {
				return w, false, nil
			}
			continue
		}
		w, override, err := bodyOrderWord(ct, content, depth+1)
		if err != nil || override || w != "" {
			return w, override, err
		}
	}
}

// jsonOrderWord walks a decoded JSON value: every key and string.
func jsonOrderWord(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		w, _ := orderWordIn(x)
		return w, false
	case []any:
		for _, e := range x {
			if w, o := jsonOrderWord(e); w != "" || o {
				return w, o
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.EqualFold(k, "_method") {
				return "", true
			}
			if w, ok := orderWordIn(k); ok {
				return w, false
			}
			if w, o := jsonOrderWord(e); w != "" || o {
				return w, o
			}
		}
	}
	return "", false
}
