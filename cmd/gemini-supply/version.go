package main

var versionCommand = command{
	name:    "version",
	summary: "print the version",
	run:     notBuilt("version"),
}
