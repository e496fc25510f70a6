package gemini

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/genai"
)

// Script decides the reply to one request. It is called from the server's
// request goroutines, possibly concurrently for different conversations, so
// it must be safe for concurrent use. It should derive what to do from the
// request (goal, history, function responses), not from call order, so that
// retries and concurrent conversations behave.
type Script func(req *Request) Reply

// Reply is what the fake model answers to one request.
type Reply struct {
	// Text is an optional text part, sent before the function calls.
	Text string
	// Calls are the function calls of the model turn, in order.
	Calls []*genai.FunctionCall
	// FinishReason defaults to STOP.
	FinishReason genai.FinishReason
	// Usage overrides the estimated usage metadata.
	Usage *genai.GenerateContentResponseUsageMetadata

	// Status, when non-zero, makes the server answer with this HTTP error
	// status (and Message) instead of a model turn.
	Status  int
	Message string
	// Malformed answers with finish reason MALFORMED_FUNCTION_CALL and no
	// content, as the real service does when the model produced a broken call.
	Malformed bool
}

// Fault is an injected failure for one call.
type Fault string

// Faults that Inject accepts.
const (
	FaultRateLimit   Fault = "429"       // 429 RESOURCE_EXHAUSTED
	FaultInternal    Fault = "500"       // 500 INTERNAL
	FaultUnavailable Fault = "503"       // 503 UNAVAILABLE
	FaultMalformed   Fault = "malformed" // 200 with finishReason MALFORMED_FUNCTION_CALL and no parts
	// FaultHang holds the request open until the client gives up (or the
	// server closes): a model call that times out.
	FaultHang Fault = "hang"
)

// TokensPerImage is the prompt-token count of one image at each media
// resolution, as the Gemini API documents it for Gemini 3 models (images:
// low 280, medium 560, high 1120; unspecified is high). It is used when a
// Reply does not set Usage. The request's generationConfig.mediaResolution
// applies to every image; a part's own mediaResolution overrides it.
var TokensPerImage = map[genai.MediaResolution]int{
	genai.MediaResolutionLow:    280,
	genai.MediaResolutionMedium: 560,
	genai.MediaResolutionHigh:   1120,
}

// ThoughtTokens is the thinking-token count the fake reports per reply at
// each thinking level (unspecified: medium). The API documents no such
// figure: these are the fake's own round numbers, so that thinking shows up
// in usage and cost the way the real service bills it (as output).
var ThoughtTokens = map[genai.ThinkingLevel]int{
	genai.ThinkingLevelMinimal: 0,
	genai.ThinkingLevelLow:     64,
	genai.ThinkingLevelMedium:  256,
	genai.ThinkingLevelHigh:    1024,
}

// QuotaWindow is the window of Config.RPM.
const QuotaWindow = time.Minute

// Config configures a Server.
type Config struct {
	// APIKey is the key clients must send in x-goog-api-key. Required.
	APIKey string
	// Script produces the replies. Required.
	Script Script
	// Logger receives one debug line per request; nil discards.
	Logger *slog.Logger
	// DiscardRequests stops the server from keeping request bodies (for the
	// long-running scripted mode, where nobody asserts on them).
	DiscardRequests bool
	// RPM, when > 0, is the project's requests-per-minute quota: like the
	// real service, a request beyond RPM in the last QuotaWindow gets 429
	// RESOURCE_EXHAUSTED with a google.rpc.RetryInfo retryDelay.
	RPM int
	// Now is the server's clock, for arrival times, RPM and storms (nil:
	// time.Now). Tests that speed time up give the client the same clock.
	Now func() time.Time
}

// Server is the fake Gemini API.
type Server struct {
	cfg Config
	log *slog.Logger

	mu                    sync.Mutex
	busy                  time.Duration
	calls                 int
	requests              []Request
	faults                []Fault
	issued                map[string]string // thought signature → canonical parts JSON of the model turn
	arrivals              []time.Time       // every request's arrival, in order
	inFlight, maxInFlight int
	storm                 storm

	ln      net.Listener
	srv     *http.Server
	served  chan struct{}
	closing chan struct{}
	close   sync.Once
}

// New returns a server; call Start before use and Close after.
func New(cfg Config) *Server {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{
		cfg:     cfg,
		log:     log.With("component", "fake-gemini"),
		issued:  map[string]string{},
		closing: make(chan struct{}),
	}
}

// Start listens on a loopback port and serves in the background.
func (s *Server) Start() error {
	if s.cfg.APIKey == "" || s.cfg.Script == nil {
		return errors.New("fake gemini: Config.APIKey and Config.Script are required")
	}
	if s.ln != nil {
		return errors.New("fake gemini: already started")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("fake gemini: listen on loopback: %w", err)
	}
	s.ln = ln
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle), ReadHeaderTimeout: 10 * time.Second}
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return nil
}

// URL is the base URL to give the client (genai.HTTPOptions.BaseURL).
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// ClientConfig returns a genai client configuration aimed at this server.
func (s *Server) ClientConfig() *genai.ClientConfig {
	return &genai.ClientConfig{
		APIKey:      s.cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: s.URL()},
	}
}

// NewClient returns a real genai client that talks to this server.
func (s *Server) NewClient(ctx context.Context) (*genai.Client, error) {
	c, err := genai.NewClient(ctx, s.ClientConfig())
	if err != nil {
		return nil, fmt.Errorf("fake gemini: create genai client: %w", err)
	}
	return c, nil
}

// storm is a period in which every request gets 429.
type storm struct {
	until     time.Time
	retryInfo bool
	hits      int
}

// RateLimitUntil answers every request with 429 RESOURCE_EXHAUSTED until t
// (on the server's clock): a quota storm. With retryInfo the error carries
// a google.rpc.RetryInfo whose retryDelay is the time left, as the real
// service sends for per-minute quotas; without, only the status.
func (s *Server) RateLimitUntil(t time.Time, retryInfo bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storm = storm{until: t, retryInfo: retryInfo}
}

// RateLimited is the number of requests answered 429 by a storm or the RPM
// quota.
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storm.hits
}

// MaxInFlight is the most requests the server was handling at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Arrivals returns the arrival time (server clock) of every request so far.
func (s *Server) Arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.arrivals...)
}

// MaxInWindow is the largest number of times (sorted) in any window of
// length w: the peak request rate the server saw.
func MaxInWindow(times []time.Time, w time.Duration) int {
	most, lo := 0, 0
	for hi := range times {
		for !times[hi].Before(times[lo].Add(w)) {
			lo++
		}
		most = max(most, hi-lo+1)
	}
	return most
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// quota decides, under s.mu, whether the request that arrived at now gets
// 429, and the retryDelay to advise ("" for none).
func (s *Server) quota(now time.Time) (limited bool, retryDelay string) {
	if now.Before(s.storm.until) {
		s.storm.hits++
		if s.storm.retryInfo {
			return true, retryDelaySeconds(s.storm.until.Sub(now))
		}
		return true, ""
	}
	if s.cfg.RPM <= 0 {
		return false, ""
	}
	// The arrivals in the window before this one (which is already recorded).
	n := len(s.arrivals) - 1
	i := n
	for i > 0 && now.Before(s.arrivals[i-1].Add(QuotaWindow)) {
		i--
	}
	if n-i < s.cfg.RPM {
		return false, ""
	}
	s.storm.hits++
	return true, retryDelaySeconds(s.arrivals[n-s.cfg.RPM].Add(QuotaWindow).Sub(now))
}

// retryDelaySeconds spells a delay as google.rpc.RetryInfo does in JSON
// ("17s", rounded up to whole seconds).
func retryDelaySeconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64((d+time.Second-1)/time.Second))
}

// Close stops the server, releasing hanging requests, and waits for it.
func (s *Server) Close() {
	s.close.Do(func() {
		close(s.closing)
		if s.srv == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
		}
		<-s.served
	})
}

// Inject queues faults: the next len(faults) requests (after the protocol
// checks on path and key) get them, in order, instead of a scripted reply.
func (s *Server) Inject(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, faults...)
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Calls is the number of requests received so far.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

const (
	pathPrefix = "/v1beta/models/"
	pathSuffix = ":generateContent"
)

// HandlerTime is the total time the server spent handling requests (reading
// and decoding bodies, scripting, encoding replies): the "model's time" as a
// client sees it, to subtract when measuring the client's own overhead.
func (s *Server) HandlerTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.mu.Lock()
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.busy += time.Since(start)
		s.inFlight--
		s.mu.Unlock()
	}()
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, pathPrefix) || !strings.HasSuffix(r.URL.Path, pathSuffix) {
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("%s %s is not served by the fake Gemini API (only POST /v1beta/models/{model}:generateContent)", r.Method, r.URL.Path))
		return
	}
	model := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, pathPrefix), pathSuffix)
	key := r.Header.Get("x-goog-api-key")
	switch {
	case key == "":
		writeError(w, http.StatusForbidden, "PERMISSION_DENIED", "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
		return
	case subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.APIKey)) != 1:
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.")
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "could not read the request body: "+err.Error())
		return
	}

	req := Request{Model: model, Raw: raw}
	var wire wireRequest
	var decodeErr error
	if len(bytes.TrimSpace(raw)) > 0 { // an empty body is an empty request
		decodeErr = json.Unmarshal(raw, &wire)
	}
	if decodeErr == nil {
		req.Contents, req.SystemInstruction, req.Tools, req.ToolConfig, req.GenerationConfig =
			wire.Contents, wire.SystemInstruction, wire.Tools, wire.ToolConfig, wire.GenerationConfig
	}

	s.mu.Lock()
	s.calls++
	req.Call = s.calls
	if !s.cfg.DiscardRequests {
		s.requests = append(s.requests, req)
	}
	now := s.now()
	s.arrivals = append(s.arrivals, now)
	limited, retryDelay := s.quota(now)
	var fault Fault
	if !limited && len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	s.mu.Unlock()

	log := s.log.With("call", req.Call, "model", model, "turn", req.Turn())
	if decodeErr != nil {
		log.Debug("bad request body", "err", decodeErr)
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "Invalid JSON payload received. "+decodeErr.Error())
		return
	}
	if limited {
		log.Debug("quota exhausted", "retry_delay", retryDelay)
		writeQuotaError(w, retryDelay)
		return
	}
	switch fault {
	case FaultRateLimit:
		log.Debug("injected 429")
		writeError(w, http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).")
		return
	case FaultInternal:
		log.Debug("injected 500")
		writeError(w, http.StatusInternalServerError, "INTERNAL", "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting")
		return
	case FaultUnavailable:
		log.Debug("injected 503")
		writeError(w, http.StatusServiceUnavailable, "UNAVAILABLE", "The model is overloaded. Please try again later.")
		return
	case FaultHang:
		log.Debug("injected hang")
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	if err := s.validate(&req); err != nil {
		log.Debug("protocol violation", "err", err)
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
		return
	}
	if fault == FaultMalformed {
		log.Debug("injected malformed function call")
		s.writeReply(w, &req, Reply{Malformed: true})
		return
	}
	reply := s.cfg.Script(&req)
	if reply.Status != 0 {
		log.Debug("scripted error", "status", reply.Status)
		msg := reply.Message
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeError(w, reply.Status, statusName(reply.Status), msg)
		return
	}
	log.Debug("reply", "calls", len(reply.Calls), "text", reply.Text != "", "malformed", reply.Malformed)
	s.writeReply(w, &req, reply)
}

// validate applies the protocol rules the real service enforces.
func (s *Server) validate(req *Request) error {
	if len(req.Contents) == 0 {
		return errors.New("* GenerateContentRequest.contents: contents is not specified")
	}
	for i, c := range req.Contents {
		if c == nil || len(c.Parts) == 0 {
			return fmt.Errorf("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i)
		}
		if c.Role != genai.RoleModel {
			continue
		}
		var calls []*genai.FunctionCall
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				calls = append(calls, p.FunctionCall)
			}
		}
		if len(calls) == 0 {
			continue
		}
		if err := s.checkSignature(i, c); err != nil {
			return err
		}
		if i+1 >= len(req.Contents) {
			continue // a trailing model turn: nothing to pair yet
		}
		next := req.Contents[i+1]
		var resps []*genai.FunctionResponse
		if next != nil && next.Role != genai.RoleModel {
			for _, p := range next.Parts {
				if p != nil && p.FunctionResponse != nil {
					resps = append(resps, p.FunctionResponse)
				}
			}
		}
		if len(resps) != len(calls) {
			return fmt.Errorf("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn (contents[%d] has %d calls, contents[%d] has %d responses).", i, len(calls), i+1, len(resps))
		}
		for j := range calls {
			if resps[j].Name != calls[j].Name {
				return fmt.Errorf("* GenerateContentRequest.contents[%d].parts[%d].function_response.name: %q does not answer function call %q", i+1, j, resps[j].Name, calls[j].Name)
			}
			if calls[j].ID != "" && resps[j].ID != calls[j].ID {
				return fmt.Errorf("* GenerateContentRequest.contents[%d].parts[%d].function_response.id: %q does not match function call id %q", i+1, j, resps[j].ID, calls[j].ID)
			}
		}
	}
	return nil
}

// checkSignature verifies that a model turn with function calls came back
// with the thought signature this server issued, and unchanged.
func (s *Server) checkSignature(i int, c *genai.Content) error {
	var sig []byte
	var name string
	for _, p := range c.Parts {
		if p != nil && p.FunctionCall != nil {
			sig, name = p.ThoughtSignature, p.FunctionCall.Name
			break
		}
	}
	s.mu.Lock()
	want, ok := s.issued[string(sig)]
	s.mu.Unlock()
	if len(sig) == 0 || !ok {
		return fmt.Errorf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call `default_api:%s`, position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", name, i+1)
	}
	got, err := canonicalParts(c.Parts)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("* GenerateContentRequest.contents[%d]: the model turn was modified before being sent back (its parts differ from what the model returned)", i)
	}
	return nil
}

func canonicalParts(parts []*genai.Part) (string, error) {
	b, err := json.Marshal(parts)
	if err != nil {
		return "", fmt.Errorf("encode parts: %w", err)
	}
	// Round-trip through the decoder so both sides are normalised the same way.
	var back []*genai.Part
	if err := json.Unmarshal(b, &back); err != nil {
		return "", fmt.Errorf("decode parts: %w", err)
	}
	b, err = json.Marshal(back)
	if err != nil {
		return "", fmt.Errorf("encode parts: %w", err)
	}
	return string(b), nil
}

type wireCandidate struct {
	Content       *genai.Content     `json:"content,omitempty"`
	FinishReason  genai.FinishReason `json:"finishReason,omitempty"`
	FinishMessage string             `json:"finishMessage,omitempty"`
	Index         int                `json:"index"`
}

type wireResponse struct {
	Candidates    []wireCandidate                             `json:"candidates"`
	UsageMetadata *genai.GenerateContentResponseUsageMetadata `json:"usageMetadata,omitempty"`
	ModelVersion  string                                      `json:"modelVersion,omitempty"`
	ResponseID    string                                      `json:"responseId,omitempty"`
}

func (s *Server) writeReply(w http.ResponseWriter, req *Request, reply Reply) {
	cand := wireCandidate{FinishReason: reply.FinishReason}
	if reply.Malformed {
		cand.FinishReason = genai.FinishReasonMalformedFunctionCall
		cand.FinishMessage = "Malformed function call: the model produced a call that could not be parsed."
	} else {
		var parts []*genai.Part
		if reply.Text != "" {
			parts = append(parts, &genai.Part{Text: reply.Text})
		}
		for i, fc := range reply.Calls {
			p := &genai.Part{FunctionCall: fc}
			if i == 0 {
				p.ThoughtSignature = signature(req.Call)
			}
			parts = append(parts, p)
		}
		if len(reply.Calls) > 0 {
			canon, err := canonicalParts(parts)
			if err != nil {
				writeError(w, http.StatusInternalServerError, "INTERNAL", "fake gemini: "+err.Error())
				return
			}
			s.mu.Lock()
			s.issued[string(parts[len(parts)-len(reply.Calls)].ThoughtSignature)] = canon
			s.mu.Unlock()
		}
		if len(parts) > 0 {
			cand.Content = &genai.Content{Role: genai.RoleModel, Parts: parts}
		}
		if cand.FinishReason == "" {
			cand.FinishReason = genai.FinishReasonStop
		}
	}
	usage := reply.Usage
	if usage == nil {
		usage = estimateUsage(req, cand.Content)
	}
	resp := wireResponse{
		Candidates:    []wireCandidate{cand},
		UsageMetadata: usage,
		ModelVersion:  req.Model,
		ResponseID:    fmt.Sprintf("fake-%d", req.Call),
	}
	b, err := json.Marshal(resp)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "INTERNAL", "fake gemini: encode reply: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
}

// signature is an opaque, realistically sized thought signature, unique per call.
func signature(call int) []byte {
	sig := []byte(fmt.Sprintf("fake-thought-signature/%d/", call))
	return append(sig, bytes.Repeat([]byte{'.'}, 192-len(sig)%192)...)
}

// estimateUsage gives deterministic token counts: a fixed cost per image plus
// one token per four bytes of the rest of the request; output one token per
// four bytes of the reply's parts.
func estimateUsage(req *Request, out *genai.Content) *genai.GenerateContentResponseUsageMetadata {
	imageTokens := req.ImageTokens()
	imageBytes := 0
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if p.InlineData != nil {
				imageBytes += base64.StdEncoding.EncodedLen(len(p.InlineData.Data))
			}
			if p.FunctionResponse != nil {
				for _, fp := range p.FunctionResponse.Parts {
					if fp != nil && fp.InlineData != nil {
						imageBytes += base64.StdEncoding.EncodedLen(len(fp.InlineData.Data))
					}
				}
			}
		}
	}
	prompt := int32(max(len(req.Raw)-imageBytes, 0)/4 + imageTokens)
	var output, thoughts int32 = 1, 0
	if out != nil {
		if b, err := json.Marshal(out.Parts); err == nil {
			output = int32(max(len(b)/4, 1))
		}
		thoughts = int32(ThoughtTokens[req.ThinkingLevel()])
	}
	return &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:     prompt,
		CandidatesTokenCount: output,
		ThoughtsTokenCount:   thoughts,
		TotalTokenCount:      prompt + output + thoughts,
	}
}

func statusName(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusInternalServerError:
		return "INTERNAL"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	case http.StatusGatewayTimeout:
		return "DEADLINE_EXCEEDED"
	default:
		return "UNKNOWN"
	}
}

// writeQuotaError is the real service's 429 for a per-minute quota: a
// QuotaFailure detail and, when retryDelay is set, a RetryInfo detail.
func writeQuotaError(w http.ResponseWriter, retryDelay string) {
	details := []map[string]any{{
		"@type": "type.googleapis.com/google.rpc.QuotaFailure",
		"violations": []map[string]any{{
			"quotaMetric": "generativelanguage.googleapis.com/generate_content_paid_tier_requests",
			"quotaId":     "GenerateRequestsPerMinutePerProjectPerModel",
		}},
	}}
	if retryDelay != "" {
		details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retryDelay})
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": http.StatusTooManyRequests, "status": "RESOURCE_EXHAUSTED",
		"message": "You exceeded your current quota, please check your plan and billing details.",
		"details": details,
	}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, code int, status, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}})
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// Sequence is a Script that answers turn n of every conversation with
// replies[n-1] (retries of a turn get the same reply); past the end it
// answers with a text-only turn.
func Sequence(replies ...Reply) Script {
	return func(req *Request) Reply {
		if t := req.Turn(); t <= len(replies) {
			return replies[t-1]
		}
		return Reply{Text: "I have nothing more to do."}
	}
}

// Call is a shorthand for a function call.
func Call(name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{Name: name, Args: args}
}
