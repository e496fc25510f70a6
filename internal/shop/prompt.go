package shop

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// PreferredProduct is a product the household chose for an item before.
type PreferredProduct struct {
	Name      string
	URL       string
	ProductID string
	Price     string
}

// PromptData is what a store's prompt template is rendered with.
type PromptData struct {
	// StoreName is how the prompt names the store ("metro.ca").
	StoreName string
	// Host is the store's host name ("www.metro.ca").
	Host string
	// SearchURL opens the search results for Query.
	SearchURL string
	// OnSearch: the tab is on SearchURL's results already (the run opened
	// them before the model's first call).
	OnSearch bool
	// ItemName is the item as the list says it ("2x milk 2%").
	ItemName string
	// Query is what to look for (the product part of ItemName, or the
	// user's own words after a choice).
	Query string
	// QueryFromUser is set when Query is the user's custom answer.
	QueryFromUser bool
	// Quantity is what the list asks for: a count of packages, or of
	// pieces when Pieces is set ("12 eggs": the goal then says to add the
	// packages that cover it, shoppinglist.Packages).
	Quantity   int
	Pieces     bool
	PostalCode string
	// CanAsk is set when present_options is offered.
	CanAsk bool
	// The household's policy for the item (#nosub, #ask, #anybrand, or
	// the panel): never substitute, always ask, any brand.
	NoSubstitute, AlwaysAsk, AnyBrand bool
	// Preferred is the remembered product for this item, if any.
	Preferred *PreferredProduct
	// StoreHint is the store profile's note about its dialogs, if any.
	StoreHint string
	// Replay is the remembered product a replay tried (or starts the
	// agent on), and what it found.
	Replay *ReplayNote
	// Earlier is what an earlier attempt of this item already added to
	// the cart (the retry must not add it again).
	Earlier []EarlierAdd
	// MaybeAdded says an earlier attempt sent a cart change the profile
	// cannot read (no CartOps: metro) to a path that is not a delivery
	// choice: it may have added the item, and the retry checks first.
	MaybeAdded bool
	// Wrong are the products the household marked wrong for this item
	// (Wrong product in the review pack): never add one again.
	Wrong []WrongProduct
}

// WrongProduct is a product the household said is wrong for an item.
type WrongProduct struct {
	Name      string `json:"name"`
	URL       string `json:"url,omitempty"`
	ProductID string `json:"product_id,omitempty"`
}

// Prompts renders the per-store prompt templates embedded in the binary:
// prompts/<store>.tmpl (with the shared blocks of prompts/common.tmpl), or
// prompts/default.tmpl for a store without its own.
type Prompts struct {
	system string
	tmpl   map[string]*template.Template
}

// LoadPrompts parses the embedded templates.
func LoadPrompts() (*Prompts, error) {
	common, err := promptFS.ReadFile("prompts/common.tmpl")
	if err != nil {
		return nil, fmt.Errorf("read the common prompt blocks: %w", err)
	}
	sys, err := promptFS.ReadFile("prompts/system.tmpl")
	if err != nil {
		return nil, fmt.Errorf("read the system prompt: %w", err)
	}
	entries, err := promptFS.ReadDir("prompts")
	if err != nil {
		return nil, fmt.Errorf("list the prompt templates: %w", err)
	}
	p := &Prompts{system: strings.TrimSpace(string(sys)), tmpl: make(map[string]*template.Template)}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".tmpl")
		if name == "common" || name == "system" {
			continue
		}
		body, err := promptFS.ReadFile("prompts/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("read the prompt template %s: %w", e.Name(), err)
		}
		t, err := template.New(name).Option("missingkey=error").Parse(string(common))
		if err == nil {
			_, err = t.Parse(string(body))
		}
		if err != nil {
			return nil, fmt.Errorf("parse the prompt template %s: %w", e.Name(), err)
		}
		p.tmpl[name] = t
	}
	if p.tmpl["default"] == nil {
		return nil, fmt.Errorf("the default prompt template is missing from the binary")
	}
	return p, nil
}

// System is the system instruction of every grocery agent.
func (p *Prompts) System() string { return p.system }

// Goal renders the goal for one item in the template of store (the store
// profile's name; unknown stores get the default template).
func (p *Prompts) Goal(store string, d PromptData) (string, error) {
	t := p.tmpl[store]
	if t == nil {
		t = p.tmpl["default"]
	}
	if d.Quantity < 1 {
		d.Quantity = 1
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("render the %s prompt for %q: %w", t.Name(), d.ItemName, err)
	}
	return collapseBlankLines(b.String()), nil
}

// collapseBlankLines trims the text and keeps at most one blank line in a row.
func collapseBlankLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}
