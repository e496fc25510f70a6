package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/syncbuf"

	"google.golang.org/genai"

	"github.com/gemini-supply/gemini-supply/internal/agent"
	"github.com/gemini-supply/gemini-supply/internal/fake/gemini"
)

const testAPIKey = "test-api-key-5f0c1d2e"

// fakeComputer is a Computer whose "page" is a version number: actions that
// change the page bump it, and the screenshot encodes it.
type fakeComputer struct {
	mu       sync.Mutex
	url      string
	version  int
	static   bool // actions never change the screen
	shotSize int
	jpeg     bool // screenshots are JPEG (browser screenshot_format: jpeg)
	ops      []string
	errs     map[string]error // op name → error returned by that op
	notices  []string
	shots    int

	waitStarted chan struct{} // closed when Wait starts, if set
	blockWait   bool          // Wait blocks until ctx is done
}

var _ agent.Computer = (*fakeComputer)(nil)

func newFakeComputer() *fakeComputer {
	return &fakeComputer{url: "https://shop.example/", shotSize: 2048}
}

func (f *fakeComputer) record(op string, format string, a ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, op+" "+fmt.Sprintf(format, a...))
	if err := f.errs[op]; err != nil {
		return err
	}
	if !f.static {
		f.version++
	}
	return nil
}

func (f *fakeComputer) Ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

func (f *fakeComputer) Screenshot(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs["screenshot"]; err != nil {
		return nil, err
	}
	f.shots++
	head := fmt.Sprintf("\x89PNG\r\n\x1a\nscreen v%d ", f.version)
	if f.jpeg {
		head = fmt.Sprintf("\xff\xd8\xff\xe0screen v%d ", f.version)
	}
	// Incompressible-looking filler, the same for every version.
	fill := make([]byte, max(f.shotSize-len(head), 0))
	x := uint32(2463534242)
	for i := range fill {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		fill[i] = byte(x)
	}
	return append([]byte(head), fill...), nil
}

func (f *fakeComputer) URL() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.url
}

func (f *fakeComputer) Click(ctx context.Context, p agent.Point, b agent.Button, n int) error {
	return f.record("click", "%d,%d %s x%d", p.X, p.Y, b, n)
}
func (f *fakeComputer) Move(ctx context.Context, p agent.Point) error {
	return f.record("move", "%d,%d", p.X, p.Y)
}
func (f *fakeComputer) MouseDown(ctx context.Context, b agent.Button) error {
	return f.record("mousedown", "%s", b)
}
func (f *fakeComputer) MouseUp(ctx context.Context, b agent.Button) error {
	return f.record("mouseup", "%s", b)
}
func (f *fakeComputer) TypeAt(ctx context.Context, p agent.Point, text string, enter, clear bool) error {
	return f.record("typeat", "%d,%d %q enter=%t clear=%t", p.X, p.Y, text, enter, clear)
}
func (f *fakeComputer) Type(ctx context.Context, text string, enter bool) error {
	return f.record("type", "%q enter=%t", text, enter)
}
func (f *fakeComputer) PressKeys(ctx context.Context, keys string) error {
	return f.record("keys", "%s", keys)
}
func (f *fakeComputer) KeyDown(ctx context.Context, key string) error {
	return f.record("keydown", "%s", key)
}
func (f *fakeComputer) KeyUp(ctx context.Context, key string) error {
	return f.record("keyup", "%s", key)
}
func (f *fakeComputer) ScrollDocument(ctx context.Context, d agent.Direction) error {
	return f.record("scrolldoc", "%s", d)
}
func (f *fakeComputer) ScrollAt(ctx context.Context, p agent.Point, d agent.Direction, m int) error {
	return f.record("scrollat", "%d,%d %s %d", p.X, p.Y, d, m)
}
func (f *fakeComputer) DragAndDrop(ctx context.Context, from, to agent.Point) error {
	return f.record("drag", "%d,%d->%d,%d", from.X, from.Y, to.X, to.Y)
}
func (f *fakeComputer) Navigate(ctx context.Context, u string) error {
	if err := f.record("navigate", "%s", u); err != nil {
		f.mu.Lock()
		f.notices = append(f.notices, "navigation to "+u+" was blocked by policy")
		f.mu.Unlock()
		return err
	}
	f.mu.Lock()
	f.url = u
	f.mu.Unlock()
	return nil
}
func (f *fakeComputer) GoBack(ctx context.Context) error    { return f.record("back", "") }
func (f *fakeComputer) GoForward(ctx context.Context) error { return f.record("forward", "") }
func (f *fakeComputer) Wait(ctx context.Context, d time.Duration) error {
	if err := f.record("wait", "%s", d); err != nil {
		return err
	}
	f.mu.Lock()
	started, block := f.waitStarted, f.blockWait
	f.mu.Unlock()
	if started != nil {
		close(started)
	}
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}
func (f *fakeComputer) TakeNotices() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.notices
	f.notices = nil
	return n
}

// policyError is a navigation refused by policy (Rejected).
type policyError struct{ url string }

func (e *policyError) Error() string {
	return "navigation to " + e.url + " is blocked by the store policy"
}
func (e *policyError) Rejected() bool { return true }

// harness is a fake Gemini server and a real genai client aimed at it.
type harness struct {
	srv    *gemini.Server
	client *genai.Client
	logs   *syncbuf.Buffer
}

func newHarness(t testing.TB, script gemini.Script) *harness {
	t.Helper()
	return newHarnessWith(t, gemini.Config{Script: script})
}

// newHarnessWith starts a fake server with cfg (the API key is filled in).
func newHarnessWith(t testing.TB, cfg gemini.Config) *harness {
	t.Helper()
	cfg.APIKey = testAPIKey
	srv := gemini.New(cfg)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	client, err := srv.NewClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{srv: srv, client: client, logs: &syncbuf.Buffer{}}
	t.Cleanup(func() {
		if strings.Contains(h.logs.String(), testAPIKey) {
			t.Errorf("the API key was logged")
		}
		for _, r := range srv.Requests() {
			if bytes.Contains(r.Raw, []byte(testAPIKey)) {
				t.Errorf("request %d body contains the API key", r.Call)
			}
		}
	})
	return h
}

func (h *harness) config() agent.Config {
	return agent.Config{
		Client:  h.client,
		Model:   "gemini-test-computer-use",
		Backoff: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond},
		Logger:  slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// reportTool is a terminal tool whose payload is its "status" argument.
func reportTool() agent.Tool {
	return agent.Tool{
		Name:        "report_done",
		Description: "Report the outcome.",
		Parameters: &genai.Schema{Type: genai.TypeObject, Properties: map[string]*genai.Schema{
			"status": {Type: genai.TypeString},
		}, Required: []string{"status"}},
		Terminal: true,
		Handler: func(ctx context.Context, args map[string]any) (agent.ToolOutput, error) {
			s, _ := args["status"].(string)
			if s == "" {
				return agent.ToolOutput{}, fmt.Errorf("status is required")
			}
			return agent.ToolOutput{Response: map[string]any{"ok": true}, Payload: "payload:" + s}, nil
		},
	}
}

func call(name string, args map[string]any) *genai.FunctionCall { return gemini.Call(name, args) }

func report(status string) gemini.Reply {
	return gemini.Reply{Calls: []*genai.FunctionCall{call("report_done", map[string]any{"status": status})}}
}

func calls(c ...*genai.FunctionCall) gemini.Reply { return gemini.Reply{Calls: c} }

// lastResponses returns the function responses of request i (0-based).
func responsesOf(t testing.TB, reqs []gemini.Request, i int) []*genai.FunctionResponse {
	t.Helper()
	if i >= len(reqs) {
		t.Fatalf("only %d requests, want request %d", len(reqs), i+1)
	}
	return reqs[i].FunctionResponses()
}

func imageParts(fr *genai.FunctionResponse) int {
	n := 0
	for _, p := range fr.Parts {
		if p.InlineData != nil && strings.HasPrefix(p.InlineData.MIMEType, "image/") {
			n++
		}
	}
	return n
}
