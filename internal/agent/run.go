package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"
)

var (
	errBudget      = errors.New("time budget exceeded")
	errCallTimeout = errors.New("model call timed out")
	errMalformed   = errors.New("model returned MALFORMED_FUNCTION_CALL without a usable function call")
)

// maxRetryAfter caps how long a server's RetryInfo may stretch one backoff.
const maxRetryAfter = 60 * time.Second

// nudgeText is added to the response of a turn that repeats itself.
const nudgeText = "You have repeated the same action with the same arguments %d times and the screen did not change. " +
	"It is not working: try something different (another element, scrolling, navigating), or report that you cannot finish."

// Run drives the model until a terminal tool is called or a limit is hit,
// and always returns a typed Result; it never panics on model input.
func Run(ctx context.Context, cfg Config, goal string, c Computer, tools []Tool) Result {
	start := time.Now()
	cfg = cfg.withDefaults()
	r := &run{
		cfg:    cfg,
		parent: ctx,
		c:      c,
		log:    cfg.Logger.With("component", "agent"),
	}
	r.restartBudget()
	var res Result
	if err := r.setup(tools); err != nil {
		res = Result{Reason: ReasonModelError, Err: err}
	} else {
		r.trace = newTracer(cfg.TraceDir, r.log)
		res = r.loop(goal)
	}
	res.Turns = r.turns
	day := cfg.PriceDay
	if day.IsZero() {
		day = time.Now()
	}
	r.usage = Cost(r.usage, cfg.Model, cfg.Price, day)
	res.Usage = r.usage
	res.Duration = time.Since(start)
	r.trace.result(res)
	if res.OK() {
		r.log.Info("agent run finished", "tool", res.Tool, "turns", res.Turns, "duration", res.Duration.Round(time.Millisecond), "total_tokens", res.Usage.TotalTokens)
	} else {
		r.log.Warn("agent run failed", "reason", res.Reason, "err", res.Err, "turns", res.Turns, "duration", res.Duration.Round(time.Millisecond), "total_tokens", res.Usage.TotalTokens)
	}
	return res
}

type run struct {
	cfg    Config
	parent context.Context
	c      Computer
	log    *slog.Logger
	trace  *tracer

	tools    map[string]Tool
	excluded map[string]bool
	genCfg   *genai.GenerateContentConfig

	history  []*genai.Content
	images   []imageRef
	deadline time.Time
	turns    int
	usage    Usage
	repeat   repeatState
	// dropTree removes the page text sent with the previous screenshot
	// (Config.DescribePage: only the latest one stays in the history).
	dropTree func()
}

func (r *run) setup(tools []Tool) error {
	if r.cfg.Client == nil {
		return errors.New("agent: Config.Client is nil: create one genai client per process and pass it in")
	}
	if r.c == nil {
		return errors.New("agent: no Computer to drive")
	}
	r.excluded = map[string]bool{}
	for _, n := range r.cfg.ExcludedFunctions {
		r.excluded[n] = true
	}
	r.tools = map[string]Tool{}
	var decls []*genai.FunctionDeclaration
	for _, t := range tools {
		switch {
		case t.Name == "":
			return errors.New("agent: a custom tool has no name")
		case t.Handler == nil:
			return fmt.Errorf("agent: custom tool %q has no handler", t.Name)
		case r.tools[t.Name].Name != "":
			return fmt.Errorf("agent: custom tool %q is declared twice", t.Name)
		case predefined[t.Name] != nil && !r.excluded[t.Name]:
			return fmt.Errorf("agent: custom tool %q has the name of a predefined Computer Use function; exclude that function first", t.Name)
		}
		r.tools[t.Name] = t
		decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	cu := &genai.ComputerUse{
		Environment:                 genai.EnvironmentBrowser,
		ExcludedPredefinedFunctions: r.cfg.ExcludedFunctions,
	}
	if r.promptInjectionDetection() {
		on := true
		cu.EnablePromptInjectionDetection = &on
	}
	gtools := []*genai.Tool{{ComputerUse: cu}}
	if len(decls) > 0 {
		gtools = append(gtools, &genai.Tool{FunctionDeclarations: decls})
	}
	r.genCfg = &genai.GenerateContentConfig{Tools: gtools}
	if err := r.costControls(); err != nil {
		return err
	}
	if r.cfg.SystemInstruction != "" {
		r.genCfg.SystemInstruction = genai.NewContentFromText(r.cfg.SystemInstruction, genai.RoleUser)
	}
	return nil
}

// promptInjectionDetection: the configured choice, else on where the model
// table documents the flag.
func (r *run) promptInjectionDetection() bool {
	if r.cfg.PromptInjectionDetection != nil {
		return *r.cfg.PromptInjectionDetection
	}
	return modelSupports(r.cfg.Model, func(m ModelInfo) bool { return m.PromptInjectionDetection })
}

// costControls sets thinking_level and media_resolution as the REST API
// expects them: generationConfig.thinkingConfig.thinkingLevel ("LOW") and
// generationConfig.mediaResolution ("MEDIA_RESOLUTION_LOW", for every image
// of the request, screenshots in function responses included).
func (r *run) costControls() error {
	if lvl := strings.ToLower(strings.TrimSpace(r.cfg.ThinkingLevel)); lvl != "" {
		if !slices.Contains(ThinkingLevels, lvl) {
			return fmt.Errorf("agent: thinking level %q: want one of %v", r.cfg.ThinkingLevel, ThinkingLevels)
		}
		m, known := LookupModel(r.cfg.Model)
		if known && !slices.Contains(m.ThinkingLevels, lvl) {
			r.log.Warn("the model does not take this thinking level; using the model's default", "model", r.cfg.Model, "thinking_level", lvl)
		} else {
			r.genCfg.ThinkingConfig = &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevel(strings.ToUpper(lvl))}
		}
	}
	if res := strings.ToLower(strings.TrimSpace(r.cfg.MediaResolution)); res != "" {
		if !slices.Contains(MediaResolutions, res) {
			return fmt.Errorf("agent: media resolution %q: want one of %v", r.cfg.MediaResolution, MediaResolutions)
		}
		r.genCfg.MediaResolution = genai.MediaResolution("MEDIA_RESOLUTION_" + strings.ToUpper(res))
	}
	return nil
}

// --- budget and context ----------------------------------------------------

func (r *run) restartBudget() { r.deadline = time.Now().Add(r.cfg.TimeBudget) }

// stepCtx is the parent context bounded by the time budget.
func (r *run) stepCtx() (context.Context, context.CancelFunc) {
	return context.WithDeadlineCause(r.parent, r.deadline, errBudget)
}

func (r *run) fail(reason Reason, err error) *Result {
	return &Result{Reason: reason, Err: err}
}

// interrupted turns an error that happened while the run was cancelled or
// out of time into the matching result; nil if neither.
func (r *run) interrupted(err error) *Result {
	if r.parent.Err() != nil {
		cause := context.Cause(r.parent)
		if err != nil && !errors.Is(err, cause) {
			cause = fmt.Errorf("%w (while: %w)", cause, err)
		}
		return r.fail(ReasonCancelled, cause)
	}
	if !time.Now().Before(r.deadline) {
		e := fmt.Errorf("%w: no report within %s of model and browser time", errBudget, r.cfg.TimeBudget)
		if err != nil && !errors.Is(err, errBudget) {
			e = fmt.Errorf("%w (while: %w)", e, err)
		}
		return r.fail(ReasonTimeBudget, e)
	}
	return nil
}

func (r *run) sleep(d time.Duration) *Result {
	ctx, cancel := r.stepCtx()
	defer cancel()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return r.interrupted(context.Cause(ctx))
	}
}

// --- the loop ----------------------------------------------------------------

func (r *run) loop(goal string) Result {
	shot, res := r.screenshot()
	if res != nil {
		return *res
	}
	parts := []*genai.Part{genai.NewPartFromText(goal)}
	if u := r.c.URL(); u != "" {
		parts = append(parts, genai.NewPartFromText("Current URL: "+u))
	}
	img := genai.NewPartFromBytes(shot, imageMIME(shot))
	parts = append(parts, img)
	if tree := r.describePage(); tree != "" {
		part := genai.NewPartFromText(PageTreeIntro + tree)
		parts = append(parts, part)
		r.dropTree = func() { part.Text = PageTreeIntro + "(an earlier screen; see the latest)" }
	}
	first := &genai.Content{Role: genai.RoleUser, Parts: parts}
	r.history = append(r.history, first)
	r.images = append(r.images, imageRef{content: first, part: img})
	r.repeat.screen = sha256.Sum256(shot)
	r.trace.start(goal, r.c.URL(), shot)
	r.observe(TraceTurn{}, shot)

	for {
		if r.turns >= r.cfg.MaxTurns {
			return *r.fail(ReasonMaxTurns, fmt.Errorf("the model did not report after %d turns", r.turns))
		}
		if res := r.interrupted(nil); res != nil {
			return *res
		}
		r.prune()
		tt := TraceTurn{Turn: r.turns + 1, Started: time.Now()}
		r.doze()
		resp, res := r.callModel(&tt)
		r.wake()
		if res != nil {
			return *res
		}
		r.turns++
		cand := resp.Candidates[0]
		tt.FinishReason = string(cand.FinishReason)
		var calls []*genai.FunctionCall
		var texts []string
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				switch {
				case p == nil:
				case p.FunctionCall != nil:
					calls = append(calls, p.FunctionCall)
				case p.Text != "" && !p.Thought:
					texts = append(texts, p.Text)
				}
			}
		}
		tt.Text = texts
		if len(calls) == 0 {
			r.trace.turn(tt, nil)
			return *r.fail(ReasonNoReport, fmt.Errorf("the model ended its turn without calling a tool (finish reason %s): %q",
				cand.FinishReason, truncate(strings.Join(texts, " "), 300)))
		}
		// Append the model's turn exactly as received (thought signatures).
		if cand.Content.Role == "" {
			cand.Content.Role = genai.RoleModel
		}
		r.history = append(r.history, cand.Content)
		answer, shot, res := r.execute(calls, &tt)
		r.trace.turn(tt, shot)
		r.observe(tt, shot)
		if r.log.Enabled(r.parent, slog.LevelDebug) {
			names := make([]string, len(calls))
			for i, fc := range calls {
				names[i] = fc.Name
			}
			r.log.Debug("agent turn", "turn", r.turns, "calls", names, "attempts", tt.Attempts,
				"model_ms", tt.ModelMillis, "url", r.c.URL())
		}
		if res != nil {
			return *res
		}
		r.history = append(r.history, answer)
	}
}

// imageMIME is the media type of a screenshot: the Computer returns PNG by
// default and JPEG when so configured; the model must be told which.
func imageMIME(b []byte) string {
	if t := http.DetectContentType(b); strings.HasPrefix(t, "image/") {
		return t
	}
	return "image/png"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// PageTreeIntro opens the text part of the first screen's page tree;
// later screens carry theirs under PageTreeKey in the function response.
const (
	PageTreeIntro = "Page elements (the accessibility tree, boxes in 0-999 screen coordinates):\n"
	PageTreeKey   = "page_elements"
)

// describePage is the page's text when Config.DescribePage is set and the
// Computer can give it; "" otherwise or when reading it failed (the
// screenshot still stands).
func (r *run) describePage() string {
	d, ok := r.c.(PageDescriber)
	if !r.cfg.DescribePage || !ok {
		return ""
	}
	ctx, cancel := r.stepCtx()
	defer cancel()
	tree, err := d.DescribePage(ctx)
	if err != nil {
		r.log.Debug("the page could not be described", "err", err)
		return ""
	}
	return tree
}

// doze puts a Sleeper's page to sleep for the model call; a page that
// cannot sleep stays awake (it only costs CPU).
func (r *run) doze() {
	s, ok := r.c.(Sleeper)
	if !ok {
		return
	}
	ctx, cancel := r.stepCtx()
	defer cancel()
	if err := s.Sleep(ctx); err != nil {
		r.log.Debug("the page could not sleep while the model thinks", "err", err)
	}
}

// wake wakes a Sleeper's page after the model call, before its actions;
// it is bounded by the parent context only, so that an ended run still
// leaves its tab awake for whoever closes or reads it.
func (r *run) wake() {
	s, ok := r.c.(Sleeper)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.parent), wakeWait)
	defer cancel()
	if err := s.Wake(ctx); err != nil {
		r.log.Debug("the page could not be woken", "err", err)
	}
}

// wakeWait bounds waking a page.
const wakeWait = 30 * time.Second

func (r *run) screenshot() ([]byte, *Result) {
	ctx, cancel := r.stepCtx()
	defer cancel()
	shot, err := r.c.Screenshot(ctx)
	if err != nil {
		if res := r.interrupted(err); res != nil {
			return nil, res
		}
		return nil, r.fail(ReasonBrowserError, fmt.Errorf("take a screenshot: %w", err))
	}
	return shot, nil
}

// execute runs one model turn's calls in order and builds the answer.
func (r *run) execute(calls []*genai.FunctionCall, tt *TraceTurn) (*genai.Content, []byte, *Result) {
	answer := &genai.Content{Role: genai.RoleUser}
	lastAction := -1
	var sig strings.Builder
	for _, fc := range calls {
		started := time.Now()
		args, safety := splitSafety(fc.Args)
		sigArgs, _ := json.Marshal(args)
		sig.WriteString(signature(fc.Name, args))
		desc := fc.Name + " " + string(sigArgs)

		acknowledged := false
		if safety.required {
			ok, err := r.confirm(safety.explanation, desc)
			if !ok {
				if res := r.interrupted(err); res != nil {
					return nil, nil, res
				}
				cause := fmt.Errorf("the model's action %s needed confirmation (%q) and it was not given", desc, safety.explanation)
				if err != nil {
					cause = fmt.Errorf("%w: %w", cause, err)
				}
				return nil, nil, r.fail(ReasonSafetyDenied, cause)
			}
			acknowledged = true
		}

		var resp map[string]any
		target := ""
		tool, isTool := r.tools[fc.Name]
		act, isAction := predefined[fc.Name]
		switch {
		case isTool:
			out, err := r.callTool(tool, args)
			if err != nil {
				if res := r.interrupted(err); res != nil {
					return nil, nil, res
				}
				resp = map[string]any{"error": err.Error()}
				break
			}
			if tool.Terminal || out.End {
				tt.Calls = append(tt.Calls, TraceCall{Name: fc.Name, Args: args, Response: out.Response, Millis: time.Since(started).Milliseconds()})
				return nil, nil, &Result{Tool: fc.Name, Args: args, Payload: out.Payload}
			}
			resp = maps.Clone(out.Response) // we add keys; leave the handler's map alone
			if resp == nil {
				resp = map[string]any{}
			}
		case isAction && !r.excluded[fc.Name]:
			target = r.elementAt(fc.Name, args)
			err := r.act(act, args)
			resp = map[string]any{"url": r.c.URL()}
			lastAction = len(answer.Parts)
			switch {
			case err == nil:
			case isArgError(err):
				resp["error"] = fmt.Sprintf("invalid arguments for %s: %v", fc.Name, err)
			case isRejected(err):
				resp["error"] = err.Error()
			default:
				if res := r.interrupted(err); res != nil {
					return nil, nil, res
				}
				return nil, nil, r.fail(ReasonBrowserError, fmt.Errorf("%s: %w", fc.Name, err))
			}
		default:
			resp = map[string]any{"error": r.unknownFunction(fc.Name)}
		}
		if acknowledged {
			resp["safety_acknowledgement"] = "true"
		}
		if notices := r.c.TakeNotices(); len(notices) > 0 {
			resp["notices"] = notices
		}
		answer.Parts = append(answer.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: resp}})
		tt.Calls = append(tt.Calls, TraceCall{Name: fc.Name, Args: args, Target: target, Response: resp, Millis: time.Since(started).Milliseconds()})
	}

	var shot []byte
	screen := r.repeat.screen
	if lastAction >= 0 {
		var res *Result
		if shot, res = r.screenshot(); res != nil {
			return nil, nil, res
		}
		fr := answer.Parts[lastAction].FunctionResponse
		fr.Parts = []*genai.FunctionResponsePart{genai.NewFunctionResponsePartFromBytes(shot, imageMIME(shot))}
		if tree := r.describePage(); tree != "" {
			if r.dropTree != nil {
				r.dropTree()
			}
			// The model's copy only: the trace and the live view keep the
			// response without the page's text.
			fr.Response = maps.Clone(fr.Response)
			fr.Response[PageTreeKey] = tree
			resp := fr.Response
			r.dropTree = func() { delete(resp, PageTreeKey) }
		}
		r.images = append(r.images, imageRef{content: answer, response: fr})
		screen = sha256.Sum256(shot)
		tt.URL = r.c.URL()
	}

	n := r.repeat.observe(sig.String(), screen)
	switch {
	case n >= 2*r.cfg.LoopThreshold:
		return nil, shot, r.fail(ReasonStuck, fmt.Errorf("the model repeated %s %d times without the screen changing", truncate(sig.String(), 200), n))
	case n >= r.cfg.LoopThreshold:
		last := answer.Parts[len(answer.Parts)-1].FunctionResponse
		last.Response["warning"] = fmt.Sprintf(nudgeText, n)
		tt.Nudged = true
		r.log.Debug("loop nudge", "repeats", n)
	}
	return answer, shot, nil
}

func (r *run) unknownFunction(name string) string {
	if predefined[name] != nil {
		return fmt.Sprintf("function %s is not available in this environment; use another action", name)
	}
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	return fmt.Sprintf("unknown function %q: use a Computer Use action or one of the declared tools %v", name, names)
}

func (r *run) act(a action, args map[string]any) error {
	ctx, cancel := r.stepCtx()
	defer cancel()
	return a(ctx, r.c, actionEnv{homeURL: r.cfg.HomeURL}, args)
}

// pointActions are the actions at a point of the screen whose element the
// trace names.
var pointActions = map[string]bool{"click_at": true, "type_text_at": true, "hover_at": true}

// elementAt names what is at a point action's point before it runs ("" when
// the Computer cannot say, or it is not such an action).
func (r *run) elementAt(name string, args map[string]any) string {
	n, ok := r.c.(ElementNamer)
	if !ok || !pointActions[name] {
		return ""
	}
	p, err := point(args, "x", "y")
	if err != nil {
		return ""
	}
	ctx, cancel := r.stepCtx()
	defer cancel()
	s, err := n.ElementAt(ctx, p)
	if err != nil {
		r.log.Debug("the element at the point could not be named", "err", err)
		return ""
	}
	return s
}

func (r *run) callTool(t Tool, args map[string]any) (ToolOutput, error) {
	if t.WaitsForUser {
		defer r.restartBudget()
		return t.Handler(r.parent, args)
	}
	ctx, cancel := r.stepCtx()
	defer cancel()
	return t.Handler(ctx, args)
}

func (r *run) confirm(explanation, action string) (bool, error) {
	if r.cfg.Confirmer == nil {
		return false, errors.New("no one can confirm it (no Confirmer configured)")
	}
	defer r.restartBudget()
	return r.cfg.Confirmer.Confirm(r.parent, explanation, action)
}

// --- loop detection ------------------------------------------------------------

// actionArgs are the arguments that change what a predefined action does.
// Anything else a model sends with an action (the newer models' "intent",
// any explanation in free text) is wording, and left out of the repetition
// signature: a stuck model that rephrases is still stuck.
var actionArgs = []string{
	"x", "y", "destination_x", "destination_y", "text", "press_enter", "clear_before_typing",
	"keys", "key", "direction", "magnitude", "url", "button", "seconds",
}

// signature is one call's part of a turn's repetition signature: the name
// and, for predefined actions, only the arguments in actionArgs (custom tools
// keep all their arguments: they are the tool's meaning).
func signature(name string, args map[string]any) string {
	if predefined[name] != nil {
		kept := make(map[string]any, len(args))
		for _, k := range actionArgs {
			if v, ok := args[k]; ok {
				kept[k] = v
			}
		}
		args = kept
	}
	b, _ := json.Marshal(args) // map keys are sorted: a stable signature
	return name + string(b) + ";"
}

type repeatState struct {
	sig    string
	screen [32]byte
	count  int
}

// observe records a turn (its calls' signature and the screenshot after it)
// and returns how many identical turns on an unchanged screen ended with it.
func (s *repeatState) observe(sig string, screen [32]byte) int {
	if s.count > 0 && sig == s.sig && screen == s.screen {
		s.count++
	} else {
		s.sig, s.count = sig, 1
	}
	s.screen = screen
	return s.count
}

// --- history -----------------------------------------------------------------

// imageRef is one screenshot in the history: either an inline image part of a
// user content, or the image parts of a function response.
type imageRef struct {
	content  *genai.Content
	part     *genai.Part
	response *genai.FunctionResponse
}

func (ir imageRef) strip() {
	if ir.response != nil {
		ir.response.Parts = nil
		return
	}
	parts := ir.content.Parts[:0]
	for _, p := range ir.content.Parts {
		if p != ir.part {
			parts = append(parts, p)
		}
	}
	ir.content.Parts = parts
}

// prune drops the images of all but the most recent KeepScreenshots turns.
func (r *run) prune() {
	for len(r.images) > r.cfg.KeepScreenshots {
		r.images[0].strip()
		r.images = r.images[1:]
	}
}

// --- model calls -----------------------------------------------------------------

func (r *run) callModel(tt *TraceTurn) (*genai.GenerateContentResponse, *Result) {
	started := time.Now()
	before := r.usage
	defer func() {
		tt.ModelMillis = time.Since(started).Milliseconds()
		tt.PromptTokens = r.usage.PromptTokens - before.PromptTokens
		tt.OutputTokens = r.usage.OutputTokens - before.OutputTokens
	}()
	tries := len(r.cfg.Backoff) + 1
	var lastErr error
	quotaWaits := 0
	waited := false // the last error was a 429, already waited out
	for attempt := 1; attempt <= tries; attempt++ {
		if attempt > 1 && !waited {
			wait := r.cfg.Backoff[attempt-2]
			if ra := retryAfter(lastErr); ra > wait {
				wait = min(ra, maxRetryAfter)
			}
			r.log.Debug("retrying model call", "attempt", attempt, "wait", wait, "err", lastErr)
			if res := r.sleep(wait); res != nil {
				return nil, res
			}
		}
		tt.Attempts = attempt + quotaWaits
		waited = false
		resp, err := r.generate(quotaWaits + 1)
		if err != nil {
			if res := r.interrupted(err); res != nil {
				return nil, res
			}
			if isQuota(err) && quotaWaits < maxQuotaWaits {
				// The quota is exhausted for every tab, not just this one:
				// pause them all for the advised wait. Waiting out the quota
				// is not a failed try; the time budget bounds it.
				quotaWaits++
				if !isPauser(r.cfg.Limiter) {
					if res := r.sleep(r.quotaWait(err, quotaWaits)); res != nil {
						return nil, res
					}
				}
				lastErr, waited = err, true
				attempt--
				continue
			}
			if !retryable(err) {
				return nil, r.fail(ReasonModelError, fmt.Errorf("model call failed: %w", err))
			}
			lastErr = err
			continue
		}
		r.addUsage(resp.UsageMetadata)
		if len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
			why := "no candidates"
			if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" {
				why = fmt.Sprintf("the prompt was blocked (%s) %s", pf.BlockReason, pf.BlockReasonMessage)
			}
			return nil, r.fail(ReasonModelError, fmt.Errorf("model returned %s", why))
		}
		c := resp.Candidates[0]
		if c.FinishReason == genai.FinishReasonMalformedFunctionCall && !hasFunctionCall(c.Content) {
			// The call the model meant could not be parsed; any text or
			// thought parts that came with it are not an answer. Ask again.
			lastErr = errMalformed
			continue
		}
		return resp, nil
	}
	return nil, r.fail(ReasonModelError, fmt.Errorf("model call failed %d times: %w", tries, lastErr))
}

// maxQuotaWaits bounds the 429s one model call waits out.
const maxQuotaWaits = 30

// quotaWait is the wait after the n-th 429 of a call: the server's
// RetryInfo delay, else the backoff doubling from its first step (capped
// at maxRetryAfter). A Limiter that can pause pauses every caller for it
// (in generate, before this call's slot is released, so no other tab slips
// a request in between), and the call then waits in Acquire like the
// others; otherwise the call sleeps it.
func (r *run) quotaWait(err error, n int) time.Duration {
	wait := retryAfter(err)
	if wait <= 0 {
		wait = time.Second
		if len(r.cfg.Backoff) > 0 && r.cfg.Backoff[0] > 0 {
			wait = r.cfg.Backoff[0]
		}
		for i := 1; i < n && wait < maxRetryAfter; i++ {
			wait *= 2
		}
	}
	wait = min(wait, maxRetryAfter)
	r.log.Info("model quota exhausted (429): waiting", "wait", wait, "every_tab", isPauser(r.cfg.Limiter), "err", err)
	return wait
}

func isPauser(l Limiter) bool {
	_, ok := l.(pauser)
	return ok
}

// isQuota reports a 429 RESOURCE_EXHAUSTED answer.
func isQuota(err error) bool {
	var apiErr genai.APIError
	return errors.As(err, &apiErr) && apiErr.Code == 429
}

func hasFunctionCall(c *genai.Content) bool {
	if c == nil {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}

// generate makes one model call attempt, holding a unit of the Limiter. A
// 429 pauses a pausing Limiter (for the wait of the quotaN-th 429 of this
// call) before the unit is released.
func (r *run) generate(quotaN int) (*genai.GenerateContentResponse, error) {
	ctx, cancel := r.stepCtx()
	defer cancel()
	if r.cfg.Limiter != nil {
		r.observeQuotaWait()
		if err := r.cfg.Limiter.Acquire(ctx, 1); err != nil {
			return nil, fmt.Errorf("wait for a model-call slot: %w", err)
		}
		defer r.cfg.Limiter.Release(1)
	}
	callCtx, cancelCall := context.WithTimeoutCause(ctx, r.cfg.CallTimeout, errCallTimeout)
	defer cancelCall()
	resp, err := r.cfg.Client.Models.GenerateContent(callCtx, r.cfg.Model, r.history, r.genCfg)
	if p, ok := r.cfg.Limiter.(pauser); ok && isQuota(err) && quotaN <= maxQuotaWaits {
		p.Pause(r.quotaWait(err, quotaN))
	}
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(callCtx), errCallTimeout) {
		return nil, fmt.Errorf("%w after %s: %w", errCallTimeout, r.cfg.CallTimeout, err)
	}
	return resp, err
}

func (r *run) addUsage(m *genai.GenerateContentResponseUsageMetadata) {
	if m == nil {
		return
	}
	p := int64(m.PromptTokenCount) + int64(m.ToolUsePromptTokenCount)
	o := int64(m.CandidatesTokenCount) + int64(m.ThoughtsTokenCount)
	r.usage.ThoughtTokens += int64(m.ThoughtsTokenCount)
	t := int64(m.TotalTokenCount)
	if t == 0 {
		t = p + o
	}
	r.usage.PromptTokens += p
	r.usage.OutputTokens += o
	r.usage.TotalTokens += t
}

// retryable: 408/429/5xx, call timeouts, transport failures and malformed
// function calls are worth another try; other API errors are not.
func retryable(err error) bool {
	if errors.Is(err, errCallTimeout) || errors.Is(err, errMalformed) {
		return true
	}
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 408 || apiErr.Code == 429 || apiErr.Code >= 500
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)
}

// retryAfter reads google.rpc.RetryInfo from an API error, 0 if absent.
func retryAfter(err error) time.Duration {
	var apiErr genai.APIError
	if err == nil || !errors.As(err, &apiErr) {
		return 0
	}
	for _, d := range apiErr.Details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if v, err := time.ParseDuration(s); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}
