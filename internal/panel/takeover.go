package panel

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// Takeover is the run's tabs that need a person (take over) and the guide
// ("Show me") on them (shop.Desk, through app.PanelTakeover).
type Takeover interface {
	NeedsPersons() []runstatus.NeedsPerson
	Screenshot(ctx context.Context, tab string) ([]byte, error)
	Click(ctx context.Context, tab string, x, y int) error
	Type(ctx context.Context, tab, text string) error
	Key(ctx context.Context, tab, key string) error
	// Done hands the tab back: the sign-in's, or an item's with the
	// household's decision ("" what it added, "not_found", "skip").
	Done(ctx context.Context, tab, decision string) (HandedBack, error)
	// Request asks for a running item's tab: its agent stops and the tab
	// is offered (returns once it is).
	Request(ctx context.Context, tab string) error
	Guide(ctx context.Context, tab, goal string) (GuideStep, error)
}

// HandedBack is /done's answer: for the sign-in, whether the store shows
// the shopper signed in; for an item's tab, the item's outcome and the
// product the household added.
type HandedBack struct {
	SignedIn bool   `json:"signed_in"`
	Item     string `json:"item,omitempty"`
	Outcome  string `json:"outcome,omitempty"`
	Product  string `json:"product,omitempty"`
}

// GuideStep is one step of "Show me": the task, the running description,
// the task's box (0–999 screen coordinates) and whether the goal is done.
type GuideStep struct {
	Task        string `json:"task"`
	Description string `json:"description"`
	Box         [4]int `json:"box"`
	Done        bool   `json:"done"`
}

// ErrNotHeld is what a Takeover returns for a tab no person is asked for
// (answered 404).
var ErrNotHeld = errors.New("no tab waits for a person under that name")

// takeoverWait bounds one take-over request.
const takeoverWait = 60 * time.Second

func (p *Panel) routeTakeover() {
	p.mux.HandleFunc("GET /api/takeover/{tab}/screen", p.serveTakeoverScreen)
	for _, kind := range []string{"click", "type", "key", "done", "request"} {
		p.mux.HandleFunc("POST /api/takeover/{tab}/"+kind, p.guard(p.serveTakeoverInput(kind)))
	}
	p.mux.HandleFunc("POST /api/guide", p.guard(p.serveGuide))
}

// needsPersons is the state's needs_person list (empty without a Takeover).
func (p *Panel) needsPersons() []runstatus.NeedsPerson {
	if p.opts.Takeover == nil {
		return []runstatus.NeedsPerson{}
	}
	return p.opts.Takeover.NeedsPersons()
}

// RefusedError is a take-over input the store policy refused (what it
// asked for never reached the store): answered 403 with
// {"refused": reason, "rule": rule}, which the card shows.
type RefusedError struct {
	Rule   string
	Reason string
}

func (e *RefusedError) Error() string { return "refused by the store policy: " + e.Reason }

func (p *Panel) takeoverError(w http.ResponseWriter, err error) {
	var refused *RefusedError
	if errors.As(err, &refused) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": refused.Error(), "refused": refused.Reason, "rule": refused.Rule})
		return
	}
	status := http.StatusBadRequest
	if errors.Is(err, ErrNotHeld) {
		status = http.StatusNotFound
	}
	http.Error(w, err.Error(), status)
}

// serveTakeoverScreen is the tab's live screen (JPEG).
func (p *Panel) serveTakeoverScreen(w http.ResponseWriter, r *http.Request) {
	if p.opts.Takeover == nil {
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), takeoverWait)
	defer cancel()
	b, err := p.opts.Takeover.Screenshot(ctx, r.PathValue("tab"))
	if err != nil {
		p.takeoverError(w, err)
		return
	}
	w.Header().Set("Content-Type", http.DetectContentType(b)) // JPEG (sign-in) or PNG (an item's tab)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// serveTakeoverInput carries one input to the tab: click {"x","y"},
// type {"text"}, key {"key"}, done. The panel logs the input, the typed
// text only as its length.
func (p *Panel) serveTakeoverInput(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p.opts.Takeover == nil {
			http.NotFound(w, r)
			return
		}
		var body struct {
			X       *int   `json:"x"`
			Y       *int   `json:"y"`
			Text    string `json:"text"`
			Key     string `json:"key"`
			Outcome string `json:"outcome"` // done on an item's tab: the household's decision
		}
		// done and request may come without a body.
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&body); err != nil && (kind != "done" && kind != "request" || !errors.Is(err, io.EOF)) {
			http.Error(w, "the input must be JSON", http.StatusBadRequest)
			return
		}
		tab := r.PathValue("tab")
		ctx, cancel := context.WithTimeout(r.Context(), takeoverWait)
		defer cancel()
		t := p.opts.Takeover
		var err error
		out := map[string]any{"ok": true}
		switch kind {
		case "click":
			if body.X == nil || body.Y == nil || *body.X < 0 || *body.X > 999 || *body.Y < 0 || *body.Y > 999 {
				http.Error(w, `a click is {"x": 0–999, "y": 0–999}`, http.StatusBadRequest)
				return
			}
			p.log.Info("take-over input", "tab", tab, "kind", kind, "x", *body.X, "y", *body.Y, "by", runstatus.ByFrom(r.Context()))
			err = t.Click(ctx, tab, *body.X, *body.Y)
		case "type":
			p.log.Info("take-over input", "tab", tab, "kind", kind, "chars", len([]rune(body.Text)), "by", runstatus.ByFrom(r.Context()))
			err = t.Type(ctx, tab, body.Text)
		case "key":
			p.log.Info("take-over input", "tab", tab, "kind", kind, "key", body.Key, "by", runstatus.ByFrom(r.Context()))
			err = t.Key(ctx, tab, body.Key)
		case "done":
			p.log.Info("take-over input", "tab", tab, "kind", kind, "decision", body.Outcome, "by", runstatus.ByFrom(r.Context()))
			var hb HandedBack
			hb, err = t.Done(ctx, tab, body.Outcome)
			out["signed_in"] = hb.SignedIn
			if hb.Outcome != "" {
				out["item"], out["outcome"], out["product"] = hb.Item, hb.Outcome, hb.Product
			}
		case "request":
			p.log.Info("take-over input", "tab", tab, "kind", kind, "by", runstatus.ByFrom(r.Context()))
			err = t.Request(ctx, tab)
		}
		if err != nil {
			p.takeoverError(w, err)
			return
		}
		writeJSON(w, out)
	}
}

// serveGuide is one step of "Show me": {"tab","goal"} →
// {"task","description","box","done"}.
func (p *Panel) serveGuide(w http.ResponseWriter, r *http.Request) {
	if p.opts.Takeover == nil {
		http.NotFound(w, r)
		return
	}
	var body struct {
		Tab  string `json:"tab"`
		Goal string `json:"goal"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<10)).Decode(&body); err != nil || body.Tab == "" || body.Goal == "" {
		http.Error(w, `the request is {"tab": "…", "goal": "…"}`, http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), takeoverWait)
	defer cancel()
	step, err := p.opts.Takeover.Guide(ctx, body.Tab, body.Goal)
	if err != nil {
		p.takeoverError(w, err)
		return
	}
	p.log.Info("guide step", "tab", body.Tab, "done", step.Done) // not the task: it may quote a code
	writeJSON(w, step)
}
