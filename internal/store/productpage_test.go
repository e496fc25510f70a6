package store

import "testing"

func TestProductID(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://www.metro.ca/en/online-grocery/aisles/dairy-eggs/milk/natrel-2-milk-2-l/p/055872010012", "055872010012"},
		{"https://127.0.0.1:8443/fr/epicerie-en-ligne/allees/fruits/bananes/p/bananas-1?x=1#top", "bananas-1"},
		{"https://www.metro.ca/en/online-grocery/aisles/fruits/p/123/", "123"},
		{"https://www.metro.ca/en/online-grocery/search?filter=p", ""},
		{"https://www.metro.ca/en/online-grocery/aisles/fruits", ""},
		{"https://www.metro.ca/p/", ""},
		{"https://www.metro.ca/a/p/12%2F3", ""},
		{"", ""},
		{"::not a url", ""},
	}
	for _, tc := range tests {
		if got := ProductID(tc.url); got != tc.want {
			t.Errorf("ProductID(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
