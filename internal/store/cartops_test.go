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
		{"oversized body: product unknown", "POST", "https://www.metro.ca/api/cart/add", "application/json", `{"productId":"x","pad":"` + strings.Repeat("a", MaxBody) + `"}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, Quantity: 1}},
		// Every reading a server may make (issue 36): the largest quantity,
		// the product only when the readings agree.
		{"JSON stream: the second value's quantity", "POST", "https://www.metro.ca/api/cart/add", "text/plain", "{\"productId\":\"x\",\"quantity\":1}\n{\"productId\":\"x\",\"quantity\":5}", true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "x", Quantity: 5}},
		{"JSON duplicate quantity", "POST", "https://www.metro.ca/api/cart/add", "application/json", `{"productId":"x","quantity":5,"quantity":1}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "x", Quantity: 5}},
		{"JSON duplicate product", "POST", "https://www.metro.ca/api/cart/add", "application/json", `{"productId":"x","productId":"y","quantity":1}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, Quantity: 1}},
		{"JSON then garbage", "POST", "https://www.metro.ca/api/cart/add", "text/plain", `{"productId":"x","quantity":4} and more`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "x", Quantity: 4}},
		{"form duplicate quantity", "POST", "https://www.metro.ca/api/cart/add", "application/x-www-form-urlencoded", "productId=x&quantity=1&quantity=3", true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "x", Quantity: 3}},
		{"a body between 64 and 256 KiB is read", "POST", "https://www.metro.ca/api/cart/add", "application/json", `{"productId":"x","quantity":3,"pad":"` + strings.Repeat("a", 70<<10) + `"}`, true,
			CartChange{Path: "/api/cart/add", Kind: CartAdd, ProductID: "x", Quantity: 3}},
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
