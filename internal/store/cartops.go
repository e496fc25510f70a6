package store

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/url"
	"strconv"
	"strings"
)

// CartOpKind is what a cart operation does to a cart line.
type CartOpKind string

// Cart operation kinds.
const (
	// CartAdd adds Quantity units (1 when the request names none).
	CartAdd CartOpKind = "add"
	// CartSet sets the line's quantity to Quantity (0 removes it).
	CartSet CartOpKind = "set"
)

// CartOp describes one of the store's cart operations well enough for code
// to read, from the request a page sends, which product it changes and by
// how much: the request's path (exact, normalised) and the JSON or form
// fields of its body that name the product and the quantity.
type CartOp struct {
	Path          string
	Kind          CartOpKind
	ProductField  string
	QuantityField string
}

// CartChange is what one cart-changing request asks for, as read from the
// request. Kind is empty when the profile does not describe the operation
// (a best-effort profile, or a cart path that is not a line change such as
// the postal-code answer): the request is still a cart change, of unknown
// effect.
type CartChange struct {
	Path      string     `json:"path"`
	Kind      CartOpKind `json:"kind,omitempty"`
	ProductID string     `json:"product_id,omitempty"`
	// Quantity is the units added (CartAdd) or the line's new quantity
	// (CartSet).
	Quantity int `json:"quantity,omitempty"`
	// ProductText is what the tab's page shows of the added product (its
	// name and size, Profile.AddedProductText), read by the cart guard
	// before the add goes out; "" when not read.
	ProductText string `json:"-"`
}

// maxCartBody bounds the request body read for a cart change: as much
// as the policy reads (a longer body never reaches the store).
const maxCartBody = MaxBody

// IsCartChange reports whether a request changes the cart: a state-changing
// method to one of the store hosts' cart paths (the only state changes the
// policy lets through, besides the login's).
func (p Profile) IsCartChange(method string, u *url.URL) bool {
	if u == nil || !StateChanging(method) || !p.storeHost(u.Hostname()) {
		return false
	}
	return p.cartPath(NormalizePath(u.EscapedPath()))
}

// ReadCartChange reads the change a cart-changing request asks for from its
// path and body (JSON object or form; anything else, or a body over 64 KiB,
// leaves the product and quantity unknown).
func (p Profile) ReadCartChange(u *url.URL, contentType string, body []byte) CartChange {
	c := CartChange{Path: u.EscapedPath()}
	segs := NormalizePath(u.EscapedPath())
	var op *CartOp
	for i := range p.CartOps {
		if strings.Join(segs, "/") == strings.Join(NormalizePath(p.CartOps[i].Path), "/") {
			op = &p.CartOps[i]
			break
		}
	}
	if op == nil {
		return c
	}
	c.Kind = op.Kind
	if op.Kind == CartAdd {
		c.Quantity = 1
	}
	if len(body) > maxCartBody {
		return c
	}
	fields := bodyFields(contentType, body)
	for k, v := range u.Query() { // a field in the query string counts too
		if _, ok := fields[k]; !ok && len(v) > 0 {
			fields[k] = v
		}
	}
	// Every reading a server may make (a duplicate field, a second JSON
	// value): the product only when they agree, the largest quantity (the
	// cart limit must not count fewer units than the store adds).
	if ids := fields[op.ProductField]; len(ids) > 0 && allEqual(ids) {
		c.ProductID = ids[0]
	}
	found := false
	for _, v := range fields[op.QuantityField] {
		if q, ok := quantity(v); ok && (!found || q > c.Quantity) {
			c.Quantity, found = q, true
		}
	}
	return c
}

func allEqual(vs []string) bool {
	for _, v := range vs[1:] {
		if v != vs[0] {
			return false
		}
	}
	return true
}

// quantity reads a field's whole number of units (0 to 10,000).
func quantity(v string) (int, bool) {
	v = strings.TrimSpace(v)
	q, err := strconv.Atoi(v)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f != float64(int(f)) {
			return 0, false
		}
		q = int(f)
	}
	return q, q >= 0 && q <= 10_000
}

// bodyFields reads every value of a JSON body's top-level fields (of each
// object of a JSON stream, every occurrence of a duplicate key, as far as
// the body is JSON) or of a form's fields, as text.
func bodyFields(contentType string, body []byte) map[string][]string {
	out := map[string][]string{}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" {
		vals, err := url.ParseQuery(string(body))
		if err == nil {
			for k, v := range vals {
				out[k] = v
			}
		}
		return out
	}
	// JSON, whatever the page says it is (fetch sends text/plain by
	// default): token by token, top-level objects' scalar fields.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	depth, key, expectKey, object := 0, "", false, false
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
				if depth == 1 {
					object = t == '{'
				}
				expectKey = object && depth == 1
			} else {
				depth--
				expectKey = object && depth == 1
			}
			continue
		}
		if depth != 1 || !object {
			continue
		}
		if expectKey {
			key, _ = tok.(string)
			expectKey = false
			continue
		}
		switch t := tok.(type) {
		case string:
			out[key] = append(out[key], t)
		case json.Number:
			out[key] = append(out[key], t.String())
		}
		expectKey = true
	}
}
