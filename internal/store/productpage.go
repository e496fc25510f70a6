package store

import (
	"net/url"
	"strings"
)

// ProductID returns the store's product id in a product page URL, or "" when
// the URL is not a product page. Both profiles (metro.ca and the demo store,
// which copies its layout) end a product page's path with "/p/<id>":
// ".../aisles/dairy-eggs/natrel-2-milk-2-l/p/055872010012".
func ProductID(productURL string) string {
	u, err := url.Parse(strings.TrimSpace(productURL))
	if err != nil {
		return ""
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(segs) < 2 || segs[len(segs)-2] != "p" {
		return ""
	}
	id := segs[len(segs)-1]
	for _, r := range id {
		if (r < '0' || r > '9') && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && r != '-' && r != '_' {
			return ""
		}
	}
	return id
}
