package guide

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// Gemini is the planner and the grounder as Gemini calls (with a Gemini
// key). Each is one generateContent request with structured output (a
// response schema): the planner is sent the tab's screenshot, the
// person's goal, the running task description and the task history, and
// answers the design's current_task, task_description, task_history and
// is_task_completed; the grounder is sent the screenshot and the task's
// sentence and answers the element's box in Gemini's box_2d convention
// ([ymin, xmin, ymax, xmax], each normalised to 0–1000). Nothing else of
// the tab goes to Google: not its text, its URL or anything typed in it.
//
// Calls are retried like the agent's (408, 429 with its advised wait, 5xx,
// a timed-out attempt), each attempt bounded by CallTimeout. Their token
// use and estimated cost add up until TakeUsage (the run the tab belongs
// to counts them). Methods are safe for concurrent use.
type Gemini struct {
	Client *genai.Client
	// Model must read screenshots into structured output (a table model
	// with ReadsPages, such as agent.DefaultModel).
	Model string
	// Language is the household's ("fr": the tasks are written in French).
	Language string
	// CallTimeout bounds one attempt (default DefaultCallTimeout).
	CallTimeout time.Duration
	// Backoff is the wait before each retry (nil: agent.DefaultBackoff).
	Backoff []time.Duration
	// Price overrides the model table's price (nil: the table's).
	Price *agent.Price
	// Now is the clock of the price's day (nil: time.Now).
	Now func() time.Time
	// Limiter returns the model-call limiter in force (the runs' quota
	// guard: model_rpm, requests in flight); each attempt holds one unit
	// of it. Nil, or returning nil: none.
	Limiter func() agent.Limiter
	Logger  *slog.Logger

	mu    sync.Mutex
	usage report.Usage
}

// DefaultCallTimeout bounds one guide call attempt: a person is waiting
// on the panel (which gives a whole step a minute).
const DefaultCallTimeout = 30 * time.Second

var (
	_ Planner  = (*Gemini)(nil)
	_ Grounder = (*Gemini)(nil)

	errCallTimeout = errors.New("the model call timed out")

	// ErrBadBox is a grounder's box that is not on the screen (outside
	// 0–1000, inverted, or not four numbers): the step fails and says so.
	ErrBadBox = errors.New("the box is not on the screen")
	// ErrBadAnswer is a model answer that is not the JSON asked for.
	ErrBadAnswer = errors.New("the model's answer is not the expected JSON")
)

const plannerRules = `You guide a person, one step at a time, through a web page of an online grocery store that they control from a phone or a tablet. You see a screenshot of the page as it is now.

Rules:
- Give exactly one task: the single next thing the person does on this screen (tap one element, tick one box, or type into one field). One short sentence, naming the element as it appears on the screen.
- The person acts, never you: do not say that you will click, type or wait.
- Never guide towards checkout, payment, entering card details, or placing or confirming an order. If the goal needs that, set is_task_completed to true and say in current_task that this guide does not help with it.
- Never ask the person to tell you a password or to type it anywhere but into the store's own password field. A code the screen shows (for example in an e-mail) may be noted in task_description so that a later task can say to type it.
- task_description is the running description: the goal, what has been done so far, where the person is now and what comes next. Update it from the previous description and the screenshot.
- task_history is the tasks given so far, oldest first, including the previous current task.
- Set is_task_completed to true only when the screenshot shows the goal is reached; current_task then says so in one sentence.`

const grounderRules = `You locate one element on a screenshot of a web page for a person who will tap it. Return the bounding box of the element the task names as box_2d: [ymin, xmin, ymax, xmax], each value an integer normalised to 0-1000 (0,0 is the top left corner of the screenshot, 1000,1000 the bottom right). Box the element to tap or type into (the field itself, not its label). If the element is not on the screenshot, set found to false and give no box.`

var planSchema = &genai.Schema{
	Type: genai.TypeObject,
	Properties: map[string]*genai.Schema{
		"current_task":      {Type: genai.TypeString, Description: "The one next task for the person, one sentence."},
		"task_description":  {Type: genai.TypeString, Description: "The updated running description of the goal and the progress towards it."},
		"task_history":      {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeString}, Description: "The tasks given so far, oldest first."},
		"is_task_completed": {Type: genai.TypeBoolean, Description: "True when the screenshot shows the goal is reached."},
	},
	Required:         []string{"current_task", "task_description", "task_history", "is_task_completed"},
	PropertyOrdering: []string{"current_task", "task_description", "task_history", "is_task_completed"},
}

var groundSchema = &genai.Schema{
	Type: genai.TypeObject,
	Properties: map[string]*genai.Schema{
		"found":  {Type: genai.TypeBoolean, Description: "False when the element is not on the screenshot."},
		"label":  {Type: genai.TypeString, Description: "The element's visible text or name."},
		"box_2d": {Type: genai.TypeArray, Items: &genai.Schema{Type: genai.TypeInteger}, Description: "[ymin, xmin, ymax, xmax], normalised to 0-1000."},
	},
	Required:         []string{"found", "box_2d"},
	PropertyOrdering: []string{"found", "label", "box_2d"},
}

// Plan implements Planner: one Gemini call with the screenshot.
func (g *Gemini) Plan(ctx context.Context, st State, p Page) (Plan, error) {
	if len(p.Screenshot) == 0 {
		return Plan{}, errors.New("no screenshot of the tab to plan on")
	}
	rules := plannerRules
	if strings.HasPrefix(strings.ToLower(g.Language), "fr") {
		rules += "\n- Write current_task and task_description in French."
	}
	text, err := g.generate(ctx, "planner", rules, planSchema,
		genai.NewPartFromBytes(p.Screenshot, http.DetectContentType(p.Screenshot)),
		genai.NewPartFromText(plannerPrompt(st)))
	if err != nil {
		return Plan{}, err
	}
	var a struct {
		CurrentTask     *string  `json:"current_task"`
		TaskDescription *string  `json:"task_description"`
		TaskHistory     []string `json:"task_history"` // asked for, as the design has it; the loop keeps its own
		IsTaskCompleted bool     `json:"is_task_completed"`
	}
	if err := decodeAnswer(text, &a); err != nil {
		return Plan{}, fmt.Errorf("the planner: %w", err)
	}
	out := Plan{Done: a.IsTaskCompleted, Description: st.TaskDescription}
	if a.CurrentTask != nil {
		out.Task = strings.TrimSpace(*a.CurrentTask)
	}
	if out.Task == "" && !out.Done {
		return Plan{}, fmt.Errorf("the planner: %w: no current_task", ErrBadAnswer)
	}
	if a.TaskDescription != nil && strings.TrimSpace(*a.TaskDescription) != "" {
		out.Description = strings.TrimSpace(*a.TaskDescription)
	} else {
		// The running description is kept rather than lost.
		g.log().Warn("the guide's planner left out task_description; the previous one is kept")
	}
	return out, nil
}

// plannerPrompt is the step's text: the goal, the running description and
// the history (the loop's, not the model's own list, which may drift).
func plannerPrompt(st State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The person's goal: %s\n", st.Goal)
	if st.TaskDescription == "" {
		b.WriteString("Running task description: (none yet: this is the first step)\n")
	} else {
		fmt.Fprintf(&b, "Running task description: %s\n", st.TaskDescription)
	}
	history := append(append([]string(nil), st.TaskHistory...), st.CurrentTask)
	if st.CurrentTask == "" {
		history = st.TaskHistory
	}
	if len(history) == 0 {
		b.WriteString("Tasks given so far: none.\n")
	} else {
		b.WriteString("Tasks given so far, oldest first:\n")
		for i, t := range history {
			fmt.Fprintf(&b, "%d. %s\n", i+1, t)
		}
	}
	if st.CurrentTask != "" {
		fmt.Fprintf(&b, "The person has acted on the last task (%s); the screenshot shows the screen now.\n", st.CurrentTask)
	}
	b.WriteString("Give the next task.")
	return b.String()
}

// Ground implements Grounder: one Gemini call with the screenshot and the
// task; the box comes back as box_2d and is converted to 0–999 [x0, y0,
// x1, y1].
func (g *Gemini) Ground(ctx context.Context, task string, screenshot []byte) ([4]int, error) {
	if len(screenshot) == 0 {
		return [4]int{}, errors.New("no screenshot of the tab to find the element on")
	}
	text, err := g.generate(ctx, "grounder", grounderRules, groundSchema,
		genai.NewPartFromBytes(screenshot, http.DetectContentType(screenshot)),
		genai.NewPartFromText("Task: "+task+"\nReturn the box of the element this task is about."))
	if err != nil {
		return [4]int{}, err
	}
	type answer struct {
		Found *bool     `json:"found"`
		Box   []float64 `json:"box_2d"`
	}
	var a answer
	if t := unfence(text); strings.HasPrefix(t, "[") {
		// The list of boxes Gemini gives when asked without a schema.
		var list []answer
		if err := json.Unmarshal([]byte(t), &list); err != nil || len(list) == 0 {
			return [4]int{}, fmt.Errorf("the grounder: %w", ErrBadAnswer)
		}
		a = list[0]
	} else if err := decodeAnswer(text, &a); err != nil {
		return [4]int{}, fmt.Errorf("the grounder: %w", err)
	}
	if a.Found != nil && !*a.Found {
		return [4]int{}, errors.New("the grounder did not find the element on the screen")
	}
	b, err := BoxFromGemini(a.Box)
	if err != nil {
		return [4]int{}, fmt.Errorf("the grounder: %w", err)
	}
	return b, nil
}

// BoxFromGemini converts Gemini's box_2d ([ymin, xmin, ymax, xmax],
// normalised to 0–1000) to the panel's [x0, y0, x1, y1] in 0–999 screen
// coordinates (the take-over's: a pixel is coordinate×size/1000, so 1000
// is the last pixel, 999). A box that is not four numbers, reaches outside
// 0–1000 or is inverted is ErrBadBox.
func BoxFromGemini(b []float64) ([4]int, error) {
	if len(b) != 4 {
		return [4]int{}, fmt.Errorf("%w: box_2d has %d values, not 4", ErrBadBox, len(b))
	}
	for _, v := range b {
		if math.IsNaN(v) || v < 0 || v > 1000 {
			return [4]int{}, fmt.Errorf("%w: box_2d %v reaches outside 0–1000", ErrBadBox, b)
		}
	}
	ymin, xmin, ymax, xmax := b[0], b[1], b[2], b[3]
	if ymin > ymax || xmin > xmax {
		return [4]int{}, fmt.Errorf("%w: box_2d %v is inverted", ErrBadBox, b)
	}
	c := func(v float64) int { return min(int(math.Round(v)), 999) }
	return [4]int{c(xmin), c(ymin), c(xmax), c(ymax)}, nil
}

// decodeAnswer reads a JSON object answer, in a ```json fence or not.
func decodeAnswer(text string, v any) error {
	t := unfence(text)
	if t == "" {
		return fmt.Errorf("%w: the answer is empty", ErrBadAnswer)
	}
	if err := json.Unmarshal([]byte(t), v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	return nil
}

// unfence drops a Markdown code fence around the answer.
func unfence(text string) string {
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:] // the fence's language tag
		}
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	return t
}

// generate makes one structured-output call, retried as the agent's are,
// counts its usage and returns the answer's text.
func (g *Gemini) generate(ctx context.Context, kind, rules string, schema *genai.Schema, parts ...*genai.Part) (string, error) {
	if g.Client == nil || g.Model == "" {
		return "", errors.New("no Gemini client or model for the guide")
	}
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText(rules, genai.RoleUser),
		ResponseMIMEType:  "application/json",
		ResponseSchema:    schema,
	}
	contents := []*genai.Content{genai.NewContentFromParts(parts, genai.RoleUser)}
	backoff := g.Backoff
	if backoff == nil {
		backoff = agent.DefaultBackoff
	}
	timeout := g.CallTimeout
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	log := g.log().With("call", kind, "model", g.Model)
	var lastErr error
	for attempt := 1; attempt <= len(backoff)+1; attempt++ {
		if attempt > 1 {
			wait := backoff[attempt-2]
			if ra := agent.RetryAfter(lastErr); ra > wait {
				wait = min(ra, agent.MaxRetryAfter)
			}
			log.Info("retrying the guide's model call", "attempt", attempt, "wait", wait, "err", lastErr)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return "", fmt.Errorf("the %s's model call: %w (after: %v)", kind, ctx.Err(), lastErr)
			case <-t.C:
			}
		}
		resp, timedOut, err := g.attempt(ctx, timeout, contents, cfg)
		switch {
		case err != nil && ctx.Err() != nil:
			return "", fmt.Errorf("the %s's model call: %w", kind, ctx.Err())
		case timedOut:
			lastErr = fmt.Errorf("%w after %s: %w", errCallTimeout, timeout, err)
			continue
		case err != nil && agent.Retryable(err):
			lastErr = err
			continue
		case err != nil:
			return "", fmt.Errorf("the %s's call to %s failed: %w", kind, g.Model, err)
		}
		u := g.count(resp.UsageMetadata)
		log.Info("guide model call", "attempt", attempt, "prompt_tokens", u.PromptTokens,
			"output_tokens", u.OutputTokens, "cost_usd", u.CostUSD, "cost_unknown", u.CostUnknown)
		if text := resp.Text(); text != "" {
			return text, nil
		}
		why := "no answer"
		if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
			why = fmt.Sprintf("the request was blocked (%s)", pf.BlockReason)
		} else if len(resp.Candidates) > 0 && resp.Candidates[0] != nil && resp.Candidates[0].FinishReason != "" {
			why = fmt.Sprintf("no answer (finish reason %s)", resp.Candidates[0].FinishReason)
		}
		return "", fmt.Errorf("the %s's call to %s: %s", kind, g.Model, why)
	}
	return "", fmt.Errorf("the %s's call to %s failed %d times: %w", kind, g.Model, len(backoff)+1, lastErr)
}

// attempt is one try of the call, holding a unit of the limiter; timedOut
// says the attempt (not ctx) ran out of time.
func (g *Gemini) attempt(ctx context.Context, timeout time.Duration, contents []*genai.Content, cfg *genai.GenerateContentConfig) (_ *genai.GenerateContentResponse, timedOut bool, _ error) {
	if g.Limiter != nil {
		if l := g.Limiter(); l != nil {
			if err := l.Acquire(ctx, 1); err != nil {
				return nil, false, fmt.Errorf("wait for a model-call slot: %w", err)
			}
			defer l.Release(1)
		}
	}
	callCtx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	resp, err := g.Client.Models.GenerateContent(callCtx, g.Model, contents, cfg)
	return resp, err != nil && ctx.Err() == nil && errors.Is(context.Cause(callCtx), errCallTimeout), err
}

// count adds one response's usage, priced as the agent's is.
func (g *Gemini) count(m *genai.GenerateContentResponseUsageMetadata) report.Usage {
	now := time.Now()
	if g.Now != nil {
		now = g.Now()
	}
	au := agent.Cost(agent.UsageOf(m), g.Model, g.Price, now)
	u := report.Usage{PromptTokens: au.PromptTokens, OutputTokens: au.OutputTokens, TotalTokens: au.TotalTokens,
		CostUSD: au.CostUSD, CostUnknown: au.CostUnknown, Calls: 1}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.usage = g.usage.Add(u)
	return u
}

// TakeUsage returns the usage of the calls since the last TakeUsage and
// starts again from zero.
func (g *Gemini) TakeUsage() report.Usage {
	g.mu.Lock()
	defer g.mu.Unlock()
	u := g.usage
	g.usage = report.Usage{}
	return u
}

func (g *Gemini) log() *slog.Logger {
	if g.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.Logger.With("component", "guide")
}
