package shop

import (
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/reviewpack"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// PackCart is the cart as the review pack and Home Assistant show it.
func PackCart(c Cart, cartURL string) reviewpack.Cart {
	out := reviewpack.Cart{Lines: make([]reviewpack.Line, 0, len(c.Lines)), ReadAt: c.ReadAt, URL: cartURL}
	for _, l := range c.Lines {
		out.Lines = append(out.Lines, reviewpack.Line{Name: l.Name, ProductID: l.ProductID, Quantity: l.Quantity, Price: l.Price})
	}
	return out
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
			issues = append(issues, reviewpack.ItemIssue{Item: w.Item, Kind: w.Kind, Message: w.Message, Text: w.Text})
		}
		if rev.After != nil {
			c := PackCart(*rev.After, r.cartLink())
			after = &c
		}
	}
	p := reviewpack.Build(r.id, r.cartLink(), results, issues, after,
		reviewpack.Options{PriceChangePercent: r.cfg.PriceChangePercent})
	if r.cfg.Pruning != nil {
		items := make([]shoppinglist.Item, 0, len(results))
		for _, res := range results {
			items = append(items, shoppinglist.Item{ID: res.ItemID, Name: res.ItemName, Status: shoppinglist.StatusNeedsAction})
		}
		p.AddPruning(r.cfg.Pruning(r.id, items))
	}
	return p
}
