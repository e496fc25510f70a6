package panel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	_ "image/png" // screenshots arrive as PNG
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/report"
)

// Frame is one screen of a tab an agent is shopping in: the screenshot the
// agent just took and what it did before it.
type Frame struct {
	ItemID string
	Item   string
	// Turn is the agent's turn (0: the first screen).
	Turn int
	// Action is the turn's actions in words (English, for logs and
	// clients without the catalogue); Calls the same as data, which the
	// page says in its language; URL the tab's address.
	Action string
	Calls  []Call
	URL    string
	// Image is the screenshot, PNG or JPEG. The panel keeps it: the caller
	// must not change it afterwards.
	Image []byte
}

// Activity is what an item's agent did last, shown on its card.
type Activity struct {
	Turn   int    `json:"turn"`
	Action string `json:"action,omitempty"`
	Calls  []Call `json:"calls,omitempty"`
	URL    string `json:"url,omitempty"`
	// QuotaUntil: the agent waits for the model's quota until then
	// (WaitForQuota); zero when it does not.
	QuotaUntil time.Time `json:"quota_until,omitzero"`
	// Answered: the item's question was answered since its last screen
	// (Answer: the product chosen or the words to search for, when one).
	Answered bool   `json:"answered,omitempty"`
	Answer   string `json:"answer,omitempty"`
}

// Call is one of an agent's calls as data ("click_at" at x, y; "type_text_at"
// with its text): the page says it in its own language, coordinates only
// in its details.
type Call struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args,omitempty"`
	// Target is what was at the action's point ("Add to cart"), when
	// known: the page says "clicked “Add to cart”".
	Target string `json:"target,omitempty"`
	// Answer is the household's answer to a question (present_options),
	// in a past run's trace: "product" (Text: the chosen product's name),
	// "custom" (Text: what to look for instead), "skip" or "nothing".
	Answer     string `json:"answer,omitempty"`
	AnswerText string `json:"answer_text,omitempty"`
}

// callArgs are the arguments the page says; the rest (a report's
// explanation, the options of a question) stay out of the stream.
var callArgs = []string{"x", "y", "text", "press_enter", "keys", "key", "direction", "url", "item_name", "quantity"}

// NewCall is a call as the page gets it: only the arguments it says,
// texts clipped.
func NewCall(name string, args map[string]any) Call {
	c := Call{Name: name}
	for _, k := range callArgs {
		v, ok := args[k]
		if !ok {
			continue
		}
		if s, isText := v.(string); isText {
			v = report.Clip(s, report.MaxNameRunes)
		}
		if c.Args == nil {
			c.Args = map[string]any{}
		}
		c.Args[k] = v
	}
	return c
}

// liveFrame is the latest frame of one tab. It is converted to the page's
// JPEG once, by the first event stream that sends it, and only if one does:
// with no page open a frame costs nothing but its bytes.
type liveFrame struct {
	Frame
	seq  uint64
	once sync.Once
	data string // the "frame" event's JSON
}

// frameWidth is the largest width of a frame on the page; wider
// screenshots are scaled down (by a whole factor, averaging).
const frameWidth = 720

// jpegQuality is the frames' JPEG quality: text stays readable.
const jpegQuality = 70

// Show puts a tab's latest screen on the page (shop's Watcher, through its
// adapter). It returns at once; the conversion to JPEG happens on the way
// to a page.
func (p *Panel) Show(f Frame) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.ItemID == "" {
		return
	}
	p.state.Activity[f.ItemID] = Activity{Turn: f.Turn, Action: f.Action, Calls: f.Calls, URL: f.URL}
	if blank(f.URL) {
		// A tab's first screen before it opened anything: white, and
		// for a short item the only one. The card says it is starting.
		p.nudgeLocked()
		return
	}
	p.frameSeq++
	p.frames[f.ItemID] = &liveFrame{Frame: f, seq: p.frameSeq}
	p.nudgeLocked()
}

// blank says whether a tab's address is an empty page (about:blank).
func blank(u string) bool {
	return strings.HasPrefix(u, "about:")
}

// WaitForQuota shows on an item's card that its agent waits about d for
// the model's quota, until its next screen (shop's Watcher, through its
// adapter).
func (p *Panel) WaitForQuota(itemID string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if itemID == "" {
		return
	}
	a := p.state.Activity[itemID]
	a.QuotaUntil = time.Now().Add(d)
	p.state.Activity[itemID] = a
	p.nudgeLocked()
}

// event is the frame as the page gets it: the "frame" event's data.
func (lf *liveFrame) event() string {
	lf.once.Do(func() {
		img, err := toJPEG(lf.Image)
		v := map[string]any{"item_id": lf.ItemID, "item": lf.Item, "turn": lf.Turn, "action": lf.Action, "calls": lf.Calls, "url": lf.URL}
		if err == nil {
			v["image"] = "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(img)
		}
		b, _ := json.Marshal(v)
		lf.data = string(b)
	})
	return lf.data
}

// toJPEG scales a screenshot down to at most frameWidth and encodes it as
// JPEG.
func toJPEG(b []byte) ([]byte, error) {
	src, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("panel: decode a screenshot: %w", err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, shrink(src, frameWidth), &jpeg.Options{Quality: jpegQuality}); err != nil {
		return nil, fmt.Errorf("panel: encode a frame: %w", err)
	}
	return buf.Bytes(), nil
}

// shrink scales img down by the smallest whole factor that makes it at most
// maxWidth wide, averaging each factor×factor block.
func shrink(img image.Image, maxWidth int) image.Image {
	b := img.Bounds()
	f := (b.Dx() + maxWidth - 1) / maxWidth
	if f <= 1 {
		return img
	}
	w, h := b.Dx()/f, b.Dy()/f
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	pix, stride, fast := rgbaPix(img)
	n := uint32(f * f)
	for y := range h {
		for x := range w {
			var r, g, bl uint32
			for dy := range f {
				for dx := range f {
					sx, sy := x*f+dx, y*f+dy
					if fast {
						o := sy*stride + sx*4
						r += uint32(pix[o])
						g += uint32(pix[o+1])
						bl += uint32(pix[o+2])
						continue
					}
					cr, cg, cb, _ := img.At(b.Min.X+sx, b.Min.Y+sy).RGBA()
					r += cr >> 8
					g += cg >> 8
					bl += cb >> 8
				}
			}
			o := y*dst.Stride + x*4
			dst.Pix[o], dst.Pix[o+1], dst.Pix[o+2], dst.Pix[o+3] = uint8(r/n), uint8(g/n), uint8(bl/n), 0xff
		}
	}
	return dst
}

// rgbaPix gives direct access to the pixels of the PNG decoder's usual
// results (screenshots are opaque, so NRGBA reads as RGBA), origin at 0,0.
func rgbaPix(img image.Image) (pix []uint8, stride int, ok bool) {
	switch m := img.(type) {
	case *image.RGBA:
		if m.Rect.Min == (image.Point{}) {
			return m.Pix, m.Stride, true
		}
	case *image.NRGBA:
		if m.Rect.Min == (image.Point{}) {
			return m.Pix, m.Stride, true
		}
	}
	return nil, 0, false
}
