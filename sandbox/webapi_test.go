package sandbox

import (
	"context"
	"testing"
)

func TestURLAndURLSearchParams(t *testing.T) {
	p, err := Compile(`
		const u = new URL("https://example.com/a/b?x=1&y=two#frag")
		const q = new URLSearchParams({q: "code mode", page: "2"})
		q.append("tag", "a&b")
		u.searchParams.set("x", "42")
		return [u.hostname, u.pathname, u.searchParams.get("y"), u.toString(), q.toString(), typeof URL.prototype.constructor]`, JavaScript)
	if err != nil {
		t.Fatal(err)
	}
	res := Run(context.Background(), p, nil, Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := `["example.com","/a/b","two","https://example.com/a/b?x=42&y=two#frag","q=code+mode&page=2&tag=a%26b","function"]`
	if string(res.Value) != want {
		t.Fatalf("got  %s\nwant %s", res.Value, want)
	}
}

func TestURLGlobalsAreOrdinary(t *testing.T) {
	// Programs may replace them, and doing so does not reach the next run.
	p, err := Compile(`URL = 1; globalThis.URLSearchParams = 2; return [URL, URLSearchParams, "require" in globalThis]`, JavaScript)
	if err != nil {
		t.Fatal(err)
	}
	if res := Run(context.Background(), p, nil, Options{}); res.Err != nil || string(res.Value) != `[1,2,false]` {
		t.Fatalf("%v %s", res.Err, res.Value)
	}
	q, _ := Compile(`return typeof URL`, JavaScript)
	if res := Run(context.Background(), q, nil, Options{}); string(res.Value) != `"function"` {
		t.Fatalf("%s", res.Value)
	}
}
