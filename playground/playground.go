package playground

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codemode/codemode/examples/scripts"
)

// static holds the page's sources: index.html and the CSS and JavaScript
// files it links.
//
//go:embed static
var static embed.FS

// Handler returns the playground: an http.Handler that answers GET and HEAD
// with the page (and 405 otherwise), whatever path it is mounted at. The
// page is assembled once per process; it carries an ETag, so a browser
// revalidates it cheaply. Should the embedded sources be unusable (a broken
// build), every request gets a 500 that says so.
func Handler() http.Handler {
	p, err := load()
	if err != nil {
		slog.Error("playground: the page could not be assembled", "err", err)
		return brokenPage{err}
	}
	return p
}

var load = sync.OnceValues(func() (*page, error) { return build(static, scripts.FS) })

// page is the assembled document with the headers it is served with.
type page struct {
	body []byte
	etag string
	csp  string
}

func (p *page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the playground page answers GET and HEAD only", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", p.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", p.etag)
	// ServeContent answers If-None-Match with a 304 and HEAD without a body.
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(p.body))
}

// brokenPage answers every request with the reason the page is missing.
type brokenPage struct{ err error }

func (b brokenPage) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "the playground page is broken in this build: "+b.err.Error(), http.StatusInternalServerError)
}

// The tags of index.html that build replaces: a stylesheet or script of
// static/ (by a plain file name) and the placeholder of the examples.
var (
	styleTag       = regexp.MustCompile(`<link rel="stylesheet" href="([a-z0-9_-]+\.css)">`)
	scriptTag      = regexp.MustCompile(`<script src="([a-z0-9_-]+\.js)"></script>`)
	examplesTag    = `<script type="application/json" id="examples"></script>`
	examplesPrefix = `<script type="application/json" id="examples">`
)

// example is one example program as the page receives it.
type example struct {
	Name    string `json:"name"`    // the file name, e.g. chain.ts
	Summary string `json:"summary"` // the file's leading comment, on one line
	Code    string `json:"code"`
}

// build assembles the page from index.html in assets/static: each linked
// stylesheet and script inline (their hashes make up the CSP), and the
// example programs of examples (the *.ts and *.js files at its top) as a
// JSON data block.
func build(assets, examples fs.FS) (*page, error) {
	src, err := fs.ReadFile(assets, "static/index.html")
	if err != nil {
		return nil, err
	}
	html := string(src)
	var styleHashes, scriptHashes []string
	var inlineErr error
	inline := func(re *regexp.Regexp, tag string, hashes *[]string) {
		html = re.ReplaceAllStringFunc(html, func(m string) string {
			name := re.FindStringSubmatch(m)[1]
			data, err := fs.ReadFile(assets, path.Join("static", name))
			if err != nil {
				inlineErr = errors.Join(inlineErr, err)
				return m
			}
			text := string(data)
			if strings.Contains(strings.ToLower(text), "</"+tag) || (tag == "script" && strings.Contains(text, "<!--")) {
				inlineErr = errors.Join(inlineErr, fmt.Errorf("static/%s: contains %q or \"<!--\", which would end or confuse its inline <%s> element", name, "</"+tag, tag))
				return m
			}
			sum := sha256.Sum256(data)
			*hashes = append(*hashes, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
			return "<" + tag + ">" + text + "</" + tag + ">"
		})
	}
	inline(styleTag, "style", &styleHashes)
	inline(scriptTag, "script", &scriptHashes)
	if inlineErr != nil {
		return nil, inlineErr
	}
	if len(styleHashes) == 0 || len(scriptHashes) == 0 {
		return nil, errors.New("static/index.html: links no stylesheet or no script")
	}

	list, err := readExamples(examples)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(list) // escapes <, > and &: cannot end the element
	if err != nil {
		return nil, err
	}
	if n := strings.Count(html, examplesTag); n != 1 {
		return nil, fmt.Errorf("static/index.html: want one %s placeholder, found %d", examplesTag, n)
	}
	html = strings.Replace(html, examplesTag, examplesPrefix+string(data)+"</script>", 1)

	body := []byte(html)
	sum := sha256.Sum256(body)
	csp := strings.Join([]string{
		"default-src 'none'",
		"script-src " + strings.Join(scriptHashes, " "),
		"style-src " + strings.Join(styleHashes, " "),
		"img-src data:",
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
	return &page{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, csp: csp}, nil
}

// readExamples lists the example programs in file-name order.
func readExamples(fsys fs.FS) ([]example, error) {
	var out []example
	for _, pattern := range []string{"*.ts", "*.js"} {
		names, err := fs.Glob(fsys, pattern)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			code, err := fs.ReadFile(fsys, name)
			if err != nil {
				return nil, err
			}
			out = append(out, example{Name: name, Summary: leadingComment(string(code)), Code: string(code)})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no example programs are embedded")
	}
	slices.SortFunc(out, func(a, b example) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// leadingComment joins the // lines that open a program into one line.
func leadingComment(code string) string {
	var parts []string
	for _, line := range strings.Split(code, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "//") {
			break
		}
		if t := strings.TrimSpace(strings.TrimPrefix(line, "//")); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}
