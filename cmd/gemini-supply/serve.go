package main

var serveCommand = command{
	name:    "serve",
	summary: "run as the Home Assistant add-on: wait for triggers, shop",
	run:     notBuilt("serve"),
}
