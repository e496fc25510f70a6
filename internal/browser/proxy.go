package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"path"
	"strings"
	"sync"
	"time"
)

// policyProxy is a forward HTTP proxy on 127.0.0.1 that a launched Chromium
// sends all its traffic through. It refuses every connection to a host the
// policy does not allow. Playwright's request routing cannot see redirect
// hops, WebSockets or a few other kinds of traffic; the proxy sees every
// connection the browser opens, so no request ever leaves for a host
// outside the allowlist. (It cannot see paths inside HTTPS; blocked paths
// are enforced by the route handler and the redirect guard.)
type policyProxy struct {
	log     *slog.Logger
	allow   func(host string) bool
	onBlock func(host string)
	rules   []resolverRule
	dialer  net.Dialer
	ln      net.Listener
	srv     *http.Server
	fwd     *httputil.ReverseProxy
	served  chan struct{}

	mu      sync.Mutex
	closed  bool
	tunnels map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// startProxy listens on a random loopback port and serves until Close.
func startProxy(log *slog.Logger, allow func(string) bool, onBlock func(string), rules []resolverRule) (*policyProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the browser's policy proxy on 127.0.0.1: %w", err)
	}
	p := &policyProxy{
		log: log, allow: allow, onBlock: onBlock, rules: rules,
		dialer:  net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
		ln:      ln,
		served:  make(chan struct{}),
		tunnels: map[net.Conn]struct{}{},
	}
	p.fwd = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
			r.Out.Header.Del("Proxy-Connection")
			r.Out.Header.Del("Proxy-Authorization")
		},
		Transport: &http.Transport{
			DialContext:           p.dial,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second,
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(p.served)
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("policy proxy stopped", "err", err)
		}
	}()
	return p, nil
}

// URL is the proxy's address for Chromium's --proxy-server.
func (p *policyProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *policyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" {
		http.Error(w, "this is the browser's policy proxy; it only forwards proxy requests", http.StatusBadRequest)
		return
	}
	if !p.allow(r.URL.Hostname()) {
		p.onBlock(r.URL.Hostname())
		http.Error(w, "blocked by the store policy", http.StatusForbidden)
		return
	}
	p.fwd.ServeHTTP(w, r)
}

func (p *policyProxy) connect(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	hostname, _, err := net.SplitHostPort(host)
	if err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	if !p.allow(hostname) {
		p.onBlock(hostname)
		http.Error(w, "blocked by the store policy", http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	upstream, err := p.dial(ctx, "tcp", host)
	cancel()
	if err != nil {
		p.log.Debug("proxy could not reach host", "host", hostname, "err", err)
		http.Error(w, "could not reach "+hostname, http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "hijacking not supported", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	if !p.track(client, upstream) {
		_ = client.Close()
		_ = upstream.Close()
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		p.untrack(client, upstream)
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.untrack(client, upstream)
		done := make(chan struct{}, 2)
		go func() {
			// Bytes the client sent after the CONNECT line are buffered.
			if n := buf.Reader.Buffered(); n > 0 {
				b, _ := buf.Reader.Peek(n)
				_, _ = upstream.Write(b)
			}
			_, _ = io.Copy(upstream, client)
			closeWrite(upstream)
			done <- struct{}{}
		}()
		go func() {
			_, _ = io.Copy(client, upstream)
			closeWrite(client)
			done <- struct{}{}
		}()
		<-done
		<-done
	}()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}

func (p *policyProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *policyProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.tunnels, c)
	}
}

// dial connects to addr, applying the MAP rules of --host-resolver-rules so
// that tests and the demo reach local servers under real host names.
func (p *policyProxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	target, err := mapAddress(p.rules, addr)
	if err != nil {
		return nil, err
	}
	return p.dialer.DialContext(ctx, network, target)
}

// Close stops the listener and every open tunnel.
func (p *policyProxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		_ = p.srv.Close()
	}
	<-p.served
	p.wg.Wait()
	if t, ok := p.fwd.Transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// resolverRule is one rule of Chromium's --host-resolver-rules.
type resolverRule struct {
	exclude     bool
	pattern     string // host pattern, may hold '*'
	replacement string // host[:port], or "~NOTFOUND"
}

// parseResolverRules reads the value of --host-resolver-rules: rules
// separated by commas, each "MAP <pattern> <replacement>" or
// "EXCLUDE <pattern>".
func parseResolverRules(v string) ([]resolverRule, error) {
	var rules []resolverRule
	for _, part := range strings.Split(v, ",") {
		f := strings.Fields(part)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "MAP":
			if len(f) != 3 {
				return nil, fmt.Errorf("host resolver rule %q: want MAP <host pattern> <replacement>", strings.TrimSpace(part))
			}
			rules = append(rules, resolverRule{pattern: strings.ToLower(f[1]), replacement: f[2]})
		case "EXCLUDE":
			if len(f) != 2 {
				return nil, fmt.Errorf("host resolver rule %q: want EXCLUDE <host pattern>", strings.TrimSpace(part))
			}
			rules = append(rules, resolverRule{exclude: true, pattern: strings.ToLower(f[1])})
		default:
			return nil, fmt.Errorf("host resolver rule %q: only MAP and EXCLUDE rules are supported", strings.TrimSpace(part))
		}
	}
	return rules, nil
}

// resolverRulesFromArgs finds --host-resolver-rules in Chromium arguments.
func resolverRulesFromArgs(args []string) ([]resolverRule, error) {
	var rules []resolverRule
	for _, a := range args {
		v, ok := strings.CutPrefix(a, "--host-resolver-rules=")
		if !ok {
			continue
		}
		r, err := parseResolverRules(strings.Trim(v, `"'`))
		if err != nil {
			return nil, err
		}
		rules = append(rules, r...)
	}
	return rules, nil
}

// mapAddress applies the rules to host:port as Chromium does: the first
// matching rule wins; a replacement without a port keeps the original port.
func mapAddress(rules []resolverRule, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("bad address %q: %w", addr, err)
	}
	h := strings.ToLower(host)
	for _, r := range rules {
		if ok, _ := path.Match(r.pattern, h); !ok {
			continue
		}
		if r.exclude {
			break
		}
		if r.replacement == "~NOTFOUND" {
			return "", fmt.Errorf("host %s is mapped to ~NOTFOUND", host)
		}
		rh, rp, err := net.SplitHostPort(r.replacement)
		if err != nil {
			rh, rp = r.replacement, port
		}
		return net.JoinHostPort(rh, rp), nil
	}
	return addr, nil
}
