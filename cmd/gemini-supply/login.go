package main

var loginCommand = command{
	name:    "login",
	summary: "log in to the store once and keep the session in the profile",
	run:     notBuilt("login"),
}
