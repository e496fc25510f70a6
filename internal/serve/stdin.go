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
//	{"command": "retry"}                                 only the #404/#failed items
//	{"command": "stop"}                                  stop the run in progress
//	"shop"  /  shop  /  retry  /  stop                   a JSON string or a bare word
//
// Anything else is logged and ignored.
type StdinSource struct {
	in   io.Reader
	log  *slog.Logger
	stop StopFunc
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

// WithStop makes the stop command call stop (Server.Stop). Without it, stop
// is logged and ignored.
func (s *StdinSource) WithStop(stop StopFunc) *StdinSource {
	s.stop = stop
	return s
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
			cmd, ok, err := ParseCommand(line)
			switch {
			case err != nil:
				s.log.Warn("ignored stdin input", "input", truncate(line, 200), "error", err)
			case ok && cmd.Stop && s.stop == nil:
				s.log.Warn("ignored the stop command: this instance cannot stop runs")
			case ok && cmd.Stop:
				if err := s.stop(ctx, "stdin"); err != nil && !errors.Is(err, ErrNoRun) {
					s.log.Warn("could not stop the run from stdin", "error", err)
				}
			case ok:
				if err := start(ctx, cmd.Request); err != nil && !errors.Is(err, runstatus.ErrBusy) {
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

// Command is one stdin command: stop the run in progress, or start one.
type Command struct {
	Stop    bool
	Request runstatus.Request
}

// ParseCommand reads one stdin line. ok is false (and err nil) for a blank
// line; err says why other input is not a command.
func ParseCommand(line string) (cmd Command, ok bool, err error) {
	req, stop, ok, err := parseCommand(line)
	return Command{Stop: stop, Request: req}, ok, err
}

func parseCommand(line string) (req runstatus.Request, stop, ok bool, err error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return req, false, false, nil
	}
	var c command
	switch line[0] {
	case '{':
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return req, false, false, fmt.Errorf("not a command object: %w (want {\"command\": \"shop\"})", err)
		}
	case '"':
		if err := json.Unmarshal([]byte(line), &c.Command); err != nil {
			return req, false, false, fmt.Errorf("not a JSON string: %w", err)
		}
	default:
		c.Command = line
	}
	req.Source = "stdin"
	switch strings.ToLower(strings.TrimSpace(c.Command)) {
	case "shop", "start":
	case "retry":
		req.RetryFailed = true
	case "stop":
		if c.RetryTagged != nil || c.Concurrency != nil || c.Items != nil {
			return runstatus.Request{}, false, false, errors.New("stop takes no options")
		}
		return runstatus.Request{}, true, true, nil
	default:
		return runstatus.Request{}, false, false, fmt.Errorf("unknown command %q (known: shop, retry, stop)", c.Command)
	}
	if c.RetryTagged != nil {
		req.RetryTagged = req.RetryTagged || *c.RetryTagged
	}
	if c.Concurrency != nil {
		if *c.Concurrency < 1 || *c.Concurrency > MaxConcurrency {
			return runstatus.Request{}, false, false, fmt.Errorf("concurrency %d is not between 1 and %d", *c.Concurrency, MaxConcurrency)
		}
		req.Concurrency = *c.Concurrency
	}
	for _, it := range c.Items {
		if it = strings.TrimSpace(it); it != "" {
			req.Items = append(req.Items, it)
		}
	}
	return req, false, true, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
