package httpapi

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"strings"
)

// Browsers cannot be used against the service. A page of another site can
// make a visitor's browser send requests to a server on the visitor's
// machine (or network), and with DNS rebinding even read the answers: so
//
//   - when the server listens on loopback, every request must name a
//     loopback host (localhost, 127.0.0.1, [::1], with any port) or one of
//     server.allowed_hosts; a page on a rebound name is refused (checkHost);
//   - a state-changing request (/v1 writes, and every /mcp request, as the
//     MCP specification requires) from a page of another origin is refused:
//     Sec-Fetch-Site other than same-origin or none, or an Origin whose host
//     is not the request's, unless it is one of server.allowed_origins
//     (checkOrigin, with net/http's CrossOriginProtection);
//   - a request body on a JSON endpoint must say it is JSON: a page can send
//     text/plain, form or multipart bodies cross-origin without asking
//     first, never application/json (checkContentType).
//
// The playground is served by the same origin and sends JSON, so it passes
// all three. Clients that are not browsers send no Origin or Sec-Fetch-Site
// and are not affected, except that they must label their JSON.

// crossSite holds the settings of the three checks.
type crossSite struct {
	protect *http.CrossOriginProtection // with server.allowed_origins trusted
	hosts   map[string]bool             // server.allowed_hosts, lower case
}

func newCrossSite(origins, hosts []string) (*crossSite, error) {
	c := &crossSite{protect: http.NewCrossOriginProtection(), hosts: make(map[string]bool, len(hosts))}
	for i, o := range origins {
		if err := c.protect.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("config: server.allowed_origins[%d]: %w", i, err)
		}
	}
	for _, h := range hosts {
		c.hosts[strings.ToLower(strings.TrimSuffix(h, "."))] = true
	}
	return c, nil
}

// checkHost refuses, while the server listens on loopback, a request whose
// Host is not a loopback name or an allowed host (DNS rebinding). It runs
// before every route.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.loopback.Load() && !s.crossSite.hostAllowed(r.Host) {
			s.writeError(w, errorf(http.StatusForbidden, CodeHostNotAllowed,
				"the Host %q is not a loopback name, and this server listens on loopback only (a DNS-rebinding page would look like this); use localhost or 127.0.0.1, or add the name to server.allowed_hosts", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a Host header names this machine's loopback
// interface or an allowed host.
func (c *crossSite) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if host == "localhost" || c.hosts[host] || c.hosts["["+host+"]"] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkOrigin refuses cross-origin browser requests: state-changing ones
// everywhere it is mounted, and with everyMethod set (/mcp) the safe methods
// too.
func (s *Server) checkOrigin(everyMethod bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			checked := r
			if everyMethod && !isWrite(r.Method) {
				// CrossOriginProtection lets safe methods through; ask as for a POST.
				checked = r.WithContext(r.Context())
				checked.Method = http.MethodPost
			}
			if err := s.crossSite.protect.Check(checked); err != nil {
				s.writeError(w, errorf(http.StatusForbidden, CodeCrossOrigin, "%s", crossOriginMessage(r)))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// crossOriginMessage says why a request was taken for a cross-origin one.
func crossOriginMessage(r *http.Request) string {
	const fix = "; a page of another origin may not use this API (list trusted origins in server.allowed_origins)"
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		origin := r.Header.Get("Origin")
		if origin == "" {
			origin = "another origin"
		}
		return fmt.Sprintf("cross-origin request refused: the browser says it comes from %s (Sec-Fetch-Site: %s)%s", origin, site, fix)
	}
	return fmt.Sprintf("cross-origin request refused: Origin %q is not this server's origin (Host %q)%s", r.Header.Get("Origin"), r.Host, fix)
}

// checkContentType refuses a write whose body is not labelled as JSON with
// 415. A write without a body (and without a Content-Type) passes.
func (s *Server) checkContentType(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWrite(r.Method) {
			ct := r.Header.Get("Content-Type")
			switch {
			case ct == "" && r.ContentLength == 0:
			case ct == "":
				s.writeError(w, errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
					"the request body has no Content-Type: send it as application/json"))
				return
			case !isJSONType(ct):
				s.writeError(w, errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
					"Content-Type %q is not JSON: send the body as application/json", ct))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isWrite reports whether a method may change state.
func isWrite(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// isJSONType reports whether a Content-Type is application/json or an
// application/*+json type, with any parameters.
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json"))
}

// isLoopbackAddr reports whether a listener's address is on a loopback
// interface.
func isLoopbackAddr(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
