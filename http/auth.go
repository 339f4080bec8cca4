package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/httprate"

	"github.com/codemode/codemode/config"
)

// apiKey is one configured key: the SHA-256 of the secret and the scopes it
// may use. The secret itself is never held.
type apiKey struct {
	digest [sha256.Size]byte
	name   string          // "key:" and the first 16 hex digits of the digest: for logs and rate limits
	scopes map[string]bool // exactly the configured scopes; descendants are not implied
}

// keyring is the configured keys; empty means the API is open (and the
// server listens on loopback only unless told otherwise).
type keyring []apiKey

func newKeyring(keys []config.APIKey) (keyring, error) {
	out := make(keyring, 0, len(keys))
	for i, k := range keys {
		b, err := hex.DecodeString(strings.ToLower(k.SHA256))
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("config: api_keys[%d].sha256: want 64 hex digits (the SHA-256 of the key)", i)
		}
		ak := apiKey{scopes: make(map[string]bool, len(k.Scopes))}
		copy(ak.digest[:], b)
		ak.name = "key:" + hex.EncodeToString(b[:8])
		for _, s := range k.Scopes {
			ak.scopes[s] = true
		}
		out = append(out, ak)
	}
	return out, nil
}

// match finds the key whose digest is the SHA-256 of secret. It compares
// with every configured digest in constant time, so the time taken does not
// depend on which key (if any) matched or on how much of a digest did.
func (k keyring) match(secret string) *apiKey {
	sum := sha256.Sum256([]byte(secret))
	var found *apiKey
	for i := range k {
		if subtle.ConstantTimeCompare(sum[:], k[i].digest[:]) == 1 && found == nil {
			found = &k[i]
		}
	}
	return found
}

// identity is who made a request, as the identify middleware found it.
type identity struct {
	open      bool    // no keys are configured: every scope is usable
	key       *apiKey // the matching key; nil when none matched
	presented bool    // an Authorization header was sent
}

type identityKey struct{}

// ScopeAllowed reports whether the request whose context this is may use
// scope: always when the server has no API keys, otherwise when the
// request's key lists the scope. It is false for a context that did not come
// from a request served under a Server's authentication (so handlers mounted
// elsewhere fail closed). Handlers mounted through Options (the MCP endpoint)
// use it to keep a key inside its scopes; a scope it may not use must look
// exactly like one that does not exist.
func ScopeAllowed(ctx context.Context, scope string) bool {
	id, _ := ctx.Value(identityKey{}).(*identity)
	switch {
	case id == nil:
		return false
	case id.open:
		return true
	case id.key == nil:
		return false
	}
	return id.key.scopes[scope]
}

// tenant is whose a request is for the pools shared among API keys (MCP
// sessions, event streams): its key's name, or "" for every request of a
// server without keys.
func tenant(ctx context.Context) string {
	if id, _ := ctx.Value(identityKey{}).(*identity); id != nil && id.key != nil {
		return id.key.name
	}
	return ""
}

// allowedScopes reports the scopes the request may use: all of them (any
// is true) when the server has no API keys, else exactly its key's, sorted.
func allowedScopes(ctx context.Context) (scopes []string, any bool) {
	id, _ := ctx.Value(identityKey{}).(*identity)
	switch {
	case id == nil:
		return nil, false
	case id.open:
		return nil, true
	case id.key == nil:
		return nil, false
	}
	for s := range id.key.scopes {
		scopes = append(scopes, s)
	}
	slices.Sort(scopes)
	return scopes, false
}

// identify records the request's identity for the rate limiter and the
// authenticator. It never rejects: an unknown key is limited by the client's
// address like an anonymous request, so guessing keys is rate limited too.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := &identity{open: len(s.keys) == 0}
		if h := r.Header.Get("Authorization"); h != "" {
			id.presented = true
			if secret, ok := bearer(h); ok && !id.open {
				id.key = s.keys.match(secret)
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	})
}

// authenticate rejects requests without a valid key when keys are
// configured (401, with WWW-Authenticate).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := r.Context().Value(identityKey{}).(*identity)
		if id == nil || (!id.open && id.key == nil) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="codemode"`)
			msg := "this server needs an API key: send Authorization: Bearer <key>"
			if id != nil && id.presented {
				msg = "the API key is not valid"
			}
			s.writeError(w, errorf(http.StatusUnauthorized, CodeUnauthorized, "%s", msg))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer extracts the secret of an "Authorization: Bearer <secret>" header.
func bearer(h string) (string, bool) {
	scheme, secret, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	secret = strings.TrimSpace(secret)
	return secret, secret != ""
}

// rateKey is what a request is rate limited by: its API key when it has a
// valid one, otherwise the client's address (IPv6 by its /64).
func rateKey(r *http.Request) (string, error) {
	if id, _ := r.Context().Value(identityKey{}).(*identity); id != nil && id.key != nil {
		return id.key.name, nil
	}
	return "ip:" + httprate.CanonicalizeIP(clientIP(r)), nil
}

// clientIP is the address of the peer. Proxy headers are not trusted: a
// deployment behind a proxy rate limits per key.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// CheckListen reports whether the service may listen on addr (HOST:PORT)
// with cfg. Without API keys the API is open to anyone who can connect, so
// the host must be a loopback address (or "localhost") unless
// server.allow_non_loopback is set; loopbackOnly reports that restriction so
// the caller can say so at start.
func CheckListen(addr string, cfg config.Config) (loopbackOnly bool, err error) {
	if len(cfg.APIKeys) > 0 {
		return false, nil
	}
	if cfg.Server.AllowNonLoopback {
		return false, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true, fmt.Errorf("listen: want HOST:PORT, got %q", addr)
	}
	if !isLoopback(host) {
		shown := host
		if shown == "" {
			shown = "every interface"
		}
		return true, fmt.Errorf("listen: %s is not a loopback address, and with no api_keys configured the API would be open to anyone who can connect; configure api_keys, listen on 127.0.0.1, or set server.allow_non_loopback: true", shown)
	}
	return true, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
