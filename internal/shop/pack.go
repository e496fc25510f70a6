package shop

import (
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
)

// PackCart is the cart as the review pack and Home Assistant show it.
func PackCart(c Cart, cartURL string) reviewpack.Cart {
	out := reviewpack.Cart{Lines: make([]reviewpack.Line, 0, len(c.Lines)), ReadAt: c.ReadAt, URL: cartURL}
	for _, l := range c.Lines {
		out.Lines = append(out.Lines, reviewpack.Line{Name: l.Name, ProductID: l.ProductID, Quantity: l.Quantity, Price: l.Price})
	}
	return out
}

// packKind is the review pack's kind of a cart review warning about an
// item: missing, fewer units, or another price than reported (that one is
// not price_changed, which compares with the last purchase and has a
// threshold).
func packKind(k WarningKind) reviewpack.WarningKind {
	switch k {
	case WarnQuantity:
		return reviewpack.WarnQuantityShort
	case WarnPrice:
		return reviewpack.WarnPriceDiffers
	}
	return reviewpack.WarnMissing
}

// buildPack makes the run's review pack: the items' results, the cart
// review's warnings about them and the cart after the run.
func (r *run) buildPack(results []report.ItemResult, rev *Review) reviewpack.Pack {
	var issues []reviewpack.ItemIssue
	var after *reviewpack.Cart
	if rev != nil {
		for _, w := range rev.Warnings {
			if w.Item == "" {
				continue
			}
			issues = append(issues, reviewpack.ItemIssue{Item: w.Item, Kind: packKind(w.Kind), Message: w.Message, Text: w.Text})
		}
		if rev.After != nil {
			c := PackCart(*rev.After, r.cfg.Store.CartURL)
			after = &c
		}
	}
	return reviewpack.Build(r.id, r.cfg.Store.CartURL, results, issues, after,
		reviewpack.Options{PriceChangePercent: r.cfg.PriceChangePercent})
}
