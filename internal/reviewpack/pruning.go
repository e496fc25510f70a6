package reviewpack

import "github.com/gemini-supply/gemini-supply/internal/messages"

// WarnRecentlyBought: the item was bought less than 70 % of its usual
// restock cycle ago, so it is probably still at home ("bought 2 days ago,
// usually every 10 days"; package usual). Said, never acted on: the item
// stays on the list and in the cart.
const WarnRecentlyBought WarningKind = "recently_bought"

// Pruned is one entry of the pack's pruning section (the coordinator's
// StockPruner): an item of the list, or of the usual proposal, that was
// probably still at home or already on the list, and why.
type Pruned struct {
	ItemID string `json:"item_id,omitempty"`
	Item   string `json:"item"`
	// Why is "probably_at_home" (kept on the list, warned about) or
	// "on_list" (a usual item not proposed: the list has it).
	Why string `json:"why"`
	// Message is the reason in English; Text the same as a catalogue key
	// and values, said in the reader's language.
	Message string `json:"message"`
	messages.Text
}

// AddPruning adds the pruning section to the pack and, to each item it
// names that is probably still at home, a WarnRecentlyBought warning:
// the item is not dropped.
func (p *Pack) AddPruning(ps []Pruned) {
	for _, pr := range ps {
		p.Pruning = append(p.Pruning, pr)
		if pr.Why != PrunedAtHome {
			continue
		}
		for i := range p.Items {
			it := &p.Items[i]
			if (pr.ItemID != "" && it.ItemID == pr.ItemID) || (pr.ItemID == "" && it.ItemName == pr.Item) {
				it.Warnings = append(it.Warnings, Warning{Kind: WarnRecentlyBought, Message: pr.Message, Text: pr.Text})
			}
		}
	}
}

// Pruned.Why values.
const (
	PrunedAtHome = "probably_at_home"
	PrunedOnList = "on_list"
)
