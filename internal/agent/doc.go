// Package agent runs the generic Gemini Computer Use loop: given a goal, a
// Computer (a browser tab) and custom tools, it asks the model for actions,
// performs them and answers with screenshots until a terminal tool is called
// or a limit is hit. It knows nothing about groceries.
package agent
