// Package gemini is a protocol-faithful fake of the Gemini Developer API's
// generateContent endpoint, for tests and for the offline `--model scripted`
// mode of the demo.
//
// The server listens on loopback and speaks the same JSON as the real REST API
// (`POST /v1beta/models/{model}:generateContent`, key in the `x-goog-api-key`
// header), so the real google.golang.org/genai client is exercised end to end.
// Replies come from a Script: a function that sees the decoded request (goal,
// history, function responses, URLs) and returns function calls, text, a
// finish reason and usage. Faults (429, 500, 503, malformed function calls,
// hangs) can be injected per call, and every request body is recorded.
//
// Like the real service it rejects requests that break the protocol: missing
// or wrong API key, a function-call turn not answered by the same number of
// function responses (matching names and ids), and a model turn sent back
// without the thought signature the server issued with it.
package gemini
