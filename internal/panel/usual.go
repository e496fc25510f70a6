package panel

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// UsualItem is one item of "the usual" as the page shows it (package
// usual's proposal): ticked unless probably still at home.
type UsualItem struct {
	Name           string `json:"name"`
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	ProbablyAtHome bool   `json:"probably_at_home"`
}

// UsualProposal is the proposal the page offers to start from.
type UsualProposal struct {
	Items []UsualItem `json:"items"`
}

// serveUsual is the proposal: GET /api/usual (404 when the panel has none).
func (p *Panel) serveUsual(w http.ResponseWriter, r *http.Request) {
	if p.opts.Usual == nil {
		http.NotFound(w, r)
		return
	}
	prop, err := p.opts.Usual(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if prop.Items == nil {
		prop.Items = []UsualItem{}
	}
	writeJSON(w, prop)
}

// serveUsualStart puts the items the household ticked on the list, then
// starts the run: POST /api/usual/start {"items": ["coffee", …]}. Nothing
// is added that the request does not name.
func (p *Panel) serveUsualStart(w http.ResponseWriter, r *http.Request) {
	if p.opts.Usual == nil || p.opts.AddUsual == nil {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Items []string `json:"items"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10)).Decode(&body); err != nil || len(body.Items) > 200 {
		http.Error(w, "the request is not {\"items\": [names…]}", http.StatusBadRequest)
		return
	}
	p.action(func(ctx context.Context) error {
		if len(body.Items) > 0 {
			if err := p.opts.AddUsual(ctx, body.Items); err != nil {
				return errors.Join(errors.New(p.opts.Messages.T("panel.usual_add_failed")), err)
			}
		}
		return p.opts.Start(ctx, runstatus.Request{Source: "panel", By: runstatus.ByFrom(ctx)})
	})(w, r)
}
