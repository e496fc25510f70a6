package main

var shopCommand = command{
	name:    "shop",
	summary: "shop every open item of the shopping list",
	run:     notBuilt("shop"),
}
