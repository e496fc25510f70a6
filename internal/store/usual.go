package store

// UsualPages is how to read the household's past orders and favourites on
// the store's own pages, by code in a reader tab (browser.Host.NewReader:
// only GET and HEAD leave it), for "the usual" (package usual). CSS
// selectors; an empty OrdersURL or FavouritesURL means the profile has no
// reader for that page. The pages must be allowed by the store policy
// like every page: the reader gets no path an agent's tab may not open.
type UsualPages struct {
	// OrdersURL is the order-history page.
	OrdersURL string
	// Order matches each past order; OrderIDAttr is its attribute naming
	// the order, OrderDate the element (inside it) whose DateAttr
	// attribute, or else text, holds its date (2006-01-02).
	Order, OrderIDAttr, OrderDate, DateAttr string
	// OrderLine matches each line of one order: "{id}" is replaced by the
	// order's OrderIDAttr value. LineName and LineQuantity are read inside
	// a line; LineProductAttr is the line's attribute holding the product id.
	OrderLine, LineName, LineQuantity, LineProductAttr string
	// FavouritesURL is the favourites page; Favourite matches each
	// favourite, FavouriteName its name inside it, FavouriteProductAttr
	// its attribute holding the product id.
	FavouritesURL, Favourite, FavouriteName, FavouriteProductAttr string
	// Exact says the reader was checked against the store's real pages
	// (the demo store). A best-effort reader says what it could not read.
	Exact bool
}

// demoUsualPages are exactly the demo store's order-history and
// favourites pages (package demostore, orders.go).
func demoUsualPages() UsualPages {
	return UsualPages{
		OrdersURL: "https://www.metro.ca/en/my-account/past-baskets",
		Order:     "#past-baskets .basket", OrderIDAttr: "data-basket-id", OrderDate: ".basket-date", DateAttr: "datetime",
		OrderLine: `.basket[data-basket-id="{id}"] .basket-line`, LineName: ".basket-line-name", LineQuantity: ".basket-line-qty",
		LineProductAttr: "data-product-id",
		FavouritesURL:   "https://www.metro.ca/en/my-account/favourites",
		Favourite:       "#favourites .favourite", FavouriteName: ".favourite-name", FavouriteProductAttr: "data-product-id",
		Exact: true,
	}
}

// metroUsualPages is a best effort: metro.ca's account pages are not known
// from here (docs/DESIGN.md §11). Its order history lives under a path of
// the order family ("/orders"), which the store policy refuses to every
// tab, a reader's included: the reader then says it could not read it.
func metroUsualPages() UsualPages {
	return UsualPages{
		OrdersURL: "https://www.metro.ca/en/online-grocery/my-account/orders",
		Order:     ".order-history .order-item", OrderIDAttr: "data-order-id", OrderDate: ".order-date", DateAttr: "datetime",
		OrderLine: `.order-item[data-order-id="{id}"] .product-item`, LineName: ".pi--title", LineQuantity: ".pi--quantity",
		LineProductAttr: "data-product-code",
		FavouritesURL:   "https://www.metro.ca/en/online-grocery/my-account/favorites",
		Favourite:       ".favorites .product-item", FavouriteName: ".pi--title", FavouriteProductAttr: "data-product-code",
	}
}
