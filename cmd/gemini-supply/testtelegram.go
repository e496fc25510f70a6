package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/telegram"
)

var testTelegramCommand = command{
	name:    "test-telegram",
	summary: "send a test message to the configured Telegram chat",
	run:     runTestTelegram,
}

// testTelegramWait is how long test-telegram waits for a reply by default.
const testTelegramWait = 60 * time.Second

const testTelegramAbout = `Sends a test message to telegram_chat_id and waits for your reply (a message or
the button); exits 0 when it arrived, 1 otherwise, saying what arrived. Without
a chat id it waits for any message to the bot and prints the chat id to set.
See docs/telegram.md.`

func runTestTelegram(ctx context.Context, args []string, s stdio) int {
	fs := newFlagSet("test-telegram", "[flags]", testTelegramAbout)
	flags := config.BindFlags(fs, "log-level")
	wait := fs.Duration("wait", testTelegramWait, "how long to wait for your reply")
	if err := parseFlags(fs, args, s.err, false); err != nil {
		return exitCode(err)
	}
	if *wait <= 0 {
		return exitCode(usageFailure("test-telegram", s.err, errors.New("--wait must be positive")))
	}
	load := loadOptions
	load.Flags = flags
	// Not validated as a whole: only the Telegram settings matter here, and a
	// missing chat id is what this command helps to find.
	cfg, err := loadConfig(load, s.err)
	if err != nil {
		return exitCode(configFailure("test-telegram", s.err, err))
	}
	return testTelegram(ctx, cfg, *wait, s)
}

// testTelegram checks the Telegram settings of cfg end to end. Exit 0 only
// when a reply from the configured chat arrived.
func testTelegram(ctx context.Context, cfg config.Config, wait time.Duration, s stdio) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(s.err, "gemini-supply test-telegram: "+format+"\n", args...)
		return 1
	}
	if !cfg.TelegramBotToken.IsSet() {
		return fail("Telegram is not configured: set telegram_bot_token (or TELEGRAM_BOT_TOKEN) to the token " +
			"@BotFather gave you, then run this again to find your chat id (docs/telegram.md)")
	}
	opts := telegram.OptionsFromConfig(cfg, quietLogger(s.err, cfg))

	if cfg.TelegramChatID == 0 {
		fmt.Fprintf(s.out, "telegram_chat_id is not set. Send any message to your bot now (waiting up to %s)…\n", wait)
		chat, err := telegram.DiscoverChat(ctx, opts, wait)
		if err != nil {
			return fail("%v", err)
		}
		name := chat.Name
		if name == "" {
			name = "no name"
		}
		fmt.Fprintf(s.out, "A message arrived from chat %d (%s): %q\n", chat.ID, name, chat.Text)
		fmt.Fprintf(s.out, "If that was you, set telegram_chat_id: %d (or TELEGRAM_USER_CHAT_ID=%d) and run test-telegram again.\n", chat.ID, chat.ID)
		return 1 // not configured yet
	}

	bot, err := telegram.New(ctx, opts)
	if err != nil {
		return fail("%v", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = bot.Close(cctx)
	}()
	if err := bot.Err(); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(s.out, "Sending a test message to chat %d as @%s. Reply to it within %s…\n", bot.ChatID(), bot.UserName(), wait)
	res, err := bot.Ping(ctx, wait)
	if err != nil {
		return fail("%v", err)
	}
	if res.Button {
		fmt.Fprintln(s.out, "The button was pressed.")
	} else {
		fmt.Fprintf(s.out, "Your reply arrived: %q\n", res.Text)
	}
	if len(res.IgnoredChats) > 0 {
		fmt.Fprintf(s.out, "Messages from other chats were ignored: %v\n", res.IgnoredChats)
	}
	fmt.Fprintln(s.out, "Telegram works.")
	return 0
}

// quietLogger logs warnings and errors (everything with log_level debug) to w.
func quietLogger(w io.Writer, cfg config.Config) *slog.Logger {
	level := max(cfg.SlogLevel(), slog.LevelWarn)
	if cfg.SlogLevel() == slog.LevelDebug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
