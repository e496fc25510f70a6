package demostore

import "fmt"

// The demo store's page geometry is fixed: every interactive element is
// absolutely (or fixed-) positioned with pixel sizes, so a scripted client
// can compute where to click. The functions below return the centre of an
// element in CSS pixels of a ViewportWidth x ViewportHeight viewport at
// scroll position 0; the page CSS is generated from the same rectangles, so
// the two cannot disagree.
//
// The top PromoStripHeight pixels hold only a non-interactive promotion
// strip, so a banner of at most that height laid over the page (the
// browser's "Grocery agent active" bar) covers nothing clickable.

// Viewport size the layout is designed for.
const (
	ViewportWidth  = 1440
	ViewportHeight = 900
)

// PromoStripHeight is the height of the non-interactive strip at the top of
// every store page.
const PromoStripHeight = 40

// rect is an element's box in page pixels.
type rect struct{ x, y, w, h int }

func (r rect) centre() (int, int) { return r.x + r.w/2, r.y + r.h/2 }

// css renders the box as absolute-position declarations.
func (r rect) css() string {
	return fmt.Sprintf("left:%dpx;top:%dpx;width:%dpx;height:%dpx;", r.x, r.y, r.w, r.h)
}

// rel returns r relative to the origin of parent.
func (r rect) rel(parent rect) rect { return rect{r.x - parent.x, r.y - parent.y, r.w, r.h} }

var (
	layPromo  = rect{0, 0, ViewportWidth, PromoStripHeight}
	layHeader = rect{0, PromoStripHeight, ViewportWidth, 72}
	layLogo   = rect{24, 52, 160, 48}
	laySearch = rect{240, 56, 560, 40}
	laySubmit = rect{808, 56, 96, 40}
	layCart   = rect{1168, 56, 140, 40}
	layBadge  = rect{1270, 60, 32, 32}
	layAcct   = rect{1320, 56, 100, 40}
	layNav    = rect{0, 112, ViewportWidth, 40}
	layHead   = rect{84, 168, 1272, 32}
	layToast  = rect{884, 160, 472, 48}

	// Product tiles: 4 columns x 2 rows visible; further rows (aisle
	// pages) continue below the fold.
	tileW, tileH, tileGap = 300, 320, 24
	gridLeft, gridTop     = 84, 216
	// Parts of a tile, relative to the tile's top-left corner.
	tileImg    = rect{90, 8, 120, 120}
	tileName   = rect{16, 136, 268, 40}
	tileBrand  = rect{16, 178, 268, 18}
	tileSize   = rect{16, 196, 268, 18}
	tilePrice  = rect{16, 218, 268, 30}
	tileButton = rect{16, 256, 268, 40}
	tileStatus = rect{16, 300, 268, 16}

	// Cookie consent (OneTrust-like), fixed at the bottom of the viewport.
	layConsent       = rect{0, 760, ViewportWidth, 140}
	layConsentText   = rect{40, 784, 800, 92}
	layConsentReject = rect{900, 806, 240, 48}
	layConsentAccept = rect{1160, 806, 240, 48}

	// Login panel, opened by the header's Sign in button.
	layLoginPanel  = rect{1040, 112, 400, 240}
	layLoginTitle  = rect{1072, 136, 336, 32}
	layLoginText   = rect{1072, 172, 336, 40}
	layLoginSignIn = rect{1072, 224, 336, 48}
	layLoginClose  = rect{1072, 288, 336, 32}

	// "Delivery or Pickup?" postal-code dialog.
	layPostal       = rect{520, 260, 400, 300}
	layPostalTitle  = rect{552, 280, 336, 36}
	layPostalText   = rect{552, 320, 336, 48}
	layPostalInput  = rect{552, 380, 336, 44}
	layPostalError  = rect{552, 430, 336, 24}
	layPostalSubmit = rect{552, 464, 336, 48}
	layPostalCancel = rect{552, 520, 336, 28}

	// Product page.
	layProdImg    = rect{84, 216, 300, 300}
	layProdName   = rect{420, 216, 900, 40}
	layProdBrand  = rect{420, 264, 900, 24}
	layProdSize   = rect{420, 292, 900, 24}
	layProdPrice  = rect{420, 324, 900, 40}
	layProdStock  = rect{420, 372, 900, 24}
	layProdAdd    = rect{420, 408, 300, 48}
	layProdStatus = rect{420, 464, 900, 24}

	// Cart page: one row per line, then the checkout link.
	cartRowTop, cartRowH, cartRowGap = 216, 56, 8
	cartName                         = rect{84, 0, 560, 56}
	cartUnit                         = rect{660, 0, 100, 56}
	cartMinus                        = rect{776, 8, 40, 40}
	cartQty                          = rect{824, 8, 48, 40}
	cartPlus                         = rect{880, 8, 40, 40}
	cartLineTotal                    = rect{940, 0, 140, 56}
	cartRemove                       = rect{1100, 8, 120, 40}
	layCheckout                      = rect{1120, 160, 236, 44}
	layCartTotal                     = rect{640, 168, 460, 32}

	footerMinTop = 940
	footerH      = 360
)

// tileRect returns the box of the index-th tile of a product grid.
func tileRect(index int) rect {
	col, row := index%4, index/4
	return rect{gridLeft + col*(tileW+tileGap), gridTop + row*(tileH+tileGap), tileW, tileH}
}

// footerTop returns where the footer starts on a page whose content ends
// at contentBottom; the footer is always below the fold so every page
// scrolls.
func footerTop(contentBottom int) int { return max(footerMinTop, contentBottom+40) }

// TileAddButton returns the centre of the "Add to cart" (or disabled
// "Out of stock") button of the index-th product tile (0-based, row-major,
// four per row) of a search results or aisle page. Indexes 0..MaxTiles-1
// are visible without scrolling. It panics on a negative index.
func TileAddButton(index int) (x, y int) {
	if index < 0 {
		panic(fmt.Sprintf("demostore.TileAddButton: negative tile index %d", index))
	}
	t := tileRect(index)
	return rect{t.x + tileButton.x, t.y + tileButton.y, tileButton.w, tileButton.h}.centre()
}

// TileName returns the centre of the product-name link of the index-th
// tile (it opens the product page). It panics on a negative index.
func TileName(index int) (x, y int) {
	if index < 0 {
		panic(fmt.Sprintf("demostore.TileName: negative tile index %d", index))
	}
	t := tileRect(index)
	return rect{t.x + tileName.x, t.y + tileName.y, tileName.w, tileName.h}.centre()
}

// ConsentAcceptButton returns the centre of the cookie banner's
// "Accept all cookies" button (#onetrust-accept-btn-handler).
func ConsentAcceptButton() (x, y int) { return layConsentAccept.centre() }

// ConsentRejectButton returns the centre of the cookie banner's
// "Reject all" button (#onetrust-reject-all-handler).
func ConsentRejectButton() (x, y int) { return layConsentReject.centre() }

// PostalCodeInput returns the centre of the postal-code field of the
// "Delivery or Pickup?" dialog (#postal-code-input).
func PostalCodeInput() (x, y int) { return layPostalInput.centre() }

// PostalCodeSubmit returns the centre of the dialog's confirm button
// (#postal-code-submit).
func PostalCodeSubmit() (x, y int) { return layPostalSubmit.centre() }

// SearchBox returns the centre of the header's search field (#search-box).
func SearchBox() (x, y int) { return laySearch.centre() }

// SearchSubmit returns the centre of the header's search button.
func SearchSubmit() (x, y int) { return laySubmit.centre() }

// CartCounter returns the centre of the header's cart counter (#cart-count).
// Clicking it opens the cart page.
func CartCounter() (x, y int) { return layBadge.centre() }

// AccountButton returns the centre of the header's account button: "Sign in"
// (#sign-in-button) when logged out, the auth marker (#authenticatedButton)
// when logged in.
func AccountButton() (x, y int) { return layAcct.centre() }

// LoginPanelSignIn returns the centre of the login panel's "Sign in" link
// (#login-panel-sign-in), which leads to the identity host.
func LoginPanelSignIn() (x, y int) { return layLoginSignIn.centre() }

// CheckoutLink returns the centre of the cart page's "Proceed to checkout"
// link (#checkout-link), which the run's policy never lets open.
func CheckoutLink() (x, y int) { return layCheckout.centre() }

// ProductAddButton returns the centre of the "Add to cart" button of a
// product page (#product-add).
func ProductAddButton() (x, y int) { return layProdAdd.centre() }
