package gemini

import (
	"encoding/json"
	"fmt"
	"net/http"

	"google.golang.org/genai"
)

// GuideScreen is one screen of a tab as the fake guide model (Guide) sees
// it: the planner's answer on it and where its task's element is.
type GuideScreen struct {
	// Task, Description and Done are the planner's current_task,
	// task_description and is_task_completed on this screen.
	Task, Description string
	Done              bool
	// History is the planner's task_history (the loop keeps its own).
	History []string
	// Box is the grounder's box_2d, [ymin, xmin, ymax, xmax] normalised to
	// 0–1000 as Gemini gives it (any numbers: a test may send a bad one);
	// nil answers found: false.
	Box []int
	// Quirk shapes the answers the way a real model sometimes does.
	Quirk GuideQuirk
}

// GuideQuirk is a way a model's JSON answer departs from the plain object.
type GuideQuirk string

// Quirks of the fake guide model's answers.
const (
	// QuirkFenced wraps the JSON in a Markdown ```json fence.
	QuirkFenced GuideQuirk = "fenced"
	// QuirkNoDescription leaves task_description out of the plan.
	QuirkNoDescription GuideQuirk = "no-description"
	// QuirkNoTask leaves current_task out of the plan.
	QuirkNoTask GuideQuirk = "no-task"
	// QuirkBoxList answers the grounder with a list of boxes, as Gemini
	// does for detection prompts without a schema.
	QuirkBoxList GuideQuirk = "box-list"
)

// Guide is a Script for the guide's planner and grounder: it tells the
// two requests apart by their JSON response schema (current_task or
// box_2d) and answers as a model following that schema would, from the
// screen the request's screenshot shows (screens is keyed by the image's
// bytes). A request for another screen, or without the JSON output it
// asks for, gets 400 INVALID_ARGUMENT.
func Guide(screens map[string]GuideScreen) Script {
	return GuideFunc(func(req *Request) (GuideScreen, bool) {
		img, _ := req.LastImage()
		s, ok := screens[string(img)]
		return s, ok
	})
}

// GuideFunc is Guide with the screen told by a function (false: no such
// screen), for a test whose screenshots come from a real browser.
func GuideFunc(screen func(req *Request) (GuideScreen, bool)) Script {
	return func(req *Request) Reply {
		if req.ResponseMIMEType() != "application/json" {
			return Reply{Status: http.StatusBadRequest, Message: "fake guide: the request does not ask for JSON output"}
		}
		s, ok := screen(req)
		if !ok {
			img, _ := req.LastImage()
			return Reply{Status: http.StatusBadRequest, Message: fmt.Sprintf("fake guide: no screen for the request's image (%d bytes)", len(img))}
		}
		var answer any
		switch {
		case req.SchemaHas("current_task"):
			plan := map[string]any{"current_task": s.Task, "task_description": s.Description,
				"task_history": append([]string{}, s.History...), "is_task_completed": s.Done}
			switch s.Quirk {
			case QuirkNoDescription:
				delete(plan, "task_description")
			case QuirkNoTask:
				delete(plan, "current_task")
			}
			answer = plan
		case req.SchemaHas("box_2d"):
			box := map[string]any{"found": s.Box != nil, "label": s.Task, "box_2d": s.Box}
			if s.Box == nil {
				box["box_2d"] = []int{}
			}
			answer = box
			if s.Quirk == QuirkBoxList {
				delete(box, "found")
				answer = []any{box}
			}
		default:
			return Reply{Status: http.StatusBadRequest, Message: "fake guide: neither a planner nor a grounder schema"}
		}
		b, err := json.Marshal(answer)
		if err != nil {
			return Reply{Status: http.StatusInternalServerError, Message: "fake guide: " + err.Error()}
		}
		text := string(b)
		if s.Quirk == QuirkFenced {
			text = "```json\n" + text + "\n```"
		}
		return Reply{Text: text}
	}
}

// ResponseMIMEType is the request's generationConfig.responseMimeType.
func (r *Request) ResponseMIMEType() string {
	v, _ := r.GenerationConfig["responseMimeType"].(string)
	return v
}

// SchemaHas reports whether the request's response schema (an object)
// has the property.
func (r *Request) SchemaHas(property string) bool {
	s, _ := r.GenerationConfig["responseSchema"].(map[string]any)
	props, _ := s["properties"].(map[string]any)
	_, ok := props[property]
	return ok
}

// Texts are the text parts of the request's user turns, in order.
func (r *Request) Texts() []string {
	var out []string
	for _, c := range r.Contents {
		if c == nil || c.Role == genai.RoleModel {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && p.Text != "" {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// System is the text of the request's system instruction.
func (r *Request) System() string {
	if r.SystemInstruction == nil {
		return ""
	}
	var s string
	for _, p := range r.SystemInstruction.Parts {
		if p != nil {
			s += p.Text
		}
	}
	return s
}
