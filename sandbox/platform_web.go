package sandbox

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/codemode/codemode/internal/fdlibm"
)

// The ES2023–2025 built-ins and the Web APIs: JavaScript preludes (prelude/*.js) with the Go
// natives they need. Everything a program can reach is a JavaScript value the runtime built;
// the natives take and return strings, numbers and buffers only.

// installPrelude runs a prelude that installs methods on built-ins when the program starts.
func installPrelude(name string) func(r *run) error {
	return func(r *run) error {
		return r.catch(func() { r.prelude(name) })
	}
}

// preludeGlobals defines names as lazy globals taken from what a prelude returns.
func preludeGlobals(file string, natives func(r *run) goja.Value, names ...string) func(r *run) error {
	return func(r *run) error {
		return r.lazyGlobals(names, func() *goja.Object {
			var args []goja.Value
			if natives != nil {
				args = append(args, natives(r))
			}
			return r.prelude(file, args...).(*goja.Object)
		})
	}
}

// catch runs f, turning a JavaScript exception into an error (interrupts keep unwinding).
func (r *run) catch(f func()) error {
	if ex := r.rt.Try(f); ex != nil {
		return ex
	}
	return nil
}

// installSymbols runs the symbols prelude (Symbol.asyncIterator and friends must exist before
// the program's first line) and defines its classes as globals.
func (r *run) installSymbols() error {
	var classes *goja.Object
	if err := r.catch(func() { classes = r.prelude("symbols.js").(*goja.Object) }); err != nil {
		return err
	}
	global := r.rt.GlobalObject()
	for _, name := range []string{"SuppressedError", "DisposableStack", "AsyncDisposableStack"} {
		if err := global.DefineDataProperty(name, classes.Get(name), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	return nil
}

// installIterator adds the iterator helpers and the Iterator global.
func (r *run) installIterator() error {
	var exports *goja.Object
	if err := r.catch(func() { exports = r.prelude("iterator.js").(*goja.Object) }); err != nil {
		return err
	}
	return r.rt.GlobalObject().DefineDataProperty("Iterator", exports.Get("Iterator"), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// now is the run's clock: milliseconds since the run started, with microsecond resolution.
func (r *run) now() float64 {
	return float64(time.Since(r.start).Microseconds()) / 1000
}

// events returns the DOM events prelude's exports (DOMException, Event, EventTarget, …).
func (r *run) events() *goja.Object {
	return r.prelude("events.js", r.natives(map[string]func(goja.FunctionCall) goja.Value{
		"now":        func(goja.FunctionCall) goja.Value { return r.rt.ToValue(r.now()) },
		"setTimeout": r.timers.setTimeout,
		"report": func(call goja.FunctionCall) goja.Value {
			r.fail(&Failure{Kind: KindRuntime, Message: "uncaught exception in an event listener: " + r.describeThrown(call.Argument(0))})
			return goja.Undefined()
		},
	})).(*goja.Object)
}

func (r *run) domException() *goja.Object { return r.events().Get("DOMException").(*goja.Object) }

// throwDOMException throws a DOMException named name.
func (r *run) throwDOMException(message, name string) {
	ctor := r.domException()
	e, err := r.rt.New(ctor, r.rt.ToValue(message), r.rt.ToValue(name))
	must(err)
	panic(e)
}

// bytesOf returns the bytes an ArrayBuffer, typed array or DataView views, sharing its memory.
func (r *run) bytesOf(v goja.Value, what string) []byte {
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
	panic(r.rt.NewTypeError(what + " must be an ArrayBuffer, a typed array or a DataView"))
}

// checkBytes fails the run when a built-in would allocate more than the run's buffer cap.
func (r *run) checkBytes(what string, n float64) {
	if n > float64(r.caps.bufferBytes) {
		r.overCap(what, n, r.caps.bufferBytes, "bytes", bufferCapDivisor)
	}
}

func (r *run) encodingNatives() goja.Value {
	return r.natives(map[string]func(goja.FunctionCall) goja.Value{
		"encode": func(call goja.FunctionCall) goja.Value {
			s := call.Argument(0)
			r.checkBytes("TextEncoder.encode would allocate", 3*stringLength(s))
			return r.rt.ToValue(r.rt.NewArrayBuffer([]byte(s.String())))
		},
		"encodeInto": func(call goja.FunctionCall) goja.Value {
			dst := r.bytesOf(call.Argument(1), "destination")
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
			return r.rt.NewArray(read, written)
		},
		"decode": func(call goja.FunctionCall) goja.Value {
			b := r.bytesOf(call.Argument(0), "input")
			r.checkBytes("TextDecoder.decode would allocate", 3*float64(len(b)))
			text, pending, ok := decodeText(b, call.Argument(1).String(), call.Argument(2).ToBoolean(), call.Argument(3).ToBoolean(), call.Argument(4).ToBoolean())
			if !ok {
				panic(r.rt.NewTypeError("The encoded data was not valid for encoding " + call.Argument(1).String()))
			}
			return r.rt.NewArray(text, pending)
		},
		"bytes": func(call goja.FunctionCall) goja.Value {
			b := r.bytesOf(call.Argument(0), "input")
			u8, err := r.rt.New(r.rt.Get("Uint8Array"), r.rt.ToValue(r.rt.NewArrayBuffer(append([]byte(nil), b...))))
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
	var sb strings.Builder
	sb.Grow(len(b))
	switch enc {
	case "utf-16le", "utf-16be":
		le := enc == "utf-16le"
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
	case "windows-1252":
		for _, c := range b {
			if c >= 0x80 && c <= 0x9F {
				sb.WriteRune(windows1252[c-0x80])
			} else {
				sb.WriteRune(rune(c))
			}
		}
		return sb.String(), 0, true
	}
	// UTF-8, by the WHATWG decoder: one U+FFFD per maximal invalid subsequence.
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
			switch {
			case c <= 0x7F:
				sb.WriteByte(c)
			case c >= 0xC2 && c <= 0xDF:
				needed, cp = 1, rune(c&0x1F)
			case c >= 0xE0 && c <= 0xEF:
				if c == 0xE0 {
					lower = 0xA0
				} else if c == 0xED {
					upper = 0x9F
				}
				needed, cp = 2, rune(c&0xF)
			case c >= 0xF0 && c <= 0xF4:
				if c == 0xF0 {
					lower = 0x90
				} else if c == 0xF4 {
					upper = 0x8F
				}
				needed, cp = 3, rune(c&0x7)
			default:
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

// windows1252 maps bytes 0x80–0x9F (the rest are Latin-1).
var windows1252 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// installBase64 defines atob and btoa (WHATWG forgiving-base64).
func (r *run) installBase64() error {
	btoa := func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) == 0 {
			panic(r.rt.NewTypeError(`The "data" argument must be specified`))
		}
		s := call.Argument(0).String()
		r.checkBytes("btoa would allocate", float64(len(s))*4/3+4)
		b := make([]byte, 0, len(s))
		for _, c := range s {
			if c > 0xFF {
				r.throwDOMException("Invalid character", "InvalidCharacterError")
			}
			b = append(b, byte(c))
		}
		return r.rt.ToValue(base64.StdEncoding.EncodeToString(b))
	}
	atob := func(call goja.FunctionCall) goja.Value {
		if len(call.Arguments) == 0 {
			panic(r.rt.NewTypeError(`The "data" argument must be specified`))
		}
		b, ok := forgivingBase64(call.Argument(0).String())
		if !ok {
			r.throwDOMException("The string to be decoded is not correctly encoded.", "InvalidCharacterError")
		}
		runes := make([]rune, len(b))
		for i, c := range b {
			runes[i] = rune(c)
		}
		return r.rt.ToValue(string(runes))
	}
	return r.catch(func() {
		must(r.lazyGlobal("btoa", func() goja.Value { return r.function("btoa", btoa) }))
		must(r.lazyGlobal("atob", func() goja.Value { return r.function("atob", atob) }))
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

func (r *run) cryptoNatives() *goja.Object {
	return r.natives(map[string]func(goja.FunctionCall) goja.Value{
		"fill": func(call goja.FunctionCall) goja.Value {
			_, _ = rand.Read(r.bytesOf(call.Argument(0), "array"))
			return goja.Undefined()
		},
		"uuid": func(goja.FunctionCall) goja.Value {
			var b [16]byte
			_, _ = rand.Read(b[:])
			b[6] = b[6]&0x0F | 0x40
			b[8] = b[8]&0x3F | 0x80
			return r.rt.ToValue(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
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
				return r.rt.ToValue("Unrecognized algorithm name")
			}
			h.Write(r.bytesOf(call.Argument(1), "data"))
			return r.rt.ToValue(r.rt.NewArrayBuffer(h.Sum(nil)))
		},
		"bytes": func(call goja.FunctionCall) goja.Value {
			return r.rt.ToValue(r.rt.NewArrayBuffer(append([]byte(nil), r.bytesOf(call.Argument(0), "data")...)))
		},
	})
}

func (r *run) structuredCloneNatives() goja.Value {
	o := r.natives(map[string]func(goja.FunctionCall) goja.Value{
		"DOMException": func(goja.FunctionCall) goja.Value { return r.domException() },
		"overCap": func(call goja.FunctionCall) goja.Value {
			r.overCap("structuredClone would copy more than", float64(r.caps.arrayLength), r.caps.arrayLength, "values", arrayCapDivisor)
			return goja.Undefined()
		},
	})
	must(o.Set("limit", r.caps.arrayLength))
	return o
}

func (r *run) performanceNatives() goja.Value {
	o := r.natives(map[string]func(goja.FunctionCall) goja.Value{
		"now": func(goja.FunctionCall) goja.Value { return r.rt.ToValue(r.now()) },
	})
	must(o.Set("origin", float64(r.start.UnixMicro())/1000))
	return o
}

// installCrypto defines crypto; its natives get the DOMException class when first needed.
func (r *run) installCrypto() error {
	return r.lazyGlobal("crypto", func() goja.Value {
		n := r.cryptoNatives()
		must(n.DefineAccessorProperty("DOMException", r.function("DOMException", func(goja.FunctionCall) goja.Value { return r.domException() }), nil, goja.FLAG_FALSE, goja.FLAG_FALSE))
		return r.prelude("crypto.js", n)
	})
}

// arrayBufferNatives are the Go halves of arraybuffer.js: a transfer copies the bytes into a
// new buffer and detaches the old one, which only goja's Go API can do.
func (r *run) arrayBufferNatives() goja.Value {
	return r.natives(map[string]func(goja.FunctionCall) goja.Value{
		"transfer": func(call goja.FunctionCall) goja.Value {
			buf, _ := call.Argument(0).Export().(goja.ArrayBuffer)
			if buf.Detached() {
				panic(r.rt.NewTypeError("Cannot perform ArrayBuffer.prototype." + call.Argument(2).String() + " on a detached ArrayBuffer"))
			}
			old := buf.Bytes()
			n := int64(len(old))
			if arg := call.Argument(1); !goja.IsUndefined(arg) {
				f := arg.ToFloat() // an index: arraybuffer.js converted it
				if f > float64(r.caps.bufferBytes) {
					r.overCap("ArrayBuffer.prototype.transfer would allocate", f, r.caps.bufferBytes, "bytes", bufferCapDivisor)
				}
				n = int64(f)
			}
			b := make([]byte, n)
			copy(b, old)
			buf.Detach()
			return r.rt.ToValue(r.rt.NewArrayBuffer(b))
		},
		"detached": func(call goja.FunctionCall) goja.Value {
			buf, _ := call.Argument(0).Export().(goja.ArrayBuffer)
			return r.rt.ToValue(buf.Detached())
		},
	})
}

// installTrig replaces Math.sin, Math.cos and Math.tan with V8's (package fdlibm), keeping
// their names, lengths and attributes.
func (r *run) installTrig() error {
	return r.catch(func() {
		m, ok := r.rt.GlobalObject().Get("Math").(*goja.Object)
		if !ok {
			return
		}
		for name, f := range map[string]func(float64) float64{"sin": fdlibm.Sin, "cos": fdlibm.Cos, "tan": fdlibm.Tan} {
			must(r.method(m, name, 1, func(call goja.FunctionCall) goja.Value {
				return r.rt.ToValue(f(call.Argument(0).ToFloat()))
			}))
		}
	})
}
