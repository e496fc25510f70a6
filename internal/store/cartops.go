package store

import (
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

// maxCartBody bounds the request body read for a cart change.
const maxCartBody = 64 << 10

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
			fields[k] = v[0]
		}
	}
	c.ProductID = fields[op.ProductField]
	if q, err := strconv.Atoi(strings.TrimSpace(fields[op.QuantityField])); err == nil && q >= 0 && q <= 10_000 {
		c.Quantity = q
	}
	return c
}

// bodyFields reads a JSON object's or a form's top-level fields as text.
func bodyFields(contentType string, body []byte) map[string]string {
	out := map[string]string{}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "application/x-www-form-urlencoded":
		vals, err := url.ParseQuery(string(body))
		if err == nil {
			for k, v := range vals {
				if len(v) > 0 {
					out[k] = v[0]
				}
			}
		}
	default: // JSON, whatever the page says it is (fetch sends text/plain by default)
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			return out
		}
		for k, v := range m {
			switch t := v.(type) {
			case string:
				out[k] = t
			case float64:
				out[k] = strconv.FormatFloat(t, 'f', -1, 64)
			}
		}
	}
	return out
}
