package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/config"
	"github.com/gemini-supply/gemini-supply/internal/runstatus"
)

// MaxConcurrency is the largest concurrency a command may ask for: the
// configuration's own limit.
const MaxConcurrency = config.MaxConcurrency

// maxLine bounds one stdin command.
const maxLine = 64 << 10

// StdinSource reads commands, one per line, from the add-on's stdin (what
// Home Assistant's hassio.addon_stdin service writes):
//
//	{"command": "shop"}                                  start a run
//	{"command": "shop", "retry_tagged": true}            also shop #404/#failed items
//	{"command": "shop", "concurrency": 2, "items": ["milk"]}
//	{"command": "retry"}                                 same as retry_tagged
//	"shop"  /  shop  /  retry                            a JSON string or a bare word
//
// Anything else is logged and ignored.
type StdinSource struct {
	in  io.Reader
	log *slog.Logger
}

// NewStdinSource reads commands from in. To let Run stop reading when its
// context ends, in should support SetReadDeadline (see Pollable for
// os.Stdin) or be an io.Closer (closed on stop).
func NewStdinSource(in io.Reader, logger *slog.Logger) *StdinSource {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &StdinSource{in: in, log: logger.With("component", "serve.stdin")}
}

// Run reads commands until ctx is done or the input ends (both return nil;
// the other sources keep serving after stdin closes).
func (s *StdinSource) Run(ctx context.Context, start StartFunc) error {
	lines := make(chan string)
	readDone := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(s.in)
		sc.Buffer(make([]byte, 0, 4096), maxLine)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-stop:
				readDone <- nil
				return
			}
		}
		readDone <- sc.Err()
	}()
	s.log.Info("reading commands from stdin")
	for {
		select {
		case <-ctx.Done():
			close(stop)
			s.interrupt()
			select {
			case <-readDone:
			case <-time.After(time.Second):
				// A blocking descriptor cannot be interrupted; the reader
				// goroutine ends with the process.
				s.log.Warn("stdin reader could not be interrupted (input is not pollable)")
			}
			return nil
		case err := <-readDone:
			if err != nil {
				s.log.Warn("reading stdin failed; stdin commands are off", "error", err)
			} else {
				s.log.Info("stdin closed; stdin commands are off")
			}
			return nil
		case line := <-lines:
			req, ok, err := ParseCommand(line)
			switch {
			case err != nil:
				s.log.Warn("ignored stdin input", "input", truncate(line, 200), "error", err)
			case ok:
				if err := start(ctx, req); err != nil && !errors.Is(err, runstatus.ErrBusy) {
					s.log.Warn("could not start a run from stdin", "error", err)
				}
			}
		}
	}
}

// interrupt unblocks a Read in progress.
func (s *StdinSource) interrupt() {
	if d, ok := s.in.(interface{ SetReadDeadline(time.Time) error }); ok {
		if err := d.SetReadDeadline(time.Now()); err == nil {
			return
		}
	}
	if c, ok := s.in.(io.Closer); ok {
		_ = c.Close()
	}
}

type command struct {
	Command     string   `json:"command"`
	RetryTagged *bool    `json:"retry_tagged"`
	Concurrency *int     `json:"concurrency"`
	Items       []string `json:"items"`
}

// ParseCommand reads one stdin line. ok is false (and err nil) for a blank
// line; err says why other input is not a command.
func ParseCommand(line string) (req runstatus.Request, ok bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return req, false, nil
	}
	var c command
	switch line[0] {
	case '{':
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return req, false, fmt.Errorf("not a command object: %w (want {\"command\": \"shop\"})", err)
		}
	case '"':
		if err := json.Unmarshal([]byte(line), &c.Command); err != nil {
			return req, false, fmt.Errorf("not a JSON string: %w", err)
		}
	default:
		c.Command = line
	}
	req.Source = "stdin"
	switch strings.ToLower(strings.TrimSpace(c.Command)) {
	case "shop", "start":
	case "retry":
		req.RetryTagged = true
	default:
		return runstatus.Request{}, false, fmt.Errorf("unknown command %q (known: shop, retry)", c.Command)
	}
	if c.RetryTagged != nil {
		req.RetryTagged = req.RetryTagged || *c.RetryTagged
	}
	if c.Concurrency != nil {
		if *c.Concurrency < 1 || *c.Concurrency > MaxConcurrency {
			return runstatus.Request{}, false, fmt.Errorf("concurrency %d is not between 1 and %d", *c.Concurrency, MaxConcurrency)
		}
		req.Concurrency = *c.Concurrency
	}
	for _, it := range c.Items {
		if it = strings.TrimSpace(it); it != "" {
			req.Items = append(req.Items, it)
		}
	}
	return req, true, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
