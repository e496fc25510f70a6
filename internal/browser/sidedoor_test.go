package browser

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gemini-supply/gemini-supply/internal/store"
)

// portSink listens on one loopback port for UDP datagrams and TCP
// connections and counts what arrives: what a page's WebRTC, WebTransport
// or QUIC attempt would reach if it went around the policy proxy.
type portSink struct {
	port    int
	udp     net.PacketConn
	tcp     net.Listener
	packets atomic.Int64
	conns   atomic.Int64
	mu      sync.Mutex
	first   string // the first datagram's sender and bytes, for the failure message
}

// newPortSink listens on 127.0.0.1:port (0: any free port) for both UDP
// and TCP (separate port spaces: a UDP sink can share a TLS server's port).
func newPortSink(t testing.TB, port int, withTCP bool) *portSink {
	t.Helper()
	s := &portSink{}
	var err error
	s.udp, err = net.ListenPacket("udp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("UDP listener: %v", err)
	}
	t.Cleanup(func() { _ = s.udp.Close() })
	s.port = s.udp.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := s.udp.ReadFrom(buf)
			if err != nil {
				return
			}
			s.mu.Lock()
			if s.first == "" {
				s.first = fmt.Sprintf("%d bytes from %v: % x", n, from, buf[:min(n, 24)])
			}
			s.mu.Unlock()
			s.packets.Add(1)
		}
	}()
	if withTCP {
		s.tcp, err = net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", s.port))
		if err != nil {
			t.Fatalf("TCP listener on the UDP sink's port: %v", err)
		}
		t.Cleanup(func() { _ = s.tcp.Close() })
		go func() {
			for {
				c, err := s.tcp.Accept()
				if err != nil {
					return
				}
				s.conns.Add(1)
				_ = c.Close()
			}
		}()
	}
	return s
}

// reached describes what arrived, "" when nothing did.
func (s *portSink) reached() string {
	p, c := s.packets.Load(), s.conns.Load()
	if p == 0 && c == 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("port %d: %d UDP datagrams (first: %s), %d TCP connections", s.port, p, s.first, c)
}

// rtcScript tries every WebRTC way out at the hosts and port given (STUN,
// TURN over UDP, TCP and TLS, from the page and from a fresh frame's
// window, whose RTCPeerConnection no init script has touched) and resolves
// with the candidates gathered. Each attempt is bounded in the page.
const rtcScript = `async ({hosts, port}) => {
  const servers = [];
  for (const h of hosts) {
    servers.push({urls: 'stun:' + h + ':' + port});
    servers.push({urls: ['turn:' + h + ':' + port + '?transport=udp', 'turn:' + h + ':' + port + '?transport=tcp', 'turns:' + h + ':' + port], username: 'u', credential: 'p'});
  }
  const gather = async (PC) => {
    const pc = new PC({iceServers: servers, iceCandidatePoolSize: 1});
    const cands = [];
    pc.onicecandidate = e => { if (e.candidate && e.candidate.candidate) cands.push(e.candidate.candidate); };
    pc.createDataChannel('exfil');
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise(r => {
      const t = setTimeout(r, 10000);
      pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') { clearTimeout(t); r(); } };
      if (pc.iceGatheringState === 'complete') { clearTimeout(t); r(); }
    });
    pc.close();
    return cands;
  };
  const f = document.createElement('iframe'); document.body.appendChild(f);
  const [page, frame] = await Promise.all([gather(RTCPeerConnection), gather(f.contentWindow.RTCPeerConnection)]);
  return page.concat(frame);
}`

// TestNoSideDoors: the ways out of the browser that are not HTTP requests
// to the proxy — WebRTC (STUN/TURN over UDP, TCP, TLS), WebTransport
// (HTTP/3 over UDP), QUIC upgrades offered by Alt-Svc, DNS prefetch and
// preconnect, direct sockets — are tried by a store page at loopback
// listeners and at names only a resolver would see. No UDP datagram and no
// TCP connection may reach a listener, and Chromium's own net log (the
// record of everything its network stack did) may show no resolution of
// the page's names and no UDP socket towards them.
func TestNoSideDoors(t *testing.T) {
	t.Parallel() // its own Host, store or site and files: see docs/testing.md
	requireBrowser(t)
	sink := newPortSink(t, 0, true)
	site := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if strings.HasPrefix(r.URL.Path, "/altsvc") {
			// An HTTP/3 upgrade offer: to this server's port (where a UDP
			// sink listens too) and to the sink's.
			_, tlsPort, _ := net.SplitHostPort(r.Host)
			w.Header().Set("Alt-Svc", fmt.Sprintf(`h3=":%s"; ma=3600, h3="127.0.0.1:%d"; ma=3600, h3-29=":%s"`, tlsPort, sink.port, tlsPort))
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>store</title><h1>store</h1>`)
	}))
	defer site.Close()
	_, sitePort, _ := net.SplitHostPort(site.Listener.Addr().String())
	var tlsPort int
	fmt.Sscan(sitePort, &tlsPort)
	siteSink := newPortSink(t, tlsPort, false) // QUIC to the site's own port

	netLog := filepath.Join(t.TempDir(), "netlog.json")
	rules := fmt.Sprintf("MAP www.metro.ca %s, MAP *.probe.example 127.0.0.1", site.Listener.Addr())
	o := baseOptions(t, store.Demo(), t.TempDir(), rules, nil)
	o.ExtraArgs = append(o.ExtraArgs, "--log-net-log="+netLog, "--net-log-capture-mode=Everything")
	h := launch(t, o)
	closed := false
	defer func() {
		if !closed {
			closeHost(t, h)
		}
	}()
	tab := newTab(t, h)
	ctx := testCtx(t)
	mustDo(t, "open a store page", tab.Navigate(ctx, "https://www.metro.ca/en"))

	cands := eval(t, tab, rtcScript, map[string]any{"hosts": []string{"127.0.0.1", "localhost", "webrtc.probe.example"}, "port": sink.port})
	t.Logf("WebRTC candidates gathered: %v", cands)
	if list, _ := cands.([]any); len(list) != 0 {
		// A host candidate is a UDP socket the page holds: the way out.
		t.Errorf("WebRTC gathered candidates %v: it may only use proxied connections, and has none", list)
	}

	got := eval(t, tab, `async ({port}) => {
  const r = {};
  const bounded = (p) => Promise.race([p, new Promise(res => setTimeout(() => res('pending'), 10000))]);
  for (const u of ['https://127.0.0.1:' + port + '/', 'https://webtransport.probe.example:' + port + '/']) {
    if (typeof WebTransport === 'undefined') { r['webtransport'] = 'absent'; break; }
    try { const wt = new WebTransport(u); r['webtransport ' + u] = await bounded(wt.ready.then(() => 'open', e => 'refused: ' + e)); } catch (e) { r['webtransport ' + u] = 'threw: ' + e; }
  }
  // QUIC: the Alt-Svc offer, then requests that could take it up.
  for (let i = 0; i < 4; i++) { try { await fetch('/altsvc?' + i); } catch (e) {} }
  for (const [rel, href] of [['dns-prefetch', '//dnsprefetch.probe.example/'], ['preconnect', 'https://preconnect.probe.example/'], ['preconnect', 'https://127.0.0.1:' + port + '/']]) {
    const l = document.createElement('link'); l.rel = rel; l.href = href; document.head.appendChild(l);
  }
  const a = document.createElement('a'); a.href = 'https://anchor.probe.example/'; a.textContent = 'a link'; document.body.appendChild(a);
  try { await fetch('https://fetch.probe.example/'); } catch (e) {}
  for (const api of ['TCPSocket', 'UDPSocket', 'TCPServerSocket']) {
    if (typeof window[api] === 'undefined') { r[api] = 'absent'; continue; }
    try { const s = new window[api]({remoteAddress: '127.0.0.1', remotePort: port}); r[api] = await bounded(s.opened.then(() => 'open', e => 'refused: ' + e)); } catch (e) { r[api] = 'threw: ' + e; }
  }
  return r;
}`, map[string]any{"port": sink.port})
	b, _ := json.Marshal(got)
	t.Logf("the page's other attempts: %s", b)
	if m, _ := got.(map[string]any); m != nil {
		for k, v := range m {
			if v == "open" {
				t.Errorf("%s opened", k)
			}
		}
		for _, api := range []string{"TCPSocket", "UDPSocket", "TCPServerSocket"} {
			if m[api] != "absent" {
				t.Errorf("direct sockets: %s is %v, want absent from a web page", api, m[api])
			}
		}
	}
	// A top-level navigation to a foreign name: the tab guard stops it.
	_, _ = tab.page.Evaluate(`() => { location.href = 'https://navigate.probe.example/'; }`)
	mustDo(t, "open a store page again", tab.Navigate(ctx, "https://www.metro.ca/en/after"))

	closeHost(t, h) // the net log is complete once Chromium has exited
	closed = true
	for _, s := range []*portSink{sink, siteSink} {
		if r := s.reached(); r != "" {
			t.Errorf("a page reached a listener around the proxy: %s", r)
		}
	}
	checkNetLog(t, netLog, sink.port)
}

// checkNetLog reads Chromium's net log and fails on any host resolution of
// a *.probe.example name or a UDP socket towards the sink's port. It first
// makes sure the log recorded the test's page (a log that holds nothing
// would prove nothing).
func checkNetLog(t *testing.T, path string, port int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the net log: %v", err)
	}
	var nl struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int            `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &nl); err != nil {
		t.Fatalf("the net log is not complete JSON: %v", err)
	}
	names := map[int]string{}
	for k, v := range nl.Constants.LogEventTypes {
		names[v] = k
	}
	sawPage := false
	var bad []string
	for _, e := range nl.Events {
		p, _ := json.Marshal(e.Params)
		ps := string(p)
		name := names[e.Type]
		if strings.Contains(ps, "https://www.metro.ca/en") {
			sawPage = true
		}
		switch {
		case strings.HasPrefix(name, "HOST_RESOLVER") && strings.Contains(ps, "probe.example"):
			bad = append(bad, name+" "+ps)
		case strings.HasPrefix(name, "UDP_") && strings.Contains(ps, fmt.Sprintf(":%d", port)):
			bad = append(bad, name+" "+ps)
		}
	}
	if !sawPage {
		t.Fatalf("the net log (%d events) does not show the test's page: it proves nothing", len(nl.Events))
	}
	if len(bad) > 0 {
		t.Errorf("Chromium's network stack acted on the page's names or the sink's port outside the proxy:\n%s", strings.Join(bad, "\n"))
	}
}
