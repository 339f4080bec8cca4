package httpapi

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
)

// openAPIDoc is the OpenAPI 3.1 description of this API, served at GET
// /openapi.json. The tests in openapi_test.go keep it true: every route is
// documented and every documented route served, its examples match its
// schemas, and real replies match the documented ones.
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPIETag names the document's content.
var openAPIETag = func() string {
	sum := sha256.Sum256(openAPIDoc)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}()

// openAPI serves GET /openapi.json, with an ETag; a matching If-None-Match
// gets a 304.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	if notModified(w, r, openAPIETag) {
		return
	}
	writeText(w, "application/json; charset=utf-8", openAPIDoc)
}
