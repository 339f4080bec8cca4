package httpsource

import (
	"net/url"
	"testing"

	"github.com/codemode/codemode/openapi"
	"github.com/codemode/codemode/registry/frozen"
)

// TestBuildPlacesEveryArgument: path parameters are escaped into the
// template (dot segments too), query parameters follow their style, and the
// URL keeps the base's origin and path whatever the arguments hold.
func TestBuildPlacesEveryArgument(t *testing.T) {
	base, _ := url.Parse("https://api.example.com/v2/")
	op := &openapi.Operation{Method: "GET", Path: "/repos/{owner}/{repo}/items", Inputs: []openapi.Input{
		{Name: "owner", In: openapi.InPath, Style: "simple"},
		{Name: "repo", In: openapi.InPath, Style: "simple"},
		{Name: "tags", In: openapi.InQuery, Style: "form", Explode: true},
		{Name: "ids", In: openapi.InQuery, Style: "form"},
		{Name: "pipes", In: openapi.InQuery, Style: "pipeDelimited"},
		{Name: "filter", In: openapi.InQuery, Style: "deepObject", Explode: true},
		{Name: "X-Trace", In: openapi.InHead, Style: "simple"},
	}}
	for _, tc := range []struct{ args, url, trace string }{
		{`{"owner": "a b", "repo": "x/y?z#w", "tags": ["t1", "t2"], "ids": [1, 2], "pipes": ["p", "q"], "filter": {"state": "open", "n": 3}, "X-Trace": "abc"}`,
			"https://api.example.com/v2/repos/a%20b/x%2Fy%3Fz%23w/items?filter%5Bn%5D=3&filter%5Bstate%5D=open&ids=1%2C2&pipes=p%7Cq&tags=t1&tags=t2", "abc"},
		{`{"owner": "..", "repo": "."}`, "https://api.example.com/v2/repos/%2E%2E/%2E/items", ""},
		{`{"owner": "@evil.com", "repo": "//evil.com"}`, "https://api.example.com/v2/repos/@evil.com/%2F%2Fevil.com/items", ""},
	} {
		r, err := build(base, op, frozen.MustParse(tc.args))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if r.url.String() != tc.url || r.url.Host != "api.example.com" || r.header.Get("X-Trace") != tc.trace {
			t.Errorf("%s:\n got %s (trace %q)\nwant %s", tc.args, r.url, r.header.Get("X-Trace"), tc.url)
		}
	}
	if _, err := build(base, op, frozen.MustParse(`{"owner": "a", "repo": "b", "X-Trace": "a\r\nInjected: 1"}`)); err == nil {
		t.Error("a header value with a line break was accepted")
	}
}

// TestBuildBodies: JSON fields, a form, a whole non-object body.
func TestBuildBodies(t *testing.T) {
	base, _ := url.Parse("http://h")
	fields := []openapi.Input{{Name: "name", In: openapi.InField}, {Name: "tags", In: openapi.InField}}
	for _, tc := range []struct {
		contentType string
		inputs      []openapi.Input
		args, body  string
	}{
		{"application/json", fields, `{"name": "n", "tags": ["a"]}`, `{"name":"n","tags":["a"]}`},
		{"application/x-www-form-urlencoded", fields, `{"name": "n m", "tags": ["a", "b"]}`, `name=n+m&tags=a&tags=b`},
		{"application/json", []openapi.Input{{Name: "body", In: openapi.InBody}}, `{"body": [1, 2]}`, `[1,2]`},
		{"text/plain", []openapi.Input{{Name: "body", In: openapi.InBody}}, `{"body": "raw text"}`, `raw text`},
	} {
		op := &openapi.Operation{Method: "POST", Path: "/x", Inputs: tc.inputs, ContentType: tc.contentType}
		r, err := build(base, op, frozen.MustParse(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		if string(r.body) != tc.body || r.contentType != tc.contentType {
			t.Errorf("%s %s: body %s (%s), want %s", tc.contentType, tc.args, r.body, r.contentType, tc.body)
		}
	}
}

// TestRedactor: secrets and their query-escaped forms are hidden; short
// values are not (they would redact ordinary text).
func TestRedactor(t *testing.T) {
	var r redactor
	r.add("s3cret+key/1")
	r.add("on")
	r.addToken("tok-123456")
	got := r.redact("key s3cret+key/1, in a query s3cret%2Bkey%2F1, token tok-123456, on")
	if got != "key [redacted], in a query [redacted], token [redacted], on" {
		t.Errorf("redacted %q", got)
	}
}

// TestRenderBinary: an image value is an image block, other binary an
// embedded resource; anything else renders as the default.
func TestRenderBinary(t *testing.T) {
	img := render(frozen.Value{}, frozen.MustParse(`{"mimeType": "image/png", "data": "iVBORw0K"}`))
	if len(img) != 1 || img[0].Type != "image" || img[0].MimeType != "image/png" || img[0].Data != "iVBORw0K" {
		t.Errorf("image: %+v", img)
	}
	pdf := render(frozen.Value{}, frozen.MustParse(`{"mimeType": "application/pdf", "data": "JVBERi0="}`))
	if len(pdf) != 1 || pdf[0].Type != "resource" || pdf[0].Resource.MimeType != "application/pdf" || *pdf[0].Resource.Blob != "JVBERi0=" {
		t.Errorf("pdf: %+v", pdf)
	}
	if txt := render(frozen.Value{}, frozen.MustParse(`"hello"`)); len(txt) != 1 || txt[0].Type != "text" || txt[0].Text != "hello" {
		t.Errorf("text: %+v", txt)
	}
}
