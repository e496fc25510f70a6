package homeassistant

import (
	"context"
	"fmt"

	"github.com/gemini-supply/gemini-supply/internal/messages"
	"github.com/gemini-supply/gemini-supply/internal/report"
)

// Notification ids used by default. The same id replaces the notification
// shown before, so the latest run's summary replaces the previous one.
const (
	DefaultSummaryNotificationID = "gemini_supply_summary"
	DefaultWaitingNotificationID = "gemini_supply_waiting"
)

// NotifierOptions configures a Notifier.
type NotifierOptions struct {
	// SummaryID is the summary's notification_id (default gemini_supply_summary).
	SummaryID string
	// WaitingID is the "waiting for your choice" notification_id
	// (default gemini_supply_waiting).
	WaitingID string
	// Messages is the language of the notifications (the zero value:
	// English).
	Messages messages.Catalog
}

// Notifier shows Home Assistant persistent notifications: the run summary,
// and the notice that a question waits for an answer (Telegram, the phone).
type Notifier struct {
	c    *Client
	opts NotifierOptions
}

// NewNotifier returns a Notifier on c.
func NewNotifier(c *Client, opts NotifierOptions) *Notifier {
	if opts.SummaryID == "" {
		opts.SummaryID = DefaultSummaryNotificationID
	}
	if opts.WaitingID == "" {
		opts.WaitingID = DefaultWaitingNotificationID
	}
	return &Notifier{c: c, opts: opts}
}

// SendSummary shows the run summary (title with the counts, markdown body
// with items, prices, links, explanations, total and cart link).
func (n *Notifier) SendSummary(ctx context.Context, s report.Summary) error {
	if err := n.Notify(ctx, n.opts.SummaryID, s.TitleIn(n.opts.Messages), s.MarkdownIn(n.opts.Messages)); err != nil {
		return fmt.Errorf("send the run summary to Home Assistant: %w", err)
	}
	return nil
}

// Notify creates or replaces the persistent notification id.
func (n *Notifier) Notify(ctx context.Context, id, title, markdown string) error {
	_, err := n.c.CallService(ctx, "persistent_notification", "create", nil, map[string]any{
		"notification_id": id,
		"title":           title,
		"message":         markdown,
	}, false)
	return err
}

// Dismiss removes the persistent notification id (no error if it is not shown).
func (n *Notifier) Dismiss(ctx context.Context, id string) error {
	_, err := n.c.CallService(ctx, "persistent_notification", "dismiss", nil, map[string]any{"notification_id": id}, false)
	return err
}
