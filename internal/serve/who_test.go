package serve

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// A stop asked for by a known person (the panel behind ingress: the
// request's context says who) cancels the run with a cause naming them,
// which the run's journal records; it is still ErrStopped.
func TestStopSaysWho(t *testing.T) {
	r := newFakeRunner(nil)
	g := NewGate(r, nil)
	s := &Server{gate: g, log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	if err := g.Start(ctx, runstatus.Request{Source: "panel", By: "Alice"}); err != nil {
		t.Fatal(err)
	}
	receive(t, r.started, "the run")
	if err := s.Stop(runstatus.WithBy(ctx, "Carol"), "panel"); err != nil {
		t.Fatal(err)
	}
	err := receive(t, r.finished, "the stopped run")
	var stop *runstatus.StopCause
	if !errors.Is(err, ErrStopped) || !errors.As(err, &stop) || stop.By != "Carol" || stop.Source != "panel" {
		t.Fatalf("run ended with %v, want a stop by Carol from the panel", err)
	}
}
