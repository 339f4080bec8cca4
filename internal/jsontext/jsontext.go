// Package jsontext writes JSON text by hand where a hot path cannot afford
// encoding/json's reflection, producing exactly what encoding/json would.
package jsontext

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted as encoding/json quotes it with HTML
// escaping off (json.Encoder.SetEscapeHTML(false)), byte for byte: \b, \f,
// \n, \r, \t and \" \\ short, other control characters as \u00XX,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func AppendString(b []byte, s string) []byte { return appendString(b, s, false) }

// AppendStringHTML appends s quoted as json.Marshal quotes it (HTML escaping
// on), byte for byte: as AppendString, and <, > and & as \u003c, \u003e and
// \u0026.
func AppendStringHTML(b []byte, s string) []byte { return appendString(b, s, true) }

func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// SkipSpace returns the index of the first byte of text at or after i that
// is not JSON whitespace (space, tab, line feed, carriage return).
func SkipSpace[T ~string | ~[]byte](text T, i int) int {
	for i < len(text) {
		switch text[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Marshal encodes v as encoding/json does with HTML escaping off, without the newline a
// json.Encoder adds: the compact JSON text of v for readers that are not HTML (models, logs,
// other processes).
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
