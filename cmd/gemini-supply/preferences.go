package main

var preferencesCommand = command{
	name:    "preferences",
	summary: "list or forget remembered product choices",
	run:     notBuilt("preferences"),
}
