package main

var testTelegramCommand = command{
	name:    "test-telegram",
	summary: "send a test message to the configured Telegram chat",
	run:     notBuilt("test-telegram"),
}
