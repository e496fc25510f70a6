package browser

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// policyProxy is a forward HTTP proxy on 127.0.0.1 that the browser sends
// all its traffic through; it is where the request policy is enforced for
// every request of every tab, frame and worker and for every redirect hop
// (each hop is a request of its own here, whatever Playwright's routing
// sees). CONNECT tunnels to hosts outside the allowlist are refused; a
// tunnel to an allowed host is terminated here (TLS with the proxy's own
// key, which the browser is told to trust) so that the method and path of
// every request inside it are checked too. Requests pass the check or get
// a 403 and never reach the store. The proxy verifies the store's real
// certificate itself.
type policyProxy struct {
	log   *slog.Logger
	pol   proxyPolicy
	rules []resolverRule
	dial0 net.Dialer
	ln    net.Listener
	srv   *http.Server
	fwd   *httputil.ReverseProxy
	// inner serves the requests inside terminated tunnels.
	inner   *http.Server
	innerLn *connListener
	certs   *mitmCerts
	served  chan struct{}

	mu      sync.Mutex
	closed  bool
	tunnels map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// proxyPolicy is what the proxy asks of the Host.
type proxyPolicy interface {
	// allowHost says whether a tunnel to host may be opened at all.
	allowHost(host string) bool
	// checkRequest returns nil when the request may go to the server, or
	// the reason it may not (the proxy answers 403 with it). hdr are the
	// request's headers as the browser sent them (the login tab's token).
	checkRequest(method string, u *url.URL, hdr http.Header) error
	// readsBody says whether checkBody must see the request's body.
	readsBody(method string, u *url.URL) bool
	// checkBody returns nil when the body (complete false: longer than
	// store.MaxBody, cut there) may go to the server, or the reason.
	checkBody(method string, u *url.URL, hdr http.Header, body []byte, complete bool) error
}

// proxyProbeHost is a name only the proxy answers: a browser that loads
// http://proxyProbeHost/ sends its traffic through the proxy.
const proxyProbeHost = "policy-proxy.gemini-supply.invalid"

// upstreamTLS says how the proxy verifies the servers' certificates.
type upstreamTLS struct {
	// roots are the certificates trusted for every server (the demo
	// store's own); nil means the system's.
	roots *x509.CertPool
	// insecure skips verifying (a store profile with a self-signed
	// certificate and no roots given: tests).
	insecure bool
}

// startProxy listens on a random loopback port and serves until Close.
func startProxy(log *slog.Logger, pol proxyPolicy, rules []resolverRule, up upstreamTLS) (*policyProxy, error) {
	certs, err := newMITMCerts()
	if err != nil {
		return nil, fmt.Errorf("creating the policy proxy's TLS key: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the browser's policy proxy on 127.0.0.1: %w", err)
	}
	p := &policyProxy{
		log: log, pol: pol, rules: rules,
		dial0:   net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
		ln:      ln,
		certs:   certs,
		innerLn: newConnListener(ln.Addr()),
		served:  make(chan struct{}),
		tunnels: map[net.Conn]struct{}{},
	}
	p.fwd = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			u := *r.In.URL // absolute: plain proxying, or made so by serveInner
			r.Out.URL = &u
			// The server is told the host the policy checked (the
			// tunnel's authority or the request line's), never a Host
			// header the page chose.
			r.Out.Host = hostHeader(&u)
			r.Out.Header.Del("Proxy-Connection")
			r.Out.Header.Del("Proxy-Authorization")
		},
		Transport: &http.Transport{
			DialContext:           p.dial,
			TLSClientConfig:       &tls.Config{RootCAs: up.roots, InsecureSkipVerify: up.insecure && up.roots == nil, MinVersion: tls.VersionTLS12}, //nolint:gosec // only for a store profile with a self-signed certificate and no roots given (tests)
			TLSHandshakeTimeout:   15 * time.Second,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 60 * time.Second,
		},
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		// The store could not be reached (a refused connection, a failed
		// TLS handshake, no answer): the browser is told as a network
		// error (the connection closes without a response), not as an
		// empty 502 page that one Chromium build (the headless shell)
		// shows as a loaded page and another as an error — so a failed
		// navigation is a NavigationError the model is told about.
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Debug("the store could not be reached; closing the browser's request", "host", r.URL.Host, "error", err)
			panic(http.ErrAbortHandler)
		},
	}
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serveOuter),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.inner = &http.Server{
		Handler:           http.HandlerFunc(p.serveInner),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       60 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*tunnelConn); ok {
				return context.WithValue(ctx, tunnelKey{}, tc)
			}
			return ctx
		},
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := p.inner.Serve(p.innerLn); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			log.Error("policy proxy (tunnels) stopped", "err", err)
		}
	}()
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

// SPKIHash is the base64 SHA-256 of the proxy's public key, for Chromium's
// --ignore-certificate-errors-spki-list: the browser trusts the proxy's
// certificates and nothing else it would not trust anyway.
func (p *policyProxy) SPKIHash() string { return p.certs.spki }

// serveOuter handles what the browser sends the proxy itself: CONNECT and
// absolute-URL requests for plain HTTP.
func (p *policyProxy) serveOuter(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Host == "" {
		http.Error(w, "this is the browser's policy proxy; it only forwards proxy requests", http.StatusBadRequest)
		return
	}
	p.forward(w, r, r.URL)
}

// isPrefetch reports whether the browser marked the request as a prefetch
// (Sec-Purpose: prefetch, or the older Purpose header).
func isPrefetch(h http.Header) bool {
	for _, k := range []string{"Sec-Purpose", "Purpose", "X-Purpose"} {
		if strings.Contains(strings.ToLower(h.Get(k)), "prefetch") {
			return true
		}
	}
	return false
}

// tunnelKey carries the *tunnelConn of a request inside a tunnel.
type tunnelKey struct{}

// serveInner handles a request inside a terminated tunnel: the target is
// the tunnel's CONNECT authority (not the Host header), the scheme the
// tunnel's (https, or http for a plain tunnel such as ws://).
func (p *policyProxy) serveInner(w http.ResponseWriter, r *http.Request) {
	tc, _ := r.Context().Value(tunnelKey{}).(*tunnelConn)
	if tc == nil {
		http.Error(w, "no tunnel", http.StatusBadRequest)
		return
	}
	u := *r.URL
	u.Scheme = tc.scheme
	u.Host = tc.authority
	r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
	p.forward(w, r, &u)
}

// forward checks the request against the policy and, if allowed, sends it
// to the server.
func (p *policyProxy) forward(w http.ResponseWriter, r *http.Request, u *url.URL) {
	if strings.EqualFold(u.Hostname(), proxyProbeHost) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, "policy proxy")
		return
	}
	// Prefetching is off: Chromium has no switch for <link rel=prefetch>,
	// so the proxy refuses what Chromium marks as a prefetch.
	if isPrefetch(r.Header) {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, "Prefetching is off in the grocery agent's browser.", http.StatusForbidden)
		return
	}
	if !defaultPort(u) {
		refuse(w, "only the standard ports (80 for http, 443 for https) may be used")
		return
	}
	// WebSockets are the one protocol a request may switch to, and the
	// policy checks the upgrade as the ws(s) address it opens (a store
	// host takes none: its messages are never read).
	if up := r.Header.Get("Upgrade"); up != "" {
		if !strings.EqualFold(strings.TrimSpace(up), "websocket") {
			refuse(w, "only WebSocket upgrades are allowed")
			return
		}
		ws := *u
		ws.Scheme = map[string]string{"https": "wss", "http": "ws"}[strings.ToLower(u.Scheme)]
		u = &ws
	}
	// The path as the browser sent it, not as Go decoded it, so that the
	// policy normalises exactly what the server would see. A request
	// carrying a method-override header is checked as that method too.
	methods := requestMethods(r)
	var err error
	for _, m := range methods {
		if err = p.pol.checkRequest(m, u, r.Header); err != nil {
			break
		}
	}
	if err == nil {
		err = p.checkBody(w, r, u, methods)
	}
	if g, ok := p.pol.(cartGater); ok && err == nil {
		// A cart change waits while a login runs (cartgate.go).
		var release func()
		if release, err = g.enterCart(r.Context(), methods, u, r.Header); err == nil {
			defer release()
		}
	}
	// The login token is for the policy only; no server sees it.
	r.Header.Del(loginHeader)
	if err != nil {
		refuse(w, err.Error())
		return
	}
	p.fwd.ServeHTTP(w, r)
}

// requestMethods are the request's method and the ones its method-override
// headers name (a server may act on either).
func requestMethods(r *http.Request) []string {
	methods := []string{r.Method}
	for _, k := range store.MethodOverrideHeaders {
		for _, v := range r.Header.Values(k) {
			for _, m := range strings.Split(v, ",") {
				if m = strings.TrimSpace(m); m != "" && !slices.Contains(methods, m) {
					methods = append(methods, m)
				}
			}
		}
	}
	return methods
}

// bodyReadTimeout bounds reading a request body the policy must see (a
// page's streamed upload that never ends must not hold the proxy).
const bodyReadTimeout = 30 * time.Second

// checkBody reads, for a request whose body the policy checks (a state
// change to a store host), up to store.MaxBody bytes of it, has the policy
// check them and puts them back for the server.
func (p *policyProxy) checkBody(w http.ResponseWriter, r *http.Request, u *url.URL, methods []string) error {
	var m string
	for _, mm := range methods {
		if p.pol.readsBody(mm, u) {
			m = mm
			break
		}
	}
	if m == "" {
		return nil
	}
	if enc, ok := bodyEncoded(r.Header); ok {
		// The policy reads the body's bytes as they are: a gzipped
		// "_eventId=placeOrder" would pass unread. A page never needs one.
		return fmt.Errorf("%s requests to the store with an encoded body (Content-Encoding %q) may not be sent by the agent", strings.ToUpper(m), enc)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(io.LimitReader(r.Body, store.MaxBody+1))
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("the request's body could not be read: %w", err)
	}
	complete := len(body) <= store.MaxBody
	if !complete {
		body = body[:store.MaxBody]
	}
	if err := p.pol.checkBody(m, u, r.Header, body, complete); err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.TransferEncoding = nil
	return nil
}

// bodyEncoded returns the request's Content-Encoding when it names any
// coding but identity (every header line, every comma-separated coding).
func bodyEncoded(h http.Header) (string, bool) {
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return c, true
			}
		}
	}
	return "", false
}

// refuse answers 403 with the policy's reason.
func refuse(w http.ResponseWriter, reason string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, "Blocked by the grocery agent's store policy: "+reason+".\n")
}

// defaultPort reports whether u uses its scheme's standard port (80 for
// http and ws, 443 for https and wss), written or not.
func defaultPort(u *url.URL) bool {
	port := u.Port()
	switch strings.ToLower(u.Scheme) {
	case "http", "ws":
		return port == "" || port == "80"
	case "https", "wss":
		return port == "" || port == "443"
	}
	return false
}

// hostHeader is u's host as a browser writes it in the Host header: the
// standard port left out.
func hostHeader(u *url.URL) string {
	if defaultPort(u) {
		return u.Hostname()
	}
	return u.Host
}

func (p *policyProxy) connect(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	hostname, port, err := net.SplitHostPort(host)
	if err != nil {
		http.Error(w, "CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	// Tunnels carry https (443) and plain ws:// (80), nothing else.
	if port != "443" && port != "80" {
		http.Error(w, "blocked by the store policy: only ports 443 and 80 may be tunnelled", http.StatusForbidden)
		return
	}
	if !p.pol.allowHost(hostname) {
		http.Error(w, "blocked by the store policy", http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "hijacking not supported", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if !p.track(client) {
		_ = client.Close()
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		p.untrack(client)
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.terminate(&bufferedConn{Conn: client, r: buf.Reader}, host, hostname)
	}()
}

// terminate looks at the tunnel's first byte: a TLS handshake is answered
// with the proxy's own certificate for hostname, anything else is served
// as plain HTTP. Either way the requests inside go to serveInner.
func (p *policyProxy) terminate(c *bufferedConn, authority, hostname string) {
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	first, err := c.r.Peek(1)
	if err != nil {
		p.untrack(c.Conn)
		return
	}
	var conn net.Conn = c
	scheme := "http"
	if first[0] == 0x16 {
		tc := tls.Server(c, &tls.Config{
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return p.certs.forHost(hostname) },
			NextProtos:     []string{"http/1.1"},
			MinVersion:     tls.VersionTLS12,
		})
		if err := tc.Handshake(); err != nil {
			p.log.Debug("TLS handshake with the browser failed", "host", hostname, "err", err)
			p.untrack(c.Conn)
			return
		}
		conn, scheme = tc, "https"
	}
	_ = c.SetReadDeadline(time.Time{})
	tun := &tunnelConn{Conn: conn, raw: c.Conn, authority: authority, scheme: scheme, p: p}
	if !p.innerLn.push(tun) {
		p.untrack(c.Conn)
	}
}

// tunnelConn is a terminated tunnel handed to the inner server.
type tunnelConn struct {
	net.Conn
	raw       net.Conn
	authority string // host:port of the CONNECT
	scheme    string
	p         *policyProxy
	once      sync.Once
}

func (t *tunnelConn) Close() error {
	err := t.Conn.Close()
	t.once.Do(func() { t.p.untrack(t.raw) })
	return err
}

// bufferedConn reads through the bufio.Reader the CONNECT was parsed with
// (it may hold the first bytes of the tunnel).
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// connListener is a net.Listener fed with connections by push.
type connListener struct {
	addr  net.Addr
	ch    chan net.Conn
	done  chan struct{}
	close sync.Once
}

func newConnListener(addr net.Addr) *connListener {
	return &connListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.close.Do(func() { close(l.done) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }

// mitmCerts makes the proxy's certificates: one key, one self-signed
// certificate per host name, made on first use.
type mitmCerts struct {
	key    *ecdsa.PrivateKey
	spki   string
	mu     sync.Mutex
	byHost map[string]*tls.Certificate
}

func newMITMCerts() (*mitmCerts, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return &mitmCerts{key: key, spki: base64.StdEncoding.EncodeToString(sum[:]), byHost: map[string]*tls.Certificate{}}, nil
}

func (m *mitmCerts) forHost(host string) (*tls.Certificate, error) {
	host = strings.ToLower(host)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.byHost[host]; ok {
		return c, nil
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host, Organization: []string{"gemini-supply policy proxy"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &m.key.PublicKey, m.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: m.key}
	m.byHost[host] = c
	return c, nil
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
	return p.dial0.DialContext(ctx, network, target)
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
	_ = p.innerLn.Close()
	if ierr := p.inner.Shutdown(ctx); ierr != nil {
		_ = p.inner.Close()
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
