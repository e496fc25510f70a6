package gemini

import (
	"strings"

	"google.golang.org/genai"
)

// Request is one generateContent request as the server received it.
type Request struct {
	// Call is the 1-based number of this request among all the server received
	// (failed and injected ones included).
	Call int
	// Model is the model name from the URL path ("gemini-…", without "models/").
	Model string
	// Raw is the request body exactly as it arrived.
	Raw []byte

	// The decoded body.
	Contents          []*genai.Content
	SystemInstruction *genai.Content
	Tools             []*genai.Tool
	ToolConfig        *genai.ToolConfig
	GenerationConfig  map[string]any
}

// wireRequest is the JSON body of generateContent on the Gemini Developer API.
// Configuration fields that the SDK hoists out of GenerateContentConfig
// (systemInstruction, tools, toolConfig, safetySettings) sit at the top level.
type wireRequest struct {
	Contents          []*genai.Content       `json:"contents"`
	SystemInstruction *genai.Content         `json:"systemInstruction,omitempty"`
	Tools             []*genai.Tool          `json:"tools,omitempty"`
	ToolConfig        *genai.ToolConfig      `json:"toolConfig,omitempty"`
	SafetySettings    []*genai.SafetySetting `json:"safetySettings,omitempty"`
	GenerationConfig  map[string]any         `json:"generationConfig,omitempty"`
	CachedContent     string                 `json:"cachedContent,omitempty"`
	Labels            map[string]string      `json:"labels,omitempty"`
}

// Goal is the first text part of the first user turn: the task the client
// asked for.
func (r *Request) Goal() string {
	for _, c := range r.Contents {
		if c == nil || c.Role == genai.RoleModel {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && p.Text != "" {
				return p.Text
			}
		}
		return ""
	}
	return ""
}

// Turn is the number of the model turn being asked for: 1 for the first
// request of a conversation, 1 + the number of model turns in the history
// otherwise. Retries of the same turn have the same Turn.
func (r *Request) Turn() int {
	n := 1
	for _, c := range r.Contents {
		if c != nil && c.Role == genai.RoleModel {
			n++
		}
	}
	return n
}

// ModelTurns returns the model turns in the history, oldest first.
func (r *Request) ModelTurns() []*genai.Content {
	var out []*genai.Content
	for _, c := range r.Contents {
		if c != nil && c.Role == genai.RoleModel {
			out = append(out, c)
		}
	}
	return out
}

// PastCalls returns every function call the model made in this conversation,
// oldest first.
func (r *Request) PastCalls() []*genai.FunctionCall {
	var out []*genai.FunctionCall
	for _, c := range r.ModelTurns() {
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				out = append(out, p.FunctionCall)
			}
		}
	}
	return out
}

// PastTexts returns the text parts of the model turns in the history, oldest
// first.
func (r *Request) PastTexts() []string {
	var out []string
	for _, c := range r.ModelTurns() {
		for _, p := range c.Parts {
			if p != nil && p.Text != "" && !p.Thought {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// FunctionResponses returns the function responses of the last user turn (the
// answers to the model's previous calls), in order.
func (r *Request) FunctionResponses() []*genai.FunctionResponse {
	if len(r.Contents) == 0 {
		return nil
	}
	last := r.Contents[len(r.Contents)-1]
	if last == nil || last.Role == genai.RoleModel {
		return nil
	}
	var out []*genai.FunctionResponse
	for _, p := range last.Parts {
		if p != nil && p.FunctionResponse != nil {
			out = append(out, p.FunctionResponse)
		}
	}
	return out
}

// AllFunctionResponses returns every function response in the history, oldest
// first.
func (r *Request) AllFunctionResponses() []*genai.FunctionResponse {
	var out []*genai.FunctionResponse
	for _, c := range r.Contents {
		if c == nil || c.Role == genai.RoleModel {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && p.FunctionResponse != nil {
				out = append(out, p.FunctionResponse)
			}
		}
	}
	return out
}

// URL is the most recent "url" any function response reported, or "" when
// none did yet.
func (r *Request) URL() string {
	resps := r.AllFunctionResponses()
	for i := len(resps) - 1; i >= 0; i-- {
		if u, ok := resps[i].Response["url"].(string); ok && u != "" {
			return u
		}
	}
	return ""
}

// ImageCount counts the images in the request: inline image parts and image
// parts of function responses.
func (r *Request) ImageCount() int {
	n := 0
	for _, c := range r.Contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if p.InlineData != nil && strings.HasPrefix(p.InlineData.MIMEType, "image/") {
				n++
			}
			if p.FunctionResponse != nil {
				for _, fp := range p.FunctionResponse.Parts {
					if fp != nil && fp.InlineData != nil && strings.HasPrefix(fp.InlineData.MIMEType, "image/") {
						n++
					}
				}
			}
		}
	}
	return n
}

// MediaResolution is the request's generationConfig.mediaResolution
// ("" when unset).
func (r *Request) MediaResolution() genai.MediaResolution {
	v, _ := r.GenerationConfig["mediaResolution"].(string)
	return genai.MediaResolution(v)
}

// ThinkingLevel is the request's generationConfig.thinkingConfig.thinkingLevel,
// medium (the Gemini 3 Flash default) when unset.
func (r *Request) ThinkingLevel() genai.ThinkingLevel {
	if tc, ok := r.GenerationConfig["thinkingConfig"].(map[string]any); ok {
		if v, ok := tc["thinkingLevel"].(string); ok && v != "" {
			return genai.ThinkingLevel(v)
		}
	}
	return genai.ThinkingLevelMedium
}

// ImageTokens is the prompt tokens of the request's images: TokensPerImage
// at each image's media resolution (its part's own, else the request's,
// else high).
func (r *Request) ImageTokens() int {
	global := r.MediaResolution()
	tokens := func(part *genai.PartMediaResolution) int {
		res := global
		if part != nil && part.Level != "" {
			res = genai.MediaResolution(part.Level)
		}
		if n, ok := TokensPerImage[res]; ok {
			return n
		}
		return TokensPerImage[genai.MediaResolutionHigh]
	}
	n := 0
	for _, c := range r.Contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if p.InlineData != nil && strings.HasPrefix(p.InlineData.MIMEType, "image/") {
				n += tokens(p.MediaResolution)
			}
			if p.FunctionResponse != nil {
				for _, fp := range p.FunctionResponse.Parts {
					if fp != nil && fp.InlineData != nil && strings.HasPrefix(fp.InlineData.MIMEType, "image/") {
						n += tokens(nil)
					}
				}
			}
		}
	}
	return n
}

// Declaration returns the custom function declaration with that name, or nil.
func (r *Request) Declaration(name string) *genai.FunctionDeclaration {
	for _, t := range r.Tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d != nil && d.Name == name {
				return d
			}
		}
	}
	return nil
}

// ComputerUse returns the Computer Use tool of the request, or nil.
func (r *Request) ComputerUse() *genai.ComputerUse {
	for _, t := range r.Tools {
		if t != nil && t.ComputerUse != nil {
			return t.ComputerUse
		}
	}
	return nil
}

// LastImage returns the most recent image of the request (an inline image
// part or an image part of a function response) and its media type: the
// screen as the client last showed it. It returns nil when there is none.
func (r *Request) LastImage() ([]byte, string) {
	for i := len(r.Contents) - 1; i >= 0; i-- {
		c := r.Contents[i]
		if c == nil {
			continue
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			p := c.Parts[j]
			if p == nil {
				continue
			}
			if p.FunctionResponse != nil {
				for k := len(p.FunctionResponse.Parts) - 1; k >= 0; k-- {
					if fp := p.FunctionResponse.Parts[k]; fp != nil && fp.InlineData != nil && strings.HasPrefix(fp.InlineData.MIMEType, "image/") {
						return fp.InlineData.Data, fp.InlineData.MIMEType
					}
				}
			}
			if p.InlineData != nil && strings.HasPrefix(p.InlineData.MIMEType, "image/") {
				return p.InlineData.Data, p.InlineData.MIMEType
			}
		}
	}
	return nil, ""
}
