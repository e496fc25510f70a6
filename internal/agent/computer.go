package agent

import (
	"context"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/screen"
)

// Point is a position on the screen in the model's normalised coordinates:
// 0–999 on both axes, whatever the viewport size. Implementations clamp values
// outside that range. It is an alias of screen.Point so that package browser
// can implement Computer without importing this package.
type Point = screen.Point

// Button is a mouse button (alias of screen.Button).
type Button = screen.Button

// Mouse buttons.
const (
	ButtonLeft   = screen.ButtonLeft
	ButtonRight  = screen.ButtonRight
	ButtonMiddle = screen.ButtonMiddle
)

// Direction is a scroll direction (alias of screen.Direction).
type Direction = screen.Direction

// Scroll directions.
const (
	DirectionUp    = screen.DirectionUp
	DirectionDown  = screen.DirectionDown
	DirectionLeft  = screen.DirectionLeft
	DirectionRight = screen.DirectionRight
)

// Computer is what the agent drives: one browser tab. Package browser's Tab
// satisfies it; tests use small fakes.
//
// Every action waits (bounded) for the page to settle before returning.
// An action error that has a method `Rejected() bool` returning true (for
// example a navigation blocked by the store policy) is reported to the model,
// which may correct itself; any other error ends the run as browser_error.
type Computer interface {
	// Screenshot returns the current viewport as an image (PNG by default).
	Screenshot(ctx context.Context) ([]byte, error)
	// URL is the tab's current top-level URL.
	URL() string

	Click(ctx context.Context, p Point, button Button, count int) error
	Move(ctx context.Context, p Point) error
	MouseDown(ctx context.Context, button Button) error
	MouseUp(ctx context.Context, button Button) error
	// TypeAt clicks p, optionally clears the field (select all + delete),
	// types text key by key, and optionally presses Enter.
	TypeAt(ctx context.Context, p Point, text string, pressEnter, clearBefore bool) error
	// Type types text into whatever has focus, optionally pressing Enter.
	Type(ctx context.Context, text string, pressEnter bool) error
	// PressKeys presses a key or a combination such as "Control+a" (names
	// case-insensitive).
	PressKeys(ctx context.Context, keys string) error
	KeyDown(ctx context.Context, key string) error
	KeyUp(ctx context.Context, key string) error
	ScrollDocument(ctx context.Context, d Direction) error
	// ScrollAt scrolls at p by magnitude, in normalised units (0–999 of the viewport).
	ScrollAt(ctx context.Context, p Point, d Direction, magnitude int) error
	DragAndDrop(ctx context.Context, from, to Point) error
	// Navigate opens url (https:// added when no scheme is given).
	Navigate(ctx context.Context, url string) error
	GoBack(ctx context.Context) error
	GoForward(ctx context.Context) error
	Wait(ctx context.Context, d time.Duration) error

	// TakeNotices returns, and forgets, what the tab noticed since the last
	// call that the model should be told (e.g. "navigation to … was blocked
	// by policy").
	TakeNotices() []string
}

// PageDescriber is a Computer that can put its page in text: the
// accessibility tree's roles, names and boxes (browser.Tab). The loop sends
// it with the screenshot when Config.DescribePage is set.
type PageDescriber interface {
	DescribePage(ctx context.Context) (string, error)
}

// Sleeper is a Computer whose page can sleep while the model thinks
// (browser.Tab: frozen, no scripts, timers or rendering). The loop puts it
// to sleep before each model call and wakes it before the call's actions
// and their screenshot, so a sleeping page costs no CPU and the model sees
// the page as it is.
type Sleeper interface {
	Sleep(ctx context.Context) error
	Wake(ctx context.Context) error
}

// ElementNamer is a Computer that can name what is at a point of its
// screen (the button's or link's text): the trace and the panel then say
// "clicked “Add to cart”" instead of coordinates.
type ElementNamer interface {
	ElementAt(ctx context.Context, p Point) (string, error)
}
