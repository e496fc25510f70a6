package store

import (
	"net/url"
	"strings"
	"testing"
)

func TestReadCartChange(t *testing.T) {
	p := Demo()
	cases := []struct {
		name, method, raw, ct, body string
		isCart                      bool
		want                        CartChange
	}{
		{"json add", "POST", "https://www.metro.ca/api/cart/add", "application/json", `{"productId":"milk-2pct-2l","quantity":2}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "milk-2pct-2l", Quantity: 2}},
		{"json add without quantity is one unit", "POST", "https://www.metro.ca/api/cart/add", "text/plain;charset=UTF-8", `{"productId":"sugar-white-2kg"}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "sugar-white-2kg", Quantity: 1}},
		{"form set", "POST", "https://www.metro.ca/api/cart/update", "application/x-www-form-urlencoded", "productId=bagels-plain-6&quantity=0", true,
			CartChange{Path: "/api/cart/update", Kind: CartSet, ProductID: "bagels-plain-6", Quantity: 0}},
		{"fields in the query", "POST", "https://www.metro.ca/api/cart/add?productId=carrots-2lb&quantity=3", "", "", true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "carrots-2lb", Quantity: 3}},
		{"absurd quantity ignored", "POST", "https://www.metro.ca/api/cart/add", "application/json", `{"productId":"x","quantity":1e9}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "x", Quantity: 1}},
		{"oversized body: product unknown", "POST", "https://www.metro.ca/api/cart/add", "application/json", `{"productId":"x","pad":"` + strings.Repeat("a", 70<<10) + `"}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, Quantity: 1}},
		{"a cart path that is no line change", "POST", "https://www.metro.ca/api/postal-code", "application/json", `{"postalCode":"H2X 1Y4"}`, true,
			CartChange{Path: "/api/postal-code"}},
		{"GET is no change", "GET", "https://www.metro.ca/api/cart/add", "", "", false, CartChange{}},
		{"another host", "POST", "https://evil.example/api/cart/add", "", "", false, CartChange{}},
		{"not a cart path", "POST", "https://www.metro.ca/api/other", "", "", false, CartChange{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, err := url.Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.IsCartChange(tc.method, u); got != tc.isCart {
				t.Fatalf("IsCartChange = %v, want %v", got, tc.isCart)
			}
			if !tc.isCart {
				return
			}
			if got := p.ReadCartChange(u, tc.ct, []byte(tc.body)); got != tc.want {
				t.Errorf("ReadCartChange = %+v, want %+v", got, tc.want)
			}
		})
	}
}
