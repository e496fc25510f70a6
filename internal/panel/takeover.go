package panel

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gemini-supply/gemini-supply/internal/takeover"
)

// Take over and "Show me" (issue 42): the tabs that need a person, input to
// one of them, its live screen, and the guide's next step. Every POST has
// the panel's guard; typed text is never logged (only its length, by the
// registry).

func (p *Panel) routeTakeover() {
	p.mux.HandleFunc("GET /static/takeover.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "static/takeover.js")
	})
	if p.opts.Takeover == nil {
		return
	}
	p.mux.HandleFunc("GET /api/takeover/{tab}/screen", p.serveTakeoverScreen)
	p.mux.HandleFunc("POST /api/takeover/{tab}/click", p.guard(p.serveTakeoverClick))
	p.mux.HandleFunc("POST /api/takeover/{tab}/type", p.guard(p.serveTakeoverType))
	p.mux.HandleFunc("POST /api/takeover/{tab}/key", p.guard(p.serveTakeoverKey))
	p.mux.HandleFunc("POST /api/takeover/{tab}/done", p.guard(p.serveTakeoverDone))
	p.mux.HandleFunc("POST /api/guide", p.guard(p.serveGuide))
}

func (p *Panel) needsPerson() []takeover.Need {
	if p.opts.Takeover == nil {
		return []takeover.Need{}
	}
	return p.opts.Takeover.Needs()
}

func takeoverStatus(err error) int {
	if errors.Is(err, takeover.ErrUnknownTab) {
		return http.StatusNotFound
	}
	return http.StatusConflict // the tab refused it (a policy block, a closed page)
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(v); err != nil {
		http.Error(w, "the request must be JSON", http.StatusBadRequest)
		return false
	}
	return true
}

func (p *Panel) serveTakeoverScreen(w http.ResponseWriter, r *http.Request) {
	tab, err := p.opts.Takeover.Tab(r.PathValue("tab"))
	if err != nil {
		http.Error(w, err.Error(), takeoverStatus(err))
		return
	}
	png, err := tab.Screenshot(r.Context())
	if err != nil {
		http.Error(w, err.Error(), takeoverStatus(err))
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(png)
}

func (p *Panel) serveTakeoverClick(w http.ResponseWriter, r *http.Request) {
	var b struct{ X, Y int }
	if !decodeBody(w, r, &b) {
		return
	}
	if b.X < 0 || b.X > 999 || b.Y < 0 || b.Y > 999 {
		http.Error(w, "x and y are screen coordinates 0–999", http.StatusBadRequest)
		return
	}
	p.takeoverDo(w, p.opts.Takeover.Click(r.Context(), r.PathValue("tab"), b.X, b.Y))
}

func (p *Panel) serveTakeoverType(w http.ResponseWriter, r *http.Request) {
	var b struct{ Text string }
	if !decodeBody(w, r, &b) {
		return
	}
	p.takeoverDo(w, p.opts.Takeover.Type(r.Context(), r.PathValue("tab"), b.Text))
}

func (p *Panel) serveTakeoverKey(w http.ResponseWriter, r *http.Request) {
	var b struct{ Key string }
	if !decodeBody(w, r, &b) {
		return
	}
	p.takeoverDo(w, p.opts.Takeover.Key(r.Context(), r.PathValue("tab"), b.Key))
}

func (p *Panel) serveTakeoverDone(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("tab")
	err := p.opts.Takeover.Done(id)
	if err == nil && p.opts.Guide != nil {
		p.opts.Guide.Forget(id)
	}
	p.takeoverDo(w, err)
}

func (p *Panel) takeoverDo(w http.ResponseWriter, err error) {
	if err != nil {
		http.Error(w, err.Error(), takeoverStatus(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// serveGuide is "Show me": {"tab","goal"} → {"task","description","box","done"}.
func (p *Panel) serveGuide(w http.ResponseWriter, r *http.Request) {
	var b struct{ Tab, Goal string }
	if !decodeBody(w, r, &b) {
		return
	}
	g := p.opts.Guide
	if g == nil {
		g = p.guide
	}
	tab, err := p.opts.Takeover.Tab(b.Tab)
	if err != nil {
		http.Error(w, err.Error(), takeoverStatus(err))
		return
	}
	st, err := g.Next(r.Context(), b.Tab, tab, b.Goal)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	p.log.Info("guide step", "tab", b.Tab, "done", st.Done, "has_box", st.Box != nil)
	writeJSON(w, st)
}
