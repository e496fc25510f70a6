package store

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/url"
	"strings"
	"unicode/utf16"
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
// It reads what a server reads: the declared charset (a form in
// UTF-16BE), every JSON value of a stream and every occurrence of a
// duplicate key; a body it cannot read so is refused.
func bodyOrderWord(contentType string, body []byte, depth int) (string, bool, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = ""
	}
	if strings.HasPrefix(mt, "multipart/") {
		if depth > 2 || params["boundary"] == "" {
			return "", false, errBodyShape
		}
		return multipartOrderWord(params["boundary"], body, depth)
	}
	text, err := decodeCharset(params["charset"], body)
	if err != nil {
		return "", false, err
	}
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		w, override, ok := jsonStreamOrderWord(text)
		if !ok {
			return "", false, errBodyShape
		}
		return w, override, nil
	}
	// A form, text or anything else: servers differ in what they parse, so
	// the text is read as a form (every name and value decoded on its own)
	// and, if it is JSON, as JSON.
	if w, ok := formOrderWord(text); ok {
		return w, false, nil
	}
	if formHasMethodOverride(text) {
		return "", true, nil
	}
	if w, override, ok := jsonStreamOrderWord(text); ok {
		return w, override, nil
	}
	return "", false, nil
}

// decodeCharset returns body as text in the charset its Content-Type
// declares, as a server decodes it: UTF-8 (or none, or US-ASCII),
// UTF-16 (BE, LE, or by its byte-order mark), Latin-1. Any other
// charset, and a text holding a NUL (UTF-16 or UTF-32 a server may
// detect without a declaration), cannot be read so: an error.
func decodeCharset(charset string, body []byte) (string, error) {
	var text string
	switch strings.ToLower(strings.Trim(strings.TrimSpace(charset), `"`)) {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		text = string(body)
	case "utf-16be", "utf-16le", "utf-16":
		if len(body)%2 != 0 {
			return "", errBodyShape
		}
		be := !strings.EqualFold(charset, "utf-16le")
		b := body
		switch {
		case len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
			be, b = true, b[2:]
		case len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
			be, b = false, b[2:]
		}
		u := make([]uint16, len(b)/2)
		for i := range u {
			if be {
				u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
			} else {
				u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
			}
		}
		text = string(utf16.Decode(u))
	case "iso-8859-1", "latin1", "latin-1", "iso_8859-1", "l1":
		r := make([]rune, len(body))
		for i, c := range body {
			r[i] = rune(c)
		}
		text = string(r)
	default:
		return "", errBodyShape
	}
	if strings.ContainsRune(text, 0) {
		return "", errBodyShape
	}
	return text, nil
}

// jsonStreamOrderWord reads text as a stream of JSON values (a server may
// read any of them: "{"qty":1}\n{"_eventId":"placeOrder"}") token by
// token, so every key of a duplicate is read (first and last); ok is
// false when text is not JSON.
func jsonStreamOrderWord(text string) (word string, override, ok bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	// stack holds, per open container, whether it is an object and
	// whether its next token is a key.
	type level struct{ object, key bool }
	var stack []level
	values := 0
	flow := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", false, false
		}
		isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].key
		switch t := tok.(type) {
		case json.Delim:
			if t == '}' || t == ']' {
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].key = true // the closed container was a value
				}
				break
			}
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].key = false // its value is this container
			}
			stack = append(stack, level{object: t == '{', key: true})
		default:
			if len(stack) > 0 && stack[len(stack)-1].object {
				stack[len(stack)-1].key = !isKey
			}
			if s, isString := t.(string); isString {
				if isKey && strings.EqualFold(s, "_method") && word == "" {
					override = true
				}
				if w, found := orderWordIn(s); found && word == "" && !override {
					word = w
				}
				flow = flow || (isKey && isFlowEvent(s))
			}
		}
		if len(stack) == 0 {
			values++
		}
	}
	if values == 0 {
		return "", false, false
	}
	if word == "" && !override && flow {
		word = flowEventMatch
	}
	return word, override, true
}

// readPart reads a multipart part's content decoded by its
// Content-Transfer-Encoding; another encoding than 7bit, 8bit, binary,
// base64 or quoted-printable cannot be read as a server would: an error.
func readPart(part *multipart.Part) ([]byte, error) {
	var r io.Reader = part
	switch cte := strings.ToLower(strings.TrimSpace(part.Header.Get("Content-Transfer-Encoding"))); cte {
	case "", "7bit", "8bit", "binary":
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, newlineDropper{part})
	case "quoted-printable":
		r = quotedprintable.NewReader(part)
	default:
		return nil, errBodyShape
	}
	return io.ReadAll(io.LimitReader(r, MaxBody))
}

// newlineDropper drops CR, LF, spaces and tabs (base64 in a part is
// wrapped in lines).
type newlineDropper struct{ r io.Reader }

func (d newlineDropper) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	k := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
			p[k] = c
			k++
		}
	}
	return k, err
}

// multipartOrderWord reads each part: its field name, file name and
// content (as its own Content-Type says).
func multipartOrderWord(boundary string, body []byte, depth int) (string, bool, error) {
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	for n := 0; ; n++ {
		// Raw: the part's Content-Transfer-Encoding is decoded here, as a
		// server may (base64, quoted-printable), not left as it is.
		part, err := r.NextRawPart()
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
		flow := isFlowEvent(part.FormName())
		content, err := readPart(part)
		if err != nil {
			return "", false, errBodyShape
		}
		ct := part.Header.Get("Content-Type")
		if ct == "" {
			// A plain field: its value as it is.
			if w, ok := orderWordIn(string(content)); ok {
				return w, false, nil
			}
		} else if w, override, err := bodyOrderWord(ct, content, depth+1); err != nil || override || w != "" {
			return w, override, err
		}
		if flow {
			return flowEventMatch, false, nil
		}
	}
}
