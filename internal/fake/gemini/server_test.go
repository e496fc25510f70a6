package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

const key = "fake-key-123"

func start(t *testing.T, script gemini.Script) *gemini.Server {
	t.Helper()
	s := gemini.New(gemini.Config{APIKey: key, Script: script})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func client(t *testing.T, s *gemini.Server) *genai.Client {
	t.Helper()
	c, err := s.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRealClientRoundTrip(t *testing.T) {
	var seen *gemini.Request
	s := start(t, func(r *gemini.Request) gemini.Reply {
		seen = r
		return gemini.Reply{
			Text:  "Clicking.",
			Calls: []*genai.FunctionCall{gemini.Call("click_at", map[string]any{"x": 10, "y": 20})},
			Usage: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 7, CandidatesTokenCount: 3, TotalTokenCount: 10},
		}
	})
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("be brief", genai.RoleUser),
		Tools: []*genai.Tool{
			{ComputerUse: &genai.ComputerUse{Environment: genai.EnvironmentBrowser, ExcludedPredefinedFunctions: []string{"search"}}},
			{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "report", Parameters: &genai.Schema{Type: genai.TypeObject}}}},
		},
	}
	contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{
		genai.NewPartFromText("Buy milk"), genai.NewPartFromBytes([]byte("png"), "image/png"),
	}}}
	resp, err := client(t, s).Models.GenerateContent(context.Background(), "gemini-x", contents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if seen == nil || seen.Model != "gemini-x" || seen.Goal() != "Buy milk" || seen.Turn() != 1 || seen.ImageCount() != 1 {
		t.Fatalf("decoded request = %+v", seen)
	}
	if seen.SystemInstruction == nil || seen.SystemInstruction.Parts[0].Text != "be brief" {
		t.Errorf("system instruction = %+v", seen.SystemInstruction)
	}
	if cu := seen.ComputerUse(); cu == nil || cu.Environment != genai.EnvironmentBrowser || cu.ExcludedPredefinedFunctions[0] != "search" {
		t.Errorf("computer use = %+v", cu)
	}
	if seen.Declaration("report") == nil {
		t.Error("custom declaration not decoded")
	}
	c := resp.Candidates[0]
	if c.FinishReason != genai.FinishReasonStop || len(c.Content.Parts) != 2 || c.Content.Parts[0].Text != "Clicking." {
		t.Fatalf("candidate = %+v", c)
	}
	fc := c.Content.Parts[1]
	if fc.FunctionCall.Name != "click_at" || fc.FunctionCall.Args["x"] != float64(10) || len(fc.ThoughtSignature) == 0 {
		t.Errorf("function call part = %+v", fc)
	}
	if u := resp.UsageMetadata; u == nil || u.PromptTokenCount != 7 || u.TotalTokenCount != 10 {
		t.Errorf("usage = %+v", u)
	}
	if rs := s.Requests(); len(rs) != 1 || !bytes.Contains(rs[0].Raw, []byte(`"contents"`)) || bytes.Contains(rs[0].Raw, []byte(key)) {
		t.Errorf("recorded requests = %d", len(rs))
	}
}

func TestFaultsReachTheClient(t *testing.T) {
	s := start(t, gemini.Sequence(gemini.Reply{Text: "ok"}))
	s.Inject(gemini.FaultRateLimit, gemini.FaultInternal, gemini.FaultUnavailable, gemini.FaultMalformed)
	c := client(t, s)
	contents := []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}
	for _, code := range []int{429, 500, 503} {
		_, err := c.Models.GenerateContent(context.Background(), "m", contents, nil)
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != code {
			t.Errorf("err = %v, want API error %d", err, code)
		}
	}
	resp, err := c.Models.GenerateContent(context.Background(), "m", contents, nil)
	if err != nil || resp.Candidates[0].FinishReason != genai.FinishReasonMalformedFunctionCall || resp.Candidates[0].Content != nil {
		t.Errorf("malformed = %+v, %v", resp, err)
	}
	resp, err = c.Models.GenerateContent(context.Background(), "m", contents, nil)
	if err != nil || resp.Candidates[0].Content.Parts[0].Text != "ok" || resp.UsageMetadata.TotalTokenCount == 0 {
		t.Errorf("after faults = %+v, %v", resp, err)
	}
	if s.Calls() != 5 || len(s.Requests()) != 5 {
		t.Errorf("calls %d, recorded %d", s.Calls(), len(s.Requests()))
	}
}

func TestKeyIsChecked(t *testing.T) {
	s := start(t, gemini.Sequence(gemini.Reply{Text: "ok"}))
	cases := []struct {
		key  string
		code int
	}{{"", 403}, {"wrong", 400}}
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1beta/models/m:generateContent", strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`))
		if tc.key != "" {
			req.Header.Set("x-goog-api-key", tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("key %q: status %d, want %d", tc.key, resp.StatusCode, tc.code)
		}
	}
	if s.Calls() != 0 {
		t.Errorf("unauthenticated requests reached the script")
	}
}

func post(t *testing.T, s *gemini.Server, path string, body any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+path, bytes.NewReader(b))
	req.Header.Set("x-goog-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error struct{ Message, Status string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Error.Message
}

func TestProtocolViolationsAreRejected(t *testing.T) {
	s := start(t, gemini.Sequence(
		gemini.Reply{Calls: []*genai.FunctionCall{gemini.Call("click_at", map[string]any{"x": 1, "y": 2}), gemini.Call("wait_5_seconds", nil)}},
		gemini.Reply{Text: "done"},
	))
	c := client(t, s)
	first := genai.NewContentFromText("goal", genai.RoleUser)
	resp, err := c.Models.GenerateContent(context.Background(), "m", []*genai.Content{first}, nil)
	if err != nil {
		t.Fatal(err)
	}
	model := resp.Candidates[0].Content
	answer := func(names ...string) *genai.Content {
		ct := &genai.Content{Role: genai.RoleUser}
		for _, n := range names {
			ct.Parts = append(ct.Parts, genai.NewPartFromFunctionResponse(n, map[string]any{"url": "u"}))
		}
		return ct
	}
	unsigned := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: model.Parts[0].FunctionCall}, model.Parts[1]}}
	modified := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{FunctionCall: gemini.Call("click_at", map[string]any{"x": 9, "y": 9}), ThoughtSignature: model.Parts[0].ThoughtSignature}, model.Parts[1],
	}}
	cases := []struct {
		name     string
		contents []*genai.Content
		want     string
	}{
		{"one response for two calls", []*genai.Content{first, model, answer("click_at")}, "number of function response parts"},
		{"responses out of order", []*genai.Content{first, model, answer("wait_5_seconds", "click_at")}, "does not answer"},
		{"signature dropped", []*genai.Content{first, unsigned, answer("click_at", "wait_5_seconds")}, "thought_signature"},
		{"model turn modified", []*genai.Content{first, modified, answer("click_at", "wait_5_seconds")}, "modified"},
		{"empty contents", nil, "contents is not specified"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Models.GenerateContent(context.Background(), "m", tc.contents, nil)
			var apiErr genai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, tc.want) {
				t.Errorf("err = %v, want 400 mentioning %q", err, tc.want)
			}
		})
	}
	// The faithful history is accepted.
	resp, err = c.Models.GenerateContent(context.Background(), "m", []*genai.Content{first, model, answer("click_at", "wait_5_seconds")}, nil)
	if err != nil || resp.Candidates[0].Content.Parts[0].Text != "done" {
		t.Fatalf("valid history: %+v, %v", resp, err)
	}
	if code, _ := post(t, s, "/v1beta/models/m:streamGenerateContent", map[string]any{}); code != 404 {
		t.Errorf("unknown method: %d", code)
	}
}

func TestRequestLastImage(t *testing.T) {
	r := &gemini.Request{}
	if b, mime := r.LastImage(); b != nil || mime != "" {
		t.Fatalf("empty request LastImage = %q, %q", b, mime)
	}
	r.Contents = []*genai.Content{
		{Role: genai.RoleUser, Parts: []*genai.Part{genai.NewPartFromText("goal"), genai.NewPartFromBytes([]byte("first"), "image/png")}},
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "click_at"}}, {FunctionCall: &genai.FunctionCall{Name: "click_at"}}}},
	}
	if b, mime := r.LastImage(); string(b) != "first" || mime != "image/png" {
		t.Fatalf("LastImage = %q, %q; want the first turn's screenshot", b, mime)
	}
	r.Contents = append(r.Contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		genai.NewPartFromFunctionResponseWithParts("click_at", map[string]any{"url": "u"},
			[]*genai.FunctionResponsePart{genai.NewFunctionResponsePartFromBytes([]byte("after"), "image/jpeg")}),
		genai.NewPartFromFunctionResponse("click_at", map[string]any{"url": "u"}),
	}})
	if b, mime := r.LastImage(); string(b) != "after" || mime != "image/jpeg" {
		t.Fatalf("LastImage = %q, %q; want the latest function response's screenshot", b, mime)
	}
}
