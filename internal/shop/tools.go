package shop

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/choice"
	"github.com/gemini-supply/gemini-supply/internal/money"
	"github.com/gemini-supply/gemini-supply/internal/report"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
	"github.com/gemini-supply/gemini-supply/internal/shoppinglist"
)

// Names of the grocery tools.
const (
	ToolReportAdded    = "report_item_added"
	ToolReportNotFound = "report_item_not_found"
	ToolPresentOptions = "present_options"
	// ToolAskPerson: the agent asks the household to take its tab over
	// (declared only with a panel attached: Config.Desk, TakeoverWait).
	ToolAskPerson = "ask_household_to_take_over"
)

// endKind is how an attempt ended by a tool.
type endKind int

const (
	endNone endKind = iota
	endAdded
	endNotFound
	endRestart
	// endFailed: the item cannot be finished (nobody answered the question in time).
	endFailed
	// endSkipped: the household said "Skip this week" (the list is left as it is).
	endSkipped
)

// Why present_options asks (its "reason" argument).
const (
	reasonSeveral    = "several_match"
	reasonOutOfStock = "out_of_stock"
	reasonNoMatch    = "no_match"
)

// chosenOption is the household's product answer to a question.
type chosenOption struct {
	opt choice.Option
	// substitute: the question was about a product that cannot be bought.
	substitute bool
}

// ending is the first terminal report of an attempt.
type ending struct {
	kind        endKind
	added       shoppinglist.Added
	explanation string
	query       string // endRestart: the user's new query
	tool        string
	matches     int // endAdded: how many products matched, as the agent said
}

// attempt is the per-attempt state the tool handlers share. The first
// terminal report wins; later ones are ignored.
type attempt struct {
	mu  sync.Mutex
	end *ending
	// brandDecided: an any-brand item's question between several matches
	// was sent back to the agent once (anyBrandOnce).
	brandDecided bool
}

// anyBrandOnce reports whether this is the attempt's first question
// between several matches (and remembers that it was asked).
func (a *attempt) anyBrandOnce() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	first := !a.brandDecided
	a.brandDecided = true
	return first
}

// claim records e as the attempt's ending unless one exists; it reports
// whether e won.
func (a *attempt) claim(e ending) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.end != nil {
		return false
	}
	a.end = &e
	return true
}

func (a *attempt) ending() *ending {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.end == nil {
		return nil
	}
	e := *a.end
	return &e
}

// toolSet builds the grocery tools of one attempt. onEnd is called when a
// terminal report arrives, before the handler returns, so that the list is
// updated the moment the model reports.
type toolSet struct {
	item     *itemRun
	att      *attempt
	resolver ChoiceResolver
	onEnd    func(ctx context.Context, e ending)
}

func (ts *toolSet) tools() []agent.Tool {
	tools := []agent.Tool{
		{
			Name:        ToolReportAdded,
			Description: "Report the product you put in the cart for the shopping list item, once the cart shows it.",
			Parameters: &genai.Schema{
				Type: genai.TypeObject,
				Properties: map[string]*genai.Schema{
					"item_name":  {Type: genai.TypeString, Description: "The product's name as the store shows it (brand, name, size)."},
					"price_text": {Type: genai.TypeString, Description: "The price exactly as the store shows it, e.g. \"$5.49\" or \"2 for $7.00\"."},
					"url":        {Type: genai.TypeString, Description: "The product page URL, or the search page URL when the product has no page."},
					"quantity":   {Type: genai.TypeInteger, Description: "How many units of the product are now in the cart for this item."},
					"matches":    {Type: genai.TypeInteger, Description: "How many in-stock products matched the item about equally well before you chose (1 when only this one)."},
				},
				Required: []string{"item_name", "price_text", "url", "quantity"},
			},
			Terminal: true,
			Handler:  ts.reportAdded,
		},
		{
			Name:        ToolReportNotFound,
			Description: "Report that the store has no suitable product for the shopping list item.",
			Parameters: &genai.Schema{
				Type: genai.TypeObject,
				Properties: map[string]*genai.Schema{
					"item_name":   {Type: genai.TypeString, Description: "The shopping list item."},
					"explanation": {Type: genai.TypeString, Description: "What you searched for and what you found, in one or two sentences."},
				},
				Required: []string{"item_name", "explanation"},
			},
			Terminal: true,
			Handler:  ts.reportNotFound,
		},
	}
	if r := ts.item.r; r.cfg.Desk != nil && r.cfg.TakeoverWait > 0 {
		tools = append(tools, agent.Tool{
			Name: ToolAskPerson,
			Description: "Ask a person of the household to finish this item on this tab themselves, when something on the page " +
				"only a person can do stops you (a \"not a robot\" check, a question about their account, a page you cannot operate). " +
				"Not for a product that is missing (report it not found) nor for a choice between products (present the options). " +
				"Ends your work on the item: the tab is handed to the household.",
			Parameters: &genai.Schema{
				Type: genai.TypeObject,
				Properties: map[string]*genai.Schema{
					"item_name": {Type: genai.TypeString, Description: "The shopping list item."},
					"reason":    {Type: genai.TypeString, Description: "One sentence: what on the page needs a person."},
				},
				Required: []string{"item_name", "reason"},
			},
			Terminal: true,
			Handler:  ts.askPerson,
		})
	}
	if ts.resolver != nil {
		tools = append(tools, agent.Tool{
			Name: ToolPresentOptions,
			Description: "Ask the household to choose between products when several match about equally well, " +
				"when the matching product is out of stock (search wider first and offer in-stock alternatives), " +
				"or when nothing close exists. Offer only products that can be added now: a product the page shows " +
				"out of stock or unavailable is never an option (it is dropped). The household may also answer " +
				"\"Skip this week\" or \"Something else\". Returns their answer.",
			Parameters: &genai.Schema{
				Type: genai.TypeObject,
				Properties: map[string]*genai.Schema{
					"item_name": {Type: genai.TypeString, Description: "The shopping list item."},
					"options": {
						Type:        genai.TypeArray,
						Description: "One to five candidate products that are in stock and can be added now, best first. Never a sold-out product.",
						Items: &genai.Schema{
							Type: genai.TypeObject,
							Properties: map[string]*genai.Schema{
								"name":       {Type: genai.TypeString, Description: "Product name as shown (brand, name, size)."},
								"price":      {Type: genai.TypeString, Description: "Price text as shown."},
								"url":        {Type: genai.TypeString, Description: "Product page URL."},
								"product_id": {Type: genai.TypeString, Description: "The store's product id if visible."},
							},
							Required: []string{"name", "price"},
						},
					},
					"reason": {Type: genai.TypeString, Enum: []string{reasonSeveral, reasonOutOfStock, reasonNoMatch},
						Description: "Why you ask: several_match (several products fit equally), out_of_stock (the product the item names is sold out; the options are in-stock alternatives), no_match (nothing close exists; the options are the nearest)."},
					"context": {Type: genai.TypeString, Description: "One sentence: why you ask (e.g. the product is out of stock)."},
				},
				Required: []string{"item_name", "options", "reason", "context"},
			},
			WaitsForUser: true,
			Handler:      ts.presentOptions,
		})
	}
	return tools
}

func (ts *toolSet) reportAdded(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
	name := strings.TrimSpace(argString(args, "item_name"))
	priceText := strings.TrimSpace(argString(args, "price_text"))
	if name == "" {
		name = ts.item.query
	}
	qty := argInt(args, "quantity")
	if qty < 1 {
		// The packages of this product the item asks for (one box of 12
		// for "12 eggs").
		qty = ts.item.packagesFor(name)
	}
	e := ending{kind: endAdded, tool: ToolReportAdded, matches: max(argInt(args, "matches"), 0), added: shoppinglist.Added{
		ProductName: name,
		Price:       money.Parse(priceText),
		URL:         strings.TrimSpace(argString(args, "url")),
		Quantity:    qty,
	}}
	if own, ok := ts.item.noSubRefuses(e.added); ok {
		// Never substitute: another product than the item's own is a
		// substitute, however it got into the cart (the remembered one
		// sold out, and the agent added another directly).
		ts.item.r.log.Warn("a substitute was reported for an item that is never substituted; not recorded",
			"item", ts.item.p.item.Name, "reported", name, "product", own)
		return agent.ToolOutput{Response: map[string]any{
			"error": fmt.Sprintf("Not recorded: the household never wants a substitute for this item (never substitute), "+
				"and %q is not its product %q. Remove %q from the cart, then call %s saying %q cannot be bought.",
				name, own, name, ToolReportNotFound, own),
		}}, nil
	}
	if w, wrong := ts.item.rejectedAs("", e.added.URL, name); wrong {
		// The household marked this product wrong for the item: it is not
		// the item's product, whatever the cart holds.
		ts.item.r.log.Warn("a product marked wrong for the item was reported added; not recorded",
			"item", ts.item.p.item.Name, "reported", name, "wrong", w.Name)
		return agent.ToolOutput{Response: map[string]any{
			"error": fmt.Sprintf("Not recorded: the household marked %q wrong for this item, so it is never the item's product. "+
				"If it is in the cart, remove it; then add another product and report that one, or call %s.",
				w.Name, ToolReportNotFound),
		}}, nil
	}
	if !ts.att.claim(e) {
		return agent.ToolOutput{Response: map[string]any{"status": "ignored: the item was already reported"}, End: true}, nil
	}
	ts.onEnd(ctx, e)
	return agent.ToolOutput{Response: map[string]any{"status": "recorded"}, End: true, Payload: e}, nil
}

// askPerson ends the attempt as failed, with the agent's reason; the item's
// tab is then offered to the household (itemRun.offerReason).
func (ts *toolSet) askPerson(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
	reason := strings.TrimSpace(argString(args, "reason"))
	if reason == "" {
		reason = "something on the page needs a person"
	}
	e := ending{kind: endFailed, tool: ToolAskPerson, explanation: "The agent asked the household to take over: " + reason}
	if !ts.att.claim(e) {
		return agent.ToolOutput{Response: map[string]any{"status": "ignored: the item was already reported"}, End: true}, nil
	}
	ts.onEnd(ctx, e)
	return agent.ToolOutput{Response: map[string]any{"status": "recorded: the tab is handed to the household"}, End: true, Payload: e}, nil
}

func (ts *toolSet) reportNotFound(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
	expl := strings.TrimSpace(argString(args, "explanation"))
	if expl == "" {
		expl = "The agent found no suitable product."
	}
	e := ending{kind: endNotFound, tool: ToolReportNotFound, explanation: expl}
	if !ts.att.claim(e) {
		return agent.ToolOutput{Response: map[string]any{"status": "ignored: the item was already reported"}, End: true}, nil
	}
	ts.onEnd(ctx, e)
	return agent.ToolOutput{Response: map[string]any{"status": "recorded"}, End: true, Payload: e}, nil
}

func (ts *toolSet) presentOptions(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
	it := ts.item
	q := choice.Question{
		ItemName: it.p.item.Name,
		Context:  strings.TrimSpace(argString(args, "context")),
		Options:  argOptions(args["options"]),
	}
	if len(q.Options) == 0 {
		return agent.ToolOutput{Response: map[string]any{
			"error": "present_options needs at least one option with a name and a price; list the candidates you see, or report the item not found.",
		}}, nil
	}
	reason := questionReason(argString(args, "reason"), q.Context)
	substitute := reason != reasonSeveral
	if substitute && it.policy.NoSub {
		// Never substitute (#nosub): the item ends not found, unasked.
		it.r.log.Info("the item is never substituted: not asking", "item", it.p.item.Name, "reason", reason)
		e := ending{kind: endNotFound, tool: ToolPresentOptions, explanation: noSubExplanation(q.Context)}
		if ts.att.claim(e) {
			ts.onEnd(ctx, e)
		}
		return agent.ToolOutput{Response: map[string]any{"answer": "nothing", "reason": "the household never wants a substitute for this item"}, End: true, Payload: e}, nil
	}
	if reason == reasonSeveral && it.policy.AnyBrand && !it.policy.Ask && ts.att.anyBrandOnce() {
		// Any brand (#anybrand): the household is not asked which brand.
		// The agent decides; if it asks again, the products differ in more
		// than the brand (a size or kind the item names), and it may.
		it.r.log.Info("any brand: not asking which of several matches", "item", it.p.item.Name)
		return agent.ToolOutput{Response: map[string]any{
			"error": "Not asked: the household takes any brand for this item. Do not ask which brand — add the ordinary choice " +
				"among these (the usual household size at the lowest price) and report it. Call present_options again only if " +
				"they differ in something the item names (size, kind, fat, flavour), not in brand.",
		}}, nil
	}
	if kept, wrong := it.withoutRejected(q.Options); len(wrong) > 0 {
		it.r.log.Info("options marked wrong for the item were dropped", "item", it.p.item.Name, "dropped", wrong)
		if len(kept) == 0 {
			return agent.ToolOutput{Response: map[string]any{
				"error": "Every option you offered is a product the household marked wrong for this item (" + strings.Join(wrong, "; ") +
					"). Never offer or add it: search for other products, or report the item not found.",
			}}, nil
		}
		q.Options = kept
	}
	kept, dropped := it.r.inStockOptions(ctx, q.Options)
	if len(dropped) > 0 {
		it.r.log.Info("options the store shows out of stock were dropped", "item", it.p.item.Name, "dropped", dropped)
	}
	if len(kept) == 0 {
		return agent.ToolOutput{Response: map[string]any{
			"error": "Every option you offered is out of stock on its page (" + strings.Join(dropped, "; ") + "). " +
				"Search wider — the same aisle or category, other brands, other sizes — and offer products that can be added now, or report the item not found.",
		}}, nil
	}
	q.Options = kept
	if !it.askAllowed() {
		return agent.ToolOutput{Response: map[string]any{
			"answer": "The household was already asked about this item several times. Do not ask again: add the option that fits best if one is in stock, otherwise report the item not found.",
		}}, nil
	}
	it.r.publish(runstatus.KindWaitingForUser, it.pendingResult(), questionText(q))
	ans, err := ts.resolver.Choose(ctx, q)
	if ctx.Err() != nil {
		return agent.ToolOutput{}, ctx.Err()
	}
	if err != nil {
		it.r.publish(runstatus.KindUserAnswered, it.pendingResult(), "no answer: "+err.Error())
		it.r.log.Warn("asking the household failed", "item", it.p.item.Name, "err", err)
		e := ending{kind: endNotFound, tool: ToolPresentOptions,
			explanation: fmt.Sprintf("The household had to choose (%s), but could not be asked: %v", q.Context, err)}
		if ts.att.claim(e) {
			ts.onEnd(ctx, e)
		}
		return agent.ToolOutput{Response: map[string]any{"answer": "nobody could be asked; the item is closed"}, End: true, Payload: e}, nil
	}
	it.answeredBy(ans.By)
	switch ans.Kind {
	case choice.KindProduct:
		if ans.Index < 0 || ans.Index >= len(q.Options) {
			it.r.publish(runstatus.KindUserAnswered, it.pendingResult(), "invalid answer")
			return agent.ToolOutput{Response: map[string]any{"error": "the answer named no listed option; ask again or decide"}}, nil
		}
		opt := q.Options[ans.Index]
		it.mu.Lock()
		it.chosen = &chosenOption{opt: opt, substitute: substitute}
		it.mu.Unlock()
		it.r.publish(runstatus.KindUserAnswered, it.pendingResult(), "chose "+opt.Name)
		it.setChosenBy(report.ChosenByHousehold)
		if ans.Remember && it.r.cfg.Preferences != nil {
			if err := it.r.cfg.Preferences.Remember(it.p.item.Name, PreferredProduct{Name: opt.Name, URL: opt.URL, Price: opt.Price, ProductID: opt.ProductID}); err != nil {
				it.r.log.Warn("remembering the household's choice failed", "item", it.p.item.Name, "err", err)
			}
		}
		resp := map[string]any{
			"answer":      "product",
			"name":        opt.Name,
			"price":       opt.Price,
			"instruction": fmt.Sprintf("The household chose %q. Add exactly this product to the cart (quantity %d), check the cart counter, then report it with report_item_added.", opt.Name, it.packagesFor(opt.Name)),
		}
		if opt.URL != "" {
			resp["url"] = opt.URL
		}
		if opt.ProductID != "" {
			resp["product_id"] = opt.ProductID
		}
		return agent.ToolOutput{Response: resp}, nil
	case choice.KindCustom:
		text := strings.TrimSpace(ans.Text)
		if text == "" {
			break
		}
		it.r.publish(runstatus.KindUserAnswered, it.pendingResult(), "search for "+text)
		e := ending{kind: endRestart, tool: ToolPresentOptions, query: text}
		if !ts.att.claim(e) {
			return agent.ToolOutput{End: true, Response: map[string]any{"status": "ignored"}}, nil
		}
		return agent.ToolOutput{Response: map[string]any{"answer": "custom", "text": text}, End: true, Payload: e}, nil
	}
	if ans.Kind == choice.KindSkip {
		// Not this week: the item stays open and untagged on the list.
		it.r.publish(runstatus.KindUserAnswered, it.pendingResult(), "skip this week")
		e := ending{kind: endSkipped, tool: ToolPresentOptions, explanation: choice.SkipExplanation}
		if !ts.att.claim(e) {
			return agent.ToolOutput{Response: map[string]any{"status": "ignored: the item was already reported"}, End: true}, nil
		}
		return agent.ToolOutput{Response: map[string]any{"answer": "skip", "instruction": "The household skips this item this week. Stop: add nothing."}, End: true, Payload: e}, nil
	}
	if ans.Kind == choice.KindNothing && ans.Reason == choice.ReasonTimeout {
		// Unanswered: the item is failed (with the note "timeout"), not
		// "not found" — nobody decided that nothing fits.
		it.r.publish(runstatus.KindUserAnswered, it.pendingResult(), "no answer (timeout)")
		e := ending{kind: endFailed, tool: ToolPresentOptions,
			explanation: fmt.Sprintf("%s: nobody answered the question about %q in time", choice.ReasonTimeout, it.p.item.Name)}
		if !ts.att.claim(e) {
			return agent.ToolOutput{Response: map[string]any{"status": "ignored: the item was already reported"}, End: true}, nil
		}
		return agent.ToolOutput{Response: map[string]any{"answer": "nothing", "reason": choice.ReasonTimeout}, End: true, Payload: e}, nil
	}
	// KindNothing (and anything unknown): the item ends as not found.
	why := "The household chose none of the offered products"
	if ans.Reason != "" {
		why += " (" + ans.Reason + ")"
	}
	it.r.publish(runstatus.KindUserAnswered, it.pendingResult(), "nothing")
	expl := why + "."
	if q.Context != "" {
		expl = strings.TrimRight(q.Context, ". ") + ". " + expl
	}
	e := ending{kind: endNotFound, tool: ToolPresentOptions, explanation: expl}
	if ts.att.claim(e) {
		ts.onEnd(ctx, e)
	}
	return agent.ToolOutput{Response: map[string]any{"answer": "nothing"}, End: true, Payload: e}, nil
}

// noSubRefuses reports whether a reported add is a substitute the item's
// "never substitute" rule refuses, and names the item's own product: with
// the rule and a remembered (or pinned) product, any other product is a
// substitute — unless the household chose it (its answer to a question, or
// its typed alternative). With nothing remembered, the agent's pick is the
// item's product, not a substitute.
func (it *itemRun) noSubRefuses(a shoppinglist.Added) (own string, refused bool) {
	if !it.policy.NoSub {
		return "", false
	}
	it.mu.Lock()
	household := it.chosen != nil
	it.mu.Unlock()
	if household || it.fromUser {
		return "", false
	}
	var owns []Remembered
	if rem := it.remembered; rem != nil && strings.TrimSpace(rem.Name) != "" {
		owns = append(owns, *rem)
	}
	if prefs := it.r.cfg.Preferences; prefs != nil {
		if pref, ok := prefs.Lookup(it.p.item.Name); ok && strings.TrimSpace(pref.Name) != "" {
			owns = append(owns, Remembered{Name: pref.Name, URL: pref.URL, ProductID: pref.ProductID, Price: pref.Price})
		}
	}
	if len(owns) == 0 {
		return "", false
	}
	for _, o := range owns {
		if isOwnProduct(o, a) {
			return "", false
		}
	}
	return owns[0].Name, true
}

// isOwnProduct: the reported product is the remembered one — the same
// product page, the same name, or the same words in its name.
func isOwnProduct(own Remembered, a shoppinglist.Added) bool {
	if p := urlPath(own.URL); p != "" && p == urlPath(a.URL) {
		return true
	}
	if strings.EqualFold(strings.TrimSpace(own.Name), strings.TrimSpace(a.ProductName)) {
		return true
	}
	return sameName(a.ProductName, "", own.Name)
}

// questionReason reads present_options' reason; a missing or unknown one
// is read from the context (a sold-out product is never "several match").
func questionReason(reason, context string) string {
	switch reason = strings.ToLower(strings.TrimSpace(reason)); reason {
	case reasonSeveral, reasonOutOfStock, reasonNoMatch:
		return reason
	}
	c := strings.ToLower(context)
	for _, w := range []string{"out of stock", "sold out", "unavailable", "not available"} {
		if strings.Contains(c, w) {
			return reasonOutOfStock
		}
	}
	return reasonSeveral
}

// noSubExplanation is the not-found explanation of an item the household
// never wants substituted.
func noSubExplanation(context string) string {
	expl := "The item says never substitute (#nosub), so no alternative was offered."
	if c := strings.TrimSpace(context); c != "" {
		expl = strings.TrimRight(c, ". ") + ". " + expl
	}
	return expl
}

func questionText(q choice.Question) string {
	names := make([]string, len(q.Options))
	for i, o := range q.Options {
		names[i] = o.Name
	}
	s := q.ItemName + ": " + strings.Join(names, " | ")
	if q.Context != "" {
		s = q.Context + " — " + s
	}
	return s
}

func argString(args map[string]any, k string) string {
	switch v := args[k].(type) {
	case string:
		return v
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

func argInt(args map[string]any, k string) int {
	switch v := args[k].(type) {
	case float64:
		if math.IsNaN(v) || v < 0 || v > 1000 {
			return 0
		}
		return int(math.Round(v))
	case int:
		return v
	case int64:
		return int(v)
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0
		}
		return n
	}
	return 0
}

// argOptions reads present_options' options, dropping nameless entries and
// keeping at most five.
func argOptions(v any) []choice.Option {
	list, _ := v.([]any)
	var out []choice.Option
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		o := choice.Option{
			Name:      strings.TrimSpace(argString(m, "name")),
			Price:     strings.TrimSpace(argString(m, "price")),
			URL:       strings.TrimSpace(argString(m, "url")),
			ProductID: strings.TrimSpace(argString(m, "product_id")),
		}
		if o.Name == "" {
			continue
		}
		out = append(out, o)
		if len(out) == 5 {
			break
		}
	}
	return out
}

// inStockOptions drops the options whose page the store's exact page
// reader shows out of stock or with its add control disabled: an option
// that cannot be added is never a button. It reads each option's page in a
// tab of its own that loads only what a replay needs (the browser policy
// refuses any address off the store). A store whose reader is best effort
// (metro), an option without an address, or a page that cannot be read
// keeps the option: only a page that says so drops one.
func (r *run) inStockOptions(ctx context.Context, opts []choice.Option) (kept []choice.Option, dropped []string) {
	pp := r.cfg.Store.Product
	if !pp.Exact || pp.Root == "" || r.host == nil {
		return opts, nil
	}
	tab, err := r.host.NewTab(ctx)
	r.noteNewTab(err)
	if err != nil {
		r.log.Debug("the options' stock could not be checked: no tab", "err", err)
		return opts, nil
	}
	defer func() { _ = tab.Close() }()
	rt, ok := tab.(replayTab)
	if !ok {
		return opts, nil
	}
	_ = rt.ReplayOnly(ctx, true)
	for _, o := range opts {
		if o.URL == "" {
			kept = append(kept, o)
			continue
		}
		if err := rt.Load(ctx, o.URL); err != nil {
			kept = append(kept, o)
			continue
		}
		els, err := rt.ReadElements(ctx, map[string]string{"root": pp.Root, "out": pp.OutOfStock, "add": pp.Add}, pp.ProductIDAttr)
		if err == nil && els["root"].Found && (els["out"].Found || els["add"].Disabled) {
			dropped = append(dropped, o.Name)
			continue
		}
		kept = append(kept, o)
	}
	return kept, dropped
}
