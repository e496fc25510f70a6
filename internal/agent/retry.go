package agent

import (
	"time"

	"google.golang.org/genai"
)

// MaxRetryAfter caps how long a server's RetryInfo may stretch one wait
// between tries of a model call.
const MaxRetryAfter = maxRetryAfter

// Retryable reports whether a model call's error is worth another try:
// 408, 429 and 5xx answers, transport failures. Other model callers (the
// guide) retry as the agent does.
func Retryable(err error) bool { return retryable(err) }

// RetryAfter is the wait a 429's google.rpc.RetryInfo advises, 0 if none.
func RetryAfter(err error) time.Duration { return retryAfter(err) }

// UsageOf is one response's usage metadata as a Usage (thinking counted
// as output, as it is billed), not yet priced (see Cost).
func UsageOf(m *genai.GenerateContentResponseUsageMetadata) Usage {
	if m == nil {
		return Usage{}
	}
	u := Usage{
		PromptTokens:  int64(m.PromptTokenCount) + int64(m.ToolUsePromptTokenCount),
		OutputTokens:  int64(m.CandidatesTokenCount) + int64(m.ThoughtsTokenCount),
		ThoughtTokens: int64(m.ThoughtsTokenCount),
		TotalTokens:   int64(m.TotalTokenCount),
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.OutputTokens
	}
	return u
}
