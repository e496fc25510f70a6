package browser

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gemini-supply/gemini-supply/internal/screen"
)

// DescribePage is the page's accessibility tree as Chromium exposes it to
// assistive technology, in text: one line per element a person could
// read or use — its role, its accessible name, a few states, and its box
// in the model's 0–999 coordinates of the viewport:
//
//   - document "Results for “milk”" @0,0,1000,1000
//   - link "2% Partly Skimmed Milk" url=https://www.metro.ca/…/p/milk-2pct-2l @84,355,224,378
//   - text "Natrel"
//   - button "Add to cart" [disabled] @84,420,224,444
//
// The first line is the document, named by its title (a blank page is
// that line alone). Children are indented under their parent; containers without a role of
// their own (div, span) are left out and their children lifted. It is for
// a model that cannot read pixels (the offline planner): the screenshot's
// text, as the page's own markup names it. Only the top document is read
// (a frame is one "iframe" line). The text is cut at MaxPageTreeLines.
func (t *Tab) DescribePage(ctx context.Context) (string, error) {
	var out string
	err := t.act(ctx, "read the page's accessibility tree", false, func(c call) error {
		sess, err := t.g.ctx.NewCDPSession(t.page)
		if err != nil {
			return err
		}
		defer func() { _ = sess.Detach() }()
		ax, err := sess.Send("Accessibility.getFullAXTree", nil)
		if err != nil {
			return fmt.Errorf("the accessibility tree: %w", err)
		}
		snap, err := sess.Send("DOMSnapshot.captureSnapshot", map[string]any{"computedStyles": []any{}})
		if err != nil {
			return fmt.Errorf("the layout: %w", err)
		}
		out = renderPageTree(ax, layoutBoxes(snap), float64(t.h.opts.Width), float64(t.h.opts.Height))
		return nil
	})
	if err != nil {
		return "", err // fn may still be running: out is not read
	}
	return out, nil
}

// MaxPageTreeLines bounds DescribePage's text: a page cannot flood the
// model's context.
const MaxPageTreeLines = 600

// box is an element's border box in CSS pixels of the viewport.
type box struct{ x, y, w, h float64 }

// layoutBoxes maps backend DOM node ids to their boxes in the viewport,
// from a DOMSnapshot of the top document.
func layoutBoxes(snap any) map[int]box {
	out := map[int]box{}
	m, _ := snap.(map[string]any)
	docs, _ := m["documents"].([]any)
	if len(docs) == 0 {
		return out
	}
	doc, _ := docs[0].(map[string]any)
	nodes, _ := doc["nodes"].(map[string]any)
	ids, _ := nodes["backendNodeId"].([]any)
	layout, _ := doc["layout"].(map[string]any)
	index, _ := layout["nodeIndex"].([]any)
	bounds, _ := layout["bounds"].([]any)
	sx, _ := doc["scrollOffsetX"].(float64)
	sy, _ := doc["scrollOffsetY"].(float64)
	for i := 0; i < len(index) && i < len(bounds); i++ {
		ni, ok := index[i].(float64)
		if !ok || int(ni) < 0 || int(ni) >= len(ids) {
			continue
		}
		id, _ := ids[int(ni)].(float64)
		b, _ := bounds[i].([]any)
		if len(b) != 4 {
			continue
		}
		f := func(v any) float64 { x, _ := v.(float64); return x }
		if _, seen := out[int(id)]; !seen { // an element's first layout object is its box
			out[int(id)] = box{f(b[0]) - sx, f(b[1]) - sy, f(b[2]), f(b[3])}
		}
	}
	return out
}

// axNode is the part of a CDP Accessibility.AXNode the tree shows.
type axNode struct {
	role, name string
	ignored    bool
	props      map[string]any
	children   []string
	backend    int
}

func readAXNodes(ax any) (map[string]*axNode, string) {
	m, _ := ax.(map[string]any)
	list, _ := m["nodes"].([]any)
	nodes := make(map[string]*axNode, len(list))
	root := ""
	val := func(v any) any {
		if o, ok := v.(map[string]any); ok {
			return o["value"]
		}
		return nil
	}
	for _, raw := range list {
		n, _ := raw.(map[string]any)
		id, _ := n["nodeId"].(string)
		if id == "" {
			continue
		}
		a := &axNode{props: map[string]any{}}
		a.role, _ = val(n["role"]).(string)
		a.name, _ = val(n["name"]).(string)
		a.ignored, _ = n["ignored"].(bool)
		if b, ok := n["backendDOMNodeId"].(float64); ok {
			a.backend = int(b)
		}
		props, _ := n["properties"].([]any)
		for _, p := range props {
			pm, _ := p.(map[string]any)
			if name, ok := pm["name"].(string); ok {
				a.props[name] = val(pm["value"])
			}
		}
		kids, _ := n["childIds"].([]any)
		for _, k := range kids {
			if s, ok := k.(string); ok {
				a.children = append(a.children, s)
			}
		}
		if _, has := n["parentId"]; !has && root == "" {
			root = id
		}
		nodes[id] = a
	}
	return nodes, root
}

// liftedRoles are left out of the tree, their children lifted: they carry
// no meaning of their own.
var liftedRoles = map[string]bool{
	"": true, "none": true, "generic": true, "presentation": true,
	"InlineTextBox": true, "LineBreak": true, "LayoutTableRow": true, "LayoutTable": true,
	"LayoutTableCell": true, "paragraph": true, "ListMarker": true,
}

// renderPageTree writes the tree of a CDP Accessibility.getFullAXTree
// answer with the boxes of layoutBoxes, normalised to 0–999 of a w×h
// viewport.
func renderPageTree(ax any, boxes map[int]box, w, h float64) string {
	nodes, root := readAXNodes(ax)
	var b strings.Builder
	lines := 0
	norm := func(v, size float64) int { return int(math.Floor(v * 1000 / size)) }
	var walk func(id string, depth int, parentName string, seen map[string]bool)
	walk = func(id string, depth int, parentName string, seen map[string]bool) {
		n := nodes[id]
		if n == nil || seen[id] || lines >= MaxPageTreeLines {
			return
		}
		seen[id] = true
		name := strings.Join(strings.Fields(n.name), " ")
		show := !n.ignored && !liftedRoles[n.role]
		if n.role == "StaticText" {
			// A text its parent is named by says nothing new.
			show = name != "" && !strings.Contains(parentName, name)
		}
		if show {
			role := n.role
			switch role {
			case "StaticText":
				role = "text"
			case "RootWebArea":
				role = "document" // the page itself, named by its title
			}
			fmt.Fprintf(&b, "%s- %s", strings.Repeat("  ", depth), strings.ToLower(role))
			if name != "" {
				b.WriteString(" " + strconv.Quote(name))
			}
			for _, p := range []string{"disabled", "checked", "expanded", "selected", "modal"} {
				if v, ok := n.props[p].(bool); ok && v {
					b.WriteString(" [" + p + "]")
				} else if s, ok := n.props[p].(string); ok && s == "true" {
					b.WriteString(" [" + p + "]")
				}
			}
			if lvl, ok := n.props["level"].(float64); ok {
				fmt.Fprintf(&b, " [level=%d]", int(lvl))
			}
			if u, ok := n.props["url"].(string); ok && u != "" {
				b.WriteString(" url=" + u)
			}
			if bx, ok := boxes[n.backend]; ok && n.role != "StaticText" && bx.w > 0 && bx.h > 0 {
				fmt.Fprintf(&b, " @%d,%d,%d,%d", norm(bx.x, w), norm(bx.y, h), norm(bx.x+bx.w, w), norm(bx.y+bx.h, h))
			}
			b.WriteByte('\n')
			lines++
			depth++
			if n.role != "StaticText" {
				parentName = name
			}
		}
		if n.role == "Iframe" {
			return
		}
		for _, c := range n.children {
			walk(c, depth, parentName, seen)
		}
	}
	walk(root, 0, "", map[string]bool{})
	if lines >= MaxPageTreeLines {
		b.WriteString("- … (the page has more elements)\n")
	}
	return b.String()
}

// maxElementName bounds ElementAt's answer.
const maxElementName = 80

// ElementAt names what a person would say is at p: the control (button,
// link, field, or anything with a role or label) under the point, by its
// label or its first line of text; "" for bare page. A field's typed value
// is never read (it may be a secret).
func (t *Tab) ElementAt(ctx context.Context, p screen.Point) (string, error) {
	x, y := t.px(p)
	var out string
	err := t.act(ctx, "name the element at a point", false, func(c call) error {
		v, err := t.page.Evaluate(`([x, y, max]) => {
  let el = document.elementFromPoint(x, y);
  if (!el) return '';
  el = el.closest('button,a,input,select,textarea,label,summary,[role],[aria-label]') || el;
  const clip = (s) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > max ? s.slice(0, max - 1) + '…' : s; };
  const label = el.getAttribute('aria-label') || el.getAttribute('title') || el.getAttribute('alt');
  if (label) return clip(label);
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) return clip(el.placeholder || el.name || '');
  if (el === document.body || el === document.documentElement) return '';
  return clip((el.innerText || el.textContent || '').split('\n').find((l) => l.trim()) || '');
}`, []any{x, y, maxElementName})
		if err != nil {
			return err
		}
		out, _ = v.(string)
		return nil
	})
	if err != nil {
		return "", err // fn may still be running: out is not read
	}
	return out, nil
}
