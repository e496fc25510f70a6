package main

var demoCommand = command{
	name:    "demo",
	summary: "shop an example list in the embedded demo store (offline)",
	run:     notBuilt("demo"),
}
