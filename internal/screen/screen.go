// Package screen holds the small value types shared by the agent (which
// declares the Computer interface) and the browser (which implements it):
// a point in the model's normalised coordinates, a mouse button and a scroll
// direction. It is a leaf package so that package browser can satisfy
// agent.Computer without importing package agent.
package screen

// Point is a position on the screen in the model's normalised coordinates:
// 0–999 on both axes, whatever the viewport size. Implementations clamp values
// outside that range.
type Point struct{ X, Y int }

// Button is a mouse button.
type Button string

// Mouse buttons.
const (
	ButtonLeft   Button = "left"
	ButtonRight  Button = "right"
	ButtonMiddle Button = "middle"
)

// Direction is a scroll direction.
type Direction string

// Scroll directions.
const (
	DirectionUp    Direction = "up"
	DirectionDown  Direction = "down"
	DirectionLeft  Direction = "left"
	DirectionRight Direction = "right"
)
