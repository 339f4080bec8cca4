package sandbox

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
	wurl "github.com/nlnwa/whatwg-url/url"
)

// webAPIs is the platform's Web API module: URL and URLSearchParams, DOM events
// (EventTarget, AbortController, DOMException), TextEncoder and TextDecoder, atob and btoa,
// crypto, structuredClone, performance and ArrayBuffer transfer. Each is a JavaScript prelude
// (prelude/*.js) with the Go natives it needs, installed against the run's platformHost;
// everything a program can reach is a JavaScript value the runtime built, and the natives take
// and return strings, numbers and buffers only. Fields belong to the VM goroutine.
type webAPIs struct {
	h platformHost
	// timers is the run's timer module, for AbortSignal.timeout.
	timers *timers
	// urls is what prelude/url.js returned (the URL classes), once a program read URL or
	// URLSearchParams; nil before.
	urls *goja.Object
}

// URL and URLSearchParams, as the WHATWG URL Standard defines them (Node's and browsers'
// behaviour): the classes are JavaScript (prelude/url.js); parsing, setters and
// application/x-www-form-urlencoded are Go, through a conformant parser. Both globals are lazy:
// runs that never name them pay nothing.

var urlParser = wurl.NewParser()

// installURL defines URL and URLSearchParams as lazy globals.
func (w *webAPIs) installURL() error {
	return lazyGlobals(w.h, []string{"URL", "URLSearchParams"}, func() *goja.Object {
		n := nativesObject(w.h, map[string]func(goja.FunctionCall) goja.Value{
			"parse":          w.urlParse,
			"set":            w.urlSet,
			"parseQuery":     w.urlParseQuery,
			"serializeQuery": w.urlSerializeQuery,
		})
		w.urls = w.h.prelude("url.js", n).(*goja.Object)
		return w.urls
	})
}

// urlRecord is what the classes keep of a URL, in the order of urlFields.
func (w *webAPIs) urlRecord(u *wurl.Url) goja.Value {
	return w.h.runtime().ToValue([]any{
		u.Href(false), urlOrigin(u), u.Protocol(), u.Username(), u.Password(),
		u.Host(), u.Hostname(), u.Port(), u.Pathname(), u.Search(), u.Hash(),
	})
}

// urlParse(input, base?) is the URL's record, or null when it does not parse.
func (w *webAPIs) urlParse(call goja.FunctionCall) goja.Value {
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
	return w.urlRecord(u)
}

// urlSet(href, component, value) applies a setter to the URL at href and returns its record;
// a setter given a value it cannot use leaves the URL as it was, as the standard says.
func (w *webAPIs) urlSet(call goja.FunctionCall) goja.Value {
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
	return w.urlRecord(u)
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
func (w *webAPIs) urlParseQuery(call goja.FunctionCall) goja.Value {
	var pairs []any
	for _, part := range strings.Split(call.Argument(0).String(), "&") {
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, "=")
		pairs = append(pairs, []any{formDecode(name), formDecode(value)})
	}
	return w.h.runtime().ToValue(pairs)
}

// urlSerializeQuery(pairs) is the application/x-www-form-urlencoded text of name-value pairs.
func (w *webAPIs) urlSerializeQuery(call goja.FunctionCall) goja.Value {
	var b strings.Builder
	o := call.Argument(0).ToObject(w.h.runtime())
	n := int(o.Get("length").ToInteger())
	for i := 0; i < n; i++ {
		pair := o.Get(strconv.Itoa(i)).ToObject(w.h.runtime())
		if i > 0 {
			b.WriteByte('&')
		}
		formEncode(&b, pair.Get("0").String())
		b.WriteByte('=')
		formEncode(&b, pair.Get("1").String())
	}
	return w.h.runtime().ToValue(b.String())
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

// class reports whether o is an instance of the URL prelude's class name (never of a
// look-alike the program made), once the prelude has been built.
func (w *webAPIs) class(o *goja.Object, name string) bool {
	exports := w.urls
	if exports == nil {
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
func (w *webAPIs) searchParamsPairs(o *goja.Object) ([][2]string, bool) {
	exports := w.urls
	if exports == nil {
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
	list := v.ToObject(w.h.runtime())
	n := int(list.Get("length").ToInteger())
	pairs := make([][2]string, 0, n)
	for i := 0; i < n; i++ {
		p := list.Get(strconv.Itoa(i)).ToObject(w.h.runtime())
		pairs = append(pairs, [2]string{p.Get("0").String(), p.Get("1").String()})
	}
	return pairs, true
}

// now is the run's clock: milliseconds since the run started, with microsecond resolution.
func (w *webAPIs) now() float64 {
	return float64(w.h.now().Sub(w.h.started()).Microseconds()) / 1000
}

// events returns the DOM events prelude's exports (DOMException, Event, EventTarget, …).
func (w *webAPIs) events() *goja.Object {
	return w.h.prelude("events.js", nativesObject(w.h, map[string]func(goja.FunctionCall) goja.Value{
		"now":        func(goja.FunctionCall) goja.Value { return w.h.runtime().ToValue(w.now()) },
		"setTimeout": w.timers.setTimeout,
		"report": func(call goja.FunctionCall) goja.Value {
			w.h.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception in an event listener: " + w.h.describeThrown(call.Argument(0))})
			return goja.Undefined()
		},
	})).(*goja.Object)
}

func (w *webAPIs) domException() *goja.Object { return w.events().Get("DOMException").(*goja.Object) }

// throwDOMException throws a DOMException named name.
func (w *webAPIs) throwDOMException(message, name string) {
	ctor := w.domException()
	e, err := w.h.runtime().New(ctor, w.h.runtime().ToValue(message), w.h.runtime().ToValue(name))
	must(err)
	panic(e)
}

// bytesOf returns the bytes an ArrayBuffer, typed array or DataView views, sharing its memory.
func (w *webAPIs) bytesOf(v goja.Value, what string) []byte {
	o, ok := v.(*goja.Object)
	if ok {
		if ab, isBuf := o.Export().(goja.ArrayBuffer); isBuf {
			return ab.Bytes()
		}
		if u8, isU8 := o.Export().([]uint8); isU8 {
			return u8
		}
		if buf := o.Get("buffer"); buf != nil {
			if ab, isBuf := buf.Export().(goja.ArrayBuffer); isBuf {
				b := ab.Bytes()
				off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
				if off >= 0 && n >= 0 && off+n <= int64(len(b)) {
					return b[off : off+n]
				}
			}
		}
	}
	panic(w.h.runtime().NewTypeError(what + " must be an ArrayBuffer, a typed array or a DataView"))
}

// checkBytes fails the run when a built-in would allocate more than the run's buffer cap.
func (w *webAPIs) checkBytes(what string, n float64) {
	if n > float64(w.h.memoryCaps().bufferBytes) {
		w.h.overCap(what, n, w.h.memoryCaps().bufferBytes, "bytes", bufferCapDivisor)
	}
}

func (w *webAPIs) encodingNatives() goja.Value {
	return nativesObject(w.h, map[string]func(goja.FunctionCall) goja.Value{
		"encode": func(call goja.FunctionCall) goja.Value {
			s := call.Argument(0)
			w.checkBytes("TextEncoder.encode would allocate", 3*stringLength(s))
			return w.h.runtime().ToValue(w.h.runtime().NewArrayBuffer([]byte(s.String())))
		},
		"encodeInto": func(call goja.FunctionCall) goja.Value {
			dst := w.bytesOf(call.Argument(1), "destination")
			read, written := 0, 0
			for _, c := range call.Argument(0).String() {
				n := utf8.RuneLen(c)
				if written+n > len(dst) {
					break
				}
				utf8.EncodeRune(dst[written:], c)
				written += n
				read += utf16.RuneLen(c)
			}
			return w.h.runtime().NewArray(read, written)
		},
		"decode": func(call goja.FunctionCall) goja.Value {
			b := w.bytesOf(call.Argument(0), "input")
			w.checkBytes("TextDecoder.decode would allocate", 3*float64(len(b)))
			text, pending, ok := decodeText(b, call.Argument(1).String(), call.Argument(2).ToBoolean(), call.Argument(3).ToBoolean(), call.Argument(4).ToBoolean())
			if !ok {
				panic(w.h.runtime().NewTypeError("The encoded data was not valid for encoding " + call.Argument(1).String()))
			}
			return w.h.runtime().NewArray(text, pending)
		},
		"bytes": func(call goja.FunctionCall) goja.Value {
			b := w.bytesOf(call.Argument(0), "input")
			u8, err := w.h.runtime().New(w.h.runtime().Get("Uint8Array"), w.h.runtime().ToValue(w.h.runtime().NewArrayBuffer(append([]byte(nil), b...))))
			must(err)
			return u8
		},
	})
}

// decodeText decodes b as the WHATWG encoding enc (utf-8, utf-16le, utf-16be or
// windows-1252). fatal makes the first malformed sequence an error (ok false); otherwise it
// becomes U+FFFD. stripBOM drops a leading byte-order mark; stream leaves an incomplete
// sequence at the end undecoded and reports its length as pending.
func decodeText(b []byte, enc string, fatal, stripBOM, stream bool) (text string, pending int, ok bool) {
	switch enc {
	case "utf-16le", "utf-16be":
		return decodeUTF16(b, enc == "utf-16le", fatal, stripBOM, stream)
	case "windows-1252":
		return decodeWindows1252(b), 0, true
	}
	return decodeUTF8(b, fatal, stripBOM, stream)
}

// decodeUTF16 is decodeText for UTF-16, little-endian when le.
func decodeUTF16(b []byte, le, fatal, stripBOM, stream bool) (text string, pending int, ok bool) {
	var sb strings.Builder
	sb.Grow(len(b))
	if stripBOM && len(b) >= 2 && (le && b[0] == 0xFF && b[1] == 0xFE || !le && b[0] == 0xFE && b[1] == 0xFF) {
		b = b[2:]
	}
	n := len(b) / 2 * 2
	units := make([]uint16, 0, n/2)
	for i := 0; i < n; i += 2 {
		if le {
			units = append(units, uint16(b[i])|uint16(b[i+1])<<8)
		} else {
			units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
		}
	}
	if stream && len(units) > 0 && utf16.IsSurrogate(rune(units[len(units)-1])) && units[len(units)-1] < 0xDC00 {
		units = units[:len(units)-1]
		pending = 2
	}
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		switch {
		case u >= 0xD800 && u < 0xDC00 && i+1 < len(units) && units[i+1] >= 0xDC00 && units[i+1] < 0xE000:
			sb.WriteRune(utf16.DecodeRune(u, rune(units[i+1])))
			i++
		case utf16.IsSurrogate(u):
			if fatal {
				return "", 0, false
			}
			sb.WriteRune(utf8.RuneError)
		default:
			sb.WriteRune(u)
		}
	}
	if n < len(b) {
		if stream {
			pending += len(b) - n
		} else if fatal {
			return "", 0, false
		} else {
			sb.WriteRune(utf8.RuneError)
		}
	}
	return sb.String(), pending, true
}

// decodeWindows1252 is decodeText for windows-1252, which maps every byte.
func decodeWindows1252(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for _, c := range b {
		if c >= 0x80 && c <= 0x9F {
			sb.WriteRune(windows1252[c-0x80])
		} else {
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}

// decodeUTF8 is decodeText for UTF-8, by the WHATWG decoder: one U+FFFD per maximal invalid
// subsequence.
func decodeUTF8(b []byte, fatal, stripBOM, stream bool) (text string, pending int, ok bool) {
	var sb strings.Builder
	sb.Grow(len(b))
	if stripBOM && len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		b = b[3:]
	}
	needed, seen := 0, 0
	var cp rune
	lower, upper := byte(0x80), byte(0xBF)
	start := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if needed == 0 {
			start = i
			if c <= 0x7F {
				sb.WriteByte(c)
				continue
			}
			if needed, cp, lower, upper = utf8Lead(c); needed == 0 {
				if fatal {
					return "", 0, false
				}
				sb.WriteRune(utf8.RuneError)
			}
			continue
		}
		if c < lower || c > upper {
			needed, seen, cp, lower, upper = 0, 0, 0, 0x80, 0xBF
			if fatal {
				return "", 0, false
			}
			sb.WriteRune(utf8.RuneError)
			i-- // the byte starts anew
			continue
		}
		lower, upper = 0x80, 0xBF
		cp = cp<<6 | rune(c&0x3F)
		seen++
		if seen == needed {
			sb.WriteRune(cp)
			needed, seen, cp = 0, 0, 0
		}
	}
	if needed > 0 {
		if stream {
			return sb.String(), len(b) - start, true
		}
		if fatal {
			return "", 0, false
		}
		sb.WriteRune(utf8.RuneError)
	}
	return sb.String(), 0, true
}

// utf8Lead reads a UTF-8 lead byte above 0x7F: how many continuation bytes it needs (0 for a
// byte that cannot lead), its bits of the code point, and the bounds of the next byte.
func utf8Lead(c byte) (needed int, cp rune, lower, upper byte) {
	lower, upper = 0x80, 0xBF
	switch c { // bounds that rule out overlong forms, surrogates and code points past U+10FFFF
	case 0xE0:
		lower = 0xA0
	case 0xED:
		upper = 0x9F
	case 0xF0:
		lower = 0x90
	case 0xF4:
		upper = 0x8F
	}
	switch {
	case c >= 0xC2 && c <= 0xDF:
		return 1, rune(c & 0x1F), lower, upper
	case c >= 0xE0 && c <= 0xEF:
		return 2, rune(c & 0xF), lower, upper
	case c >= 0xF0 && c <= 0xF4:
		return 3, rune(c & 0x7), lower, upper
	}
	return 0, 0, lower, upper
}

// windows1252 maps bytes 0x80–0x9F (the rest are Latin-1).
var windows1252 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// installBase64 defines atob and btoa (WHATWG forgiving-base64).
func (w *webAPIs) installBase64() error {
	btoa := func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) == 0 {
			panic(w.h.runtime().NewTypeError(`The "data" argument must be specified`))
		}
		s := call.Argument(0).String()
		w.checkBytes("btoa would allocate", float64(len(s))*4/3+4)
		b := make([]byte, 0, len(s))
		for _, c := range s {
			if c > 0xFF {
				w.throwDOMException("Invalid character", "InvalidCharacterError")
			}
			b = append(b, byte(c))
		}
		return w.h.runtime().ToValue(base64.StdEncoding.EncodeToString(b))
	}
	atob := func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) == 0 {
			panic(w.h.runtime().NewTypeError(`The "data" argument must be specified`))
		}
		b, ok := forgivingBase64(call.Argument(0).String())
		if !ok {
			w.throwDOMException("The string to be decoded is not correctly encoded.", "InvalidCharacterError")
		}
		runes := make([]rune, len(b))
		for i, c := range b {
			runes[i] = rune(c)
		}
		return w.h.runtime().ToValue(string(runes))
	}
	return tryJS(w.h, func() {
		must(w.h.lazyGlobal("btoa", func() goja.Value { return w.h.function("btoa", btoa) }))
		must(w.h.lazyGlobal("atob", func() goja.Value { return w.h.function("atob", atob) }))
	})
}

// forgivingBase64 decodes s as WHATWG's forgiving-base64 decode: ASCII white space ignored,
// padding optional, anything else invalid.
func forgivingBase64(s string) ([]byte, bool) {
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\f', '\r':
		default:
			clean = append(clean, c)
		}
	}
	if len(clean)%4 == 0 {
		clean = []byte(strings.TrimSuffix(strings.TrimSuffix(string(clean), "="), "="))
	}
	if len(clean)%4 == 1 {
		return nil, false
	}
	for _, c := range clean {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, false
		}
	}
	return lenientBase64(clean), true
}

// lenientBase64 decodes valid base64 characters ignoring non-zero trailing bits.
func lenientBase64(clean []byte) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var out []byte
	var buf uint32
	bits := 0
	for _, c := range clean {
		buf = buf<<6 | uint32(strings.IndexByte(alphabet, c))
		bits += 6
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(buf>>uint(bits)))
		}
	}
	return out
}

func (w *webAPIs) cryptoNatives() *goja.Object {
	return nativesObject(w.h, map[string]func(goja.FunctionCall) goja.Value{
		"fill": func(call goja.FunctionCall) goja.Value {
			w.h.randomBytes(w.bytesOf(call.Argument(0), "array"))
			return goja.Undefined()
		},
		"uuid": func(goja.FunctionCall) goja.Value {
			var b [16]byte
			w.h.randomBytes(b[:])
			b[6] = b[6]&0x0F | 0x40
			b[8] = b[8]&0x3F | 0x80
			return w.h.runtime().ToValue(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
		},
		"digest": func(call goja.FunctionCall) goja.Value {
			var h hash.Hash
			switch strings.ToUpper(call.Argument(0).String()) {
			case "SHA-1":
				h = sha1.New()
			case "SHA-256":
				h = sha256.New()
			case "SHA-384":
				h = sha512.New384()
			case "SHA-512":
				h = sha512.New()
			default:
				return w.h.runtime().ToValue("Unrecognized algorithm name")
			}
			h.Write(w.bytesOf(call.Argument(1), "data"))
			return w.h.runtime().ToValue(w.h.runtime().NewArrayBuffer(h.Sum(nil)))
		},
		"bytes": func(call goja.FunctionCall) goja.Value {
			return w.h.runtime().ToValue(w.h.runtime().NewArrayBuffer(append([]byte(nil), w.bytesOf(call.Argument(0), "data")...)))
		},
	})
}

func (w *webAPIs) structuredCloneNatives() goja.Value {
	o := nativesObject(w.h, map[string]func(goja.FunctionCall) goja.Value{
		"DOMException": func(goja.FunctionCall) goja.Value { return w.domException() },
		"overCap": func(call goja.FunctionCall) goja.Value {
			w.h.overCap("structuredClone would copy more than", float64(w.h.memoryCaps().arrayLength), w.h.memoryCaps().arrayLength, "values", arrayCapDivisor)
			return goja.Undefined()
		},
	})
	must(o.Set("limit", w.h.memoryCaps().arrayLength))
	return o
}

func (w *webAPIs) performanceNatives() goja.Value {
	o := nativesObject(w.h, map[string]func(goja.FunctionCall) goja.Value{
		"now": func(goja.FunctionCall) goja.Value { return w.h.runtime().ToValue(w.now()) },
	})
	must(o.Set("origin", float64(w.h.started().UnixMicro())/1000))
	return o
}

// installCrypto defines crypto; its natives get the DOMException class when first needed.
func (w *webAPIs) installCrypto() error {
	return w.h.lazyGlobal("crypto", func() goja.Value {
		n := w.cryptoNatives()
		must(n.DefineAccessorProperty("DOMException", w.h.function("DOMException", func(goja.FunctionCall) goja.Value { return w.domException() }), nil, goja.FLAG_FALSE, goja.FLAG_FALSE))
		return w.h.prelude("crypto.js", n)
	})
}

// arrayBufferNatives are the Go halves of arraybuffer.js: a transfer copies the bytes into a
// new buffer and detaches the old one, which only goja's Go API can do.
func (w *webAPIs) arrayBufferNatives() goja.Value {
	return nativesObject(w.h, map[string]func(goja.FunctionCall) goja.Value{
		"transfer": func(call goja.FunctionCall) goja.Value {
			buf, _ := call.Argument(0).Export().(goja.ArrayBuffer)
			if buf.Detached() {
				panic(w.h.runtime().NewTypeError("Cannot perform ArrayBuffer.prototype." + call.Argument(2).String() + " on a detached ArrayBuffer"))
			}
			old := buf.Bytes()
			n := int64(len(old))
			if arg := call.Argument(1); !goja.IsUndefined(arg) {
				f := arg.ToFloat() // an index: arraybuffer.js converted it
				if f > float64(w.h.memoryCaps().bufferBytes) {
					w.h.overCap("ArrayBuffer.prototype.transfer would allocate", f, w.h.memoryCaps().bufferBytes, "bytes", bufferCapDivisor)
				}
				n = int64(f)
			}
			b := make([]byte, n)
			copy(b, old)
			buf.Detach()
			return w.h.runtime().ToValue(w.h.runtime().NewArrayBuffer(b))
		},
		"detached": func(call goja.FunctionCall) goja.Value {
			buf, _ := call.Argument(0).Export().(goja.ArrayBuffer)
			return w.h.runtime().ToValue(buf.Detached())
		},
	})
}
