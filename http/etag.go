package httpapi

import (
	"net/http"
	"strings"
)

// notModified sets the reply's ETag (and Cache-Control: no-cache, so that
// a client revalidates) and, when the request's If-None-Match matches it,
// answers 304 and reports true: the caller then writes nothing more.
func notModified(w http.ResponseWriter, r *http.Request, etag string) bool {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	if !etagMatches(r.Header.Get("If-None-Match"), etag) {
		return false
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// etagMatches reports whether an If-None-Match header matches etag, by weak
// comparison (RFC 9110 §13.1.2): "*" matches anything, W/ prefixes are
// ignored.
func etagMatches(header, etag string) bool {
	for _, candidate := range strings.Split(header, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || strings.TrimPrefix(candidate, "W/") == etag {
			return true
		}
	}
	return false
}

// writeText writes body whole with a 200, as contentType.
func writeText(w http.ResponseWriter, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
