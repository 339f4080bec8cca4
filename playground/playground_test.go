package playground

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/codemode/codemode/examples/scripts"
)

// get serves one request of the playground and returns the response with
// its body.
func get(t *testing.T, h http.Handler, method string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, "/", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

var (
	inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	inlineStyle  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	examplesData = regexp.MustCompile(`(?s)<script type="application/json" id="examples">(.*?)</script>`)
)

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// cspDirective returns the sources of one directive of a CSP.
func cspDirective(csp, name string) []string {
	for _, d := range strings.Split(csp, ";") {
		f := strings.Fields(d)
		if len(f) > 0 && f[0] == name {
			return f[1:]
		}
	}
	return nil
}

func TestPage(t *testing.T) {
	h := Handler()
	resp, body := get(t, h, http.MethodGet, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	for _, h := range []string{"X-Content-Type-Options", "Referrer-Policy", "ETag", "Cache-Control"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	if !strings.Contains(body, "<title>codemode playground</title>") {
		t.Error("the page has no title")
	}
	if strings.Contains(body, `<script src=`) || strings.Contains(body, `<link rel="stylesheet"`) {
		t.Error("a linked script or stylesheet was left in the page: the route serves only /")
	}

	// The CSP admits exactly the page's own inline scripts and styles.
	csp := resp.Header.Get("Content-Security-Policy")
	for _, c := range []struct {
		directive string
		re        *regexp.Regexp
		min       int
	}{
		{"script-src", inlineScript, 5},
		{"style-src", inlineStyle, 1},
	} {
		var want []string
		for _, m := range c.re.FindAllStringSubmatch(body, -1) {
			want = append(want, cspHash(m[1]))
		}
		got := cspDirective(csp, c.directive)
		if len(want) < c.min || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s %v, want the hashes of the %d inline elements %v", c.directive, got, len(want), want)
		}
	}
	for _, d := range []string{"default-src 'none'", "connect-src 'self'", "img-src data:", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("CSP %q lacks %q", csp, d)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q allows unsafe sources", csp)
	}

	// Every example program is offered, with its code and leading comment.
	m := examplesData.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no examples data block")
	}
	var got []example
	if err := json.Unmarshal([]byte(m[1]), &got); err != nil {
		t.Fatalf("examples data: %v", err)
	}
	files, err := fs.Glob(scripts.FS, "*.[jt]s")
	if err != nil || len(files) == 0 {
		t.Fatalf("embedded examples %v (%v)", files, err)
	}
	if len(got) != len(files) {
		t.Fatalf("%d examples on the page, %d embedded", len(got), len(files))
	}
	for i, ex := range got {
		code, err := fs.ReadFile(scripts.FS, ex.Name)
		if err != nil || string(code) != ex.Code {
			t.Errorf("example %s: code differs from the file (%v)", ex.Name, err)
		}
		if ex.Summary == "" {
			t.Errorf("example %s: no summary", ex.Name)
		}
		if i > 0 && got[i-1].Name >= ex.Name {
			t.Errorf("examples not in name order: %s before %s", got[i-1].Name, ex.Name)
		}
	}
}

func TestPageRequests(t *testing.T) {
	h := Handler()
	first, body := get(t, h, http.MethodGet, nil)
	etag := first.Header.Get("ETag")
	tests := []struct {
		name       string
		method     string
		header     map[string]string
		status     int
		wantBody   bool
		wantHeader map[string]string
	}{
		{"GET", http.MethodGet, nil, http.StatusOK, true, map[string]string{"ETag": etag}},
		{"HEAD has no body", http.MethodHead, nil, http.StatusOK, false, map[string]string{"ETag": etag}},
		{"a matching If-None-Match is a 304", http.MethodGet, map[string]string{"If-None-Match": etag}, http.StatusNotModified, false, nil},
		{"a stale If-None-Match gets the page", http.MethodGet, map[string]string{"If-None-Match": `"stale"`}, http.StatusOK, true, nil},
		{"POST is not allowed", http.MethodPost, nil, http.StatusMethodNotAllowed, false, map[string]string{"Allow": "GET, HEAD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := get(t, h, tt.method, tt.header)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.wantBody != (b == body) {
				t.Errorf("body of %d bytes; want the page: %v", len(b), tt.wantBody)
			}
			for k, v := range tt.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	const index = `<html><head><link rel="stylesheet" href="a.css"></head><body>` +
		`<script type="application/json" id="examples"></script><script src="a.js"></script></body></html>`
	examples := fstest.MapFS{"one.ts": {Data: []byte("// One.\nreturn 1\n")}}
	assets := func(files map[string]string) fstest.MapFS {
		m := fstest.MapFS{}
		for k, v := range files {
			m["static/"+k] = &fstest.MapFile{Data: []byte(v)}
		}
		return m
	}
	tests := []struct {
		name     string
		assets   fstest.MapFS
		examples fstest.MapFS
		want     string // in the error; "" means success
	}{
		{"complete", assets(map[string]string{"index.html": index, "a.css": "p{}", "a.js": "1"}), examples, ""},
		{"no index", assets(map[string]string{"a.css": "p{}", "a.js": "1"}), examples, "index.html"},
		{"a linked script is missing", assets(map[string]string{"index.html": index, "a.css": "p{}"}), examples, "a.js"},
		{"a script would end its element", assets(map[string]string{"index.html": index, "a.css": "p{}", "a.js": `"</SCRIPT>"`}), examples, "a.js"},
		{"a script has an HTML comment opener", assets(map[string]string{"index.html": index, "a.css": "p{}", "a.js": `"<!--"`}), examples, "a.js"},
		{"a style would end its element", assets(map[string]string{"index.html": index, "a.css": "</style>", "a.js": "1"}), examples, "a.css"},
		{"no script", assets(map[string]string{"index.html": strings.Replace(index, `<script src="a.js"></script>`, "", 1), "a.css": "p{}"}), examples, "no script"},
		{"no examples placeholder", assets(map[string]string{"index.html": strings.Replace(index, `id="examples"`, `id="x"`, 1), "a.css": "p{}", "a.js": "1"}), examples, "placeholder"},
		{"no examples", assets(map[string]string{"index.html": index, "a.css": "p{}", "a.js": "1"}), fstest.MapFS{}, "no example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := build(tt.assets, tt.examples)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(p.body), `"summary":"One."`) {
					t.Errorf("page %s lacks the example", p.body)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestBrokenPage(t *testing.T) {
	resp, body := get(t, brokenPage{io.ErrUnexpectedEOF}, http.MethodGet, nil)
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "unexpected EOF") {
		t.Fatalf("status %d, body %q", resp.StatusCode, body)
	}
}

func TestLeadingComment(t *testing.T) {
	tests := []struct{ code, want string }{
		{"// One line.\nreturn 1", "One line."},
		{"// First,\n//\n// second.\nconst x = 1 // not this", "First, second."},
		{"  // indented\n", "indented"},
		{"return 1 // trailing", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := leadingComment(tt.code); got != tt.want {
			t.Errorf("leadingComment(%q) = %q, want %q", tt.code, got, tt.want)
		}
	}
}
