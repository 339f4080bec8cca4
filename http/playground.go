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

func (s *Server) index(w http.ResponseWriter, r *http.Request) error {
	b, err := page.ReadFile("static/index.html")
	if err != nil {
		return errorf(http.StatusInternalServerError, CodeInternal, "the index page is missing from this build")
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	writeText(w, "text/html; charset=utf-8", b)
	return nil
}
