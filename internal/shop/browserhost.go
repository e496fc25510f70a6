package shop

import (
	"context"
	"fmt"

	"github.com/gemini-supply/gemini-supply/internal/browser"
)

// BrowserHost adapts a *browser.Host to Host.
func BrowserHost(h *browser.Host) Host { return &browserHost{h: h} }

type browserHost struct{ h *browser.Host }

var (
	_ Host         = (*browserHost)(nil)
	_ Tab          = (*browserTab)(nil)
	_ CartRecorder = (*browserTab)(nil)
	_ CartLimiter  = (*browserTab)(nil)
)

func (b *browserHost) NewTab(ctx context.Context) (Tab, error) {
	t, err := b.h.NewTab(ctx)
	if err != nil {
		return nil, err
	}
	return &browserTab{Tab: t}, nil
}

func (b *browserHost) IsAuthenticated(ctx context.Context, t Tab) (bool, error) {
	bt, ok := t.(*browserTab)
	if !ok {
		return false, fmt.Errorf("shop: a %T is not a tab of this browser", t)
	}
	return b.h.IsAuthenticated(ctx, bt.Tab)
}

func (b *browserHost) Login(ctx context.Context) error { return b.h.Login(ctx) }
func (b *browserHost) Relaunches() int                 { return b.h.Relaunches() }
func (b *browserHost) Close(ctx context.Context) error { return b.h.Close(ctx) }

// browserTab is a tab of a *browser.Host.
type browserTab struct{ *browser.Tab }
