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

// URL follows the WHATWG URL Standard as Node does; expected values recorded from Node 20.
func TestURLIsWHATWG(t *testing.T) {
	tests := []struct{ src, want string }{
		{`return new URL("../c", "https://ex.com/a/b/").href`, `"https://ex.com/a/c"`},
		{`return new URL("https://ex.com:8443/x").origin`, `"https://ex.com:8443"`},
		{`return new URL("https://ex.com:443/x").href`, `"https://ex.com/x"`},
		{`return [URL.canParse("https://x.y"), URL.canParse("nope"), URL.canParse("/a", "https://b.c")]`, `[true,false,true]`},
		{`const u = new URL("https://a.b/?q=1&r=2"); u.searchParams.append("s", "a b"); return u.href`, `"https://a.b/?q=1&r=2&s=a+b"`},
		{`const u = new URL("https://a.b/p?x=1#h"); u.search = "?y=2&y=3"; return [u.href, u.searchParams.getAll("y")]`, `["https://a.b/p?y=2&y=3#h",["2","3"]]`},
		{`const u = new URL("https://a.b/?q=1"); u.searchParams.delete("q"); return u.href`, `"https://a.b/"`},
		{`const u = new URL("http://u:p@h.com:81/a"); u.port = "80"; u.pathname = "/b c"; u.hash = "x y"; u.hostname = "EX.org"; u.protocol = "https"; return [u.href, u.host]`, `["https://u:p@ex.org/b%20c#x%20y","ex.org"]`},
		{`try { new URL("nope") } catch (e) { return [String(e), e.code, e.input] }`, `["TypeError: Invalid URL","ERR_INVALID_URL","nope"]`},
		{`try { new URL("a", "nope") } catch (e) { return e.message }`, `"Invalid URL"`},
		{`return new URL("https://münchen.de/ä?ö=ü").href`, `"https://xn--mnchen-3ya.de/%C3%A4?%C3%B6=%C3%BC"`},
		{`return new URL("http://[::1]:8080/").host`, `"[::1]:8080"`},
		{`return [new URL("file:///etc/passwd").origin, new URL("data:text/plain,hi").pathname]`, `["null","text/plain,hi"]`},
		{`const p = new URLSearchParams({a: "1", b: "x&y"}); p.sort(); return [p.toString(), [...p], p.size]`, `["a=1&b=x%26y",[["a","1"],["b","x&y"]],2]`},
		{`return new URLSearchParams({q: "é 😀 ~!'()"}).toString()`, `"q=%C3%A9+%F0%9F%98%80+%7E%21%27%28%29"`},
		{`const p = new URLSearchParams("a=b+c&d=%20%zz"); return [p.get("a"), p.get("d")]`, `["b c"," %zz"]`},
		{`const u = new URL("https://a.b/?x=1"); u.href = "https://c.d/?y=2"; return [u.searchParams.get("y"), u.searchParams.get("x")]`, `["2",null]`},
		{`return Object.keys(URL.prototype)`, `["toString","href","origin","protocol","username","password","host","hostname","port","pathname","search","searchParams","hash","toJSON"]`},
		{`return {u: new URL("https://x.y/z")}`, `{"u":"https://x.y/z"}`},
		{`return Object.prototype.toString.call(new URL("https://x"))`, `"[object URL]"`},
	}
	for _, tt := range tests {
		wantValue(t, runJS(t, tt.src, nil), tt.want)
	}
	res := runJS(t, `console.log(new URL("https://ex.com/a?b=1").searchParams, new URL("https://x.y/").origin)`, nil)
	if len(res.Logs) != 1 || res.Logs[0] != "URLSearchParams { 'b' => '1' } https://x.y" {
		t.Fatalf("logs = %q", res.Logs)
	}
}
