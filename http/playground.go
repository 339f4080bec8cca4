package httpapi

import (
	"embed"
	"net/http"
)

// page holds the built-in GET / page: a plain list of the API. A richer
// playground replaces it through Options.Playground.
//
//go:embed static/index.html
var page embed.FS

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	b, err := page.ReadFile("static/index.html")
	if err != nil {
		s.writeError(w, errorf(http.StatusInternalServerError, CodeInternal, "the index page is missing from this build"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
