package httpsource

import (
	"net/url"
	"strings"
	"sync"
)

// redactor hides credentials in texts that leave the host: error messages,
// body excerpts and logs. It holds the configured secrets and the access
// tokens obtained (the last few: tokens rotate).
type redactor struct {
	mu      sync.RWMutex
	secrets []string
	tokens  []string
}

// minSecret is the shortest value redacted: shorter ones would redact
// ordinary text ("on", "1").
const minSecret = 4

const maxTokens = 4

func (r *redactor) add(s string) {
	if len(s) < minSecret {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, s)
	if q := url.QueryEscape(s); q != s { // as it travels in a query
		r.secrets = append(r.secrets, q)
	}
}

func (r *redactor) addToken(s string) {
	if len(s) < minSecret {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.tokens {
		if t == s {
			return
		}
	}
	r.tokens = append(r.tokens, s)
	if len(r.tokens) > maxTokens {
		r.tokens = r.tokens[1:]
	}
}

// redact replaces every secret in s with [redacted].
func (r *redactor) redact(s string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, list := range [][]string{r.secrets, r.tokens} {
		for _, v := range list {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}
