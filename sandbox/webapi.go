package sandbox

import (
	"strconv"
	"strings"

	"github.com/dop251/goja"
	wurl "github.com/nlnwa/whatwg-url/url"
)

// URL and URLSearchParams, as the WHATWG URL Standard defines them (Node's and browsers'
// behaviour): the classes are JavaScript (prelude/url.js); parsing, setters and
// application/x-www-form-urlencoded are Go, through a conformant parser. Both globals are lazy:
// runs that never name them pay nothing.

var urlParser = wurl.NewParser()

// installWebAPIs defines URL and URLSearchParams as lazy globals.
func (r *run) installWebAPIs() error {
	return r.lazyGlobals([]string{"URL", "URLSearchParams"}, func() *goja.Object {
		n := r.natives(map[string]func(goja.FunctionCall) goja.Value{
			"parse":          r.urlParse,
			"set":            r.urlSet,
			"parseQuery":     r.urlParseQuery,
			"serializeQuery": r.urlSerializeQuery,
		})
		return r.prelude("url.js", n).(*goja.Object)
	})
}

// urlRecord is what the classes keep of a URL, in the order of urlFields.
func (r *run) urlRecord(u *wurl.Url) goja.Value {
	return r.rt.ToValue([]any{
		u.Href(false), urlOrigin(u), u.Protocol(), u.Username(), u.Password(),
		u.Host(), u.Hostname(), u.Port(), u.Pathname(), u.Search(), u.Hash(),
	})
}

// urlParse(input, base?) is the URL's record, or null when it does not parse.
func (r *run) urlParse(call goja.FunctionCall) goja.Value {
	input := call.Argument(0).String()
	var u *wurl.Url
	var err error
	if base := call.Argument(1); goja.IsUndefined(base) {
		u, err = urlParser.Parse(input)
	} else {
		var b *wurl.Url
		if b, err = urlParser.Parse(base.String()); err == nil {
			u, err = b.Parse(input)
		}
	}
	if err != nil || u == nil {
		return goja.Null()
	}
	return r.urlRecord(u)
}

// urlSet(href, component, value) applies a setter to the URL at href and returns its record;
// a setter given a value it cannot use leaves the URL as it was, as the standard says.
func (r *run) urlSet(call goja.FunctionCall) goja.Value {
	u, err := urlParser.Parse(call.Argument(0).String())
	if err != nil {
		return goja.Null()
	}
	v := call.Argument(2).String()
	switch call.Argument(1).String() {
	case "protocol":
		u.SetProtocol(v)
	case "username":
		u.SetUsername(v)
	case "password":
		u.SetPassword(v)
	case "host":
		u.SetHost(v)
	case "hostname":
		u.SetHostname(v)
	case "port":
		u.SetPort(v)
	case "pathname":
		u.SetPathname(v)
	case "search":
		u.SetSearch(v)
	case "hash":
		u.SetHash(v)
	}
	return r.urlRecord(u)
}

// urlOrigin is the ASCII serialization of the URL's origin: scheme://host[:port] for the
// special schemes with hosts, the origin of the inner URL for blob:, else "null".
func urlOrigin(u *wurl.Url) string {
	switch u.Scheme() {
	case "http", "https", "ws", "wss", "ftp":
		return u.Scheme() + "://" + u.Host()
	case "blob":
		if inner, err := urlParser.Parse(u.Pathname()); err == nil && (inner.Scheme() == "http" || inner.Scheme() == "https") {
			return urlOrigin(inner)
		}
	}
	return "null"
}

// urlParseQuery(text) is the name-value pairs of application/x-www-form-urlencoded text.
func (r *run) urlParseQuery(call goja.FunctionCall) goja.Value {
	var pairs []any
	for _, part := range strings.Split(call.Argument(0).String(), "&") {
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, "=")
		pairs = append(pairs, []any{formDecode(name), formDecode(value)})
	}
	return r.rt.ToValue(pairs)
}

// urlSerializeQuery(pairs) is the application/x-www-form-urlencoded text of name-value pairs.
func (r *run) urlSerializeQuery(call goja.FunctionCall) goja.Value {
	var b strings.Builder
	o := call.Argument(0).ToObject(r.rt)
	n := int(o.Get("length").ToInteger())
	for i := 0; i < n; i++ {
		pair := o.Get(strconv.Itoa(i)).ToObject(r.rt)
		if i > 0 {
			b.WriteByte('&')
		}
		formEncode(&b, pair.Get("0").String())
		b.WriteByte('=')
		formEncode(&b, pair.Get("1").String())
	}
	return r.rt.ToValue(b.String())
}

// formDecode turns + into a space and percent-decodes bytes; bytes that are not UTF-8 become
// U+FFFD.
func formDecode(s string) string {
	if !strings.ContainsAny(s, "+%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(int(s[i+1])) && isHex(int(s[i+2])):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// formEncode writes s percent-encoded with the application/x-www-form-urlencoded set.
func formEncode(b *strings.Builder, s string) {
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			b.WriteByte('+')
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '*' || c == '-' || c == '.' || c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
}

// webClass reports whether o is an instance of the URL prelude's class name (never of a
// look-alike the program made), once the prelude has been built.
func (r *run) webClass(o *goja.Object, name string) bool {
	exports, ok := r.preludes["url.js"].(*goja.Object)
	if !ok {
		return false
	}
	c, ok := exports.Get(name).(*goja.Object)
	if !ok {
		return false
	}
	proto, ok := c.Get("prototype").(*goja.Object)
	return ok && o.Prototype() == proto
}

// searchParamsPairs is the name-value pairs of a URLSearchParams the prelude made.
func (r *run) searchParamsPairs(o *goja.Object) ([][2]string, bool) {
	exports, ok := r.preludes["url.js"].(*goja.Object)
	if !ok {
		return nil, false
	}
	pairsOf, ok := goja.AssertFunction(exports.Get("pairsOf"))
	if !ok {
		return nil, false
	}
	v, err := pairsOf(goja.Undefined(), o)
	if err != nil || goja.IsUndefined(v) {
		return nil, false
	}
	list := v.ToObject(r.rt)
	n := int(list.Get("length").ToInteger())
	pairs := make([][2]string, 0, n)
	for i := 0; i < n; i++ {
		p := list.Get(strconv.Itoa(i)).ToObject(r.rt)
		pairs = append(pairs, [2]string{p.Get("0").String(), p.Get("1").String()})
	}
	return pairs, true
}
