// Package demostore is a local imitation of the parts of metro.ca the
// grocery agent meets: home page, search results with product tiles,
// product pages, a OneTrust-like cookie banner, a "Delivery or Pickup?"
// postal-code dialog on the first add, a header cart counter, a cart page
// and JSON endpoint, sign-in through an identity host (auth.moiid.ca),
// checkout pages that count every hit, product images on a second host
// and an evil.example host that counts hits for the policy tests.
//
// It serves HTTPS (and plain HTTP on the same ports) under the real host
// names on 127.0.0.1 listeners; Chromium reaches it through
// HostResolverRules, Go code through Client. The page geometry is fixed so
// that the layout functions (TileAddButton, ConsentAcceptButton, …) give
// exact click coordinates. Everything is in memory; one Server is one
// shopper: all tabs of one browser share its cookies and its cart.
package demostore

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gemini-supply/gemini-supply/internal/atomicfile"
)

// Host names the demo store answers for.
const (
	HostStore  = "www.metro.ca"
	HostImages = "product-images.metro.ca"
	HostAuth   = "auth.moiid.ca"
	HostEvil   = "evil.example"
)

// Default demo account, used when Options leave the credentials empty.
const (
	DefaultUsername = "shopper@demo.gemini-supply.test"
	DefaultPassword = "demo-password-2718"
)

// closeTimeout bounds how long Close waits for in-flight requests.
const closeTimeout = 3 * time.Second

// Options configure a demo store.
type Options struct {
	// Logger receives the store's logs (component=demostore). Nil discards.
	Logger *slog.Logger
	// Username and Password of the demo account; empty means
	// DefaultUsername / DefaultPassword.
	Username, Password string
	// CartFile, when set, keeps the cart in this file so that it outlives
	// the process, as a real store's cart does (a run killed mid-way finds
	// it again). Empty keeps the cart in memory.
	CartFile string
	// SignInDelay holds the identity host's answer to the sign-in form
	// (and to the sign-in challenge's form) this long (or until the request
	// ends): a slow identity site, for tests.
	SignInDelay time.Duration
	// SignInChallenge makes the identity host ask, after a right password,
	// for a "not a robot" tick and a 6-digit code shown on the demo inbox
	// page (InboxPath): a check the scripted login cannot pass.
	SignInChallenge bool
	// NoExpressWidget leaves the express-checkout widget (express.go) off
	// the product pages: for measuring what the widget costs a run
	// (BenchmarkShoppingRun's "without the express widget" line). The demo
	// and every end-to-end test keep it: it is what the request policy is
	// proven against.
	NoExpressWidget bool
}

// CartLine is one line of the shopper's cart.
type CartLine struct {
	ProductID string `json:"productId"`
	Name      string `json:"name"`
	Quantity  int    `json:"quantity"`
	UnitCents int64  `json:"unitCents"`
}

// State is a snapshot of the shopper's session as the store sees it.
type State struct {
	// ConsentAccepted is true once the cookie banner's accept button was used.
	ConsentAccepted bool
	// PostalCode is the normalised postal code given in the
	// "Delivery or Pickup?" dialog ("H2X 1Y4"), empty before.
	PostalCode string
	// LoggedIn is true while at least one signed-in session is valid.
	LoggedIn bool
	// CartCount is the number of units in the cart.
	CartCount int
}

// Server is a running demo store. Its methods are safe for concurrent use.
type Server struct {
	log      *slog.Logger
	username string
	password string

	cert      tls.Certificate
	leaf      *x509.Certificate
	tlsCfg    *tls.Config
	addrs     map[string]string // host name -> 127.0.0.1:port
	servers   []*http.Server
	lns       []net.Listener
	serveWG   sync.WaitGroup
	watchMu   sync.Mutex
	stopWatch func() bool // stops the ctx watch
	closeOnce sync.Once
	closeErr  error

	checkoutHits atomic.Int64
	evilHits     atomic.Int64
	reqMu        sync.Mutex
	requests     map[string]int // "METHOD host escaped-path" -> count

	mu       sync.Mutex
	consent  bool
	postal   string
	changes  map[string]ProductChange // by product id: ChangeProduct
	sessions map[string]bool          // session token -> valid
	codes    map[string]string        // one-time auth code -> return path
	cart     []CartLine
	cartFile string

	signInDelay     time.Duration
	signInChallenge bool
	noExpress       bool                 // Options.NoExpressWidget
	challenges      map[string]challenge // by id: pending sign-in challenges
	lastChallenge   string

	slots slotState // the delivery slots page (slots.go)
}

// Start generates a self-signed certificate and starts one listener per
// host name on 127.0.0.1 (random ports), each serving HTTPS and plain HTTP.
// The store stops when ctx is done or Close is called.
func Start(ctx context.Context, opts Options) (*Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		log:      log.With("component", "demostore"),
		username: opts.Username,
		password: opts.Password,
		addrs:    map[string]string{},
		requests: map[string]int{},
		sessions: map[string]bool{},
		codes:    map[string]string{},
		cartFile: opts.CartFile,

		signInDelay:     opts.SignInDelay,
		signInChallenge: opts.SignInChallenge,
		noExpress:       opts.NoExpressWidget,
	}
	if err := s.loadCart(); err != nil {
		return nil, err
	}
	if s.username == "" {
		s.username = DefaultUsername
	}
	if s.password == "" {
		s.password = DefaultPassword
	}
	if err := s.makeCert(); err != nil {
		return nil, fmt.Errorf("demostore: generating the self-signed certificate: %w", err)
	}
	s.tlsCfg = &tls.Config{
		Certificates: []tls.Certificate{s.cert},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	}
	handlers := []struct {
		host string
		h    http.Handler
	}{
		{HostStore, s.slowPages(s.storeHandler())},
		{HostImages, s.imagesHandler()},
		{HostAuth, s.authHandler()},
		{HostEvil, s.evilHandler()},
	}
	for _, hh := range handlers {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("demostore: listening for %s on 127.0.0.1: %w", hh.host, err)
		}
		s.addrs[hh.host] = ln.Addr().String()
		sl := newSniffListener(ln, s.tlsCfg)
		srv := &http.Server{
			Handler:           s.logRequests(hh.host, hh.h),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       30 * time.Second,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		}
		s.lns = append(s.lns, sl)
		s.servers = append(s.servers, srv)
		s.serveWG.Add(1)
		go func() {
			defer s.serveWG.Done()
			if err := srv.Serve(sl); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("demo store listener stopped", "host", hh.host, "err", err)
			}
		}()
	}
	stop := context.AfterFunc(ctx, func() { _ = s.Close() })
	s.watchMu.Lock()
	s.stopWatch = stop
	s.watchMu.Unlock()
	s.log.Info("demo store started", "www", s.addrs[HostStore], "images", s.addrs[HostImages],
		"auth", s.addrs[HostAuth], "evil", s.addrs[HostEvil])
	return s, nil
}

// Close stops every listener, waiting at most a few seconds for in-flight
// requests. It is safe to call more than once and from several goroutines;
// every call returns after the store has stopped.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *Server) shutdown() error {
	s.watchMu.Lock()
	stop := s.stopWatch
	s.watchMu.Unlock()
	if stop != nil {
		stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var errs []error
	for _, srv := range s.servers {
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
			if !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, err)
			}
		}
	}
	for _, ln := range s.lns {
		_ = ln.Close()
	}
	s.serveWG.Wait()
	s.log.Info("demo store stopped")
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("demostore: shutting down: %w", err)
	}
	return nil
}

// HostResolverRules returns a Chromium --host-resolver-rules value mapping
// the four host names to the local listeners.
func (s *Server) HostResolverRules() string {
	hosts := []string{HostStore, HostImages, HostAuth, HostEvil}
	rules := make([]string, len(hosts))
	for i, h := range hosts {
		rules[i] = "MAP " + h + " " + s.addrs[h]
	}
	return strings.Join(rules, ", ")
}

// Addr returns the 127.0.0.1:port listener of a host name, or "" for a
// host the store does not serve.
func (s *Server) Addr(host string) string { return s.addrs[strings.ToLower(host)] }

// BaseURL is the store's home URL, "https://www.metro.ca".
func (s *Server) BaseURL() string { return "https://" + HostStore }

// Credentials returns the demo account.
func (s *Server) Credentials() (username, password string) { return s.username, s.password }

// CertPool returns a pool holding the store's self-signed certificate.
func (s *Server) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.leaf)
	return p
}

// Client returns a new HTTP client (with its own cookie jar, i.e. its own
// browser) whose transport dials the local listener for each of the four
// host names and trusts the store's certificate. Other hosts fail to dial.
func (s *Server) Client() *http.Client {
	jar, _ := cookiejar.New(nil) // never fails with nil options
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, fmt.Errorf("demostore client: bad address %q: %w", addr, err)
			}
			local := s.Addr(host)
			if local == "" {
				return nil, fmt.Errorf("demostore client: host %q is not served by the demo store", host)
			}
			return d.DialContext(ctx, network, local)
		},
		TLSClientConfig:     &tls.Config{RootCAs: s.CertPool(), MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   false,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: 4,
	}
	return &http.Client{Transport: tr, Jar: jar, Timeout: 15 * time.Second}
}

// loadCart reads the cart kept in cartFile (none yet is an empty cart).
func (s *Server) loadCart() error {
	if s.cartFile == "" {
		return nil
	}
	data, err := os.ReadFile(s.cartFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("demostore: read the cart: %w", err)
	}
	if err := json.Unmarshal(data, &s.cart); err != nil {
		return fmt.Errorf("demostore: read the cart %s: %w", s.cartFile, err)
	}
	return nil
}

// saveCartLocked writes the cart to cartFile, if any. Callers hold mu.
func (s *Server) saveCartLocked() {
	if s.cartFile == "" {
		return
	}
	data, err := json.Marshal(s.cart)
	if err == nil {
		err = atomicfile.Write(s.cartFile, data, 0o644)
	}
	if err != nil {
		s.log.Error("keeping the cart failed", "file", s.cartFile, "err", err)
	}
}

// Cart returns the cart lines in the order they were first added.
func (s *Server) Cart() []CartLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CartLine(nil), s.cart...)
}

// ExpireSessions logs every signed-in session out: the next page shows
// "Sign in" and add-to-cart answers 401. The cart is kept (it belongs to
// the account).
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.sessions)
	clear(s.codes)
	s.log.Info("all sessions expired")
}

// CheckoutHits counts requests that reached a checkout, payment, billing
// or order page, by any method. The agent must never get there: tests
// assert 0.
func (s *Server) CheckoutHits() int { return int(s.checkoutHits.Load()) }

// Requests counts every request the store received, on every host, by
// "METHOD host path" (the path as sent, percent-encoding kept; no query).
func (s *Server) Requests() map[string]int {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	return maps.Clone(s.requests)
}

// EvilHits counts requests that reached evil.example (any path, HTTP or
// HTTPS). The browser's policy must block them: tests assert 0.
func (s *Server) EvilHits() int { return int(s.evilHits.Load()) }

// State returns a snapshot of the shopper's session.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.cart {
		n += l.Quantity
	}
	return State{ConsentAccepted: s.consent, PostalCode: s.postal, LoggedIn: len(s.sessions) > 0, CartCount: n}
}

func (s *Server) makeCert() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: HostStore, Organization: []string{"gemini-supply demo store"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{HostStore, HostImages, HostAuth, HostEvil},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	s.leaf = leaf
	s.cert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return nil
}

// logRequests logs each request at debug level (method, host, path, status;
// never bodies or query values, which may hold credentials).
func (s *Server) logRequests(host string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reqMu.Lock()
		s.requests[r.Method+" "+host+" "+r.URL.EscapedPath()]++
		s.reqMu.Unlock()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		s.log.Debug("request", "host", host, "method", r.Method, "path", r.URL.Path, "status", sw.status, "tls", r.TLS != nil)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// sniffListener serves TLS and plain HTTP on one port: it peeks at the first
// byte of each connection (0x16 = TLS handshake record) and hands
// http.Server either a *tls.Conn or the plain connection. Peeking happens in
// a goroutine per connection, bounded by a read deadline, so a silent client
// never blocks Accept.
type sniffListener struct {
	net.Listener
	cfg   *tls.Config
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
	err   error // set once, before done is closed

	mu      sync.Mutex
	pending map[net.Conn]struct{} // connections being sniffed
}

const sniffTimeout = 10 * time.Second

func newSniffListener(ln net.Listener, cfg *tls.Config) *sniffListener {
	l := &sniffListener{Listener: ln, cfg: cfg, conns: make(chan net.Conn), done: make(chan struct{}), pending: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.acceptLoop()
	return l
}

func (l *sniffListener) acceptLoop() {
	defer l.wg.Done()
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.once.Do(func() { l.err = err; close(l.done) })
			return
		}
		l.mu.Lock()
		select {
		case <-l.done:
			l.mu.Unlock()
			_ = c.Close()
			return
		default:
		}
		l.pending[c] = struct{}{}
		l.mu.Unlock()
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.sniff(c)
		}()
	}
}

func (l *sniffListener) sniff(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(sniffTimeout))
	br := bufio.NewReaderSize(c, 16)
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
	if err != nil {
		_ = c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: br}
	if first[0] == 0x16 {
		out = tls.Server(out, l.cfg)
	}
	select {
	case l.conns <- out:
	case <-l.done:
		_ = c.Close()
	}
}

func (l *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		if l.err != nil && !errors.Is(l.err, net.ErrClosed) {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

// Close closes the underlying listener and the connections still being
// sniffed, and waits for the accept loop and pending sniffs to end.
func (l *sniffListener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	l.once.Do(func() { close(l.done) })
	for c := range l.pending {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// peekedConn reads through the buffered reader that holds the peeked byte.
type peekedConn struct {
	net.Conn
	r io.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// ProductChange changes one product as the store shows it on its product
// page, for the tests of the replay of remembered products: a renamed
// product, a price jump, out of stock, a page that is gone, an add control
// that moved. AddExtra makes every add of the product put that many more
// units in the cart than asked (a store whose cart misbehaves). Search
// results and tiles keep the catalogue's product.
type ProductChange struct {
	Name       string // shown instead of the product's name (both languages)
	PriceCents int64  // shown and charged instead of its price (0: unchanged)
	OutOfStock bool
	Gone       bool // the product page answers 404
	MoveAdd    bool // the add control has another id (#product-buy)
	AddExtra   int
}

// ChangeProduct applies c to product id (the zero ProductChange undoes it).
func (s *Server) ChangeProduct(id string, c ProductChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changes == nil {
		s.changes = map[string]ProductChange{}
	}
	s.changes[id] = c
}

// ProductPageAddable says whether product id's page is served with its
// add control where ProductAddButton says (not gone, not moved): the
// scripted model, which cannot look for a control elsewhere, adds from
// the search tile otherwise.
func (s *Server) ProductPageAddable(id string) bool {
	ch := s.change(id)
	return !ch.Gone && !ch.MoveAdd
}

func (s *Server) change(id string) ProductChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes[id]
}

// Search is the package's Search as this store shows it: a product
// ChangeProduct put out of stock is out of stock.
func (s *Server) Search(q string) []Product {
	res := Search(q)
	for i := range res {
		if s.change(res[i].ID).OutOfStock {
			res[i].InStock = false
		}
	}
	return res
}
